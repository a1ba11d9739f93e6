/*
 * Unit tests of the versioned store (daemon/store/): the contract of
 * store.h, run against each backend: memory, SQLite in a fresh temporary
 * directory and, when METAD_TEST_ETCD holds an etcd client URL (as
 * tests/run-etcd --unit sets it), etcd under a key prefix of each test's
 * own; without it no etcd test is registered.  The fixture and the helpers
 * that render results as text, one expectation a line, are in store_fx.c;
 * they also check every callback's answer (once, before the call returns
 * on a local store) and every notification.
 *
 * Where etcd's contract differs, the test says so and asserts what etcd
 * does:
 * - a batch holds one write request (batch_max 1): it lands at one
 *   revision, the one after its base, and writes each key at most once
 *   (metad refuses a key twice in one request: ops_txn.c); batches of
 *   several revs are the local stores' only;
 * - a batch reads only the keys named at store_begin(): a test names
 *   every key its batch gets, puts or deletes;
 * - only etcd's writes make revisions: a batch committed at a rev it did
 *   not write moves nothing.
 * Inside a batch only store_get() is promised to see the batch's writes;
 * the tests read ranges, history and stats outside batches.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fx.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

/*
 * The history from the compact rev on: below it every store answers
 * STORE_ERR_COMPACTED (test_compact).
 */
static const char *
history_kept(struct fx *f)
{
	return (fx_history(f, fx_compact_rev(f)));
}

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

/* Batches of several revs: the local stores' only. */
static void
test_history_order(void **state)
{
	struct fx	*f = *state;

	fx_begin(f, "a", "b", "c");
	fx_put(f, 1, 0, S("b"), S("1"));
	fx_put(f, 1, 1, S("a"), S("2"));
	fx_put(f, 2, 0, S("c"), S("3"));
	fx_commit(f, 2);
	fx_begin(f, "a", "b");
	assert_int_equal(fx_del(f, 3, 0, S("b")), 1);
	fx_put(f, 3, 1, S("b"), S("4"));
	fx_put(f, 5, 0, S("a"), S("5"));
	fx_commit(f, 5);
	assert_string_equal(fx_history(f, 0), "1.0:b@1/1/1=1 1.1:a@1/1/1=2 "
	    "2.0:c@1/2/2=3 3.0:del:b 3.1:b@1/3/3=4 5.0:a@2/1/5=5");
	assert_string_equal(fx_history(f, 3), "3.0:del:b 3.1:b@1/3/3=4 "
	    "5.0:a@2/1/5=5");
	assert_string_equal(fx_history(f, 4), "5.0:a@2/1/5=5");
	assert_string_equal(fx_history(f, 6), "");
	assert_string_equal(fx_notes(f), "0-2 2-5");
}

/* Batches of one rev each, as every backend has them. */
static void
test_history_batches(void **state)
{
	struct fx	*f = *state;

	fx_begin(f, "a", "b");
	fx_put(f, 1, 0, S("b"), S("1"));
	fx_put(f, 1, 1, S("a"), S("2"));
	fx_commit(f, 1);
	fx_begin(f, "b", "c");
	fx_put(f, 2, 0, S("c"), S("3"));
	assert_int_equal(fx_del(f, 2, 1, S("b")), 1);
	fx_commit(f, 2);
	fx_begin(f, "a", "b", "c");
	fx_put(f, 3, 0, S("a"), S("5"));
	fx_put(f, 3, 1, S("b"), S("4"));
	assert_int_equal(fx_del(f, 3, 2, S("c")), 1);
	fx_commit(f, 3);
	assert_string_equal(fx_history(f, 0), "1.0:b@1/1/1=1 1.1:a@1/1/1=2 "
	    "2.0:c@1/2/2=3 2.1:del:b 3.0:a@2/1/3=5 3.1:b@1/3/3=4 3.2:del:c");
	assert_string_equal(fx_history(f, 2), "2.0:c@1/2/2=3 2.1:del:b "
	    "3.0:a@2/1/3=5 3.1:b@1/3/3=4 3.2:del:c");
	assert_string_equal(fx_history(f, 3),
	    "3.0:a@2/1/3=5 3.1:b@1/3/3=4 3.2:del:c");
	assert_string_equal(fx_history(f, 4), "");
}

/*
 * Five revisions of 1, 3, 1, 2 and 1 events (whole revisions are what a
 * history read never splits).
 */
#define CHUNKS_ALL	"1.0:a@1/1/1=1 2.0:b@1/2/2=2 2.1:c@1/2/2=3 " \
			"2.2:d@1/2/2=4 3.0:e@1/3/3=5 4.0:a@2/1/4=6 4.1:del:b " \
			"5.0:f@1/5/5=7"

static void
history_chunks_fill(struct fx *f)
{
	fx_put1(f, "a", "1");
	fx_begin(f, "b", "c", "d");
	fx_put(f, 2, 0, S("b"), S("2"));
	fx_put(f, 2, 1, S("c"), S("3"));
	fx_put(f, 2, 2, S("d"), S("4"));
	fx_commit(f, 2);
	fx_put1(f, "e", "5");
	fx_begin(f, "a", "b");
	fx_put(f, 4, 0, S("a"), S("6"));
	assert_int_equal(fx_del(f, 4, 1, S("b")), 1);
	fx_commit(f, 4);
	fx_put1(f, "f", "7");
}

/* One store_read_history(): its events, and whether more follow. */
static const char *
chunk(struct fx *f, uint64_t from, size_t max, int more)
{
	int	 m;

	buf_reset(&f->out);
	fx_history_chunk(f, from, max, &m);
	assert_int_equal(m, more);
	return (buf_cstr(&f->out));
}

/*
 * store_read_history() hands back at most max_events events but to finish
 * a revision, says whether events follow, and asked again from the rev
 * after its last event gives the rest: each event once, in order.
 */
static void
test_history_chunks(void **state)
{
	struct fx	*f = *state;
	size_t		 max;

	history_chunks_fill(f);
	assert_string_equal(chunk(f, 1, 100, 0), CHUNKS_ALL);
	assert_string_equal(chunk(f, 0, 8, 0), CHUNKS_ALL);
	assert_string_equal(chunk(f, 1, 7, 1), "1.0:a@1/1/1=1 2.0:b@1/2/2=2 "
	    "2.1:c@1/2/2=3 2.2:d@1/2/2=4 3.0:e@1/3/3=5 4.0:a@2/1/4=6 "
	    "4.1:del:b");
	assert_string_equal(chunk(f, 1, 1, 1), "1.0:a@1/1/1=1");
	assert_string_equal(chunk(f, 2, 1, 1),
	    "2.0:b@1/2/2=2 2.1:c@1/2/2=3 2.2:d@1/2/2=4");
	assert_string_equal(chunk(f, 1, 2, 1), "1.0:a@1/1/1=1 2.0:b@1/2/2=2 "
	    "2.1:c@1/2/2=3 2.2:d@1/2/2=4");
	assert_string_equal(chunk(f, 3, 2, 1),
	    "3.0:e@1/3/3=5 4.0:a@2/1/4=6 4.1:del:b");
	assert_string_equal(chunk(f, 3, 3, 1),
	    "3.0:e@1/3/3=5 4.0:a@2/1/4=6 4.1:del:b");
	assert_string_equal(chunk(f, 3, 4, 0),
	    "3.0:e@1/3/3=5 4.0:a@2/1/4=6 4.1:del:b 5.0:f@1/5/5=7");
	assert_string_equal(chunk(f, 4, 1, 1), "4.0:a@2/1/4=6 4.1:del:b");
	assert_string_equal(chunk(f, 5, 1, 0), "5.0:f@1/5/5=7");
	assert_string_equal(chunk(f, 6, 1, 0), "");
	assert_string_equal(chunk(f, 100, 1, 0), "");
	/* Read through in chunks of every size, the same events. */
	for (max = 1; max <= 9; max++) {
		f->hist_max = max;
		assert_string_equal(fx_history(f, 1), CHUNKS_ALL);
		assert_string_equal(fx_history(f, 4),
		    "4.0:a@2/1/4=6 4.1:del:b 5.0:f@1/5/5=7");
	}
}

