/*
 * Unit tests of the versioned store (daemon/store/), the contract of
 * store.h on each backend (store_cases.h): versions, a batch's reads, its
 * rollback and undo marks, ranges (paging, limits, byte order), binary
 * values and the stats.  The history and compaction are in
 * test_store_history.c, the batch protocol and its bounds in
 * test_store_batch.c, each backend's own cases in test_store_backend.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_cases.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

static void
test_versions(void **state)
{
	struct fx	*f = *state;

	/*
	 * etcd: a store opens at the cluster's revision (a new etcd is at
	 * 1), not at 0; the test's revs count from there (store_fx.h).
	 */
	if (fx_remote(f))
		assert_true(store_rev(f->s) > 0 &&
		    store_rev(f->s) == f->s->head.seen_rev);
	else
		assert_int_equal(store_rev(f->s), 0);
	assert_string_equal(fx_get(f, S("k")), "");
	fx_begin(f, "k");
	assert_int_equal(fx_put(f, 1, 0, S("k"), S("v1")), 0);
	fx_commit(f, 1);
	assert_string_equal(fx_get(f, S("k")), "k@1/1/1=v1");
	fx_begin(f, "k");
	assert_int_equal(fx_put(f, 2, 0, S("k"), S("v2")), 1);
	fx_commit(f, 2);
	assert_string_equal(fx_get(f, S("k")), "k@2/1/2=v2");
	fx_begin(f, "k", "never");
	assert_int_equal(fx_del(f, 3, 0, S("k")), 1);
	assert_int_equal(fx_del(f, 3, 1, S("k")), 0);
	assert_int_equal(fx_del(f, 3, 2, S("never")), 0);
	fx_commit(f, 3);
	assert_string_equal(fx_get(f, S("k")), "");
	fx_begin(f, "k");
	assert_int_equal(fx_put(f, 4, 0, S("k"), S("v3")), 0);
	if (fx_remote(f)) {
		/* etcd: one write of a key per batch. */
		fx_commit(f, 4);
		assert_string_equal(fx_get(f, S("k")), "k@1/4/4=v3");
		assert_string_equal(fx_history(f, 0), "1.0:k@1/1/1=v1 "
		    "2.0:k@2/1/2=v2 3.0:del:k 4.0:k@1/4/4=v3");
		assert_int_equal(fx_nkeys(f), 1);
		return;
	}
	assert_int_equal(fx_put(f, 4, 1, S("k"), S("v4")), 1);
	fx_commit(f, 4);
	assert_string_equal(fx_get(f, S("k")), "k@2/4/4=v4");
	assert_string_equal(fx_history(f, 0), "1.0:k@1/1/1=v1 2.0:k@2/1/2=v2 "
	    "3.0:del:k 4.0:k@1/4/4=v3 4.1:k@2/4/4=v4");
	assert_int_equal(fx_nkeys(f), 1);
}

/*
 * Inside a batch, store_get() sees the batch's own writes and, for the
 * rest, the state at base_rev (store.h).  Ranges, history and stats read
 * outside batches, once it is committed.
 */
static void
test_batch_reads(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_put1(f, "a", "1");
	fx_put1(f, "c", "x");
	fx_begin(f, "a", "b", "c", "d");
	assert_int_equal(store_base_rev(f->s), fx_abs(f, 2));
	fx_put(f, 3, 0, S("b"), S("2"));
	fx_put(f, 3, 1, S("a"), S("3"));
	assert_string_equal(fx_get(f, S("b")), "b@1/3/3=2");
	assert_string_equal(fx_get(f, S("a")), "a@2/1/3=3");
	assert_string_equal(fx_get(f, S("c")), "c@1/2/2=x");
	assert_string_equal(fx_get(f, S("d")), "");
	assert_int_equal(fx_del(f, 3, 2, S("c")), 1);
	assert_string_equal(fx_get(f, S("c")), "");
	assert_int_equal(fx_rev(f), 2);
	fx_commit(f, 3);
	assert_string_equal(fx_list(f, &r, 2, 0), "a@2/1/3=3 b@1/3/3=2");
	assert_string_equal(fx_history(f, 0), "1.0:a@1/1/1=1 2.0:c@1/2/2=x "
	    "3.0:b@1/3/3=2 3.1:a@2/1/3=3 3.2:del:c");
	assert_int_equal(fx_nkeys(f), 2);
}

