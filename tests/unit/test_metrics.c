/*
 * Unit tests of the metrics (daemon/metrics/): histogram buckets, the
 * label tables, and the text exposition's lines (format 0.0.4).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "util.h"

/* The exposition has this whole line. */
static int
has_line(const char *text, const char *line)
{
	size_t		 n = strlen(line);
	const char	*p = text;

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return (1);
		p += n;
	}
	return (0);
}

static void
test_hist_buckets(void **state)
{
	struct metrics_hist	 h;
	static const double	 b[] = { 1, 2, 4 };

	(void)state;
	memset(&h, 0, sizeof h);
	h.bounds = b;
	h.nbounds = 3;
	metrics_hist_observe(&h, 0.5);
	metrics_hist_observe(&h, 1);	/* le="1": the bound is in */
	metrics_hist_observe(&h, 1.5);
	metrics_hist_observe(&h, 4);
	metrics_hist_observe(&h, 9);	/* past the last: +Inf */
	assert_int_equal(h.n[0], 2);
	assert_int_equal(h.n[1], 1);
	assert_int_equal(h.n[2], 1);
	assert_int_equal(h.n[3], 1);
	assert_int_equal(h.count, 5);
	assert_true(h.sum == 16);
	/* NULL bounds: the seconds', 100 us to 10 s. */
	memset(&h, 0, sizeof h);
	metrics_hist_observe(&h, 0.0001);
	metrics_hist_observe(&h, 11);
	assert_int_equal(h.n[0], 1);
	assert_int_equal(h.n[metrics_nseconds], 1);
}

static void
test_names(void **state)
{
	struct metrics_names	*t = calloc(1, sizeof *t);
	char			 copy[] = "put";
	static const char	 put[] = "put", get[] = "get";

	(void)state;
	assert_int_equal(metrics_names_slot(t, put, 4), 0);
	assert_int_equal(metrics_names_slot(t, get, 4), 1);
	assert_int_equal(metrics_names_slot(t, put, 4), 0);
	/* The same string elsewhere is the same label. */
	assert_int_equal(metrics_names_slot(t, copy, 4), 0);
	assert_int_equal(t->n, 2);
	/* Past max: none, and nothing added. */
	assert_int_equal(metrics_names_slot(t, "txn", 2), -1);
	assert_int_equal(t->n, 2);
	/* A known one whose slot is past a smaller max: none. */
	assert_int_equal(metrics_names_slot(t, get, 1), -1);
	free(t);
}

static void
test_request_unknown(void **state)
{
	struct metrics	*m = calloc(1, sizeof *m);
	static char	 names[METRICS_OPS_MAX][8];
	unsigned	 i;

	(void)state;
	metrics_init(m);
	for (i = 0; i < METRICS_OPS_MAX; i++) {
		snprintf(names[i], sizeof names[i], "op%u", i);
		metrics_request(m, names[i], PROTO_OK, 0.001);
	}
	/* All but the last slot are ops; the rest count as unknown. */
	assert_int_equal(m->op_names.n, METRICS_OPS_MAX);
	assert_string_equal(m->op_names.name[METRICS_OPS_MAX - 1],
	    metrics_op_unknown);
	assert_int_equal(m->ops[METRICS_OPS_MAX - 1].outcome[PROTO_OK], 1);
	metrics_request(m, "more", PROTO_BAD_REQUEST, 0.001);
	assert_int_equal(
	    m->ops[METRICS_OPS_MAX - 1].outcome[PROTO_BAD_REQUEST], 1);
	free(m);
}

/* A metrics with known counts, and its exposition. */
static char *
expose(unsigned has)
{
	struct metrics		*m = calloc(1, sizeof *m);
	struct metrics_gauges	 g;
	struct buf		 b;
	static const char	 put[] = "put", odd[] = "a\"b\\c\nd";
	int			 i;

	metrics_init(m);
	for (i = 0; i < 3; i++)
		metrics_request(m, put, PROTO_OK, 0.0002);
	metrics_request(m, put, PROTO_FAILED_PRECONDITION, 0.003);
	metrics_request(m, odd, PROTO_OK, 20);
	m->bytes_received = 123;
	m->bytes_sent = 456;
	m->commits = 2;
	metrics_hist_observe(&m->batch_size, 1);
	metrics_hist_observe(&m->batch_size, 3);
	metrics_hist_observe(&m->fsync, 0.002);
	metrics_cancelled(m, "slow_consumer");
	metrics_call(m, "Txn", "ok", 0.004);
	metrics_call(m, "Txn", "unavailable", 2);
	memset(&g, 0, sizeof g);
	g.has = has;
	g.connections = 3;
	g.keys = 7;
	g.rev = 42;
	g.wal_bytes = 4096;
	g.rss_bytes = 1 << 20;
	g.cpu_seconds = 1.5;
	buf_init(&b);
	metrics_write(m, &g, &b);
	free(m);
	return (buf_cstr(&b));
}