/*
 * etcd: history older than the store's cache (a store opened again has
 * none) is replayed from etcd, in chunks too; a read that spans the
 * replay and the cache gives each event once.
 */
static void
test_etcd_history_replay(void **state)
{
	struct fx	*f = *state;
	size_t		 max;

	history_chunks_fill(f);
	for (max = 1; max <= 9; max++) {
		fx_reopen(f, NULL);
		f->hist_max = max;
		assert_string_equal(fx_history(f, 1), CHUNKS_ALL);
		assert_string_equal(fx_history(f, 3), "3.0:e@1/3/3=5 "
		    "4.0:a@2/1/4=6 4.1:del:b 5.0:f@1/5/5=7");
	}
	fx_reopen(f, NULL);
	fx_put1(f, "g", "8");
	f->hist_max = 3;
	assert_string_equal(fx_history(f, 2), "2.0:b@1/2/2=2 2.1:c@1/2/2=3 "
	    "2.2:d@1/2/2=4 3.0:e@1/3/3=5 4.0:a@2/1/4=6 4.1:del:b "
	    "5.0:f@1/5/5=7 6.0:g@1/6/6=8");
	assert_string_equal(fx_history(f, 6), "6.0:g@1/6/6=8");
}

static void
test_compact(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 i;
	char			 k[16], beyond[64];

	for (i = 1; i <= 5; i++) {
		snprintf(k, sizeof k, "k%d", i);
		fx_put1(f, k, "v");
	}
	assert_int_equal(fx_compact(f, 3, &err), 0);
	assert_int_equal(fx_compact_rev(f), 3);
	assert_string_equal(history_kept(f), "3.0:k3@1/3/3=v 4.0:k4@1/4/4=v "
	    "5.0:k5@1/5/5=v");
	/* Below the compact rev the history is gone. */
	assert_int_equal(fx_history_err(f, 2, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_int_equal(fx_compact(f, 2, &err), 0);
	assert_int_equal(fx_compact_rev(f), 3);
	assert_int_equal(fx_compact(f, 6, &err), -1);
	assert_int_equal(err.code, STORE_ERR_INTERNAL);
	snprintf(beyond, sizeof beyond, "beyond the current rev %" PRIu64,
	    fx_abs(f, 5));
	assert_non_null(strstr(err.msg, beyond));
	assert_int_equal(f->s->in_batch, 0);
	/* In a batch with writes, up to the batch's own rev. */
	fx_begin(f, "k6");
	fx_put(f, 6, 0, S("k6"), S("v"));
	assert_int_equal(fx_compact(f, 7, &err), -1);
	assert_int_equal(fx_compact(f, 5, &err), 0);
	fx_commit(f, 6);
	assert_int_equal(fx_compact_rev(f), 5);
	assert_string_equal(history_kept(f), "5.0:k5@1/5/5=v 6.0:k6@1/6/6=v");
	assert_int_equal(fx_compact(f, 6, &err), 0);
	assert_string_equal(history_kept(f), "6.0:k6@1/6/6=v");
	assert_int_equal(fx_history_err(f, 5, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_int_equal(fx_nkeys(f), 6);
	assert_int_equal(fx_rev(f), 6);
	assert_string_equal(fx_notes(f), "0-1 1-2 2-3 3-4 4-5 5-6");
}

/* Many compactions of a long history (exercises the memory trim). */
static void
test_compact_many(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	uint64_t		 rev;
	char			 k[16];

	for (rev = 1; rev <= 300; rev++) {
		snprintf(k, sizeof k, "k%03d", (int)(rev % 7));
		fx_begin(f, k, "z");
		fx_put(f, rev, 0, k, strlen(k), k, strlen(k));
		fx_put(f, rev, 1, S("z"), k, strlen(k));
		fx_commit(f, rev);
		if (rev > 10)
			assert_int_equal(fx_compact(f, rev - 10, &err), 0);
	}
	assert_int_equal(fx_compact_rev(f), 290);
	history_kept(f);
	assert_int_equal(strncmp(f->out.data, "290.0:", 6), 0);
	assert_non_null(strstr(f->out.data, " 300.1:z@300/1/300=k006"));
}

/*
 * A batch that only compacts, committed at the current rev: the compact
 * rev rises, no rev goes by, nobody is notified.
 */
static void
test_compact_only_batch(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "2");
	fx_put1(f, "c", "3");
	assert_string_equal(fx_notes(f), "0-1 1-2 2-3");
	fx_begin(f);
	assert_int_equal(store_compact(f->s, fx_abs(f, 2), &err), 0);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_int_equal(store_compact(f->s, fx_abs(f, 4), &err), -1);
	assert_int_equal(err.code, STORE_ERR_INTERNAL);
	assert_int_equal(fx_try_commit(f, 3, &err), 0);
	assert_int_equal(fx_rev(f), 3);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_string_equal(fx_notes(f), "");
	assert_string_equal(history_kept(f), "2.0:b@1/2/2=2 3.0:c@1/3/3=3");
	assert_int_equal(fx_history_err(f, 1, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_int_equal(fx_nkeys(f), 3);
	/* One rolled back compacts nothing. */
	fx_begin(f);
	assert_int_equal(store_compact(f->s, fx_abs(f, 3), &err), 0);
	store_rollback(f->s);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_string_equal(history_kept(f), "2.0:b@1/2/2=2 3.0:c@1/3/3=3");
	fx_put1(f, "d", "4");
	assert_string_equal(fx_notes(f), "3-4");
	assert_string_equal(history_kept(f), "2.0:b@1/2/2=2 3.0:c@1/3/3=3 "
	    "4.0:d@1/4/4=4");
}

/* The history of the local stores with opts.history revisions kept. */
static void
history_reopen(struct fx *f, uint64_t keep)
{
	struct store_options	 opts = f->opts;

	opts.history = keep;
	fx_reopen(f, &opts);
}

/*
 * opts.history = 4: a commit trims the history to the last 4 revisions,
 * in the commit, in steps of a quarter of that (store_local.c): once 2
 * revisions more are kept, i.e. at every other commit; below them history
 * answers compacted.
 */
static void
test_history_trim(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	uint64_t		 rev, want;
	char			 k[16], exp[64];

	history_reopen(f, 4);
	for (rev = 1; rev <= 10; rev++) {
		snprintf(k, sizeof k, "k%d", (int)rev);
		fx_put1(f, k, "v");
		want = rev >= 5 ? (rev - 3) / 2 * 2 : 0;
		assert_int_equal(fx_compact_rev(f), want);
		snprintf(exp, sizeof exp, "%d.0:k%d@", want > 0 ? (int)want :
		    1, want > 0 ? (int)want : 1);
		fx_history(f, want);
		assert_int_equal(strncmp(f->out.data, exp, strlen(exp)), 0);
		if (want > 0) {
			assert_int_equal(fx_history_err(f, want - 1, &err),
			    -1);
			assert_int_equal(err.code, STORE_ERR_COMPACTED);
		}
	}
	assert_string_equal(history_kept(f), "6.0:k6@1/6/6=v 7.0:k7@1/7/7=v "
	    "8.0:k8@1/8/8=v 9.0:k9@1/9/9=v 10.0:k10@1/10/10=v");
	assert_int_equal(fx_nkeys(f), 10);
	/* A batch that writes nothing trims nothing. */
	fx_begin(f);
	assert_int_equal(fx_try_commit(f, 10, &err), 0);
	assert_int_equal(fx_compact_rev(f), 6);
	if (strcmp(f->kind, "sqlite") != 0)
		return;
	/* The trim was durable: it survives reopen. */
	history_reopen(f, 0);
	assert_int_equal(fx_compact_rev(f), 6);
	assert_string_equal(history_kept(f), "6.0:k6@1/6/6=v 7.0:k7@1/7/7=v "
	    "8.0:k8@1/8/8=v 9.0:k9@1/9/9=v 10.0:k10@1/10/10=v");
	/* With history 0, all is kept from there on. */
	fx_put1(f, "k11", "v");
	fx_put1(f, "k12", "v");
	assert_int_equal(fx_compact_rev(f), 6);
}

/*
 * opts.history = 32: the last 32 revisions are always kept; the trim
 * goes in steps of a quarter of that (store_local.c), so at most 40.
 */
static void
test_history_trim_steps(void **state)
{
	struct fx	*f = *state;
	uint64_t	 rev, first, rises = 0, last = 0;
	char		 k[16], exp[64];

	history_reopen(f, 32);
	for (rev = 1; rev <= 100; rev++) {
		snprintf(k, sizeof k, "k%d", (int)(rev % 5));
		fx_put1(f, k, "v");
		first = fx_compact_rev(f) > 0 ? fx_compact_rev(f) : 1;
		if (rev >= 32) {
			assert_true(rev - first + 1 >= 32);
			assert_true(rev - first + 1 <= 32 + 32 / 4);
		} else
			assert_int_equal(fx_compact_rev(f), 0);
		if (fx_compact_rev(f) != last)
			rises++;
		last = fx_compact_rev(f);
		snprintf(exp, sizeof exp, "%d.0:", (int)first);
		fx_history(f, first);
		assert_int_equal(strncmp(f->out.data, exp, strlen(exp)), 0);
	}
	assert_true(rises >= 7);
	assert_int_equal(fx_nkeys(f), 5);
}

/*
 * A local batch of several revs, committed with opts.history smaller than
 * it: notify(from, to) says the events of (from, to] are in the history,
 * and the daemon reads them there (events.c); the trim must not drop
 * them before they are read.  (The fixture's notify reads them.)
 */
static void
test_history_trim_batch(void **state)
{
	struct fx	*f = *state;

	history_reopen(f, 2);
	fx_put1(f, "a", "1");
	fx_begin(f, "a", "b", "c", "d");
	fx_put(f, 2, 0, S("a"), S("2"));
	fx_put(f, 3, 0, S("b"), S("3"));
	fx_put(f, 4, 0, S("c"), S("4"));
	fx_put(f, 5, 0, S("d"), S("5"));
	fx_commit(f, 5);
	assert_string_equal(fx_notes(f), "0-1 1-5");
}

/* What a commit's callback sees of the store. */
struct commit_seen {
	struct fx	*f;
	int		 calls;
	int		 failed;
	int		 in_batch;
	size_t		 notes_len;
	uint64_t	 rev;
};

static void
commit_seen_done(void *arg, const struct store_err *err)
{
	struct commit_seen	*c = arg;

	c->calls++;
	c->failed = err != NULL;
	c->in_batch = c->f->s->in_batch;
	c->notes_len = c->f->notes.len;
	c->rev = store_rev(c->f->s);
}

/*
 * opts.notify(from, to) after each commit that moved the rev, with the
 * rev before it and the new one; none for a batch that wrote nothing, a
 * compaction, a rollback.  A local store notifies before the commit's
 * callback, whose batch is closed already.
 */
static void
test_notify(void **state)
{
	struct fx		*f = *state;
	struct commit_seen	 c;
	struct store_err	 err;

	fx_put1(f, "a", "1");
	assert_string_equal(fx_notes(f), "0-1");
	fx_put1(f, "b", "2");
	fx_put1(f, "a", "3");
	assert_string_equal(fx_notes(f), "1-2 2-3");
	fx_begin(f);
	assert_int_equal(fx_try_commit(f, 3, &err), 0);
	fx_begin(f, "c");
	fx_put(f, 4, 0, S("c"), S("4"));
	store_rollback(f->s);
	assert_int_equal(fx_compact(f, 2, &err), 0);
	assert_string_equal(fx_notes(f), "");
	assert_int_equal(fx_rev(f), 3);
	memset(&c, 0, sizeof c);
	c.f = f;
	fx_begin(f, "c", "d");
	fx_put(f, 4, 0, S("c"), S("4"));
	if (!fx_remote(f))
		fx_put(f, 5, 0, S("d"), S("5"));
	store_commit(f->s, fx_abs(f, fx_remote(f) ? 4 : 5), commit_seen_done,
	    &c);
	fx_wait(f, &c.calls);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.failed, 0);
	assert_int_equal(c.in_batch, 0);
	if (fx_remote(f)) {
		/* etcd: the events come through the watch stream. */
		fx_wait_rev(f, 4);
		assert_string_equal(fx_notes(f), "3-4");
		return;
	}
	assert_true(c.notes_len > 0);
	assert_int_equal(c.rev, fx_abs(f, 5));
	assert_string_equal(fx_notes(f), "3-5");
	assert_string_equal(fx_history(f, 4), "4.0:c@1/4/4=4 5.0:d@1/5/5=5");
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

/*
 * The batch protocol: writes, gets, marks and compactions only inside a
 * batch (an error return); a begin while a batch is open, or a commit
 * with none, answers the error through its callback.
 */
static void
test_batch_protocol(void **state)
{
	struct fx		*f = *state;
	struct store_keys	 none;
	struct store_err	 err;
	char			*big;

	none.n = 0;
	none.rkey = NULL;
	/* etcd: one write request a batch; local stores: no limit. */
	assert_int_equal(store_batch_max(f->s), fx_remote(f) ? 1 : 0);
	assert_int_equal(store_put(f->s, fx_abs(f, 1), 0, S("a"), S("1"), NULL,
	    NULL, &err), -1);
	assert_int_equal(store_delete(f->s, fx_abs(f, 1), 0, S("a"), NULL,
	    &err), -1);
	assert_int_equal(store_get(f->s, S("a"), fx_kv_cb, f, &err), -1);
	assert_int_equal(store_mark(f->s, &err), -1);
	assert_int_equal(store_undo(f->s, &err), -1);
	assert_int_equal(store_compact(f->s, fx_abs(f, 0), &err), -1);
	memset(&err, 0, sizeof err);
	assert_int_equal(fx_try_commit(f, 1, &err), -1);
	assert_int_equal(err.code, STORE_ERR_INTERNAL);
	assert_non_null(strstr(err.msg, "outside a batch"));
	store_rollback(f->s);
	assert_int_equal(f->s->in_batch, 0);
	fx_put1(f, "a", "1");
	fx_begin(f, "a", "b");
	memset(&err, 0, sizeof err);
	assert_int_equal(fx_try_begin(f, &none, &err), -1);
	assert_int_equal(err.code, STORE_ERR_INTERNAL);
	assert_int_equal(f->s->in_batch, 1);
	assert_string_equal(fx_get(f, S("a")), "a@1/1/1=1");
	/* At or below the base rev, or a key out of bounds. */
	assert_int_equal(store_put(f->s, fx_abs(f, 1), 0, S("a"), S("1"), NULL,
	    NULL, &err), -1);
	assert_int_equal(store_put(f->s, fx_abs(f, 2), 0, "", 0, S("1"), NULL,
	    NULL, &err), -1);
	big = xcalloc(1, KEY_MAX_BYTES + 2);
	memset(big, 'k', KEY_MAX_BYTES + 1);
	assert_int_equal(store_put(f->s, fx_abs(f, 2), 0, big,
	    KEY_MAX_BYTES + 1, S("1"), NULL, NULL, &err), -1);
	free(big);
	fx_put(f, 2, 0, S("b"), S("1"));
	store_rollback(f->s);
	assert_int_equal(f->s->in_batch, 0);
	assert_string_equal(fx_get(f, S("b")), "");
	/* An empty batch commits, and no rev goes by. */
	fx_begin(f);
	assert_int_equal(fx_try_commit(f, 1, &err), 0);
	assert_int_equal(f->s->in_batch, 0);
	assert_int_equal(fx_rev(f), 1);
	assert_string_equal(fx_notes(f), "0-1");
	fx_begin(f);
	assert_int_equal(store_reopen(f->s, fx_abs(f, 1), &err), -1);
	store_rollback(f->s);
	assert_int_equal(f->s->in_batch, 0);
}

/*
 * A commit below the store's rev (the revs of a store never go down): its
 * callback gets the error, and nothing of the batch is written.
 */
static void
test_commit_below_rev(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	fx_put1(f, "a", "1");
	fx_put1(f, "a", "2");
	assert_string_equal(fx_notes(f), "0-1 1-2");
	fx_begin(f, "b");
	fx_put(f, 3, 0, S("b"), S("3"));
	memset(&err, 0, sizeof err);
	assert_int_equal(fx_try_commit(f, 1, &err), -1);
	assert_int_equal(err.code, STORE_ERR_INTERNAL);
	assert_int_equal(fx_rev(f), 2);
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2");
	assert_string_equal(fx_notes(f), "");
	fx_put1(f, "b", "3");
	assert_string_equal(fx_get(f, S("b")), "b@1/3/3=3");
}

/*
 * store_reopen() after the batch just committed (with a compaction when
 * compact), at its base; then its commit, which is refused, and its
 * rollback, which must leave the committed batch as it is.
 */
static void
reopen_batch(struct fx *f, int compact)
{
	struct commit_seen	 c;
	struct store_err	 err;
	struct store_kv		 meta;
	uint64_t		 prev;

	fx_put1(f, "a", "1");
	fx_put1(f, "a", "2");
	fx_put1(f, "b", "3");
	fx_begin(f, "a", "c");
	fx_put(f, 4, 0, S("c"), S("4"));
	if (compact)
		assert_int_equal(fx_compact(f, 2, &err), 0);
	fx_commit(f, 4);
	if (!fx_remote(f)) {
		/* A local store lands every batch where it was planned. */
		assert_int_equal(store_reopen(f->s, fx_abs(f, 3), &err), -1);
		assert_int_equal(f->s->in_batch, 0);
		return;
	}
	assert_int_equal(store_reopen(f->s, fx_abs(f, 3), &err), 0);
	assert_int_equal(f->s->in_batch, 1);
	assert_int_equal(store_base_rev(f->s), fx_abs(f, 3));
	assert_int_equal(store_reopen(f->s, fx_abs(f, 3), &err), -1);
	if (fx_remote(f)) {
		/* etcd: it reads what the batch read, at its base... */
		assert_string_equal(fx_get(f, S("c")), "");
		assert_string_equal(fx_get(f, S("a")), "a@2/1/2=2");
		/* ...and its writes, at the rev they landed at, are taken. */
		assert_int_equal(store_put(f->s, fx_abs(f, 4), 0, S("c"),
		    S("4"), &meta, &prev, &err), 0);
		assert_int_equal(prev, 0);
		assert_int_equal(meta.create_rev, fx_abs(f, 4));
	}
	memset(&c, 0, sizeof c);
	c.f = f;
	store_commit(f->s, fx_abs(f, 4), commit_seen_done, &c);
	fx_wait(f, &c.calls);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.failed, 1);
	store_rollback(f->s);
	assert_int_equal(f->s->in_batch, 0);
	assert_int_equal(fx_rev(f), 4);
}

/*
 * store_reopen(): the batch just committed, opened again at its base so
 * that its request runs once more (commit.c does, when etcd landed it
 * above the planned rev; a local store refuses).  Its rollback leaves the
 * committed batch as it is: keys, history, key count.
 */
static void
test_reopen_batch(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	reopen_batch(f, 0);
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2 "
	    "3.0:b@1/3/3=3 4.0:c@1/4/4=4");
	assert_string_equal(fx_list(f, &r, 3, 0),
	    "a@2/1/2=2 b@1/3/3=3 c@1/4/4=4");
	assert_int_equal(fx_nkeys(f), 3);
	fx_put1(f, "d", "5");
	assert_int_equal(fx_nkeys(f), 4);
	assert_string_equal(fx_history(f, 4), "4.0:c@1/4/4=4 5.0:d@1/5/5=5");
}

/* The same, the committed batch having compacted: the compaction stays. */
static void
test_reopen_batch_compact(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	reopen_batch(f, 1);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_int_equal(fx_history_err(f, 1, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_string_equal(history_kept(f), "2.0:a@2/1/2=2 3.0:b@1/3/3=3 "
	    "4.0:c@1/4/4=4");
}

/*
 * A batch whose only write is a delete of an absent key, committed at its
 * base rev (as commit.c commits a batch none of whose requests wrote):
 * it lands, and nothing changes: no rev, no event, no compaction.
 */
static void
test_batch_noop_delete(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	fx_put1(f, "a", "1");
	fx_put1(f, "a", "2");
	assert_string_equal(fx_notes(f), "0-1 1-2");
	fx_begin(f, "x");
	assert_int_equal(fx_del(f, 3, 0, S("x")), 0);
	assert_int_equal(fx_try_commit(f, 2, &err), 0);
	assert_int_equal(fx_rev(f), 2);
	assert_int_equal(fx_compact_rev(f), 0);
	assert_string_equal(fx_notes(f), "");
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2");
	fx_put1(f, "x", "3");
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2 "
	    "3.0:x@1/3/3=3");
	/* etcd: a store opened again finds no compaction either. */
	if (strcmp(f->kind, "memory") == 0)
		return;
	fx_reopen(f, NULL);
	assert_int_equal(fx_compact_rev(f), 0);
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:a@2/1/2=2 "
	    "3.0:x@1/3/3=3");
}

/* The names of the keys of test_batch_many_keys. */
static char	 many_names[STORE_PREFETCH_MAX][8];

/*
 * A batch that names STORE_PREFETCH_MAX keys (a fence, every compare and
 * every op of the largest txn): each reads at the base (etcd: in several
 * txns of at most ETCD_TXN_OPS_MAX reads, at one revision).
 */
static void
test_batch_many_keys(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "m", 1, NULL, 0, 1000, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_keys	 ks;
	char			 want[64];
	uint64_t		 rev = 0;
	size_t			 i, n;

	ks.n = 0;
	ks.rkey = NULL;
	for (i = 0; i < STORE_PREFETCH_MAX; i++) {
		snprintf(many_names[i], sizeof many_names[i], "m%03zu", i);
		store_keys_add(&ks, many_names[i], 4);
	}
	store_keys_add(&ks, "over", 4);		/* one too many: dropped */
	assert_int_equal(ks.n, STORE_PREFETCH_MAX);
	/* The even keys, 43 a batch (etcd: 44 ops a txn). */
	for (i = 0; i < STORE_PREFETCH_MAX; i += 2) {
		if (i % 86 == 0) {
			if (rev > 0)
				fx_commit(f, rev);
			fx_begin_keys(f, &ks);
			rev++;
		}
		fx_put(f, rev, (uint32_t)(i % 86) / 2, many_names[i], 4,
		    many_names[i], 4);
	}
	fx_commit(f, rev);
	assert_int_equal(rev, 3);
	assert_int_equal(fx_nkeys(f), (STORE_PREFETCH_MAX + 1) / 2);
	fx_begin_keys(f, &ks);
	for (i = 0; i < STORE_PREFETCH_MAX; i++) {
		if (i % 2 == 0)
			snprintf(want, sizeof want, "%s@1/%zu/%zu=%s",
			    many_names[i], i / 86 + 1, i / 86 + 1,
			    many_names[i]);
		else
			want[0] = '\0';
		assert_string_equal(fx_get(f, many_names[i], 4), want);
	}
	fx_put(f, 4, 0, many_names[STORE_PREFETCH_MAX - 1], 4, S("new"));
	assert_int_equal(fx_del(f, 4, 1, many_names[0], 4), 1);
	fx_put(f, 4, 2, many_names[1], 4, S("odd"));
	assert_string_equal(fx_get(f, many_names[0], 4), "");
	assert_string_equal(fx_get(f, many_names[1], 4), "m001@1/4/4=odd");
	assert_string_equal(fx_get(f, many_names[STORE_PREFETCH_MAX - 1], 4),
	    "m256@2/3/4=new");
	assert_string_equal(fx_get(f, many_names[STORE_PREFETCH_MAX - 2], 4),
	    "");
	fx_commit(f, 4);
	n = (STORE_PREFETCH_MAX + 1) / 2;
	assert_int_equal(fx_nkeys(f), n);
	fx_list(f, &r, (long)n, 0);
	assert_string_equal(fx_history(f, 4), "4.0:m256@2/3/4=new 4.1:del:m000 "
	    "4.2:m001@1/4/4=odd");
}

/*
 * The most one write request writes: TXN_MAX_OPS keys (a txn's ops), in
 * one batch at one rev.
 */
static void
test_batch_request_max(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 1000, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_keys	 ks;
	struct store_err	 err;
	size_t			 i;

	ks.n = 0;
	ks.rkey = NULL;
	for (i = 0; i < TXN_MAX_OPS; i++) {
		snprintf(many_names[i], sizeof many_names[i], "t%03zu", i);
		store_keys_add(&ks, many_names[i], 4);
	}
	fx_begin_keys(f, &ks);
	for (i = 0; i < TXN_MAX_OPS; i++)
		fx_put(f, 1, (uint32_t)i, many_names[i], 4, S("v"));
	if (fx_try_commit(f, 1, &err) != 0)
		fail_msg("a batch of %d puts: %s", TXN_MAX_OPS, err.msg);
	assert_int_equal(fx_rev(f), 1);
	assert_int_equal(fx_nkeys(f), TXN_MAX_OPS);
	fx_list(f, &r, TXN_MAX_OPS, 0);
	assert_string_equal(fx_notes(f), "0-1");
}

static void
test_open_errors(void **state)
{
	static const char	*bad[] = {
		"", "mem", "memory:x", "sqlite", "sqlite:", "redis:x",
		"etcd", "etcd:", "etcd:ftp://x:1", "etcd:http://x", "etcd:,",
	};
	struct store_err	 err;
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		assert_null(store_open(bad[i], NULL, &err));
		assert_int_not_equal(err.code, STORE_ERR_NONE);
		assert_true(err.msg[0] != '\0');
	}
	/* Nothing listens on port 1: etcd is unreachable, not a crash. */
	assert_null(store_open("etcd:http://127.0.0.1:1", NULL, &err));
	assert_int_equal(err.code, STORE_ERR_UNAVAILABLE);
	assert_null(store_open("sqlite:/dev/null/x/meta.db", NULL, &err));
	assert_int_equal(err.code, STORE_ERR_IO);
}

/*
 * What a store holds survives close and reopen: kvs, rev, compact rev and
 * history (etcd: replayed from etcd, the new store's cache being empty).
 */
static void
test_reopen(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_options	 opts;
	struct store_err	 err;
	char			 kvs[256], hist[256];

	memset(&opts, 0, sizeof opts);
	opts.sync = STORE_SYNC_NORMAL;
	opts.cache_bytes = 1024 * 1024;
	fx_put1(f, "a", "1");
	fx_put1(f, "b", "2");
	fx_put1(f, "a", "3");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 4, 0, S("b")), 1);
	fx_commit(f, 4);
	assert_int_equal(fx_compact(f, 2, &err), 0);
	snprintf(kvs, sizeof kvs, "%s", fx_list(f, &r, 1, 0));
	snprintf(hist, sizeof hist, "%s", history_kept(f));
	assert_string_equal(fx_notes(f), "0-1 1-2 2-3 3-4");
	fx_reopen(f, &opts);
	assert_int_equal(fx_rev(f), 4);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_string_equal(fx_list(f, &r, 1, 0), kvs);
	assert_string_equal(history_kept(f), hist);
	assert_string_equal(hist, "2.0:b@1/2/2=2 3.0:a@2/1/3=3 4.0:del:b");
	/* Nor can a store replay what it compacted. */
	assert_int_equal(fx_history_err(f, 1, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_int_equal(fx_nkeys(f), 1);
	fx_put1(f, "c", "5");
	assert_string_equal(fx_get(f, S("c")), "c@1/5/5=5");
	assert_string_equal(fx_notes(f), "4-5");
}

static void
test_sqlite_not_a_db(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	char			 path[128], spec[160];
	FILE			*fp;

	snprintf(path, sizeof path, "%s/junk.db", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%4096s\n", "this is not an SQLite database");
	fclose(fp);
	snprintf(spec, sizeof spec, "sqlite:%s", path);
	assert_null(store_open(spec, NULL, &err));
	assert_int_equal(err.code, STORE_ERR_IO);
}

/*
 * A batch of "b" and a big value under a 256 KiB file size limit: returns 1
 * if the put failed, 2 if only the commit did, 0 if neither.
 */
static int
sqlite_big_batch(struct fx *f, size_t big, struct store_err *err)
{
	struct rlimit	 old, lim;
	char		*value;
	int		 failed = 0;

	value = xcalloc(1, big);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 256 * 1024;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	fx_begin(f, "b", "big");
	fx_put(f, 2, 0, S("b"), S("2"));
	if (store_put(f->s, fx_abs(f, 2), 1, S("big"), value, big, NULL, NULL,
	    err) != 0)
		failed = 1;
	if (fx_try_commit(f, 2, err) != 0 && failed == 0)
		failed = 2;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	free(value);
	return (failed);
}

/* A batch that cannot be written leaves the store as it was. */
static void
test_sqlite_write_fails(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct store_err	 err;

	fx_put1(f, "a", "1");
	assert_string_equal(fx_notes(f), "0-1");
	/* Fits in the page cache: the commit fails writing the WAL. */
	assert_int_equal(sqlite_big_batch(f, 1024 * 1024, &err), 2);
	assert_int_equal(err.code, STORE_ERR_FULL);	/* EFBIG */
	/*
	 * Spills the cache (32 MiB; a put writes its value once, to the
	 * log): the put fails, then the commit refuses.
	 */
	assert_int_equal(sqlite_big_batch(f, 48 * 1024 * 1024, &err), 1);
	assert_int_equal(err.code, STORE_ERR_FULL);	/* EFBIG */
	assert_non_null(strstr(err.msg, "aborted"));
	assert_int_equal(f->s->in_batch, 0);
	assert_int_equal(fx_rev(f), 1);
	assert_string_equal(fx_notes(f), "");
	assert_string_equal(fx_list(f, &r, 1, 0), "a@1/1/1");
	assert_string_equal(fx_history(f, 0), "1.0:a@1/1/1=1");
	assert_int_equal(fx_nkeys(f), 1);
	fx_put1(f, "c", "3");
	assert_string_equal(fx_list(f, &r, 2, 0), "a@1/1/1 c@1/2/2");
}

/*
 * The trim of opts.history is part of the commit: a commit that fails
 * trims nothing.
 */
static void
test_sqlite_write_fails_trim(void **state)
{
	struct fx		*f = *state;
	struct store_options	 opts = f->opts;
	struct store_err	 err;

	opts.history = 1;
	fx_reopen(f, &opts);
	fx_put1(f, "a", "1");
	assert_int_equal(fx_compact_rev(f), 1);
	assert_int_equal(sqlite_big_batch(f, 1024 * 1024, &err), 2);
	assert_int_equal(fx_compact_rev(f), 1);
	assert_string_equal(history_kept(f), "1.0:a@1/1/1=1");
	fx_reopen(f, &opts);
	assert_int_equal(fx_compact_rev(f), 1);
	assert_string_equal(history_kept(f), "1.0:a@1/1/1=1");
}

/* An asynchronous read's answer, rendered into f->out. */
struct aread {
	struct fx	*f;
	int		 done;
	long		 n;
	int		 more;
};

static void
aread_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *err)
{
	struct aread	*a = arg;
	long		 i;

	buf_reset(&a->f->out);
	for (i = 0; i < n; i++)
		fx_kv_cb(&kvs[i], a->f);
	if (n < 0)
		buf_addstr(&a->f->out, err->msg);
	a->n = n;
	a->more = more;
	a->done++;
}

static void
astats_done(void *arg, const struct store_stats *st,
    const struct store_err *err)
{
	struct aread	*a = arg;

	a->n = st != NULL ? (long)st->keys : -1;
	a->done++;
}

/* The answer comes on the loop, never before the call returns. */
static const char *
aread_wait(struct aread *a)
{
	assert_int_equal(a->done, 0);
	fx_wait(a->f, &a->done);
	assert_int_equal(a->done, 1);
	a->done = 0;
	return (buf_cstr(&a->f->out));
}

/*
 * etcd: reads outside a batch answered on the daemon's loop (store.h),
 * with the revision they read at in seen_rev.
 */
static void
test_etcd_async_reads(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "k", 1, NULL, 0, 2, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct aread		 a = { f, 0, 0, 0 };

	fx_put1(f, "k1", "1");
	fx_put1(f, "k2", "2");
	fx_put1(f, "k3", "3");
	store_read_get(f->s, S("k2"), aread_done, &a);
	assert_string_equal(aread_wait(&a), "k2@1/2/2=2");
	assert_int_equal(a.n, 1);
	store_read_get(f->s, S("k"), aread_done, &a);
	assert_string_equal(aread_wait(&a), "");
	assert_int_equal(a.n, 0);
	store_read_range(f->s, &r, aread_done, &a);
	assert_string_equal(aread_wait(&a), "k1@1/1/1=1 k2@1/2/2=2");
	assert_int_equal(a.n, 2);
	assert_int_equal(a.more, 1);
	r.after = "k2";
	r.after_len = 2;
	r.keys_only = 1;
	store_read_range(f->s, &r, aread_done, &a);
	assert_string_equal(aread_wait(&a), "k3@1/3/3");
	assert_int_equal(a.more, 0);
	store_read_stats(f->s, astats_done, &a);
	aread_wait(&a);
	assert_int_equal(a.n, 3);
	assert_int_equal(store_read_rev(f->s), fx_abs(f, 3));
}

/*
 * etcd: a batch reads only the keys it named at store_begin() (store.h):
 * a get, put or delete of another key is an error, and the batch goes on.
 */
static void
test_etcd_unnamed_key(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 deleted;

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "2");
	fx_begin(f, "a");
	memset(&err, 0, sizeof err);
	assert_int_equal(store_get(f->s, S("b"), fx_kv_cb, f, &err), -1);
	assert_non_null(strstr(err.msg, "not read with the batch"));
	assert_int_equal(store_put(f->s, fx_abs(f, 3), 0, S("b"), S("3"), NULL,
	    NULL, &err), -1);
	assert_int_equal(store_delete(f->s, fx_abs(f, 3), 0, S("b"), &deleted,
	    &err), -1);
	fx_put(f, 3, 0, S("a"), S("3"));
	fx_commit(f, 3);
	assert_string_equal(fx_history(f, 1), "1.0:a@1/1/1=1 2.0:b@1/2/2=2 "
	    "3.0:a@2/1/3=3");
}

/*
 * etcd: two stores on one prefix, as two daemons sharing etcd.  A batch
 * reads the keys it named at begin as they were at its base; when the
 * other store wrote since, its commit fails with STORE_ERR_CONFLICT and
 * writes nothing.
 */
static void
test_etcd_conflict(void **state)
{
	struct fx		*f = *state;
	struct fx		 g;
	struct store_err	 err;

	fx_put1(f, "k", "1");
	fx_put1(f, "j", "1");
	fx_twin(f, &g, f->prefix);
	fx_begin(f, "k", "j", "x");
	fx_put(f, 3, 0, S("x"), S("1"));
	fx_put1(&g, "k", "2");
	fx_put1(&g, "j", "2");
	assert_string_equal(fx_get(f, S("k")), "k@1/1/1=1");
	assert_string_equal(fx_get(f, S("j")), "j@1/2/2=1");
	assert_int_equal(fx_try_commit(f, 3, &err), -1);
	assert_int_equal(err.code, STORE_ERR_CONFLICT);
	assert_int_equal(f->s->in_batch, 0);
	fx_wait_rev(f, 4);
	assert_string_equal(fx_get(f, S("x")), "");
	assert_string_equal(fx_get(f, S("k")), "k@2/1/3=2");
	assert_string_equal(fx_history(f, 0), "1.0:k@1/1/1=1 2.0:j@1/2/2=1 "
	    "3.0:k@2/1/3=2 4.0:j@2/2/4=2");
	/* A store is told of the other's writes too. */
	assert_int_equal(f->notified, fx_abs(f, 4));
	/* Made again on the new base, it lands. */
	fx_begin(f, "x");
	fx_put(f, 5, 0, S("x"), S("1"));
	fx_commit(f, 5);
	fx_wait_rev(&g, 5);
	assert_string_equal(fx_get(&g, S("x")), "x@1/5/5=1");
	fx_twin_close(&g);
}

/*
 * etcd: a writer outside metad (a store on another prefix) moves etcd
 * between a batch's begin and its commit: the commit lands above
 * base_rev + 1, and commit_rev says where; metad then runs the request
 * again at that rev in the batch store_reopen() opens at the same base
 * (commit.c), which reads what the batch read.
 */
static void
test_etcd_outside_writer(void **state)
{
	struct fx		*f = *state;
	struct fx		 g;
	struct store_err	 err;
	struct store_kv		 meta;
	uint64_t		 base, prev;
	char			 other[sizeof f->prefix + 8];

	/* "metad-test/T.P.Nx/" is not under "metad-test/T.P.N/". */
	snprintf(other, sizeof other, "%.*sx/", (int)strlen(f->prefix) - 1,
	    f->prefix);
	fx_put1(f, "a", "1");
	fx_twin(f, &g, other);
	fx_begin(f, "a", "b");
	base = store_base_rev(f->s);
	fx_put(f, 2, 0, S("b"), S("2"));
	fx_put1(&g, "x", "1");
	assert_int_equal(fx_try_commit(f, 2, &err), 0);
	assert_int_equal(store_commit_rev(f->s), fx_abs(f, 3));
	assert_int_equal(fx_rev(f), 3);
	assert_true(f->s->head.seen_rev >= fx_abs(f, 3));
	assert_int_equal(store_reopen(f->s, base, &err), 0);
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_get(f, S("a")), "a@1/1/1=1");
	assert_int_equal(store_put(f->s, store_commit_rev(f->s), 0, S("b"),
	    S("2"), &meta, &prev, &err), 0);
	assert_int_equal(meta.mod_rev, fx_abs(f, 3));
	assert_int_equal(meta.version, 1);
	store_rollback(f->s);
	assert_string_equal(fx_get(f, S("b")), "b@1/3/3=2");
	assert_string_equal(fx_history(f, 0), "1.0:a@1/1/1=1 3.0:b@1/3/3=2");
	assert_string_equal(fx_history(&g, 0), "2.0:x@1/2/2=1");
	assert_string_equal(fx_notes(f), "0-1 1-3");
	fx_twin_close(&g);
}

