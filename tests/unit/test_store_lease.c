/*
 * Unit tests of the store's leases (store.h): lease records, keys
 * attached by a put and detached by a put without lease or a delete,
 * store_lease_revoke() deleting a lease's keys at one rev, and all of it
 * undone by undo and rollback and kept across a reopen, on memory and
 * SQLite (see test_store.c for how the fixture works).  The etcd backend
 * has no leases yet: store_has_leases() says so.
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
	struct store_lease	 l = { id, ttl, session };
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

static void
test_lease_none(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	struct store_lease	 l = { 1, 1000, 0 };

	assert_false(store_has_leases(f->s));
	fx_begin(f);
	assert_int_equal(store_lease_put(f->s, &l, &err), -1);
	store_rollback(f->s);
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
		SQL(test_lease_reopen),
		ETCD(test_lease_none),
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