static void
test_rollback(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_err	 err;
	char			 before[256], hist[256];

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "2");
	fx_put1(f, "c", "3");
	snprintf(before, sizeof before, "%s", fx_list(f, &r, 3, 0));
	snprintf(hist, sizeof hist, "%s", fx_history(f, 0));
	assert_string_equal(fx_notes(f), "0-1 1-2 2-3");
	fx_begin(f, "a", "b", "d");
	fx_put(f, 4, 0, S("a"), S("x"));
	assert_int_equal(fx_del(f, 4, 1, S("b")), 1);
	fx_put(f, 4, 2, S("d"), S("new"));
	assert_int_equal(fx_del(f, 4, 3, S("d")), 1);
	fx_put(f, 4, 4, S("d"), S("again"));
	assert_int_equal(fx_compact(f, 3, &err), 0);
	assert_int_equal(fx_compact_rev(f), 3);
	store_rollback(f->s);
	assert_int_equal(f->s->in_batch, 0);
	assert_int_equal(fx_rev(f), 3);
	assert_int_equal(fx_compact_rev(f), 0);
	assert_string_equal(fx_list(f, &r, 3, 0), before);
	assert_string_equal(fx_history(f, 0), hist);
	assert_int_equal(fx_nkeys(f), 3);
	assert_string_equal(fx_notes(f), "");
	fx_put1(f, "d", "4");
	assert_string_equal(fx_get(f, S("d")), "d@1/4/4=4");
	/* Nothing of the rolled back compaction was done at the commit. */
	assert_int_equal(fx_compact_rev(f), 0);
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:b@1/2/2=2 "
	    "3.0:c@1/3/3=3 4.0:d@1/4/4=4");
}

/* Marks between the writes of several revs: the local stores' batches. */
static void
test_mark_undo(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_err	 err;

	fx_put1(f, "c", "keep");
	fx_begin(f, "a", "b", "c", "e");
	assert_int_equal(store_undo(f->s, &err), -1);
	fx_put(f, 2, 0, S("a"), S("1"));
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 3, 0, S("a"), S("2"));
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 4, 0, S("b"), S("x"));
	fx_put(f, 4, 1, S("a"), S("3"));
	assert_int_equal(fx_del(f, 4, 2, S("c")), 1);
	assert_string_equal(fx_get(f, S("a")), "a@3/2/4=3");
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_string_equal(fx_get(f, S("a")), "a@2/2/3=2");
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_get(f, S("c")), "c@1/1/1=keep");
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 4, 0, S("e"), S("5"));
	fx_commit(f, 4);
	assert_string_equal(fx_list(f, &r, 3, 0),
	    "a@2/2/3=2 c@1/1/1=keep e@1/4/4=5");
	assert_string_equal(fx_history(f, 2),
	    "2.0:a@1/2/2=1 3.0:a@2/2/3=2 4.0:e@1/4/4=5");
	assert_int_equal(fx_nkeys(f), 3);
	assert_string_equal(fx_notes(f), "0-1 1-4");
}

/* Marks inside one rev, as every backend has them. */
static void
test_mark_undo_one_rev(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_err	 err;

	fx_put1(f, "c", "keep");
	fx_begin(f, "a", "b", "c", "d", "e");
	/* An undo with no mark is refused. */
	assert_int_equal(store_undo(f->s, &err), -1);
	fx_put(f, 2, 0, S("a"), S("1"));
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 2, 1, S("b"), S("x"));
	assert_int_equal(fx_del(f, 2, 2, S("c")), 1);
	assert_string_equal(fx_get(f, S("c")), "");
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_string_equal(fx_get(f, S("a")), "a@1/2/2=1");
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_get(f, S("c")), "c@1/1/1=keep");
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 2, 1, S("e"), S("5"));
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_string_equal(fx_get(f, S("e")), "");
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 2, 1, S("d"), S("4"));
	fx_commit(f, 2);
	assert_string_equal(fx_list(f, &r, 3, 0),
	    "a@1/2/2=1 c@1/1/1=keep d@1/2/2=4");
	assert_string_equal(fx_history(f, 2), "2.0:a@1/2/2=1 2.1:d@1/2/2=4");
	assert_int_equal(fx_nkeys(f), 3);
}

