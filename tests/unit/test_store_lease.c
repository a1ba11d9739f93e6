/*
 * Unit tests of the store's leases (store.h): lease records, keys
 * attached by a put and detached by a put without lease or a delete,
 * store_lease_revoke() deleting a lease's keys at one rev, and all of it
 * undone by undo and rollback and kept across a reopen, on memory and
 * SQLite (see test_store.c for how the fixture works).  On etcd the
 * leases are etcd's own (store_leases_remote()): granted, kept alive,
 * listed and revoked there, with no record for the daemon; puts naming
 * them are tested through the daemon (tests/bats/lease.bats).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fx.h"
#include "store/etcd/store_etcd.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

static void
leases_done(void *arg, long n, const struct store_lease *v,
    const struct store_err *err)
{
	struct buf	*b = arg;
	long		 i;

	assert_null(err);
	for (i = 0; i < n; i++)
		buf_printf(b, "%s%" PRIu64 ":%" PRIu64 ":%d", i ? " " : "",
		    v[i].id, v[i].ttl_ms, v[i].session);
}

/* The lease records, "ID:TTL:SESSION ...", in any order the store has. */
static const char *
leases(struct fx *f)
{
	buf_reset(&f->out);
	store_read_leases(f->s, leases_done, &f->out);
	return (buf_cstr(&f->out));
}

static void
keys_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *err)
{
	struct fx	*f = arg;
	long		 i;

	assert_null(err);
	for (i = 0; i < n; i++)
		buf_printf(&f->out, "%s%.*s", i ? " " : "",
		    (int)kvs[i].key_len, kvs[i].key);
	if (more)
		buf_addstr(&f->out, " +");
}

static const char *
lease_keys(struct fx *f, uint64_t lease, const char *after, uint64_t limit)
{
	buf_reset(&f->out);
	store_read_lease_keys(f->s, lease, after, after ? strlen(after) : 0,
	    limit, keys_done, f);
	return (buf_cstr(&f->out));
}

static void
grant(struct fx *f, uint64_t id, uint64_t ttl, int session)
{
	struct store_lease	 l = { id, ttl, session, 0 };
	struct store_err	 err;

	if (store_lease_put(f->s, &l, &err) != 0)
		fail_msg("lease put: %s", err.msg);
}

static void
put_l(struct fx *f, uint64_t rev, uint32_t seq, const char *key,
    uint64_t lease)
{
	struct store_err	 err;
	struct store_kv		 meta;

	if (store_put_lease(f->s, fx_abs(f, rev), seq, key, strlen(key), "v",
	    1, lease, &meta, NULL, &err) != 0)
		fail_msg("put: %s", err.msg);
	assert_int_equal(meta.lease, lease);
}

/* 1: L7 granted, a~7, b~7, c without lease. */
static void
lease_fill(struct fx *f)
{
	fx_begin(f, "a", "b", "c");
	grant(f, 7, 5000, 0);
	put_l(f, 1, 0, "a", 7);
	put_l(f, 1, 1, "b", 7);
	put_l(f, 1, 2, "c", 0);
	fx_commit(f, 1);
}

static void
test_lease_attach(void **state)
{
	struct fx	*f = *state;

	assert_true(store_has_leases(f->s));
	assert_string_equal(leases(f), "");
	lease_fill(f);
	assert_string_equal(leases(f), "7:5000:0");
	assert_string_equal(fx_get(f, S("a")), "a@1/1/1~7=v");
	assert_string_equal(fx_get(f, S("c")), "c@1/1/1=v");
	assert_string_equal(lease_keys(f, 7, NULL, 10), "a b");
	assert_string_equal(lease_keys(f, 7, NULL, 1), "a +");
	assert_string_equal(lease_keys(f, 7, "a", 10), "b");
	assert_string_equal(lease_keys(f, 8, NULL, 10), "");
	/* A put without lease detaches; a delete too. */
	fx_begin(f, "a", "b");
	put_l(f, 2, 0, "a", 0);
	fx_commit(f, 2);
	assert_string_equal(fx_get(f, S("a")), "a@2/1/2=v");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 3, 0, S("b")), 1);
	fx_put(f, 3, 1, S("b"), S("v"));
	fx_commit(f, 3);
	assert_string_equal(fx_get(f, S("b")), "b@1/3/3=v");
	assert_string_equal(lease_keys(f, 7, NULL, 10), "");
	/* Another lease takes the key over. */
	fx_begin(f, "c");
	grant(f, 9, 1000, 1);
	put_l(f, 4, 0, "c", 9);
	fx_commit(f, 4);
	assert_string_equal(lease_keys(f, 9, NULL, 10), "c");
	assert_non_null(strstr(leases(f), "9:1000:1"));
}

