/*
 * Unit tests of the store's range deletes (store.h: store_delete_range()):
 * every key of [key, end) deleted at one rev, seq 0, 1, ... in key order,
 * the keys of the batch's own writes and of the store's layers alike (a
 * sqlite store's kv rows and its dirty map), none for an empty range, all
 * of it undone by undo; on memory, SQLite and etcd (where the batch reads
 * the range at begin: store_keys.rkey).  And range reads bounded by start
 * and end, and descending (store_range.reverse), now and at a rev.  See
 * test_store.c for the fixture.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "store_fx.h"
#include "store/store_range.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

/* A batch that reads [key, end) (end NULL: to the last key), and key k. */
static void
begin_range(struct fx *f, const char *key, const char *end, const char *k)
{
	struct store_keys	 ks;

	memset(&ks, 0, sizeof ks);
	ks.rkey = key;
	ks.rkey_len = strlen(key);
	ks.rend = end;
	ks.rend_len = end != NULL ? strlen(end) : 0;
	if (k != NULL)
		store_keys_add(&ks, k, strlen(k));
	fx_begin_keys(f, &ks);
}

static uint64_t
del_range(struct fx *f, uint64_t rev, const char *key, const char *end)
{
	struct store_err	 err;
	uint64_t		 n = 99;

	if (store_delete_range(f->s, fx_abs(f, rev), key, strlen(key), end,
	    end != NULL ? strlen(end) : 0, &n, &err) != 0)
		fail_msg("range delete: %s", err.msg);
	return (n);
}