/*
 * An undo takes back a compaction made since the mark, as a rollback does
 * (store.c: "A rollback or undo restores the compact rev with the rest"):
 * the commit does not compact.
 */
static void
test_mark_undo_compact(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	fx_put1(f, "a", "1");
	fx_put1(f, "a", "2");
	fx_put1(f, "a", "3");
	fx_begin(f, "b");
	assert_int_equal(store_mark(f->s, &err), 0);
	assert_int_equal(fx_compact(f, 2, &err), 0);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_int_equal(fx_compact_rev(f), 0);
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 4, 0, S("b"), S("1"));
	fx_commit(f, 4);
	assert_int_equal(fx_compact_rev(f), 0);
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2 "
	    "3.0:a@3/1/3=3 4.0:b@1/4/4=1");
	/* Opened again, it finds no compaction either (etcd: asks it). */
	if (strcmp(f->kind, "memory") == 0)
		return;
	fx_reopen(f, NULL);
	assert_int_equal(fx_compact_rev(f), 0);
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2 "
	    "3.0:a@3/1/3=3 4.0:b@1/4/4=1");
}

static void
test_list_paging(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "a/", 2, NULL, 0, 2, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_put1(f, "a/3", "3");
	fx_put1(f, "a/1", "1");
	fx_put1(f, "b", "b");
	fx_put1(f, "a/2", "2");
	fx_put1(f, "a", "a");
	fx_put1(f, "a/", "slash");
	assert_string_equal(fx_list(f, &r, 2, 1), "a/@1/6/6=slash a/1@1/2/2=1");
	r.after = "a/1";
	r.after_len = 3;
	assert_string_equal(fx_list(f, &r, 2, 0), "a/2@1/4/4=2 a/3@1/1/1=3");
	r.limit = 1;
	assert_string_equal(fx_list(f, &r, 1, 1), "a/2@1/4/4=2");
	r.after = "a";			/* below the prefix */
	r.after_len = 1;
	r.keys_only = 1;
	assert_string_equal(fx_list(f, &r, 1, 1), "a/@1/6/6");
	r.after = "a/3";
	r.after_len = 3;
	assert_string_equal(fx_list(f, &r, 0, 0), "");
	r.after = "zz";
	r.after_len = 2;
	assert_string_equal(fx_list(f, &r, 0, 0), "");
	r.prefix = "c";
	r.prefix_len = 1;
	r.after = NULL;
	assert_string_equal(fx_list(f, &r, 0, 0), "");
	r.prefix = "";
	r.prefix_len = 0;
	r.limit = 100;
	assert_string_equal(fx_list(f, &r, 6, 0), "a@1/5/5 a/@1/6/6 a/1@1/2/2 "
	    "a/2@1/4/4 a/3@1/1/1 b@1/3/3");
}

/*
 * A range stops at its limit and says whether more follow (a callback can
 * no longer stop a scan: a read hands back its kvs at once); a limit of 0
 * is refused through the callback.
 */
static void
test_list_limit(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 1, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_put1(f, "x", "1");
	fx_put1(f, "y", "2");
	assert_string_equal(fx_list(f, &r, 1, 1), "x@1/1/1");
	r.after = "x";
	r.after_len = 1;
	assert_string_equal(fx_list(f, &r, 1, 0), "y@1/2/2");
	r.after = NULL;
	r.limit = 2;
	assert_string_equal(fx_list(f, &r, 2, 0), "x@1/1/1 y@1/2/2");
	r.limit = 0;
	assert_string_equal(fx_list(f, &r, -1, 0), "");
	/* The prefix NULL is all keys. */
	r.prefix = NULL;
	r.limit = 3;
	assert_string_equal(fx_list(f, &r, 2, 0), "x@1/1/1 y@1/2/2");
}