static void
test_lease_revoke(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	uint64_t		 n = 99;

	lease_fill(f);
	fx_begin(f);
	assert_int_equal(store_lease_revoke(f->s, fx_abs(f, 2), 7, &n, &err),
	    0);
	assert_int_equal(n, 2);
	fx_commit(f, 2);
	assert_int_equal(fx_rev(f), 2);
	assert_string_equal(fx_history(f, fx_abs(f, 2)),
	    "2.0:del:a 2.1:del:b");
	assert_string_equal(fx_get(f, S("a")), "");
	assert_string_equal(fx_get(f, S("c")), "c@1/1/1=v");
	assert_string_equal(leases(f), "");
	/* A lease with no key: its record goes, no revision. */
	fx_begin(f);
	grant(f, 8, 2000, 0);
	fx_commit(f, 2);
	assert_string_equal(leases(f), "8:2000:0");
	fx_begin(f);
	assert_int_equal(store_lease_revoke(f->s, fx_abs(f, 3), 8, &n, &err),
	    0);
	assert_int_equal(n, 0);
	fx_commit(f, 2);
	assert_int_equal(fx_rev(f), 2);
	assert_string_equal(leases(f), "");
}

static void
test_lease_undo(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	uint64_t		 n;

	lease_fill(f);
	/* Rollback: the grant, the attach and the revoke are gone. */
	fx_begin(f, "c");
	grant(f, 11, 3000, 0);
	put_l(f, 2, 0, "c", 11);
	assert_int_equal(store_lease_revoke(f->s, fx_abs(f, 3), 7, &n, &err),
	    0);
	store_rollback(f->s);
	assert_string_equal(leases(f), "7:5000:0");
	assert_string_equal(fx_get(f, S("c")), "c@1/1/1=v");
	assert_string_equal(lease_keys(f, 7, NULL, 10), "a b");
	/* Undo to a mark: only what followed it. */
	fx_begin(f, "a", "c");
	put_l(f, 2, 0, "c", 7);
	assert_int_equal(store_mark(f->s, &err), 0);
	grant(f, 12, 3000, 0);
	put_l(f, 2, 1, "a", 0);
	assert_int_equal(store_undo(f->s, &err), 0);
	fx_commit(f, 2);
	assert_string_equal(leases(f), "7:5000:0");
	assert_string_equal(lease_keys(f, 7, NULL, 10), "a b c");
	assert_string_equal(fx_get(f, S("a")), "a@1/1/1~7=v");
	/* A revoke undone: its keys and record are back. */
	fx_begin(f);
	assert_int_equal(store_mark(f->s, &err), 0);
	assert_int_equal(store_lease_revoke(f->s, fx_abs(f, 3), 7, &n, &err),
	    0);
	assert_int_equal(n, 3);
	assert_int_equal(store_undo(f->s, &err), 0);
	store_rollback(f->s);
	assert_string_equal(lease_keys(f, 7, NULL, 10), "a b c");
	assert_string_equal(leases(f), "7:5000:0");
}

static void
test_lease_reopen(void **state)
{
	struct fx	*f = *state;

	lease_fill(f);
	fx_begin(f);
	grant(f, 5, 60000, 1);
	fx_commit(f, 1);
	fx_reopen(f, NULL);
	assert_string_equal(leases(f), "5:60000:1 7:5000:0");
	assert_string_equal(fx_get(f, S("b")), "b@1/1/1~7=v");
	assert_string_equal(lease_keys(f, 7, NULL, 10), "a b");
}

