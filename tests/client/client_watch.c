/*
 * libmetad-client's watches and views against a live daemon
 * (tests/bats/client.bats runs it; $MD_TEST_SLOW_SOCKET is a daemon with a
 * small --max-pending-bytes, where a reader that lags is cancelled as a
 * slow consumer).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_fx.h"

static void
test_watch_key(void **state)
{
	struct md_client	*h = fx_connect(), *w = fx_connect();
	struct md_put_result	 pr;
	struct md_watch		*wt;
	struct md_event		 ev;
	const char		*k = fx_key(0, "w");
	const char		 bin[] = { 0, 1, 2 };
	uint64_t		 first;

	assert_md_ok(h, md_put(h, k, "a", 1, NULL, &pr));
	first = pr.rev;
	assert_md_ok(h, md_put(h, k, bin, sizeof bin, NULL, NULL));
	assert_md_ok(h, md_delete(h, k, NULL, NULL, NULL));

	wt = md_watch_open(w, k, 0, first);
	assert_non_null(wt);
	assert_int_equal(md_watch_rev(wt), first - 1);
	assert_int_equal(md_watch_next(wt, 5000, &ev), 1);
	assert_int_equal(ev.type, MD_EV_PUT);
	assert_string_equal(ev.key, k);
	assert_string_equal(ev.value, "a");
	assert_int_equal(ev.version, 1);
	assert_int_equal(ev.mod_rev, first);
	assert_int_equal(md_watch_next(wt, 5000, &ev), 1);
	assert_int_equal(ev.value_len, sizeof bin);
	assert_memory_equal(ev.value, bin, sizeof bin);
	assert_int_equal(ev.version, 2);
	assert_int_equal(md_watch_next(wt, 5000, &ev), 1);
	assert_int_equal(ev.type, MD_EV_DELETE);
	assert_int_equal(md_watch_rev(wt), ev.mod_rev);
	/* Nothing more: a timeout is no error. */
	assert_int_equal(md_watch_next(wt, 100, &ev), 0);
	assert_true(md_connected(w));

	/* Other calls on the handle go on; events meanwhile wait. */
	assert_md_ok(h, md_put(h, k, "b", 1, NULL, &pr));
	assert_md_ok(w, md_put(w, fx_key(1, "other"), "x", 1, NULL, NULL));
	assert_md_ok(w, md_ping(w, NULL));
	assert_int_equal(md_watch_next(wt, 5000, &ev), 1);
	assert_string_equal(ev.value, "b");
	assert_int_equal(ev.mod_rev, pr.rev);

	/* One watch or view per handle. */
	assert_null(md_watch_open(w, k, 1, 0));
	assert_int_equal(md_errcode(w), MD_E_INVALID);
	assert_null(md_view_open(w, k));

	/* Its watch went with the connection. */
	assert_md_ok(w, md_connect(w, fx_socket(), FX_TIMEOUT_MS));
	assert_md_err(w, md_watch_next(wt, 100, &ev), MD_E_CONNECT);
	md_watch_close(wt);
	md_free(w);
	md_free(h);
}

static void
test_watch_prefix_now(void **state)
{
	struct md_client	*h = fx_connect(), *w = fx_connect();
	struct md_watch		*wt;
	struct md_event		 ev;

	assert_md_ok(h, md_put(h, fx_key(0, "p/before"), "0", 1, NULL, NULL));
	assert_non_null(wt = md_watch_open(w, fx_key(0, "p/"), 1, 0));
	assert_md_ok(h, md_put(h, fx_key(0, "p/x"), "1", 1, NULL, NULL));
	assert_md_ok(h, md_put(h, fx_key(0, "q"), "1", 1, NULL, NULL));
	assert_md_ok(h, md_put(h, fx_key(0, "p/y"), "2", 1, NULL, NULL));
	assert_int_equal(md_watch_next(wt, 5000, &ev), 1);
	assert_string_equal(ev.key, fx_key(0, "p/x"));
	assert_int_equal(md_watch_next(wt, 5000, &ev), 1);
	assert_string_equal(ev.key, fx_key(0, "p/y"));
	md_watch_close(wt);
	md_free(w);
	md_free(h);
}

