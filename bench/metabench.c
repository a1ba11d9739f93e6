/*
 * metabench WORKLOAD [options]: load metad (or the echo baseline) and
 * print throughput and latency.  See usage() and docs/BENCHMARKS.md.
 */
#include <sys/resource.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "crafted.h"
#include "metabench.h"
#include "sockpath.h"

#define PRELOAD_CLIENTS		4
#define PRELOAD_PIPELINE	128

static const char *workloads[] = {
	"put", "get", "mixed", "cas", "echo", "preload", "watch"
};

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: metabench [-s SOCKET] "
	    "put|get|mixed|cas|echo|preload|watch\n"
	    "        [--clients N] [--threads T] [--requests N | "
	    "--duration D] [--pipeline P]\n"
	    "        [--value-size B] [--keys K] [--get-pct PCT] "
	    "[--own-keys] [--no-preload]\n"
	    "        [--crafted]"
	    "        [--rate R] [--serializable] [--at-rev R] "
	    "[-o text|json]\n");
	exit(2);
}

static void __attribute__((noreturn))
bad(const char *opt, const char *arg, const char *limit)
{
	fprintf(stderr, "metabench: invalid value \"%s\" for %s (%s)\n", arg,
	    opt, limit);
	exit(2);
}

static uint64_t
opt_u64(const char *opt, const char *arg, uint64_t lo, uint64_t hi)
{
	uint64_t	 v;
	char		 limit[64];

	if (parse_u64(arg, &v) != 0 || v < lo || v > hi) {
		snprintf(limit, sizeof limit, "%llu to %llu",
		    (unsigned long long)lo, (unsigned long long)hi);
		bad(opt, arg, limit);
	}
	return (v);
}

/* Seconds: "5", "2.5s", "500ms". */
static double
opt_duration(const char *arg)
{
	char	*end;
	double	 d;

	errno = 0;
	d = strtod(arg, &end);
	if (strcmp(end, "ms") == 0)
		d /= 1000.0;
	else if (*end != '\0' && strcmp(end, "s") != 0)
		d = -1;
	if (errno != 0 || !(d > 0) || d > BENCH_DURATION_MAX)
		bad("--duration", arg, "more than 0, at most 60 s");
	return (d);
}


/* Append prefix and n as 8 or more decimal digits. */
/* --crafted: the keys, all colliding under FNV-1a (crafted.c). */
static char	**bench_crafted;
static size_t	  bench_ncrafted;

void
bench_key(struct buf *b, const char *prefix, uint64_t n)
{
	char	 d[24];
	int	 i = (int)sizeof d;

	buf_addstr(b, prefix);
	if (bench_crafted != NULL) {
		buf_addstr(b, bench_crafted[n % bench_ncrafted] +
		    strlen(BENCH_KEY_PREFIX));
		return;
	}
	do {
		d[--i] = (char)('0' + n % 10);
		n /= 10;
	} while (n > 0 || i > (int)sizeof d - 8);
	buf_add(b, d + i, sizeof d - (size_t)i);
}

static enum bench_workload
opt_workload(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof workloads / sizeof workloads[0]; i++) {
		if (strcmp(name, workloads[i]) == 0)
			return ((enum bench_workload)i);
	}
	fprintf(stderr, "metabench: unknown workload \"%s\"\n", name);
	usage();
}

const char *
bench_workload_name(enum bench_workload wl)
{
	return (workloads[wl]);
}

static const struct option longopts[] = {
	{ "socket",	required_argument,	NULL, 's' },
	{ "clients",	required_argument,	NULL, 'c' },
	{ "watchers",	required_argument,	NULL, 'c' },
	{ "threads",	required_argument,	NULL, 't' },
	{ "requests",	required_argument,	NULL, 'n' },
	{ "duration",	required_argument,	NULL, 'd' },
	{ "pipeline",	required_argument,	NULL, 'P' },
	{ "value-size",	required_argument,	NULL, 'v' },
	{ "keys",	required_argument,	NULL, 'k' },
	{ "get-pct",	required_argument,	NULL, 'g' },
	{ "own-keys",	no_argument,		NULL, 'O' },
	{ "crafted",	no_argument,		NULL, 'C' },
	{ "no-preload",	no_argument,		NULL, 'N' },
	{ "rate",	required_argument,	NULL, 'r' },
	{ "serializable", no_argument,		NULL, 'S' },
	{ "at-rev",	required_argument,	NULL, 'R' },
	{ "output",	required_argument,	NULL, 'o' },
	{ NULL,		0,			NULL, 0 }
};

static void
opts_one(struct bench_opts *o, int ch, const char *arg)
{
	switch (ch) {
	case 's':
		o->socket = arg;
		break;
	case 'c':
		o->clients = (unsigned)opt_u64("--clients", arg, 1,
		    BENCH_CLIENTS_MAX);
		break;
	case 't':
		o->threads = (unsigned)opt_u64("--threads", arg, 1,
		    BENCH_THREADS_MAX);
		break;
	case 'n':
		o->requests = opt_u64("--requests", arg, 1, UINT32_MAX);
		break;
	case 'd':
		o->duration = opt_duration(arg);
		break;
	case 'P':
		o->pipeline = (unsigned)opt_u64("--pipeline", arg, 1,
		    BENCH_PIPELINE_MAX);
		break;
	case 'v':
		o->value_size = opt_u64("--value-size", arg, 0,
		    BENCH_VALUE_MAX);
		break;
	case 'k':
		o->keys = opt_u64("--keys", arg, 1, BENCH_KEYS_MAX);
		break;
	case 'g':
		o->get_pct = (unsigned)opt_u64("--get-pct", arg, 0, 100);
		break;
	case 'O':
		o->own_keys = 1;
		break;
	case 'C':
		o->crafted = 1;
		break;
	case 'N':
		o->preload = 0;
		break;
	case 'r':
		o->rate = (double)opt_u64("--rate", arg, 0, 1000000);
		break;
	case 'S':
		o->serializable = 1;
		break;
	case 'R':
		o->at_rev = opt_u64("--at-rev", arg, 1, (1ULL << 53) - 1);
		break;
	case 'o':
		if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
			bad("-o", arg, "text or json");
		o->json = strcmp(arg, "json") == 0;
		break;
	default:
		usage();
	}
}