/*
 * A put's event keeps its key's lease: in history, in a read at its rev,
 * in the kept event of a compacted rev, and (sqlite) after a reopen.
 */
static void
test_lease_history(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	lease_fill(f);
	fx_begin(f, "a");
	put_l(f, 2, 0, "a", 0);
	fx_commit(f, 2);
	assert_string_equal(fx_history(f, fx_abs(f, 1)),
	    "1.0:a@1/1/1~7=v 1.1:b@1/1/1~7=v 1.2:c@1/1/1=v 2.0:a@2/1/2=v");
	assert_string_equal(fx_get_at(f, S("a"), fx_abs(f, 1)),
	    "a@1/1/1~7=v");
	assert_string_equal(fx_get_at(f, S("a"), fx_abs(f, 2)), "a@2/1/2=v");
	assert_int_equal(fx_compact(f, fx_abs(f, 2), &err), 0);
	assert_string_equal(fx_get_at(f, S("b"), fx_abs(f, 2)),
	    "b@1/1/1~7=v");
	if (strcmp(f->kind, "sqlite") == 0)
		fx_reopen(f, NULL);
	assert_string_equal(fx_get_at(f, S("b"), fx_abs(f, 2)),
	    "b@1/1/1~7=v");
	assert_string_equal(fx_history(f, fx_abs(f, 2)), "2.0:a@2/1/2=v");
}

/* What a remote lease call answered. */
struct lres {
	int				 done;
	int				 failed;
	struct store_lease_state	 ls;
	int				 found;
	uint64_t			 rev, n;
};

static void
lstate_cb(void *arg, const struct store_lease_state *ls,
    const struct store_err *err)
{
	struct lres	*r = arg;

	r->done++;
	if (err != NULL)
		r->failed = 1;
	else
		r->ls = *ls;
}

static void
lrevoke_cb(void *arg, int found, uint64_t rev, uint64_t n,
    const struct store_err *err)
{
	struct lres	*r = arg;

	r->done++;
	r->failed = err != NULL;
	r->found = found;
	r->rev = rev;
	r->n = n;
}

static struct store_lease_state
rgrant(struct fx *f, uint64_t ttl_ms, int session)
{
	struct lres	 r = { 0 };

	store_lease_grant(f->s, ttl_ms, session, NULL, lstate_cb, &r);
	fx_wait(f, &r.done);
	assert_int_equal(r.done, 1);
	assert_false(r.failed);
	assert_true(r.ls.found);
	return (r.ls);
}

static struct store_lease_state
rcall(struct fx *f, int keepalive, uint64_t id)
{
	struct lres	 r = { 0 };

	if (keepalive)
		store_lease_keepalive(f->s, id, lstate_cb, &r);
	else
		store_lease_get(f->s, id, lstate_cb, &r);
	fx_wait(f, &r.done);
	assert_int_equal(r.done, 1);
	assert_false(r.failed);
	return (r.ls);
}

static struct lres
rrevoke(struct fx *f, uint64_t id)
{
	struct lres	 r = { 0 };

	store_lease_revoke_now(f->s, id, 1, NULL, lrevoke_cb, &r);
	fx_wait(f, &r.done);
	assert_int_equal(r.done, 1);
	assert_false(r.failed);
	return (r);
}

struct rwait {
	struct fx	*f;
	int		 done;
};

static void
leases_wait_done(void *arg, long n, const struct store_lease *v,
    const struct store_err *err)
{
	struct rwait	*w = arg;

	leases_done(&w->f->out, n, v, err);
	w->done++;
}

static void
keys_wait_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *err)
{
	struct rwait	*w = arg;

	keys_done(w->f, n, kvs, more, err);
	w->done++;
}

/* leases() and lease_keys() with their answer waited for. */
static const char *
rleases(struct fx *f)
{
	struct rwait	 w = { f, 0 };

	buf_reset(&f->out);
	store_read_leases(f->s, leases_wait_done, &w);
	fx_wait(f, &w.done);
	assert_int_equal(w.done, 1);
	return (buf_cstr(&f->out));
}

