/*
 * lincheck: is metad linearizable?  Several clients, each on its own
 * connection, do random get / put / cas (put with if_version) / delete on a
 * few keys of a running daemon and record when each operation was invoked
 * and when it completed (CLOCK_MONOTONIC) and what it returned.  Then, key by
 * key (keys are independent objects), linsearch.c looks for an order of the
 * operations that respects real time and a sequential versioned register
 * (the model is in linsearch.h).
 *
 *   lincheck -s SOCKET [-c CLIENTS] [-n OPS] [-k KEYS] [-r SEED] [-t SECONDS]
 *   lincheck --self-test
 *
 * Also, each answer against itself: a get never shows a kv whose mod_rev is
 * above the answer's rev, and a put's rev is its kv's mod_rev.
 *
 * Exit: 0 linearizable (self-test: the checker judged every sample right);
 * 1 not linearizable (the key's history is printed), or an answer that
 * contradicts itself (printed); 2 usage, connection or
 * protocol error, or the search ran out of its budget.
 *
 * Memory: each client thread owns its connection and its records; the main
 * thread reads them only after joining the threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <metad/client.h>

#include "linsearch.h"

#define LIN_CLIENTS_MAX		16
#define LIN_KEYS_MAX		8
#define LIN_OPS_MAX		5000	/* per client */
#define LIN_IO_TIMEOUT_MS	5000


struct lin_client {
	pthread_t	 thread;
	int		 id;
	struct md_client *md;
	unsigned	 seed;
	int		 nops;
	struct lin_op	*ops;
	int		 done;
	int		 failed;
	char		 err[512];
	/* An answer that contradicts itself (lincheck_rev_check()). */
	int		 violated;
	char		 violation[512];
	uint64_t	 seen_ver[LIN_KEYS_MAX];
};

struct lin_run {
	const char		*socket;
	int			 nclients;
	int			 nops;
	int			 nkeys;
	unsigned		 seed;
	int64_t			 deadline;
	char			 keys[LIN_KEYS_MAX][128];
	pthread_barrier_t	 start;
	int64_t			 t0;
};

static struct lin_run	 run;

static int64_t
lincheck_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

static int
lincheck_fail(struct lin_client *cl, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(cl->err, sizeof cl->err, fmt, ap);
	va_end(ap);
	cl->failed = 1;
	return (-1);
}

static int
lincheck_connect(struct lin_client *cl)
{
	cl->md = md_new();
	if (md_connect(cl->md, run.socket, LIN_IO_TIMEOUT_MS) != 0)
		return (lincheck_fail(cl, "%s", md_errmsg(cl->md)));
	return (0);
}

static uint32_t
lincheck_value_id(const char *s)
{
	unsigned	 c, i;

	if (s == NULL || sscanf(s, "c%u.%u", &c, &i) != 2)
		return (UINT32_MAX);
	return (c * LIN_VALUE_BASE + i + 1);
}

/*
 * An answer's own revisions: a get never shows a kv whose mod_rev is above
 * the answer's rev (a write the store does not say it has: one whose
 * fsync has not returned, say), and a put's rev is its kv's mod_rev.  The
 * first violation is kept, with the answer, and makes the run fail (1).
 */
static void
lincheck_rev_check(struct lin_client *cl, const char *what, const char *key,
    uint64_t mod_rev, uint64_t rev, int ok)
{
	if (ok || cl->violated)
		return;
	cl->violated = 1;
	snprintf(cl->violation, sizeof cl->violation, "%s of %s answered "
	    "rev %" PRIu64 " with a kv of mod_rev %" PRIu64, what, key, rev,
	    mod_rev);
}