/* The keys of the model tests: k0..k39, all named by each batch. */
#define MODEL_KEYS	40

static char	 model_names[MODEL_KEYS][8];

static void
model_begin(struct fx **fs)
{
	struct store_keys	 ks;
	int			 i;

	ks.n = 0;
	ks.rkey = NULL;
	for (i = 0; i < MODEL_KEYS; i++) {
		snprintf(model_names[i], sizeof model_names[i], "k%d", i);
		store_keys_add(&ks, model_names[i], strlen(model_names[i]));
	}
	fx_begin_keys(fs[0], &ks);
	fx_begin_keys(fs[1], &ks);
}

/* Inside a batch: what store_get() gives of every key must agree. */
static void
model_check_gets(struct fx *a, struct fx *b)
{
	char	 got[64];
	int	 i;

	for (i = 0; i < MODEL_KEYS; i++) {
		snprintf(got, sizeof got, "%s", fx_get(a, model_names[i],
		    strlen(model_names[i])));
		assert_string_equal(got, fx_get(b, model_names[i],
		    strlen(model_names[i])));
	}
}

/*
 * Outside a batch: every listing, the history (from the compact rev on,
 * as history_kept()), the key count and the revs must agree.
 */
static void
model_check(struct fx *a, struct fx *b)
{
	struct store_range	 r = { "", 0, NULL, 0, 1000, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };
	struct buf		 got;
	uint64_t		 from;

	buf_init(&got);
	buf_addstr(&got, fx_list(a, &r, (long)fx_nkeys(a), 0));
	assert_string_equal(buf_cstr(&got), fx_list(b, &r, (long)fx_nkeys(b),
	    0));
	from = fx_compact_rev(b);
	buf_reset(&got);
	buf_addstr(&got, fx_history(a, from));
	assert_string_equal(buf_cstr(&got), fx_history(b, from));
	buf_free(&got);
	assert_int_equal(fx_nkeys(a), fx_nkeys(b));
	assert_int_equal(fx_rev(a), fx_rev(b));
	assert_int_equal(fx_compact_rev(a), fx_compact_rev(b));
}

