/*
 * Leader election with libmetad-client: hold a session lease, claim
 * leadership by bumping the epoch at "election/NAME", and write the
 * leader's state fenced by that epoch, so a deposed leader's late write is
 * refused.
 *
 *   leader [-s SOCKET] NAME OWNER [STALE_EPOCH]
 *
 * With STALE_EPOCH, it then tries a write fenced by that older epoch, as a
 * deposed leader would, and shows that metad refuses it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <metad/client.h>

static int
die(struct md_client *h, const char *what)
{
	fprintf(stderr, "leader: %s: %s: %s\n", what,
	    md_errname(md_errcode(h)), md_errmsg(h));
	md_free(h);
	return (1);
}

int
main(int argc, char **argv)
{
	struct md_client	*h = md_new();
	struct md_write_opts	 w = { 0 };
	struct md_epoch		 ep;
	const char		*sock = NULL;
	char			 key[256], data[256], state[512];
	uint64_t		 lease = 0;

	if (argc > 2 && strcmp(argv[1], "-s") == 0) {
		sock = argv[2];
		argc -= 2, argv += 2;
	}
	if (argc < 3 || md_connect(h, sock, 5000) != 0)
		return (argc < 3 ? (fprintf(stderr, "usage: leader [-s SOCKET] "
		    "NAME OWNER [STALE_EPOCH]\n"), 2) : die(h, "connect"));
	snprintf(key, sizeof key, "election/%s", argv[1]);
	snprintf(data, sizeof data, "election/%s/state", argv[1]);
	/* A session lease: our keys go when we die (metad-protocol(7), LEASES). */
	if (md_lease_grant(h, 10000, 1, &lease, NULL) != 0)
		return (die(h, "lease_grant"));
	if (md_epoch_bump(h, key, argv[2], -1, &ep, NULL) != 0)
		return (die(h, "epoch_bump"));
	printf("%s leads %s with epoch %llu (lease held)\n", argv[2], argv[1],
	    (unsigned long long)ep.epoch);
	w.fence_key = key;
	w.fence_epoch = ep.epoch;
	w.lease = lease;
	snprintf(state, sizeof state, "leader=%s epoch=%llu", argv[2],
	    (unsigned long long)ep.epoch);
	if (md_put(h, data, state, strlen(state), &w, NULL) != 0)
		return (die(h, "fenced put"));
	printf("wrote %s: %s\n", data, state);
	if (argc > 3) {
		w.fence_epoch = strtoull(argv[3], NULL, 10);
		if (md_put(h, data, "stale", 5, &w, NULL) == 0 ||
		    md_errcode(h) != MD_E_FENCED)
			return (die(h, "a stale write was not fenced"));
		printf("epoch %s refused: %s\n", argv[3], md_errmsg(h));
	}
	md_epoch_clear(&ep);
	md_free(h);
	return (0);
}