static void
opts_parse(struct bench_opts *o, int argc, char **argv)
{
	int	 ch, clients = 0, pipeline = 0;

	memset(o, 0, sizeof *o);
	o->threads = o->pipeline = 1;
	o->value_size = 100;
	o->keys = 10000;
	o->get_pct = 90;
	o->preload = 1;
	o->rate = 100;
	/* GNU getopt permutes: options may come after the workload too. */
	while ((ch = getopt_long(argc, argv, "s:c:t:n:d:P:o:h", longopts,
	    NULL)) != -1) {
		clients |= ch == 'c';
		pipeline |= ch == 'P';
		opts_one(o, ch, optarg);
	}
	if (optind != argc - 1)
		usage();
	o->wl = opt_workload(argv[optind]);
	if (!clients)
		o->clients = o->wl == WL_WATCH ? 1000 :
		    o->wl == WL_PRELOAD ? PRELOAD_CLIENTS : 1;
	if (!pipeline && o->wl == WL_PRELOAD)
		o->pipeline = PRELOAD_PIPELINE;
}

static void
opts_check(struct bench_opts *o)
{
	if (o->threads > o->clients)
		o->threads = o->clients;
	if (o->wl == WL_WATCH)
		o->threads = 1;
	if (o->wl == WL_PRELOAD)
		o->requests = o->keys;
	if (o->duration == 0)
		o->duration = o->requests > 0 ? BENCH_DURATION_MAX : 5.0;
	if (o->wl == WL_WATCH && o->requests == 0 && o->rate > 0)
		o->requests = (uint64_t)(o->rate * o->duration);
	if (o->wl == WL_CAS && o->own_keys && o->keys < o->clients)
		o->keys = o->clients;
	if (o->keys > UINT32_MAX)
		bad("--keys", "", "at most 2^32 - 1");
	if (o->crafted) {
		bench_crafted = crafted_keys(BENCH_KEY_PREFIX, o->keys);
		bench_ncrafted = o->keys;
	}
}

static void
bench_init(struct bench *b, const struct bench_opts *o)
{
	memset(b, 0, sizeof *b);
	b->o = *o;
	b->value = xmalloc(o->value_size + 1);
	memset(b->value, 'x', o->value_size);
	b->value[o->value_size] = '\0';
	b->budget = o->requests;
	hist_init(&b->lat);
	hist_init(&b->lat_all);
}

/* Write keys 0..K-1 once each, pipelined over a few connections. */
static int
bench_preload(const struct bench_opts *o, double *secs, char **cause)
{
	struct bench	 p;
	struct bench_opts po = *o;
	int		 rc;

	po.wl = WL_PRELOAD;
	po.clients = PRELOAD_CLIENTS;
	po.threads = 1;
	po.pipeline = PRELOAD_PIPELINE;
	po.requests = po.keys;
	po.duration = BENCH_DURATION_MAX;
	bench_init(&p, &po);
	rc = run_clients(&p, cause);
	*secs = (double)(p.t_end - p.t_start) / 1e9;
	if (rc == 0 && (p.c.errors > 0 || p.c.ops < po.keys)) {
		xasprintf(cause, "preload: %llu of %llu puts done, %llu "
		    "errors", (unsigned long long)p.c.ops,
		    (unsigned long long)po.keys,
		    (unsigned long long)p.c.errors);
		rc = -1;
	}
	free(p.value);
	return (rc);
}

static void
bench_rlimit(unsigned need)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need + 64)
		return;
	rl.rlim_cur = rl.rlim_max;
	setrlimit(RLIMIT_NOFILE, &rl);
}

int
main(int argc, char **argv)
{
	struct bench_opts	 o;
	struct bench		 b;
	char			 path[256], *cause = NULL;
	double			 preload_s = 0;
	int			 rc;

	log_init("metabench", LOG_LEVEL_WARN);
	opts_parse(&o, argc, argv);
	opts_check(&o);
	if (o.socket == NULL) {
		if (sockpath_default(NULL, path, sizeof path, &cause) != 0)
			fatalx("%s", cause);
		o.socket = path;
	}
	bench_rlimit(o.clients + 1);
	if (o.preload && (o.wl == WL_GET || o.wl == WL_MIXED) &&
	    bench_preload(&o, &preload_s, &cause) != 0)
		fatalx("%s", cause);
	bench_init(&b, &o);
	rc = o.wl == WL_WATCH ? run_watch(&b, &cause) :
	    run_clients(&b, &cause);
	if (rc != 0)
		fatalx("%s", cause);
	report_print(&b, preload_s);
	free(b.value);
	crafted_free(bench_crafted);
	return (b.c.errors > 0 || b.c.lost > 0 ? 1 : 0);
}