static void
model_step(struct fx **fs, int op, uint64_t rev, uint32_t seq, char *k,
    struct store_err *err)
{
	int	 i, d[2];

	for (i = 0; i < 2; i++) {
		switch (op) {
		case 0:
		case 1:
		case 2:
			fx_put(fs[i], rev, seq, k, strlen(k), k, seq % 3);
			break;
		case 3:
			d[i] = fx_del(fs[i], rev, seq, k, strlen(k));
			break;
		case 4:
			assert_int_equal(store_mark(fs[i]->s, err), 0);
			break;
		case 5:
			store_undo(fs[i]->s, err);
			break;
		}
	}
	if (op == 3)
		assert_int_equal(d[0], d[1]);
}

/*
 * Random batches of puts, deletes, marks, undos and rollbacks, over
 * several revs each, on memory and SQLite at once; every few batches a
 * compaction (a batch of its own).  The two are notified alike.
 */
static void
test_model(void **state)
{
	struct fx		*fs[2] = { &fx_mem, &fx_sql };
	struct store_err	 err;
	uint64_t		 rev, was;
	uint32_t		 seq;
	int			 batch, i, n, op, wrote;
	char			 k[8], notes[64];

	srandom(42);
	for (batch = 0; batch < 200; batch++) {
		model_begin(fs);
		was = fx_rev(fs[0]);
		rev = was + 1;
		wrote = 0;
		n = (int)(random() % 12);
		for (seq = 0; seq < (uint32_t)n; seq++) {
			snprintf(k, sizeof k, "k%ld", random() % MODEL_KEYS);
			op = (int)(random() % 6);
			model_step(fs, op, rev, seq, k, &err);
			wrote |= op <= 3;
			if (random() % 4 == 0)
				rev++;
		}
		model_check_gets(fs[0], fs[1]);
		for (i = 0; i < 2; i++) {
			if (batch % 5 == 4)
				store_rollback(fs[i]->s);
			else if (wrote)
				fx_commit(fs[i], rev);
			else {
				/* Nothing to write: no rev goes by. */
				assert_int_equal(fx_try_commit(fs[i], rev,
				    &err), 0);
				assert_int_equal(fx_rev(fs[i]), was);
			}
			if (batch % 7 == 6 && fx_rev(fs[i]) > 3)
				assert_int_equal(fx_compact(fs[i],
				    fx_rev(fs[i]) - 3, &err), 0);
		}
		model_check(fs[0], fs[1]);
		snprintf(notes, sizeof notes, "%s", fx_notes(fs[0]));
		assert_string_equal(notes, fx_notes(fs[1]));
	}
}