static const char *
all(struct fx *f)
{
	struct store_range	 r = { "", 0, NULL, 0, 100, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	return (fx_list(f, &r, -2, 0));
}

/* @1 a/1, @2 a/2, @3 a/3, @4 b, @5 ab, @6 a */
static void
fill(struct fx *f)
{
	fx_put1(f, "a/1", "1");
	fx_put1(f, "a/2", "2");
	fx_put1(f, "a/3", "3");
	fx_put1(f, "b", "b");
	fx_put1(f, "ab", "ab");
	fx_put1(f, "a", "a");
}

static void
test_range_delete(void **state)
{
	struct fx	*f = *state;

	fill(f);
	(void)fx_notes(f);
	begin_range(f, "a/", "a0", NULL);
	assert_int_equal(del_range(f, 7, "a/", "a0"), 3);
	fx_commit(f, 7);
	assert_int_equal(fx_rev(f), 7);
	assert_string_equal(fx_notes(f), "6-7");
	assert_string_equal(all(f), "a@1/6/6 ab@1/5/5 b@1/4/4");
	assert_string_equal(fx_history(f, 7),
	    "7.0:del:a/1 7.1:del:a/2 7.2:del:a/3");
	assert_string_equal(fx_get(f, S("a/2")), "");
	assert_string_equal(fx_get_at(f, S("a/2"), 6), "a/2@1/2/2=2");
	assert_string_equal(fx_get_at(f, S("a/2"), 7), "");
	assert_int_equal(fx_nkeys(f), 3);
	/* [a, b): a and ab, not b; a key put again starts at version 1. */
	begin_range(f, "a", "b", NULL);
	assert_int_equal(del_range(f, 8, "a", "b"), 2);
	fx_commit(f, 8);
	assert_string_equal(all(f), "b@1/4/4");
	fx_put1(f, "a", "again");
	assert_string_equal(fx_get(f, S("a")), "a@1/9/9=again");
}

static void
test_range_empty(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	fill(f);
	(void)fx_notes(f);
	begin_range(f, "c", "d", NULL);
	assert_int_equal(del_range(f, 7, "c", "d"), 0);
	assert_int_equal(fx_try_commit(f, 6, &err), 0);
	assert_int_equal(fx_rev(f), 6);
	assert_string_equal(fx_notes(f), "");
	/* No end: every key from "b" on. */
	begin_range(f, "b", NULL, NULL);
	assert_int_equal(del_range(f, 7, "b", NULL), 1);
	fx_commit(f, 7);
	assert_string_equal(fx_history(f, 7), "7.0:del:b");
	/* Every key. */
	begin_range(f, "", NULL, NULL);
	assert_int_equal(del_range(f, 8, "", NULL), 5);
	fx_commit(f, 8);
	assert_string_equal(all(f), "");
	assert_int_equal(fx_nkeys(f), 0);
}

/* The batch's own writes, before and after the range, in one batch. */
static void
test_range_in_batch(void **state)
{
	struct fx	*f = *state;

	fill(f);
	fx_begin(f, "a/4", "a/5");
	fx_put(f, 7, 0, S("a/4"), S("4"));
	assert_int_equal(fx_del(f, 7, 1, S("a/1")), 1);
	assert_int_equal(del_range(f, 8, "a/", "a0"), 3);
	fx_put(f, 9, 0, S("a/5"), S("5"));
	fx_commit(f, 9);
	assert_string_equal(fx_history(f, 7), "7.0:a/4@1/7/7=4 7.1:del:a/1 "
	    "8.0:del:a/2 8.1:del:a/3 8.2:del:a/4 9.0:a/5@1/9/9=5");
	assert_string_equal(all(f), "a@1/6/6 a/5@1/9/9 ab@1/5/5 b@1/4/4");
}

/* Undone by undo to a mark before it; a reopened store has kv rows. */
static void
test_range_undo(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	fill(f);
	if (strcmp(f->kind, "sqlite") == 0)
		fx_reopen(f, NULL);	/* the keys in kv, not the dirty map */
	begin_range(f, "a", "b", "z");
	assert_int_equal(store_mark(f->s, &err), 0);
	assert_int_equal(del_range(f, 7, "a", "b"), 5);
	assert_int_equal(store_undo(f->s, &err), 0);
	fx_put(f, 7, 0, S("z"), S("z"));
	fx_commit(f, 7);
	assert_string_equal(all(f), "a@1/6/6 a/1@1/1/1 a/2@1/2/2 a/3@1/3/3 "
	    "ab@1/5/5 b@1/4/4 z@1/7/7");
	assert_string_equal(fx_history(f, 7), "7.0:z@1/7/7=z");
	begin_range(f, "a", "b", NULL);
	assert_int_equal(del_range(f, 8, "a", "b"), 5);
	fx_commit(f, 8);
	assert_string_equal(all(f), "b@1/4/4 z@1/7/7");
	if (strcmp(f->kind, "memory") == 0)
		return;
	fx_reopen(f, NULL);
	assert_string_equal(all(f), "b@1/4/4 z@1/7/7");
	assert_int_equal(fx_nkeys(f), 2);
	assert_string_equal(fx_history(f, 8), "8.0:del:a 8.1:del:a/1 "
	    "8.2:del:a/2 8.3:del:a/3 8.4:del:ab");
}

/*
 * etcd: a key created in the range by another writer after the batch read
 * it fails the commit as a conflict, and nothing of it lands.
 */
static void
test_range_etcd_conflict(void **state)
{
	struct fx		*f = *state;
	struct fx		 g;
	struct store_err	 err;

	fill(f);
	begin_range(f, "a/", "a0", NULL);
	assert_int_equal(del_range(f, 7, "a/", "a0"), 3);
	fx_twin(f, &g, f->prefix);
	g.r0 = f->r0;
	fx_begin(&g, "a/9");
	fx_put(&g, 7, 0, S("a/9"), S("9"));
	fx_commit(&g, 7);
	assert_int_equal(fx_try_commit(f, 7, &err), -1);
	assert_int_equal(err.code, STORE_ERR_CONFLICT);
	fx_wait_rev(f, 7);
	assert_string_equal(all(f), "a@1/6/6 a/1@1/1/1 a/2@1/2/2 a/3@1/3/3 "
	    "a/9@1/7/7 ab@1/5/5 b@1/4/4");
	fx_twin_close(&g);
}

static void
test_range_reads(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 100, 1, 0, 0, NULL, 0,
				    NULL, 0, 0 };
	int			 pass;

	fill(f);
	for (pass = 0; pass < 2; pass++) {
		/* [a/2, b), up and down, by pages. */
		r.start = "a/2";
		r.start_len = 3;
		r.end = "b";
		r.end_len = 1;
		r.reverse = 0;
		r.after = NULL;
		r.limit = 100;
		assert_string_equal(fx_list(f, &r, 3, 0),
		    "a/2@1/2/2 a/3@1/3/3 ab@1/5/5");
		r.reverse = 1;
		assert_string_equal(fx_list(f, &r, 3, 0),
		    "ab@1/5/5 a/3@1/3/3 a/2@1/2/2");
		r.limit = 2;
		assert_string_equal(fx_list(f, &r, 2, 1), "ab@1/5/5 a/3@1/3/3");
		r.after = "a/3";
		r.after_len = 3;
		assert_string_equal(fx_list(f, &r, 1, 0), "a/2@1/2/2");
		/* Every key, down; with a prefix; an empty span. */
		r.start = r.end = r.after = NULL;
		r.limit = 100;
		assert_string_equal(fx_list(f, &r, 6, 0), "b@1/4/4 ab@1/5/5 "
		    "a/3@1/3/3 a/2@1/2/2 a/1@1/1/1 a@1/6/6");
		r.prefix = "a/";
		r.prefix_len = 2;
		r.limit = 1;
		assert_string_equal(fx_list(f, &r, 1, 1), "a/3@1/3/3");
		r.prefix = "";
		r.prefix_len = 0;
		r.start = "b";
		r.start_len = 1;
		r.end = "a";
		r.end_len = 1;
		assert_string_equal(fx_list(f, &r, 0, 0), "");
		r.start = r.end = NULL;
		/* As of rev 3, down. */
		r.rev = fx_abs(f, 3);
		r.limit = 100;
		assert_string_equal(fx_list(f, &r, 3, 0),
		    "a/3@1/3/3 a/2@1/2/2 a/1@1/1/1");
		r.start = "a/2";
		r.start_len = 3;
		r.limit = 1;
		assert_string_equal(fx_list(f, &r, 1, 1), "a/3@1/3/3");
		r.reverse = 0;
		assert_string_equal(fx_list(f, &r, 1, 1), "a/2@1/2/2");
		r.start = NULL;
		r.rev = 0;
		if (strcmp(f->kind, "sqlite") != 0)
			break;
		fx_reopen(f, NULL);	/* again, from kv's rows */
	}
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define ETCD(t)	{ #t "/etcd", t, fx_setup, fx_teardown, &fx_etcd }
#define ALL(t)	MEM(t), SQL(t), ETCD(t)

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		ALL(test_range_delete),
		ALL(test_range_empty),
		MEM(test_range_in_batch),
		SQL(test_range_in_batch),
		ALL(test_range_undo),
		ETCD(test_range_etcd_conflict),
		ALL(test_range_reads),
	};
	struct CMUnitTest	 run[sizeof tests / sizeof tests[0]];
	size_t			 i, n = 0;

	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (tests[i].initial_state != &fx_etcd ||
		    fx_etcd_url() != NULL)
			run[n++] = tests[i];
	}
	return (_cmocka_run_group_tests("test_store_range", run, n, NULL,
	    NULL));
}