static void
test_watch_compacted(void **state)
{
	struct md_client	*h = fx_connect();
	uint64_t		 rev;

	assert_md_ok(h, md_put(h, fx_key(0, "c"), "1", 1, NULL, NULL));
	assert_md_ok(h, md_put(h, fx_key(0, "c"), "2", 1, NULL, &(struct
	    md_put_result){ 0 }));
	assert_md_ok(h, md_ping(h, &rev));
	assert_md_ok(h, md_compact(h, rev, NULL));
	assert_null(md_watch_open(h, fx_key(0, "c"), 0, rev - 1));
	assert_int_equal(md_errcode(h), MD_E_COMPACTED);
	assert_non_null(strstr(md_errjson(h), "compact_rev"));
	/* The handle goes on, and can watch again. */
	assert_md_ok(h, md_ping(h, NULL));
	md_free(h);
}

/*
 * A watcher that does not read while 400 values of 16 KiB are written is
 * cancelled by metad (slow_consumer); the iterator resumes by itself and
 * hands out every event once, in order.
 */
static void
test_watch_slow_consumer(void **state)
{
	struct md_client	*h = md_new(), *w = md_new();
	struct md_watch		*wt;
	struct md_event		 ev;
	static char		 val[16384];
	const char		*sock = getenv("MD_TEST_SLOW_SOCKET");
	uint64_t		 revs[400];
	int			 i;

	assert_non_null(sock);
	assert_md_ok(h, md_connect(h, sock, FX_TIMEOUT_MS));
	assert_md_ok(w, md_connect(w, sock, FX_TIMEOUT_MS));
	memset(val, 'x', sizeof val);
	assert_non_null(wt = md_watch_open(w, fx_key(0, "slow/"), 1, 0));
	for (i = 0; i < 400; i++) {
		struct md_put_result	 pr;

		snprintf(val, 16, "%05d", i);
		val[5] = 'x';
		assert_md_ok(h, md_put(h, fx_key(0, "slow/k"), val, sizeof val,
		    NULL, &pr));
		revs[i] = pr.rev;
	}
	for (i = 0; i < 400; i++) {
		assert_int_equal(md_watch_next(wt, 10000, &ev), 1);
		assert_int_equal(ev.mod_rev, revs[i]);
		assert_int_equal(ev.version, i + 1);
		assert_int_equal(ev.value_len, sizeof val);
	}
	assert_int_equal(md_watch_next(wt, 200, &ev), 0);
	assert_true(md_watch_resumed(wt) > 0);	/* it did fall behind */
	md_watch_close(wt);
	md_free(w);
	md_free(h);
}

/* Puts n keys "PREFIX/vNNNN" in txns of 100. */
static void
fx_fill(struct md_client *h, const char *prefix, int n)
{
	char	*body;
	size_t	 size = 128 * 1024, off;
	int	 i, j;

	body = malloc(size);
	for (i = 0; i < n; i += 100) {
		off = (size_t)snprintf(body, size, "{\"if\":[],\"then\":[");
		for (j = i; j < n && j < i + 100; j++)
			off += (size_t)snprintf(body + off, size - off,
			    "%s{\"op\":\"put\",\"key\":\"%sv%04d\","
			    "\"value\":\"%d\"}", j > i ? "," : "", prefix, j,
			    j);
		snprintf(body + off, size - off, "]}");
		assert_md_ok(h, md_txn(h, body, NULL, NULL, NULL));
	}
	free(body);
}