/* The key number kn among the n written in this batch? */
static int
model_written(const int *w, uint32_t n, int kn)
{
	uint32_t	 i;

	for (i = 0; i < n; i++) {
		if (w[i] == kn)
			return (1);
	}
	return (0);
}

/*
 * One step of a one-rev batch on both stores, w the keys written so far
 * (*nw of them, *marked at the mark, -1 if none).  Each key at most once:
 * a step on a key already written is left out.
 */
static void
model_step_one_rev(struct fx **fs, int op, uint64_t rev, int kn, int *w,
    uint32_t *nw, long *marked)
{
	struct store_err	 err;
	char			 got[64];
	const char		*k = model_names[kn];
	int			 i, d[2];

	if (model_written(w, *nw, kn))
		return;
	for (i = 0; i < 2; i++) {
		switch (op) {
		case 0:
		case 1:
		case 2:
			fx_put(fs[i], rev, *nw, k, strlen(k), k, *nw % 3);
			break;
		case 3:
			d[i] = fx_del(fs[i], rev, *nw, k, strlen(k));
			break;
		case 4:
			assert_int_equal(store_mark(fs[i]->s, &err), 0);
			break;
		case 5:
			if (*marked >= 0)
				assert_int_equal(store_undo(fs[i]->s, &err), 0);
			break;
		}
	}
	if (op <= 2 || (op == 3 && d[0]))
		w[(*nw)++] = kn;
	if (op == 3)
		assert_int_equal(d[0], d[1]);
	if (op == 4)
		*marked = *nw;
	if (op == 5 && *marked >= 0) {
		*nw = (uint32_t)*marked;
		*marked = -1;
	}
	snprintf(got, sizeof got, "%s", fx_get(fs[0], k, strlen(k)));
	assert_string_equal(got, fx_get(fs[1], k, strlen(k)));
}