static void
test_write_counters(void **state)
{
	char	*t = expose(METRICS_HAS_STATS);

	(void)state;
	assert_true(has_line(t, "# TYPE metad_requests_total counter"));
	assert_true(has_line(t,
	    "metad_requests_total{op=\"put\",outcome=\"ok\"} 3"));
	assert_true(has_line(t, "metad_requests_total{op=\"put\","
	    "outcome=\"failed_precondition\"} 1"));
	/* An error that never happened is left out; ok always shows. */
	assert_null(strstr(t, "outcome=\"bad_request\""));
	assert_true(has_line(t, "metad_bytes_received_total 123"));
	assert_true(has_line(t, "metad_bytes_sent_total 456"));
	assert_true(has_line(t, "metad_commits_total 2"));
	assert_true(has_line(t, "metad_watch_cancellations_total"
	    "{reason=\"slow_consumer\"} 1"));
	assert_true(has_line(t, "metad_watch_cancellations_total"
	    "{reason=\"compacted\"} 0"));
	assert_true(has_line(t, "metad_connections 3"));
	assert_true(has_line(t, "metad_keys 7"));
	assert_true(has_line(t, "metad_rev 42"));
	assert_true(has_line(t, "metad_store_up 1"));
	assert_true(has_line(t, "metad_process_resident_memory_bytes 1048576"));
	assert_true(has_line(t, "metad_process_cpu_seconds_total 1.500000"));
	free(t);
}

static void
test_write_histogram(void **state)
{
	char	*t = expose(METRICS_HAS_STATS), *p;
	double	 sum;

	(void)state;
	assert_true(has_line(t, "# TYPE metad_request_duration_seconds "
	    "histogram"));
	/* Cumulative: 3 at 200 us, one more at 3 ms. */
	assert_true(has_line(t, "metad_request_duration_seconds_bucket"
	    "{op=\"put\",le=\"0.0001\"} 0"));
	assert_true(has_line(t, "metad_request_duration_seconds_bucket"
	    "{op=\"put\",le=\"0.00025\"} 3"));
	assert_true(has_line(t, "metad_request_duration_seconds_bucket"
	    "{op=\"put\",le=\"0.0025\"} 3"));
	assert_true(has_line(t, "metad_request_duration_seconds_bucket"
	    "{op=\"put\",le=\"0.005\"} 4"));
	assert_true(has_line(t, "metad_request_duration_seconds_bucket"
	    "{op=\"put\",le=\"+Inf\"} 4"));
	assert_true(has_line(t, "metad_request_duration_seconds_count"
	    "{op=\"put\"} 4"));
	assert_non_null((p = strstr(t, "metad_request_duration_seconds_sum"
	    "{op=\"put\"} ")));
	assert_int_equal(sscanf(strchr(p, ' '), "%lf", &sum), 1);
	assert_true(sum > 0.0035999 && sum < 0.0036001);
	assert_true(has_line(t, "metad_commit_batch_size_bucket{le=\"1\"} 1"));
	assert_true(has_line(t, "metad_commit_batch_size_bucket{le=\"2\"} 1"));
	assert_true(has_line(t, "metad_commit_batch_size_bucket{le=\"4\"} 2"));
	assert_true(has_line(t, "metad_commit_batch_size_sum 4"));
	assert_true(has_line(t, "metad_commit_batch_size_count 2"));
	free(t);
}