static const char *
rkeys(struct fx *f, uint64_t lease)
{
	struct rwait	 w = { f, 0 };

	buf_reset(&f->out);
	store_read_lease_keys(f->s, lease, NULL, 0, 10, keys_wait_done, &w);
	fx_wait(f, &w.done);
	assert_int_equal(w.done, 1);
	return (buf_cstr(&f->out));
}

/*
 * etcd: leases granted, kept alive, read and revoked there; ids below
 * 2^53, session leases told by their id; no records for the daemon.
 */
static void
test_lease_etcd(void **state)
{
	struct fx			*f = *state;
	struct store_err		 err;
	struct store_lease		 l = { 1, 1000, 0, 0 };
	struct store_lease_state	 a, s, x;
	struct lres			 r;
	char				 want[128];

	assert_true(store_has_leases(f->s));
	assert_true(store_leases_remote(f->s));
	fx_begin(f, "k");
	assert_int_equal(store_lease_put(f->s, &l, &err), -1);
	store_rollback(f->s);

	a = rgrant(f, 5000, 0);
	assert_true(a.id > 0 && a.id < (UINT64_C(1) << 52));
	assert_int_equal(a.ttl_ms, 5000);
	assert_false(a.session);
	s = rgrant(f, 1500, 1);		/* 2 s on etcd; timed by metad */
	assert_true(s.id >= (UINT64_C(1) << 52) && s.id < (UINT64_C(1) << 53));
	assert_int_equal(s.ttl_ms, 1500);
	assert_true(s.session);

	x = rcall(f, 1, a.id);
	assert_true(x.found);
	assert_int_equal(x.ttl_ms, 5000);
	x = rcall(f, 0, s.id);
	assert_true(x.found);
	assert_true(x.session);
	assert_true(x.remaining_ms <= 1500);
	assert_string_equal(rkeys(f, a.id), "");
	snprintf(want, sizeof want, "%" PRIu64 ":5000:0 %" PRIu64 ":1500:1",
	    a.id, s.id);
	assert_string_equal(rleases(f), want);

	r = rrevoke(f, a.id);
	assert_true(r.found);
	assert_int_equal(r.n, 0);
	assert_false(rcall(f, 0, a.id).found);
	assert_false(rcall(f, 1, a.id).found);
	assert_false(rrevoke(f, a.id).found);
	/* An id etcd never granted. */
	assert_false(rcall(f, 0, 12345).found);
	r = rrevoke(f, s.id);
	assert_true(r.found);
	assert_string_equal(rleases(f), "");
}

/*
 * Which etcd leases metad times itself: those etcd's TTL (whole seconds,
 * at least its minimum; checked every 500 ms) would end more than 1 s
 * late, with a margin.
 */
static void
test_lease_stamped(void **state)
{
	(void)state;
	assert_true(etcd_lease_stamped(1000, 2));	/* etcd's minimum */
	assert_true(etcd_lease_stamped(1500, 2));
	assert_false(etcd_lease_stamped(2000, 2));
	assert_true(etcd_lease_stamped(2500, 3));	/* rounded up */
	assert_false(etcd_lease_stamped(2700, 3));
	assert_false(etcd_lease_stamped(60000, 60));
	assert_true(etcd_lease_stamped(60000, 62));	/* a larger minimum */
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define ETCD(t)	{ #t "/etcd", t, fx_setup, fx_teardown, &fx_etcd }
#define LOCAL(t) MEM(t), SQL(t)

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		LOCAL(test_lease_attach),
		LOCAL(test_lease_revoke),
		LOCAL(test_lease_undo),
		LOCAL(test_lease_history),
		SQL(test_lease_reopen),
		ETCD(test_lease_etcd),
		cmocka_unit_test(test_lease_stamped),
	};
	struct CMUnitTest	 run[sizeof tests / sizeof tests[0]];
	size_t			 i, n = 0;

	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (tests[i].initial_state != &fx_etcd ||
		    fx_etcd_url() != NULL)
			run[n++] = tests[i];
	}
	return (_cmocka_run_group_tests("test_store_lease", run, n, NULL,
	    NULL));
}