/*
 * The same on memory and etcd, with batches as metad makes them for etcd
 * (one write request each): one rev each, each key written at most once
 * (until an undo takes the write back), an empty one rolled back.
 */
static void
test_model_etcd(void **state)
{
	struct fx		*fs[2] = { &fx_mem, &fx_etcd };
	struct store_err	 err;
	uint64_t		 rev;
	uint32_t		 nw;
	long			 marked;
	int			 batch, i, n, step, w[12];

	srandom(42);
	for (batch = 0; batch < 200; batch++) {
		model_begin(fs);
		rev = fx_rev(fs[0]) + 1;
		nw = 0;
		marked = -1;
		n = (int)(random() % 12);
		for (step = 0; step < n; step++) {
			i = (int)(random() % MODEL_KEYS);
			model_step_one_rev(fs, (int)(random() % 6), rev, i, w,
			    &nw, &marked);
		}
		model_check_gets(fs[0], fs[1]);
		for (i = 0; i < 2; i++) {
			if (nw == 0 || batch % 5 == 4)
				store_rollback(fs[i]->s);
			else
				fx_commit(fs[i], rev);
			if (batch % 7 == 6 && fx_rev(fs[i]) > 3)
				assert_int_equal(fx_compact(fs[i],
				    fx_rev(fs[i]) - 3, &err), 0);
		}
		model_check(fs[0], fs[1]);
	}
}

