/*
 * metabench: a load generator for metad (and for the echo baseline).
 *
 * Each client is one connection.  Connections are split over --threads
 * threads; each thread drives its share from one epoll loop, with up to
 * --pipeline requests in flight per connection.  Latencies go into a
 * fixed-size log-linear histogram per thread, merged at the end, so memory
 * does not grow with the number of requests.
 *
 * Ownership: a struct bench owns its threads, which own their connections;
 * run_clients() and run_watch() close and free them before returning.
 * Lines returned by bconn_line() point into the connection's input buffer
 * (the library handle's) and live until the next bconn_fill().
 */
#ifndef METABENCH_H
#define METABENCH_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "util.h"

struct md_client;

#define BENCH_CLIENTS_MAX	16384
#define BENCH_THREADS_MAX	64
#define BENCH_PIPELINE_MAX	1024
#define BENCH_VALUE_MAX		(64 * 1024)
#define BENCH_KEYS_MAX		100000000ULL
#define BENCH_DURATION_MAX	60.0	/* seconds: every run is capped */
#define BENCH_DRAIN_S		10.0	/* wait for answers after the end */
#define BENCH_EVENTS_MAX	1000000	/* watch: events tracked */
#define BENCH_CAS_RETRIES_MAX	1000
#define BENCH_KEY_PREFIX	"bench/k/"
#define BENCH_WATCH_PREFIX	"bench/w/"

enum bench_workload {
	WL_PUT,
	WL_GET,
	WL_MIXED,
	WL_CAS,
	WL_ECHO,
	WL_PRELOAD,
	WL_WATCH
};

struct bench_opts {
	const char		*socket;
	enum bench_workload	 wl;
	unsigned		 clients;
	unsigned		 threads;
	unsigned		 pipeline;
	uint64_t		 requests;	/* 0: run for duration */
	double			 duration;
	size_t			 value_size;
	uint64_t		 keys;
	unsigned		 get_pct;	/* mixed */
	int			 own_keys;	/* cas: no contention */
	int			 crafted;	/* keys colliding in FNV-1a */
	int			 preload;	/* get, mixed: fill keys first */
	double			 rate;		/* watch: puts per second */
	int			 json;
	/* get, mixed: the gets' read options (metad-protocol(7)). */
	int			 serializable;
	uint64_t		 at_rev;	/* 0: the current state */
};

/* Log-linear histogram of nanoseconds: about 1% relative error. */
#define HIST_SUB_BITS	7
#define HIST_SUB	(1U << HIST_SUB_BITS)
#define HIST_BUCKETS	((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
	uint64_t	 count;
	uint64_t	 sum;
	uint64_t	 max;
	uint64_t	 n[HIST_BUCKETS];
};

void		 hist_init(struct hist *);
void		 hist_add(struct hist *, uint64_t);
void		 hist_merge(struct hist *, const struct hist *);
uint64_t	 hist_pct(const struct hist *, double);	/* 0 < p <= 100 */

/* What a run counted. */
struct bench_counts {
	uint64_t	 ops;		/* completed operations */
	uint64_t	 requests;	/* answers received */
	uint64_t	 errors;	/* error answers, bad lines */
	uint64_t	 misses;	/* get of an absent key */
	uint64_t	 conflicts;	/* cas: failed_precondition */
	uint64_t	 lost;		/* unanswered when the run ended */
};

/* One request in flight on a connection, answers come in order. */
struct inflight {
	uint64_t	 t_op;		/* when its operation began (ns) */
	uint32_t	 key;
	uint16_t	 kind;
	uint16_t	 tries;
};

/* A connection: a libmetad-client handle used without blocking. */
struct bconn {
	struct md_client *md;
	int		 fd;		/* md_fd(md), for epoll */
	unsigned	 index;		/* client number, 0.. */
	struct buf	 out;		/* requests built, not yet queued */
	int		 want_out;	/* EPOLLOUT registered */
	struct inflight	*q;
	unsigned	 qhead;
	unsigned	 qlen;
	unsigned	 qcap;
	uint64_t	 rng;
};

int		 bconn_open(struct bconn *, const char *, unsigned, unsigned,
		    char **);
void		 bconn_close(struct bconn *);
int		 bconn_flush(struct bconn *);
int		 bconn_fill(struct bconn *);
char		*bconn_line(struct bconn *, size_t *);
struct inflight	*bconn_push(struct bconn *);
struct inflight	*bconn_head(struct bconn *);
void		 bconn_pop(struct bconn *);
uint64_t	 bconn_rand(struct bconn *);

void		 bench_key(struct buf *, const char *, uint64_t);

struct bench;

/* Per thread: its connections, its counts and latencies. */
struct bthread {
	struct bench		*b;
	pthread_t		 tid;
	int			 epfd;
	struct bconn		*conns;
	unsigned		 nconns;
	struct bench_counts	 c;
	struct hist		 lat;
	char			*cause;
};

struct bench {
	struct bench_opts	 o;
	char			*value;		/* JSON-safe, value_size */
	struct bthread		*th;
	unsigned		 nth;
	uint64_t		 t_start;
	uint64_t		 t_stop;	/* stop issuing new operations */
	uint64_t		 t_end;
	uint64_t		 budget;	/* operations, 0: none */
	uint64_t		 issued;	/* atomic */
	struct bench_counts	 c;
	struct hist		 lat;
	/* watch only */
	struct hist		 lat_all;	/* event delivered to all */
	uint64_t		 events;
};

/* load.c: what each workload sends and how it reads answers. */
int	load_take(struct bench *, uint64_t *);
void	load_start(struct bench *, struct bconn *, uint64_t, uint64_t);
void	load_answer(struct bench *, struct bthread *, struct bconn *,
	    const char *, size_t, uint64_t);

const char	*bench_workload_name(enum bench_workload);
void		 report_print(const struct bench *, double preload_s);

/* run.c: run the client workloads; watch.c: the fan-out. */
int	run_clients(struct bench *, char **);
int	run_watch(struct bench *, char **);

#endif
