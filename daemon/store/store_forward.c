/*
 * The generic side of a store that forwards writes, and of a replica's
 * load (store_forward.h).
 */
#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "store/store_backend.h"
#include "store/store_forward.h"

int
store_forwards(const struct store *s)
{
	return (s->backend->forward != NULL);
}

void
store_forward(struct store *s, const char *line, size_t len,
    store_forward_done done, void *arg)
{
	struct store_err	 e;

	if (s->backend->forward == NULL) {
		store_err_set(&e, STORE_ERR_INTERNAL, "the %s backend takes "
		    "no request whole", s->backend->name);
		done(arg, NULL, 0, &e);
		return;
	}
	s->backend->forward(s, line, len, done, arg);
}

int
store_put_as(struct store *s, uint64_t rev, const struct store_kv *kv,
    struct store_err *err)
{
	if (s->backend->put_as == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "the %s "
		    "backend keeps no replica", s->backend->name));
	if (kv->mod_rev > rev || kv->create_rev > kv->mod_rev ||
	    kv->version == 0)
		return (store_err_set(err, STORE_ERR_INTERNAL, "a replica's "
		    "key with revisions %llu..%llu, version %llu, loaded at "
		    "rev %llu", (unsigned long long)kv->create_rev,
		    (unsigned long long)kv->mod_rev,
		    (unsigned long long)kv->version,
		    (unsigned long long)rev));
	if (store_check_write(s, "put_as", rev, kv->key_len, err) != 0 ||
	    s->backend->put_as(s, kv, err) != 0)
		return (-1);
	store_wrote(s, rev);
	return (0);
}

/*
 * A token of this process's own: "p" and 16 random bytes, drawn once, in
 * hex, then a count in 16 hex digits: each token sorts after the last, so
 * that the records of the daemon used (keyed by it: one B-tree) take them
 * at their end, not all over.  (getrandom failing, the pid and the clock
 * stand in: a token then unique only per boot and start.)
 */
void
store_forward_token(char *out, const void *name, size_t len)
{
	static const char	 hex[] = "0123456789abcdef";
	static char		 inst[33];
	static uint64_t		 n;
	unsigned char		 md[EVP_MAX_MD_SIZE], r[16];
	unsigned int		 mdlen = 0, i;
	struct timespec		 ts;
	uint64_t		 v;

	if (name != NULL) {
		out[0] = 'c';
		if (EVP_Digest(name, len, md, &mdlen, EVP_sha256(), NULL) != 1)
			mdlen = 0;
		for (i = 0; i < mdlen && i < 32; i++) {
			out[1 + 2 * i] = hex[md[i] >> 4];
			out[2 + 2 * i] = hex[md[i] & 0xf];
		}
		out[1 + 2 * i] = '\0';
		return;
	}
	if (inst[0] == '\0') {
		if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
			clock_gettime(CLOCK_REALTIME, &ts);
			snprintf((char *)r, sizeof r, "%08x%07lx",
			    (unsigned)getpid(), (unsigned long)ts.tv_nsec);
		}
		for (i = 0; i < sizeof r; i++)
			snprintf(inst + 2 * i, 3, "%02x", r[i]);
	}
	/* "p", inst, ".", the count (by hand: one a write) */
	out[0] = 'p';
	memcpy(out + 1, inst, 32);
	out[33] = '.';
	for (v = ++n, i = 16; i > 0; v >>= 4)
		out[33 + i--] = hex[v & 0xf];
	out[50] = '\0';
}