static int
model_setup(void **state)
{
	void	*m = &fx_mem, *q = &fx_sql;

	return (fx_setup(&m) || fx_setup(&q));
}

static int
model_teardown(void **state)
{
	void	*m = &fx_mem, *q = &fx_sql;

	return (fx_teardown(&m) || fx_teardown(&q));
}

static int
model_etcd_setup(void **state)
{
	void	*m = &fx_mem, *e = &fx_etcd;

	return (fx_setup(&m) || fx_setup(&e));
}

static int
model_etcd_teardown(void **state)
{
	void	*m = &fx_mem, *e = &fx_etcd;

	return (fx_teardown(&m) || fx_teardown(&e));
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define ETCD(t)	{ #t "/etcd", t, fx_setup, fx_teardown, &fx_etcd }
#define LOCAL(t) MEM(t), SQL(t)
#define ALL(t)	MEM(t), SQL(t), ETCD(t)

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
		LOCAL(test_history_order),
		ALL(test_history_batches),
		ALL(test_history_chunks),
		ETCD(test_etcd_history_replay),
		ALL(test_compact),
		ALL(test_compact_many),
		ALL(test_compact_only_batch),
		LOCAL(test_history_trim),
		LOCAL(test_history_trim_steps),
		LOCAL(test_history_trim_batch),
		ALL(test_notify),
		ALL(test_stats),
		ALL(test_batch_protocol),
		ALL(test_commit_below_rev),
		ALL(test_reopen_batch),
		ALL(test_reopen_batch_compact),
		ALL(test_batch_noop_delete),
		ALL(test_batch_many_keys),
		ALL(test_batch_request_max),
		cmocka_unit_test(test_open_errors),
		SQL(test_reopen),
		ETCD(test_reopen),
		SQL(test_sqlite_not_a_db),
		SQL(test_sqlite_write_fails),
		SQL(test_sqlite_write_fails_trim),
		ETCD(test_etcd_async_reads),
		ETCD(test_etcd_unnamed_key),
		ETCD(test_etcd_conflict),
		ETCD(test_etcd_outside_writer),
		cmocka_unit_test_setup_teardown(test_model, model_setup,
		    model_teardown),
		{ "test_model/etcd", test_model_etcd, model_etcd_setup,
		    model_etcd_teardown, &fx_etcd },
	};
	struct CMUnitTest	 run[sizeof tests / sizeof tests[0]];
	size_t			 i, n = 0;

	/* No etcd: its tests are not there at all (nor counted skipped). */
	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (tests[i].initial_state != &fx_etcd || fx_etcd_url() != NULL)
			run[n++] = tests[i];
	}
	return (_cmocka_run_group_tests("test_store", run, n, NULL, NULL));
}