static void
test_list_bytewise(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 100, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	static const char	*keys[] = {
		"\xff\xff", "a\xff\x01", "a", "\xff", "a\xff", "\x01",
		"a\xff\xff", "a\x80", "b", "a\xff\xff\x7f", "A"
	};
	size_t			 i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		fx_put1(f, keys[i], "");
	assert_string_equal(fx_list(f, &r, 11, 0), "\\x01@1/6/6 A@1/11/11 "
	    "a@1/3/3 a\\x80@1/8/8 a\\xff@1/5/5 a\\xff\\x01@1/2/2 "
	    "a\\xff\\xff@1/7/7 a\\xff\\xff\\x7f@1/10/10 b@1/9/9 "
	    "\\xff@1/4/4 \\xff\\xff@1/1/1");
	r.prefix = "a\xff";
	r.prefix_len = 2;
	assert_string_equal(fx_list(f, &r, 4, 0), "a\\xff@1/5/5 "
	    "a\\xff\\x01@1/2/2 a\\xff\\xff@1/7/7 a\\xff\\xff\\x7f@1/10/10");
	r.prefix = "a\xff\xff";
	r.prefix_len = 3;
	assert_string_equal(fx_list(f, &r, 2, 0),
	    "a\\xff\\xff@1/7/7 a\\xff\\xff\\x7f@1/10/10");
	r.prefix = "\xff";
	r.prefix_len = 1;
	r.after = "\xff";
	r.after_len = 1;
	assert_string_equal(fx_list(f, &r, 1, 0), "\\xff\\xff@1/1/1");
	r.keys_only = 0;
	r.prefix = "a";
	r.prefix_len = 1;
	r.after = "a\xff";
	r.after_len = 2;
	assert_string_equal(fx_list(f, &r, 3, 0), "a\\xff\\x01@1/2/2= "
	    "a\\xff\\xff@1/7/7= a\\xff\\xff\\x7f@1/10/10=");
}

static void
test_binary_values(void **state)
{
	struct fx		*f = *state;
	static const char	 bin[] = "\0a\0\xff\x01";
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_begin(f, "bin", "empty");
	fx_put(f, 1, 0, S("bin"), bin, sizeof bin);
	fx_put(f, 1, 1, S("empty"), NULL, 0);
	fx_commit(f, 1);
	assert_string_equal(fx_get(f, S("bin")),
	    "bin@1/1/1=\\x00a\\x00\\xff\\x01\\x00");
	assert_string_equal(fx_get(f, S("empty")), "empty@1/1/1=");
	assert_string_equal(fx_list(f, &r, 2, 0),
	    "bin@1/1/1=\\x00a\\x00\\xff\\x01\\x00 empty@1/1/1=");
	assert_string_equal(fx_history(f, 1),
	    "1.0:bin@1/1/1=\\x00a\\x00\\xff\\x01\\x00 1.1:empty@1/1/1=");
}

static void
test_stats(void **state)
{
	struct fx		*f = *state;
	struct store_stats	 st;

	assert_int_equal(fx_nkeys(f), 0);
	fx_put1(f, "a", "1");
	fx_put1(f, "b", "2");
	fx_put1(f, "a", "3");
	assert_int_equal(fx_nkeys(f), 2);
	fx_begin(f, "a");
	assert_int_equal(fx_del(f, 4, 0, S("a")), 1);
	assert_int_equal(fx_del(f, 4, 1, S("a")), 0);
	fx_commit(f, 4);
	assert_int_equal(fx_nkeys(f), 1);
	fx_stats(f, &st);
	assert_true(st.db_bytes > 0);
	assert_int_equal(st.keys, 1);
	/* etcd: its endpoints, and whether each answered. */
	if (fx_remote(f)) {
		assert_int_equal(st.nendpoints, 1);
		assert_true(st.endpoint[0].healthy);
		assert_string_equal(st.endpoint[0].url, fx_etcd_url());
	} else
		assert_int_equal(st.nendpoints, 0);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		ALL(test_versions),
		ALL(test_batch_reads),
		ALL(test_rollback),
		LOCAL(test_mark_undo),
		ALL(test_mark_undo_one_rev),
		ALL(test_mark_undo_compact),
		ALL(test_list_paging),
		ALL(test_list_limit),
		ALL(test_list_bytewise),
		ALL(test_binary_values),
		ALL(test_stats),
	};

	return (store_cases_run("test_store", tests,
	    sizeof tests / sizeof tests[0], &fx_etcd));
}
