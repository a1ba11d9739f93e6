/*
 * The daemon's metrics (metad(8), METRICS): counters and histograms as
 * plain structs in struct metrics, updated where the work happens, on the
 * loop (no lock, no sampling thread), and their Prometheus text
 * exposition (format 0.0.4) with the gauges the caller read just before.
 *
 * This room knows only common/: any folder of the daemon may include it,
 * and the store's backends reach it through the store interface's report
 * callback (store.h, struct store_options), never directly.
 *
 * A family with labels keeps its label values in a fixed table (struct
 * metrics_names): a value is a string that lives as long as the process
 * (an op's name, a store call's), found by its pointer, so counting a
 * request is an increment and allocates nothing.
 *
 * Ownership: struct metrics is the daemon's (struct metad embeds it); a
 * zeroed one is ready (metrics_init() gives the batch-size histogram its
 * buckets); metrics_start()'s timer is freed by metrics_stop().
 */
#ifndef METAD_METRICS_H
#define METAD_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "util.h"

struct event;
struct event_base;

/* Buckets of a histogram at most, besides +Inf. */
#define METRICS_BOUNDS_MAX	16

struct metrics_hist {
	const double	*bounds;	/* ascending; NULL: the seconds' */
	unsigned	 nbounds;
	uint64_t	 n[METRICS_BOUNDS_MAX + 1];	/* per bucket, +Inf last */
	uint64_t	 count;
	double		 sum;
};

/* The buckets of a histogram whose bounds are NULL: 100 us to 10 s. */
extern const double	 metrics_seconds[];
extern const unsigned	 metrics_nseconds;

/* Count v in its bucket (the first bound >= v: Prometheus' le). */
void	metrics_hist_observe(struct metrics_hist *, double v);

/*
 * Label values, each kept once: keys are the pointers seen (a hash of
 * them), name the distinct strings, in the order first seen.
 */
#define METRICS_KEYS		128
#define METRICS_NAMES_MAX	48

struct metrics_names {
	const char	*key[METRICS_KEYS];
	unsigned char	 slot[METRICS_KEYS];
	const char	*name[METRICS_NAMES_MAX];
	unsigned	 n;
};

/* The slot of name (added if new), or -1 if max slots are taken. */
int	metrics_names_slot(struct metrics_names *, const char *, unsigned max);

/* The op label of a request whose op is not known. */
extern const char	 metrics_op_unknown[];

#define METRICS_OPS_MAX		METRICS_NAMES_MAX
#define METRICS_CALLS_MAX	16
#define METRICS_OUTCOMES_MAX	16
#define METRICS_REASONS_MAX	8

struct metrics_op {
	uint64_t		 outcome[PROTO_CODES];	/* by code; 0: ok */
	struct metrics_hist	 duration;
};

struct metrics_call {
	uint64_t		 outcome[METRICS_OUTCOMES_MAX];
	struct metrics_hist	 duration;
};

struct metrics {
	/* Requests (net/conn.c): by op and outcome, and their bytes. */
	struct metrics_names	 op_names;
	struct metrics_op	 ops[METRICS_OPS_MAX];
	uint64_t		 bytes_received;
	uint64_t		 bytes_sent;
	/* The group commit (core/commit.c): batches landed, their sizes. */
	uint64_t		 commits;
	struct metrics_hist	 batch_size;
	/* Watches cancelled, by reason (core/watch.c). */
	struct metrics_names	 reasons;
	uint64_t		 cancelled[METRICS_REASONS_MAX];
	/* What the store reports (store.h: STORE_REPORT_*). */
	struct metrics_hist	 fsync;
	struct metrics_hist	 checkpoint;
	struct metrics_hist	 compaction;
	struct metrics_names	 call_names;
	struct metrics_names	 outcomes;
	struct metrics_call	 calls[METRICS_CALLS_MAX];
	/* How late the loop ran a timer due every METRICS_LAG_MS. */
	struct metrics_hist	 loop_lag;
	struct event		*lag_ev;
	int64_t			 lag_due_us;
};

#define METRICS_LAG_MS		1000

void	metrics_init(struct metrics *);
/* The loop lag probe: a timer on base, every METRICS_LAG_MS. */
void	metrics_start(struct metrics *, struct event_base *);
void	metrics_stop(struct metrics *);

/*
 * A request ended (its connection's): op its row's name (or
 * metrics_op_unknown), code its answer's, seconds since it came.
 */
static inline void
metrics_request(struct metrics *m, const char *op, enum proto_code code,
    double seconds)
{
	int	 i = metrics_names_slot(&m->op_names, op, METRICS_OPS_MAX - 1);

	/* The last slot is kept for the unknown. */
	if (i < 0)
		i = metrics_names_slot(&m->op_names, metrics_op_unknown,
		    METRICS_OPS_MAX);
	if (i < 0 || (unsigned)code >= PROTO_CODES)
		return;
	m->ops[i].outcome[code]++;
	metrics_hist_observe(&m->ops[i].duration, seconds);
}

/* A watch was cancelled for reason ("slow_consumer", "compacted"...). */
void	metrics_cancelled(struct metrics *, const char *reason);
/* A call to a remote store ended: its name, outcome ("ok" or why). */
void	metrics_call(struct metrics *, const char *call, const char *outcome,
	    double seconds);

/* What the caller reads at the moment of the exposition. */
#define METRICS_HAS_FSYNC	0x1
#define METRICS_HAS_CHECKPOINT	0x2
#define METRICS_HAS_WAL		0x4
#define METRICS_HAS_CALLS	0x8
#define METRICS_HAS_STATS	0x10	/* the store answered: keys, sizes */

struct metrics_gauges {
	unsigned	 has;		/* METRICS_HAS_*: the store's families */
	uint64_t	 connections;
	uint64_t	 watches;
	uint64_t	 leases;
	uint64_t	 keys;
	uint64_t	 rev;
	uint64_t	 compact_rev;
	uint64_t	 db_bytes;
	uint64_t	 wal_bytes;
	uint64_t	 rss_bytes;
	double		 cpu_seconds;
};

/* This process's resident memory and CPU time into g (0 if unknown). */
void	metrics_process(struct metrics_gauges *);
/* The exposition, appended to b. */
void	metrics_write(const struct metrics *, const struct metrics_gauges *,
	    struct buf *);
/* A label value as the exposition escapes it (\\, \", \n), onto b. */
void	metrics_label_escape(struct buf *, const char *);

#endif
