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
 * Exit: 0 linearizable (self-test: the checker judged every sample right);
 * 1 not linearizable (the key's history is printed); 2 usage, connection or
 * protocol error, or the search ran out of its budget.
 *
 * Memory: each client thread owns its connection and its records; the main
 * thread reads them only after joining the threads.
 */
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

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

#include <cJSON.h>

#include "linsearch.h"

#define LIN_CLIENTS_MAX		16
#define LIN_KEYS_MAX		8
#define LIN_OPS_MAX		5000	/* per client */
#define LIN_LINE_MAX		4096
#define LIN_IO_TIMEOUT_S	5


struct lin_client {
	pthread_t	 thread;
	int		 id;
	int		 fd;
	unsigned	 seed;
	int		 nops;
	struct lin_op	*ops;
	int		 done;
	int		 failed;
	char		 err[512];
	uint64_t	 seen_ver[LIN_KEYS_MAX];
	char		 buf[LIN_LINE_MAX];
	size_t		 buf_len;
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
	struct sockaddr_un	 sun;
	struct timeval		 tv = { LIN_IO_TIMEOUT_S, 0 };

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(run.socket) >= sizeof sun.sun_path)
		return (lincheck_fail(cl, "socket path too long"));
	strcpy(sun.sun_path, run.socket);
	if ((cl->fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return (lincheck_fail(cl, "socket: %s", strerror(errno)));
	setsockopt(cl->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(cl->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (connect(cl->fd, (struct sockaddr *)&sun, sizeof sun) == -1)
		return (lincheck_fail(cl, "connect %s: %s", run.socket,
		    strerror(errno)));
	return (0);
}

/* Sends one request line and reads the one response line into cl->buf. */
static int
lincheck_roundtrip(struct lin_client *cl, const char *req, size_t len)
{
	ssize_t	 n;
	size_t	 off = 0;
	char	*nl;

	while (off < len) {
		if ((n = write(cl->fd, req + off, len - off)) == -1) {
			if (errno == EINTR)
				continue;
			return (lincheck_fail(cl, "write: %s",
			    strerror(errno)));
		}
		off += (size_t)n;
	}
	cl->buf_len = 0;
	for (;;) {
		if (cl->buf_len == sizeof cl->buf - 1)
			return (lincheck_fail(cl, "response line too long"));
		n = read(cl->fd, cl->buf + cl->buf_len,
		    sizeof cl->buf - 1 - cl->buf_len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return (lincheck_fail(cl, "read: %s", n == 0 ?
			    "connection closed" : strerror(errno)));
		cl->buf_len += (size_t)n;
		cl->buf[cl->buf_len] = '\0';
		if ((nl = strchr(cl->buf, '\n')) != NULL) {
			if (nl[1] != '\0')
				return (lincheck_fail(cl, "more than one "
				    "response line: %s", cl->buf));
			*nl = '\0';
			return (0);
		}
	}
}

static uint32_t
lincheck_value_id(const char *s)
{
	unsigned	 c, i;

	if (s == NULL || sscanf(s, "c%u.%u", &c, &i) != 2)
		return (UINT32_MAX);
	return (c * LIN_VALUE_BASE + i + 1);
}

static int
lincheck_u64(const cJSON *obj, const char *name, uint64_t *out)
{
	const cJSON	*f;

	f = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (!cJSON_IsNumber(f) || f->valuedouble < 0)
		return (-1);
	*out = (uint64_t)f->valuedouble;
	return (0);
}

/* Fills op's result from a parsed response; -1 if it makes no sense. */
static int
lincheck_result(struct lin_op *op, const cJSON *resp)
{
	const cJSON	*ok, *kv, *err, *code, *cur, *del, *val;

	ok = cJSON_GetObjectItemCaseSensitive(resp, "ok");
	if (!cJSON_IsBool(ok))
		return (-1);
	if (cJSON_IsFalse(ok)) {
		err = cJSON_GetObjectItemCaseSensitive(resp, "error");
		code = cJSON_GetObjectItemCaseSensitive(err, "code");
		if (op->kind != LIN_CAS || !cJSON_IsString(code) ||
		    strcmp(code->valuestring, "failed_precondition") != 0)
			return (-1);
		op->ok = 0;
		cur = cJSON_GetObjectItemCaseSensitive(err, "current");
		if (cJSON_IsNull(cur)) {
			op->res_ver = 0;
			return (0);
		}
		return (lincheck_u64(cur, "version", &op->res_ver));
	}
	switch (op->kind) {
	case LIN_GET:
		kv = cJSON_GetObjectItemCaseSensitive(resp, "kv");
		if (cJSON_IsNull(kv)) {
			op->ok = 0;
			return (0);
		}
		op->ok = 1;
		val = cJSON_GetObjectItemCaseSensitive(kv, "value");
		op->res_val = lincheck_value_id(cJSON_GetStringValue(val));
		return (lincheck_u64(kv, "version", &op->res_ver));
	case LIN_PUT:
	case LIN_CAS:
		op->ok = 1;
		kv = cJSON_GetObjectItemCaseSensitive(resp, "kv");
		if (lincheck_u64(kv, "version", &op->res_ver) != 0)
			return (-1);
		return (lincheck_u64(resp, "prev_version", &op->prev_ver));
	case LIN_DEL:
		del = cJSON_GetObjectItemCaseSensitive(resp, "deleted");
		if (!cJSON_IsBool(del))
			return (-1);
		op->ok = cJSON_IsTrue(del);
		return (0);
	}
	return (-1);
}

/* Picks a random operation for client cl; its request goes into req. */
static void
lincheck_pick(struct lin_client *cl, int i, struct lin_op *op, char *req,
    size_t size)
{
	const char	*key;
	int		 r = rand_r(&cl->seed) % 100;

	memset(op, 0, sizeof *op);
	op->client = cl->id;
	op->key = rand_r(&cl->seed) % run.nkeys;
	key = run.keys[op->key];
	op->arg_val = (uint32_t)cl->id * LIN_VALUE_BASE + (uint32_t)i + 1;
	if (r < 35) {
		op->kind = LIN_GET;
		snprintf(req, size, "{\"op\":\"get\",\"key\":\"%s\"}\n", key);
	} else if (r < 60) {
		op->kind = LIN_PUT;
		snprintf(req, size, "{\"op\":\"put\",\"key\":\"%s\","
		    "\"value\":\"c%d.%d\"}\n", key, cl->id, i);
	} else if (r < 85) {
		/* Mostly the version last seen: a real compare-and-set. */
		op->kind = LIN_CAS;
		op->arg_ver = cl->seen_ver[op->key];
		if (rand_r(&cl->seed) % 4 == 0)
			op->arg_ver = (uint64_t)(rand_r(&cl->seed) % 3);
		snprintf(req, size, "{\"op\":\"put\",\"key\":\"%s\","
		    "\"value\":\"c%d.%d\",\"if_version\":%" PRIu64 "}\n", key,
		    cl->id, i, op->arg_ver);
	} else {
		op->kind = LIN_DEL;
		snprintf(req, size, "{\"op\":\"delete\",\"key\":\"%s\"}\n",
		    key);
	}
}

static void *
lincheck_client_main(void *arg)
{
	struct lin_client	*cl = arg;
	struct lin_op		*op;
	cJSON			*resp;
	char			 req[512];
	int			 i, connected;

	connected = lincheck_connect(cl) == 0;
	pthread_barrier_wait(&run.start);
	if (!connected)
		return (NULL);
	for (i = 0; i < cl->nops && lincheck_now() < run.deadline; i++) {
		op = &cl->ops[i];
		lincheck_pick(cl, i, op, req, sizeof req);
		op->call = lincheck_now() - run.t0;
		if (lincheck_roundtrip(cl, req, strlen(req)) != 0)
			break;
		op->ret = lincheck_now() - run.t0;
		resp = cJSON_ParseWithOpts(cl->buf, NULL, 1);
		if (resp == NULL || lincheck_result(op, resp) != 0) {
			lincheck_fail(cl, "unexpected answer to %.*s: %s",
			    (int)strlen(req) - 1, req, cl->buf);
			cJSON_Delete(resp);
			break;
		}
		cJSON_Delete(resp);
		/* What this client believes the key's version is now. */
		cl->seen_ver[op->key] = op->kind == LIN_DEL ? 0 : op->res_ver;
		cl->done++;
	}
	close(cl->fd);
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

/* Runs the clients to the end; 0, or -1 if one of them failed. */
static int
lincheck_run_clients(struct lin_client *cls, long seconds)
{
	int	 c, bad = 0, total = 0;

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
	}
	pthread_barrier_destroy(&run.start);
	printf("lincheck: %d ops done in %.1f ms\n", total,
	    (double)(lincheck_now() - run.t0) / 1e6);
	return (bad ? -1 : 0);
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
	rc = lincheck_run_clients(cls, seconds) == 0 ?
	    lincheck_check_all(cls) : 2;
	for (c = 0; c < run.nclients; c++)
		free(cls[c].ops);
	free(cls);
	return (rc);
}
