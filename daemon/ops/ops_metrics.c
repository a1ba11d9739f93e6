/*
 * metrics (metad-protocol(7), OPERATIONS): the Prometheus text exposition
 * of the daemon's metrics (metad(8), METRICS) in "text".  The counters are
 * struct metrics, counted where the work happens; the gauges are read
 * here, the store's through store_read_stats() (a remote store answers
 * later).  --metrics-listen serves the same text (net/metrics_http.c).
 */
#include <stdlib.h>
#include <string.h>

#include "core/reply.h"
#include "core/req.h"
#include "metad.h"
#include "metrics/metrics.h"
#include "ops/ops.h"

struct ops_metrics_read {
	struct metad		*md;
	ops_metrics_done	*done;
	void			*arg;
};

/* The store's families, as it says it measures them. */
static unsigned
ops_metrics_has(const struct store *s)
{
	unsigned	 r = store_reports(s), has = 0;

	if (r & STORE_REPORTS(STORE_REPORT_FSYNC))
		has |= METRICS_HAS_FSYNC;
	if (r & STORE_REPORTS(STORE_REPORT_CHECKPOINT))
		has |= METRICS_HAS_CHECKPOINT;
	if (r & STORE_REPORTS(STORE_REPORT_CALL))
		has |= METRICS_HAS_CALLS;
	if (r & STORE_REPORTS_WAL)
		has |= METRICS_HAS_WAL;
	return (has);
}

/* The store's stats came (st NULL: it did not answer; the rest shows). */
static void
ops_metrics_stats(void *arg, const struct store_stats *st,
    const struct store_err *se)
{
	struct ops_metrics_read	*a = arg;
	struct metad		*md = a->md;
	struct metrics_gauges	 g;
	struct buf		 b;

	(void)se;
	memset(&g, 0, sizeof g);
	g.has = ops_metrics_has(md->store);
	g.connections = md->nconns;
	g.watches = md->nwatches;
	g.leases = md->lease_ops != NULL ? md->lease_ops->count(md) : 0;
	g.rev = store_read_rev(md->store);
	g.compact_rev = store_compact_rev(md->store);
	if (st != NULL) {
		g.has |= METRICS_HAS_STATS;
		g.keys = st->keys;
		g.db_bytes = st->db_bytes;
		g.wal_bytes = st->wal_bytes;
	}
	metrics_process(&g);
	buf_init(&b);
	metrics_write(&md->metrics, &g, &b);
	a->done(a->arg, &b);
	buf_free(&b);
	free(a);
}

void
ops_metrics_text(struct metad *md, ops_metrics_done *done, void *arg)
{
	struct ops_metrics_read	*a = xmalloc(sizeof *a);

	a->md = md;
	a->done = done;
	a->arg = arg;
	store_read_stats(md->store, ops_metrics_stats, a);
}

static void
ops_metrics_answer(void *arg, const struct buf *text)
{
	struct req	*r = arg;
	struct jw	 w;

	reply_begin(r, &w);
	JW_NAME(&w, "text");
	jw_str(&w, text->data, text->len);
	reply_end(r, &w);
	req_done(r);
}

static void
ops_metrics(struct req *r)
{
	ops_metrics_text(r->md, ops_metrics_answer, r);
}

const struct op ops_metrics_entry = {
	.name = "metrics",
	.run = ops_metrics,
};