static void
test_view(void **state)
{
	struct md_client	*h = fx_connect(), *o = fx_connect();
	struct md_put_result	 pr;
	const struct md_kv	*kv;
	struct md_view		*v;
	const char		*pfx = fx_key(2, "view/");
	char			 name[64];
	uint64_t		 rev;
	size_t			 i;
	int			 n;

	fx_fill(o, pfx, 1500);	/* more than one page */
	assert_md_ok(o, md_put(o, fx_key(0, "viewx"), "out", 3, NULL, NULL));
	assert_non_null(v = md_view_open(h, pfx));
	assert_int_equal(md_view_size(v), 1500);
	for (i = 0; i < md_view_size(v); i++) {
		snprintf(name, sizeof name, "%sv%04zu", pfx, i);
		assert_string_equal(md_view_at(v, i)->key, name);
	}
	assert_null(md_view_at(v, 1500));
	assert_non_null(kv = md_view_get(v, fx_key(0, "view/v0042")));
	assert_string_equal(kv->value, "42");
	assert_null(md_view_get(v, fx_key(0, "viewx")));
	assert_md_ok(h, md_ping(h, &rev));
	assert_true(md_view_rev(v) <= rev);

	/* Read-your-writes through the view's own handle. */
	assert_md_ok(h, md_put(h, fx_key(0, "view/v0042"), "new", 3, NULL,
	    &pr));
	assert_md_ok(h, md_view_wait(v, pr.rev, 5000));
	assert_true(md_view_rev(v) >= pr.rev);
	assert_string_equal(md_view_get(v, fx_key(0, "view/v0042"))->value,
	    "new");
	assert_md_ok(h, md_delete(h, fx_key(0, "view/v0000"), NULL, NULL,
	    &rev));
	assert_md_ok(h, md_view_wait(v, rev, 5000));
	assert_null(md_view_get(v, fx_key(0, "view/v0000")));
	assert_int_equal(md_view_size(v), 1499);

	/* A write outside the prefix: the view still gets to its rev. */
	assert_md_ok(o, md_put(o, fx_key(0, "viewx"), "2", 1, NULL, &pr));
	assert_md_ok(h, md_view_wait(v, pr.rev, 5000));
	assert_true(md_view_rev(v) >= pr.rev);

	/* Another client's write arrives by polling. */
	assert_md_ok(o, md_put(o, fx_key(0, "view/zz"), "z", 1, NULL, &pr));
	for (n = 0; n < 50 && md_view_get(v, fx_key(0, "view/zz")) == NULL;
	    n++)
		assert_true(md_view_poll(v, 100) >= 0);
	assert_non_null(kv = md_view_get(v, fx_key(0, "view/zz")));
	assert_int_equal(kv->mod_rev, pr.rev);
	assert_int_equal(md_view_poll(v, 0), 0);

	/* A rev metad has not reached: the wait times out. */
	assert_md_err(h, md_view_wait(v, md_view_rev(v) + 1000, 200),
	    MD_E_TIMEOUT);
	assert_md_ok(h, md_ping(h, NULL));

	/* Its watch went with the connection: said, not a silent stall. */
	assert_md_ok(h, md_connect(h, fx_socket(), FX_TIMEOUT_MS));
	assert_md_err(h, md_view_poll(v, 0), MD_E_CONNECT);
	assert_md_err(h, md_view_wait(v, md_view_rev(v) + 1, 100),
	    MD_E_CONNECT);
	assert_non_null(md_view_get(v, fx_key(0, "view/zz")));
	md_view_close(v);
	md_free(o);
	md_free(h);
}

/* A view whose watch falls behind is resumed and ends up exact. */
static void
test_view_slow_consumer(void **state)
{
	struct md_client	*h = md_new(), *o = md_new();
	struct md_put_result	 pr;
	struct md_view		*v;
	static char		 val[16384];
	const char		*sock = getenv("MD_TEST_SLOW_SOCKET");
	char			 name[32];
	int			 i;

	assert_md_ok(h, md_connect(h, sock, FX_TIMEOUT_MS));
	assert_md_ok(o, md_connect(o, sock, FX_TIMEOUT_MS));
	assert_non_null(v = md_view_open(h, fx_key(0, "vslow/")));
	memset(val, 'y', sizeof val);
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof name, "vslow/%03d", i % 50);
		snprintf(val, 16, "%05d", i);
		val[5] = 'y';
		assert_md_ok(o, md_put(o, fx_key(0, name), val, sizeof val,
		    NULL, &pr));
	}
	assert_md_ok(h, md_view_wait(v, pr.rev, 10000));
	assert_int_equal(md_view_size(v), 50);
	assert_true(md_view_resumed(v) > 0);	/* it did fall behind */
	for (i = 250; i < 300; i++) {
		snprintf(name, sizeof name, "vslow/%03d", i % 50);
		assert_int_equal(atoi(md_view_get(v, fx_key(0,
		    name))->value), i);
		assert_int_equal(md_view_get(v, fx_key(0, name))->version, 6);
	}
	md_view_close(v);
	md_free(o);
	md_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_watch_key),
		cmocka_unit_test(test_watch_prefix_now),
		cmocka_unit_test(test_watch_slow_consumer),
		cmocka_unit_test(test_view),
		cmocka_unit_test(test_view_slow_consumer),
		cmocka_unit_test(test_watch_compacted),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