/* Picks a random operation for client cl and does it; -1 on a failure. */
static int
lincheck_do(struct lin_client *cl, int i, struct lin_op *op)
{
	struct md_write_opts	 wo;
	struct md_put_result	 pr;
	struct md_kv		*kv;
	const char		*key;
	char			 val[32];
	uint64_t		 rev = 0;
	int			 r = rand_r(&cl->seed) % 100, rc, deleted;

	memset(op, 0, sizeof *op);
	memset(&wo, 0, sizeof wo);
	op->client = cl->id;
	op->key = rand_r(&cl->seed) % run.nkeys;
	key = run.keys[op->key];
	op->arg_val = (uint32_t)cl->id * LIN_VALUE_BASE + (uint32_t)i + 1;
	snprintf(val, sizeof val, "c%d.%d", cl->id, i);
	if (r < 35)
		op->kind = LIN_GET;
	else if (r < 60)
		op->kind = LIN_PUT;
	else if (r < 85) {
		/* Mostly the version last seen: a real compare-and-set. */
		op->kind = LIN_CAS;
		op->arg_ver = cl->seen_ver[op->key];
		if (rand_r(&cl->seed) % 4 == 0)
			op->arg_ver = (uint64_t)(rand_r(&cl->seed) % 3);
		wo.pre = MD_PRE_VERSION;
		wo.pre_arg = op->arg_ver;
	} else
		op->kind = LIN_DEL;
	op->call = lincheck_now() - run.t0;
	switch (op->kind) {
	case LIN_GET:
		rc = md_get(cl->md, key, NULL, &kv, &rev);
		op->ret = lincheck_now() - run.t0;
		if (rc != 0)
			break;
		op->ok = kv != NULL;
		if (kv != NULL) {
			op->res_val = lincheck_value_id(kv->value);
			op->res_ver = kv->version;
			lincheck_rev_check(cl, "get", key, kv->mod_rev, rev,
			    kv->mod_rev <= rev);
		}
		md_kv_free(kv);
		return (0);
	case LIN_PUT:
	case LIN_CAS:
		rc = md_put(cl->md, key, val, strlen(val), &wo, &pr);
		op->ret = lincheck_now() - run.t0;
		if (rc == 0) {
			op->ok = 1;
			op->res_ver = pr.version;
			op->prev_ver = pr.prev_version;
			lincheck_rev_check(cl, "put", key, pr.mod_rev, pr.rev,
			    pr.mod_rev == pr.rev);
			return (0);
		}
		if (op->kind == LIN_CAS && md_errcode(cl->md) ==
		    MD_E_FAILED_PRECONDITION) {
			op->ok = 0;
			if (!md_err_current(cl->md, &op->res_ver, NULL))
				op->res_ver = 0;
			return (0);
		}
		break;
	case LIN_DEL:
		rc = md_delete(cl->md, key, NULL, &deleted, NULL);
		op->ret = lincheck_now() - run.t0;
		if (rc != 0)
			break;
		op->ok = deleted;
		return (0);
	}
	return (lincheck_fail(cl, "op %d on %s: %s: %s", op->kind, key,
	    md_errname(md_errcode(cl->md)), md_errmsg(cl->md)));
}

static void *
lincheck_client_main(void *arg)
{
	struct lin_client	*cl = arg;
	struct lin_op		*op;
	int			 i, connected;

	connected = lincheck_connect(cl) == 0;
	pthread_barrier_wait(&run.start);
	if (!connected) {
		md_free(cl->md);
		return (NULL);
	}
	for (i = 0; i < cl->nops && lincheck_now() < run.deadline; i++) {
		op = &cl->ops[i];
		if (lincheck_do(cl, i, op) != 0)
			break;
		/* What this client believes the key's version is now. */
		cl->seen_ver[op->key] = op->kind == LIN_DEL ? 0 : op->res_ver;
		cl->done++;
	}
	md_free(cl->md);
	cl->md = NULL;
	return (NULL);
}

/* ---- the run ---- */

static void
lincheck_usage(void)
{
	fprintf(stderr, "usage: lincheck -s SOCKET [-c CLIENTS] [-n OPS] "
	    "[-k KEYS] [-r SEED] [-t SECONDS]\n"
	    "       lincheck --self-test\n");
	exit(2);
}

static long
lincheck_num(const char *s, long lo, long hi)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || end == s || v < lo || v > hi)
		lincheck_usage();
	return (v);
}

static int
lincheck_check_all(struct lin_client *cls)
{
	struct lin_op	*ops;
	int		 c, i, k, n, rc, worst = 0, total = 0;

	for (c = 0; c < run.nclients; c++)
		total += cls[c].done;
	if ((ops = calloc((size_t)total + 1, sizeof *ops)) == NULL)
		return (2);
	for (k = 0; k < run.nkeys; k++) {
		n = 0;
		for (c = 0; c < run.nclients; c++)
			for (i = 0; i < cls[c].done; i++)
				if (cls[c].ops[i].key == k)
					ops[n++] = cls[c].ops[i];
		rc = linsearch_key(run.keys[k], ops, n, 1);
		if (rc == 0)
			worst = 1;
		else if (rc == -1 && worst == 0)
			worst = 2;
	}
	free(ops);
	return (worst);
}

