/*
 * The Prometheus text exposition (format 0.0.4) of struct metrics and
 * the gauges read for it (metrics.h): each family's # HELP and # TYPE
 * lines, then its samples; a histogram's cumulative _bucket{le=...}
 * lines, +Inf last, its _sum and _count; label values escaped.  Label
 * values come out sorted, so two expositions line up.
 */
#include <inttypes.h>
#include <string.h>

#include "metrics/metrics.h"

void
metrics_label_escape(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		if (*s == '\\')
			buf_addstr(b, "\\\\");
		else if (*s == '"')
			buf_addstr(b, "\\\"");
		else if (*s == '\n')
			buf_addstr(b, "\\n");
		else
			buf_addc(b, *s);
	}
}

static void
metrics_family(struct buf *b, const char *name, const char *type,
    const char *help)
{
	buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* {name="value", or "" without a label; the caller closes it. */
static void
metrics_label(struct buf *b, const char *label, const char *value)
{
	if (label == NULL)
		return;
	buf_printf(b, "%s=\"", label);
	metrics_label_escape(b, value);
	buf_addc(b, '"');
}

static void
metrics_u64(struct buf *b, const char *name, const char *label,
    const char *value, uint64_t v)
{
	buf_addstr(b, name);
	if (label != NULL) {
		buf_addc(b, '{');
		metrics_label(b, label, value);
		buf_addc(b, '}');
	}
	buf_printf(b, " %" PRIu64 "\n", v);
}

static void
metrics_gauge(struct buf *b, const char *name, const char *help, uint64_t v)
{
	metrics_family(b, name, "gauge", help);
	metrics_u64(b, name, NULL, NULL, v);
}

/* One histogram's samples; label NULL: none. */
static void
metrics_hist(struct buf *b, const char *name, const char *label,
    const char *value, const struct metrics_hist *h)
{
	const double	*bounds = h->bounds;
	unsigned	 i, n = h->nbounds;
	uint64_t	 cum = 0;

	if (bounds == NULL) {
		bounds = metrics_seconds;
		n = metrics_nseconds;
	}
	for (i = 0; i <= n; i++) {
		cum += h->n[i];
		buf_printf(b, "%s_bucket{", name);
		if (label != NULL) {
			metrics_label(b, label, value);
			buf_addc(b, ',');
		}
		if (i < n)
			buf_printf(b, "le=\"%g\"} %" PRIu64 "\n", bounds[i], cum);
		else
			buf_printf(b, "le=\"+Inf\"} %" PRIu64 "\n", cum);
	}
	buf_printf(b, "%s_sum", name);
	if (label != NULL) {
		buf_addc(b, '{');
		metrics_label(b, label, value);
		buf_addc(b, '}');
	}
	buf_printf(b, " %.17g\n", h->sum);
	buf_printf(b, "%s_count", name);
	if (label != NULL) {
		buf_addc(b, '{');
		metrics_label(b, label, value);
		buf_addc(b, '}');
	}
	buf_printf(b, " %" PRIu64 "\n", h->count);
}

static void
metrics_histogram(struct buf *b, const char *name, const char *help,
    const struct metrics_hist *h)
{
	metrics_family(b, name, "histogram", help);
	metrics_hist(b, name, NULL, NULL, h);
}

/* The slots of t in their names' order, into v; their count. */
static unsigned
metrics_sorted(const struct metrics_names *t, unsigned char *v)
{
	unsigned	 i, j;
	unsigned char	 x;

	for (i = 0; i < t->n; i++) {
		x = (unsigned char)i;
		for (j = i; j > 0 && strcmp(t->name[v[j - 1]], t->name[x]) > 0;
		    j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return (t->n);
}

static void
metrics_requests(struct buf *b, const struct metrics *m)
{
	unsigned char	 v[METRICS_NAMES_MAX];
	unsigned	 i, n = metrics_sorted(&m->op_names, v);
	int		 c;
	const char	*op;

	metrics_family(b, "metad_requests_total", "counter", "Requests "
	    "answered, by op and outcome (ok, or the error code).");
	for (i = 0; i < n; i++) {
		op = m->op_names.name[v[i]];
		for (c = 0; c < PROTO_CODES; c++) {
			if (c != PROTO_OK && m->ops[v[i]].outcome[c] == 0)
				continue;
			buf_addstr(b, "metad_requests_total{");
			metrics_label(b, "op", op);
			buf_addc(b, ',');
			metrics_label(b, "outcome",
			    proto_code_name((enum proto_code)c));
			buf_printf(b, "} %" PRIu64 "\n",
			    m->ops[v[i]].outcome[c]);
		}
	}
	metrics_family(b, "metad_request_duration_seconds", "histogram",
	    "How long requests took, from their line read to their answer "
	    "made, by op.");
	for (i = 0; i < n; i++)
		metrics_hist(b, "metad_request_duration_seconds", "op",
		    m->op_names.name[v[i]], &m->ops[v[i]].duration);
}

static void
metrics_store_calls(struct buf *b, const struct metrics *m)
{
	unsigned char	 v[METRICS_NAMES_MAX], w[METRICS_NAMES_MAX];
	unsigned	 i, j, n = metrics_sorted(&m->call_names, v);
	unsigned	 no = metrics_sorted(&m->outcomes, w);
	const char	*call;

	metrics_family(b, "metad_store_requests_total", "counter", "Calls "
	    "to the remote store, by call and outcome (ok, or why not).");
	for (i = 0; i < n; i++) {
		call = m->call_names.name[v[i]];
		for (j = 0; j < no; j++) {
			if (m->calls[v[i]].outcome[w[j]] == 0)
				continue;
			buf_addstr(b, "metad_store_requests_total{");
			metrics_label(b, "call", call);
			buf_addc(b, ',');
			metrics_label(b, "outcome", m->outcomes.name[w[j]]);
			buf_printf(b, "} %" PRIu64 "\n",
			    m->calls[v[i]].outcome[w[j]]);
		}
	}
	metrics_family(b, "metad_store_request_duration_seconds", "histogram",
	    "How long calls to the remote store took, by call.");
	for (i = 0; i < n; i++)
		metrics_hist(b, "metad_store_request_duration_seconds", "call",
		    m->call_names.name[v[i]], &m->calls[v[i]].duration);
}

static void
metrics_cancellations(struct buf *b, const struct metrics *m)
{
	unsigned char	 v[METRICS_NAMES_MAX];
	unsigned	 i, n = metrics_sorted(&m->reasons, v);

	metrics_family(b, "metad_watch_cancellations_total", "counter",
	    "Watches the daemon cancelled, by reason.");
	for (i = 0; i < n; i++)
		metrics_u64(b, "metad_watch_cancellations_total", "reason",
		    m->reasons.name[v[i]], m->cancelled[v[i]]);
}

static void
metrics_gauges(struct buf *b, const struct metrics_gauges *g)
{
	metrics_gauge(b, "metad_connections", "Client connections open.",
	    g->connections);
	metrics_gauge(b, "metad_watches", "Watches open.", g->watches);
	metrics_gauge(b, "metad_leases", "Leases live (on a store that keeps "
	    "them: this daemon's session leases).", g->leases);
	metrics_gauge(b, "metad_rev", "The store's revision.", g->rev);
	metrics_gauge(b, "metad_compact_rev", "History below this revision "
	    "is compacted away.", g->compact_rev);
	metrics_gauge(b, "metad_store_up", "1 if the store answered this "
	    "exposition's read of its keys and size, else 0 (and they are "
	    "left out).", (g->has & METRICS_HAS_STATS) != 0);
	if (g->has & METRICS_HAS_STATS) {
		metrics_gauge(b, "metad_keys", "Keys in the store.", g->keys);
		metrics_gauge(b, "metad_db_bytes", "The store's size, as "
		    "status' db_bytes (SQLite: the database file and its "
		    "WAL).", g->db_bytes);
	}
	if ((g->has & METRICS_HAS_WAL) && (g->has & METRICS_HAS_STATS))
		metrics_gauge(b, "metad_wal_bytes", "The size of the SQLite "
		    "WAL file.", g->wal_bytes);
	metrics_gauge(b, "metad_process_resident_memory_bytes", "The "
	    "daemon's resident memory.", g->rss_bytes);
	metrics_family(b, "metad_process_cpu_seconds_total", "counter",
	    "CPU time the daemon used, user and system.");
	buf_printf(b, "metad_process_cpu_seconds_total %.6f\n",
	    g->cpu_seconds);
}

void
metrics_write(const struct metrics *m, const struct metrics_gauges *g,
    struct buf *b)
{
	metrics_requests(b, m);
	metrics_family(b, "metad_bytes_received_total", "counter", "Bytes "
	    "read from client connections.");
	metrics_u64(b, "metad_bytes_received_total", NULL, NULL,
	    m->bytes_received);
	metrics_family(b, "metad_bytes_sent_total", "counter", "Bytes "
	    "written to client connections.");
	metrics_u64(b, "metad_bytes_sent_total", NULL, NULL, m->bytes_sent);
	metrics_family(b, "metad_commits_total", "counter", "Batches of "
	    "writes the group commit landed.");
	metrics_u64(b, "metad_commits_total", NULL, NULL, m->commits);
	metrics_histogram(b, "metad_commit_batch_size", "Write requests in "
	    "each batch landed.", &m->batch_size);
	if (g->has & METRICS_HAS_FSYNC)
		metrics_histogram(b, "metad_fsync_duration_seconds", "How long "
		    "each fsync of a batch's commit took.", &m->fsync);
	if (g->has & METRICS_HAS_CHECKPOINT)
		metrics_histogram(b, "metad_checkpoint_duration_seconds",
		    "The loop's time in each checkpoint, its slices "
		    "together.", &m->checkpoint);
	metrics_histogram(b, "metad_compaction_duration_seconds", "How long "
	    "each compaction took, from its start in its batch to that "
	    "batch being durable.", &m->compaction);
	if (g->has & METRICS_HAS_CALLS)
		metrics_store_calls(b, m);
	metrics_cancellations(b, m);
	metrics_histogram(b, "metad_loop_lag_seconds", "How late the event "
	    "loop ran a timer due every second: a stalled loop shows here.",
	    &m->loop_lag);
	metrics_gauges(b, g);
}