static void
test_write_escapes(void **state)
{
	char	*t = expose(METRICS_HAS_STATS);

	(void)state;
	/* A label value's ", \ and newline are escaped. */
	assert_true(has_line(t, "metad_requests_total{op=\"a\\\"b\\\\c\\nd\","
	    "outcome=\"ok\"} 1"));
	assert_true(has_line(t, "metad_request_duration_seconds_bucket"
	    "{op=\"a\\\"b\\\\c\\nd\",le=\"+Inf\"} 1"));
	/* Sorted: the odd op ("a...") before put. */
	assert_true(strstr(t, "{op=\"a\\\"") < strstr(t, "{op=\"put\""));
	free(t);
}

static void
test_write_families(void **state)
{
	char	*t = expose(METRICS_HAS_STATS);
	char	*all = expose(METRICS_HAS_STATS | METRICS_HAS_FSYNC |
		    METRICS_HAS_CHECKPOINT | METRICS_HAS_WAL |
		    METRICS_HAS_CALLS);
	char	*down = expose(METRICS_HAS_WAL);

	(void)state;
	/* What the store does not measure is not there. */
	assert_null(strstr(t, "metad_fsync_duration_seconds"));
	assert_null(strstr(t, "metad_checkpoint_duration_seconds"));
	assert_null(strstr(t, "metad_wal_bytes"));
	assert_null(strstr(t, "metad_store_requests_total"));
	assert_non_null(strstr(t, "# TYPE metad_compaction_duration_seconds "
	    "histogram"));
	assert_true(has_line(all, "# TYPE metad_fsync_duration_seconds "
	    "histogram"));
	assert_true(has_line(all, "metad_fsync_duration_seconds_bucket"
	    "{le=\"0.0025\"} 1"));
	assert_true(has_line(all, "# TYPE metad_checkpoint_duration_seconds "
	    "histogram"));
	assert_true(has_line(all, "metad_wal_bytes 4096"));
	assert_true(has_line(all, "metad_store_requests_total{call=\"Txn\","
	    "outcome=\"ok\"} 1"));
	assert_true(has_line(all, "metad_store_requests_total{call=\"Txn\","
	    "outcome=\"unavailable\"} 1"));
	assert_true(has_line(all, "metad_store_request_duration_seconds_count"
	    "{call=\"Txn\"} 2"));
	/* The store did not answer: its gauges are left out, not 0. */
	assert_true(has_line(down, "metad_store_up 0"));
	assert_null(strstr(down, "metad_keys"));
	assert_null(strstr(down, "metad_wal_bytes"));
	free(t);
	free(all);
	free(down);
}

/*
 * Every sample follows its family's # HELP and # TYPE, each given once,
 * and every line ends with a newline.
 */
static void
test_write_shape(void **state)
{
	char		*t = expose(METRICS_HAS_STATS | METRICS_HAS_FSYNC |
			    METRICS_HAS_CHECKPOINT | METRICS_HAS_WAL |
			    METRICS_HAS_CALLS);
	char		*line, *save = NULL, family[128] = "", name[128];
	char		 type[128], seen[8192] = " ";
	size_t		 n, len = strlen(t);
	int		 helped = 0;

	(void)state;
	assert_true(len > 0 && t[len - 1] == '\n');
	for (line = strtok_r(t, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			assert_int_equal(sscanf(line + 7, "%127s", family), 1);
			snprintf(name, sizeof name, " %s ", family);
			assert_null(strstr(seen, name));
			strncat(seen, name + 1, sizeof seen - strlen(seen) - 1);
			helped = 1;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			assert_true(helped);
			assert_int_equal(sscanf(line + 7, "%127s %127s", name,
			    type), 2);
			assert_string_equal(name, family);
			helped = 0;
			continue;
		}
		n = strcspn(line, "{ ");
		assert_true(n > 0 && n < sizeof name);
		memcpy(name, line, n);
		name[n] = '\0';
		if (strcmp(type, "histogram") == 0)
			assert_true(strncmp(name, family, strlen(family)) == 0 &&
			    (strcmp(name + strlen(family), "_bucket") == 0 ||
			    strcmp(name + strlen(family), "_sum") == 0 ||
			    strcmp(name + strlen(family), "_count") == 0));
		else
			assert_string_equal(name, family);
	}
	free(t);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_buckets),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_request_unknown),
		cmocka_unit_test(test_write_counters),
		cmocka_unit_test(test_write_histogram),
		cmocka_unit_test(test_write_escapes),
		cmocka_unit_test(test_write_families),
		cmocka_unit_test(test_write_shape),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