static void
lincheck_options(int argc, char **argv, long *seconds)
{
	int	 ch;

	while ((ch = getopt(argc, argv, "s:c:n:k:r:t:")) != -1) {
		switch (ch) {
		case 's':
			run.socket = optarg;
			break;
		case 'c':
			run.nclients = (int)lincheck_num(optarg, 1,
			    LIN_CLIENTS_MAX);
			break;
		case 'n':
			run.nops = (int)lincheck_num(optarg, 1, LIN_OPS_MAX);
			break;
		case 'k':
			run.nkeys = (int)lincheck_num(optarg, 1, LIN_KEYS_MAX);
			break;
		case 'r':
			run.seed = (unsigned)lincheck_num(optarg, 0, 1L << 31);
			break;
		case 't':
			*seconds = lincheck_num(optarg, 1, 3600);
			break;
		default:
			lincheck_usage();
		}
	}
	if (run.socket == NULL || optind != argc)
		lincheck_usage();
}

/*
 * Runs the clients to the end; 0, or -1 if one of them failed, or 1 if an
 * answer contradicted itself (lincheck_rev_check()).
 */
static int
lincheck_run_clients(struct lin_client *cls, long seconds)
{
	int	 c, bad = 0, total = 0, violated = 0;

	pthread_barrier_init(&run.start, NULL, (unsigned)run.nclients + 1);
	for (c = 0; c < run.nclients; c++) {
		cls[c].id = c;
		cls[c].seed = run.seed * 7919u + (unsigned)c;
		cls[c].nops = run.nops;
		cls[c].ops = calloc((size_t)run.nops, sizeof *cls[c].ops);
		if (cls[c].ops == NULL ||
		    pthread_create(&cls[c].thread, NULL, lincheck_client_main,
		    &cls[c]) != 0) {
			fprintf(stderr, "lincheck: cannot start client %d\n",
			    c);
			exit(2);
		}
	}
	run.t0 = lincheck_now();
	run.deadline = run.t0 + (int64_t)seconds * 1000000000;
	pthread_barrier_wait(&run.start);
	for (c = 0; c < run.nclients; c++) {
		pthread_join(cls[c].thread, NULL);
		total += cls[c].done;
		if (cls[c].failed) {
			fprintf(stderr, "lincheck: client %d: %s\n", c,
			    cls[c].err);
			bad = 1;
		}
		if (cls[c].violated) {
			fprintf(stderr, "lincheck: client %d: not "
			    "linearizable: %s\n", c, cls[c].violation);
			violated = 1;
		}
	}
	pthread_barrier_destroy(&run.start);
	printf("lincheck: %d ops done in %.1f ms\n", total,
	    (double)(lincheck_now() - run.t0) / 1e6);
	return (bad ? -1 : violated ? 1 : 0);
}

int
main(int argc, char **argv)
{
	struct lin_client	*cls;
	struct timespec		 ts;
	long			 seconds = 20;
	int			 c, k, rc;

	if (argc == 2 && strcmp(argv[1], "--self-test") == 0)
		return (linsearch_self_test());
	run.nclients = 5;
	run.nops = 60;
	run.nkeys = 3;
	clock_gettime(CLOCK_REALTIME, &ts);
	run.seed = (unsigned)(ts.tv_nsec ^ getpid());
	lincheck_options(argc, argv, &seconds);

	/* Fresh keys: every run starts from absent. */
	for (k = 0; k < run.nkeys; k++)
		snprintf(run.keys[k], sizeof run.keys[k], "lin/%ld-%u-%ld/k%d",
		    (long)getpid(), run.seed, (long)ts.tv_nsec, k);
	printf("lincheck: %d clients x %d ops on %d keys, seed %u\n",
	    run.nclients, run.nops, run.nkeys, run.seed);
	if ((cls = calloc((size_t)run.nclients, sizeof *cls)) == NULL)
		return (2);
	switch (lincheck_run_clients(cls, seconds)) {
	case 0:
		rc = lincheck_check_all(cls);
		break;
	case 1:		/* the search too, for the histories it prints */
		(void)lincheck_check_all(cls);
		rc = 1;
		break;
	default:
		rc = 2;
	}
	for (c = 0; c < run.nclients; c++)
		free(cls[c].ops);
	free(cls);
	return (rc);
}
