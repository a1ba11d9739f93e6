/*
 * Unit tests of the SQLite backend's log-structured commit
 * (store_sqlite_log.c): a commit appends to the log (history) and keeps
 * the keys' new state in memory until a checkpoint writes kv; a process
 * that dies before its checkpoint leaves the log tail, which the next open
 * replays.  Each test writes in a child process that exits without closing
 * the store (no checkpoint at close: as after kill -9, the file is all
 * that is left), then reopens it in the test's process and checks.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#include "store_fx.h"
#include "store/sqlite/store_sqlite.h"

static struct fx	 fx_sql = { .kind = "sqlite" };

/* 1 a=1, 2 b=1, 3 c=1, 4 del b, 5 a=2 and d=1: all left in the log. */
static void
write_some(struct fx *f)
{
	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	fx_put1(f, "c", "1");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 4, 0, S("b")), 1);
	fx_commit(f, 4);
	fx_begin(f, "a", "d");
	fx_put(f, 5, 0, S("a"), S("2"));
	fx_put(f, 5, 1, S("d"), S("1"));
	fx_commit(f, 5);
}

static void
test_replay(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_crash_after(f, write_some);
	assert_int_equal(fx_rev(f), 5);
	assert_int_equal(fx_nkeys(f), 3);
	assert_string_equal(fx_get(f, S("a")), "a@2/1/5=2");
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_list(f, &r, 3, 0),
	    "a@2/1/5=2 c@1/3/3=1 d@1/5/5=1");
	assert_string_equal(fx_history(f, 0), "1.0:a@1/1/1=1 2.0:b@1/2/2=1 "
	    "3.0:c@1/3/3=1 4.0:del:b 5.0:a@2/1/5=2 5.1:d@1/5/5=1");
	/* The replay was checkpointed: kv holds it all. */
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kv"), 3);
	assert_int_equal(fx_db_scalar(f, "SELECT value FROM meta WHERE "
	    "name = 'ckpt_rev'"), (long long)fx_abs(f, 5));
	/* Versions go on from the replayed state. */
	fx_put1(f, "b", "2");
	assert_string_equal(fx_get(f, S("b")), "b@1/6/6=2");
}

/*
 * x (in kv since the last close) is deleted, then compacted past ckpt_rev:
 * the delete must stay in history for the replay.
 */
static void
write_compact(struct fx *f)
{
	struct store_err	 err;

	fx_begin(f, "x");
	assert_int_equal(fx_del(f, 3, 0, S("x")), 1);
	fx_commit(f, 3);
	fx_put1(f, "z", "1");
	assert_int_equal(fx_compact(f, 4, &err), 0);
}

static void
test_replay_after_compaction(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_put1(f, "x", "1");
	fx_put1(f, "y", "1");
	fx_reopen(f, NULL);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kv"), 2);
	fx_crash_after(f, write_compact);
	assert_string_equal(fx_get(f, S("x")), "");
	assert_string_equal(fx_list(f, &r, 2, 0), "y@1/2/2 z@1/4/4");
	assert_int_equal(fx_nkeys(f), 2);
	assert_int_equal(fx_compact_rev(f), 4);
	/* The checkpoint after the replay dropped it. */
	assert_int_equal(fx_db_scalar(f, "SELECT MIN(rev) FROM history"),
	    (long long)fx_abs(f, 4));
}

/* More writes than one checkpoint holds, then a few after it. */
static void
write_many(struct fx *f)
{
	char	 key[32];
	int	 i;

	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof key, "k%05d", i % 3000);
		fx_put1(f, key, i < 3000 ? "old" : "new");
	}
}

static void
test_replay_many(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "k", 1, NULL, 0, 5000, 1, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_crash_after(f, write_many);
	assert_int_equal(fx_rev(f), 5000);
	assert_int_equal(fx_nkeys(f), 3000);
	assert_string_equal(fx_get(f, S("k00000")), "k00000@2/1/3001=new");
	assert_string_equal(fx_get(f, S("k02999")), "k02999@1/3000/3000=old");
	fx_list(f, &r, 3000, 0);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kv"), 3000);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kv WHERE "
	    "value = CAST('new' AS BLOB)"), 2000);
}

/* A batch undone or rolled back leaves nothing in memory either. */
static void
test_undo_forgets(void **state)
{
	struct fx	*f = *state;
	struct store_err err;

	fx_put1(f, "a", "1");
	fx_begin(f, "a", "b");
	assert_int_equal(store_mark(f->s, &err), 0);
	fx_put(f, 2, 0, S("a"), S("2"));
	fx_put(f, 2, 1, S("b"), S("2"));
	assert_string_equal(fx_get(f, S("b")), "b@1/2/2=2");
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_get(f, S("a")), "a@1/1/1=1");
	fx_put(f, 2, 0, S("b"), S("3"));
	store_rollback(f->s);
	assert_string_equal(fx_get(f, S("b")), "");
	assert_int_equal(fx_nkeys(f), 1);
	fx_put1(f, "a", "4");
	assert_string_equal(fx_get(f, S("a")), "a@2/1/2=4");
}

/* A range merged from kv and the map (as when the disk is full). */
static const char *
list_merged(struct fx *f, const char *prefix, const char *after,
    uint64_t limit, int *more)
{
	struct store_range	 r = { prefix, strlen(prefix), after,
	    after != NULL ? strlen(after) : 0, limit, 0, 0, 0, NULL, 0, NULL,
	    0, 0 };
	struct store_err	 err;

	buf_reset(&f->out);
	*more = 0;
	assert_true(store_sqlite_range_merged(f->s, &r, fx_kv_cb, f, more,
	    &err) >= 0);
	return (buf_cstr(&f->out));
}

static void
test_range_merged(void **state)
{
	struct fx	*f = *state;
	int		 more;

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	fx_put1(f, "c", "1");
	fx_put1(f, "e", "1");
	fx_reopen(f, NULL);		/* a, b, c and e in kv */
	fx_put1(f, "b", "2");
	fx_begin(f, "c");
	assert_int_equal(fx_del(f, 6, 0, S("c")), 1);
	fx_commit(f, 6);
	fx_put1(f, "d", "1");
	fx_put1(f, "f", "1");
	fx_put1(f, "0", "1");
	assert_string_equal(list_merged(f, "", NULL, 10, &more),
	    "0@1/9/9=1 a@1/1/1=1 b@2/2/5=2 d@1/7/7=1 e@1/4/4=1 f@1/8/8=1");
	assert_int_equal(more, 0);
	assert_string_equal(list_merged(f, "", NULL, 3, &more),
	    "0@1/9/9=1 a@1/1/1=1 b@2/2/5=2");
	assert_int_equal(more, 1);
	assert_string_equal(list_merged(f, "", "b", 2, &more),
	    "d@1/7/7=1 e@1/4/4=1");
	assert_int_equal(more, 1);
	assert_string_equal(list_merged(f, "e", NULL, 5, &more),
	    "e@1/4/4=1");
	assert_int_equal(more, 0);
	assert_string_equal(list_merged(f, "c", NULL, 5, &more), "");
}

/* A key in the map keeps its lease in a merged range (kv's rows read it). */
static void
test_range_merged_lease(void **state)
{
	struct fx		*f = *state;
	struct store_lease	 l = { 7, 5000, 0, 0 };
	struct store_kv		 meta;
	struct store_err	 err;
	int			 more;

	fx_put1(f, "a", "1");
	fx_begin(f, "a", "b");
	assert_int_equal(store_lease_put(f->s, &l, &err), 0);
	assert_int_equal(store_put_lease(f->s, fx_abs(f, 2), 0, "b", 1, "2",
	    1, 7, &meta, NULL, &err), 0);
	fx_commit(f, 2);
	fx_reopen(f, NULL);		/* a and b in kv */
	fx_begin(f, "a");
	assert_int_equal(store_put_lease(f->s, fx_abs(f, 3), 0, "a", 1, "3",
	    1, 7, &meta, NULL, &err), 0);
	fx_commit(f, 3);		/* a~7 in the map, b~7 in kv */
	assert_string_equal(list_merged(f, "", NULL, 10, &more),
	    "a@2/1/3~7=3 b@1/2/2~7=2");
}

/*
 * A checkpoint in slices (store_sqlite_ckpt.c): 1 a=1, 2 b=1, 3 c=1; the
 * first slice freezes them and writes them into kv; then 4 a=2, 5 del b
 * while the checkpoint is under way.
 */
static void
write_sliced(struct fx *f)
{
	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	fx_put1(f, "c", "1");
	assert_int_equal(store_sqlite_ckpt_slice(f->s), 1);
	fx_put1(f, "a", "2");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 5, 0, S("b")), 1);
	fx_commit(f, 5);
}

static void
check_sliced(struct fx *f)
{
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	assert_int_equal(fx_rev(f), 5);
	assert_string_equal(fx_get(f, S("a")), "a@2/1/4=2");
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_get(f, S("c")), "c@1/3/3=1");
	assert_string_equal(fx_list(f, &r, 2, 0), "a@2/1/4=2 c@1/3/3=1");
	assert_string_equal(fx_history(f, 0), "1.0:a@1/1/1=1 2.0:b@1/2/2=1 "
	    "3.0:c@1/3/3=1 4.0:a@2/1/4=2 5.0:del:b");
	/*
	 * Every rev as it was, with kv written by the first slice (and,
	 * after a crash, written again by the replay's checkpoint): c at 2
	 * is not there yet.
	 */
	assert_string_equal(fx_get_at(f, S("c"), 2), "");
	r.rev = fx_abs(f, 2);
	assert_string_equal(fx_list(f, &r, 2, 0), "a@1/1/1=1 b@1/2/2=1");
	r.rev = fx_abs(f, 4);
	assert_string_equal(fx_list(f, &r, 3, 0), "a@2/1/4=2 b@1/2/2=1 "
	    "c@1/3/3=1");
}

static void
test_sliced(void **state)
{
	struct fx	*f = *state;
	int		 more, n = 0;

	write_sliced(f);
	/* Reads between slices: the dirty map, the frozen one, kv. */
	assert_string_equal(fx_get(f, S("a")), "a@2/1/4=2");
	assert_string_equal(fx_get(f, S("c")), "c@1/3/3=1");
	assert_string_equal(list_merged(f, "", NULL, 10, &more),
	    "a@2/1/4=2 c@1/3/3=1");
	/* The rest: the log up to rev 3 into history, the WAL, then 4-5. */
	while (store_sqlite_ckpt_slice(f->s) == 1)
		assert_true(++n < 20);
	assert_int_equal(store_sqlite_ckpt_slice(f->s), 1);
	while (store_sqlite_ckpt_slice(f->s) == 1)
		assert_true(++n < 40);
	check_sliced(f);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM history WHERE "
	    "rev > (SELECT value FROM meta WHERE name = 'ckpt_rev')"), 0);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM history_by_key"),
	    fx_db_scalar(f, "SELECT COUNT(*) FROM history"));
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kv"), 2);
	assert_int_equal(fx_db_scalar(f, "SELECT value FROM meta WHERE "
	    "name = 'ckpt_rev'"), (long long)fx_abs(f, 5));
}

/* kv written by a slice, ckpt_rev not moved yet: the replay wins. */
static void
test_sliced_crash(void **state)
{
	struct fx	*f = *state;

	fx_crash_after(f, write_sliced);
	check_sliced(f);
}

/*
 * A commit whose newest event is in the log leaves meta 'rev' alone (a
 * page less per fsync): the rev comes back from the log.  One whose rev
 * has no event (a delete of an absent key) sets it.
 */
static void
write_no_event(struct fx *f)
{
	write_some(f);
	fx_begin(f, "zz");
	assert_int_equal(fx_del(f, 6, 0, S("zz")), 0);
	fx_commit(f, 6);
}

static void
test_rev_from_log(void **state)
{
	struct fx	*f = *state;

	fx_crash_after(f, write_some);
	assert_int_equal(fx_rev(f), 5);
	assert_true(fx_db_scalar(f, "SELECT value FROM meta WHERE name = "
	    "'rev'") < (long long)fx_abs(f, 5));
	fx_put1(f, "e", "1");
	assert_string_equal(fx_get(f, S("e")), "e@1/6/6=1");
}

static void
test_rev_without_event(void **state)
{
	struct fx	*f = *state;

	fx_crash_after(f, write_no_event);
	assert_int_equal(fx_rev(f), 6);
	assert_int_equal(fx_db_scalar(f, "SELECT value FROM meta WHERE name = "
	    "'rev'"), (long long)fx_abs(f, 6));
}

/*
 * A compaction below ckpt_rev drops only checkpointed events: no
 * checkpoint in its batch, and the log past it is replayed as it was.
 */
static void
write_compact_behind(struct fx *f)
{
	struct store_err	 err;

	fx_put1(f, "y", "2");
	assert_int_equal(fx_compact(f, 2, &err), 0);
	/* Not checkpointed by it: y=2 is still in the log only. */
	assert_int_equal(((struct store_sqlite *)f->s->impl)->ckpt_rev,
	    fx_abs(f, 2));
	fx_put1(f, "z", "1");
}

static void
test_compact_behind_ckpt(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0, 0, 0,
				    NULL, 0, NULL, 0, 0 };

	fx_put1(f, "x", "1");
	fx_put1(f, "y", "1");
	fx_reopen(f, NULL);		/* checkpointed at close */
	fx_crash_after(f, write_compact_behind);
	assert_int_equal(fx_rev(f), 4);
	assert_int_equal(fx_compact_rev(f), 2);
	assert_int_equal(fx_nkeys(f), 3);
	assert_string_equal(fx_list(f, &r, 3, 0),
	    "x@1/1/1=1 y@2/2/3=2 z@1/4/4=1");
	assert_string_equal(fx_history(f, 2), "2.0:y@1/2/2=1 3.0:y@2/2/3=2 "
	    "4.0:z@1/4/4=1");
	/* Compacted at 2: x's put below it is kept, history starts there. */
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kept"), 1);
	assert_int_equal(fx_db_scalar(f, "SELECT MIN(rev) FROM history"),
	    (long long)fx_abs(f, 2));
	assert_string_equal(fx_get_at(f, S("x"), 2), "x@1/1/1=1");
	assert_string_equal(fx_get_at(f, S("z"), 3), "");
}

/*
 * The clean cache (kv's version of keys a checkpoint wrote): filled by
 * each kind of checkpoint (at once, in slices), not by a batch (one that
 * compacts, commits or rolls back); a put's version follows from it.
 */
static int
clean(struct fx *f, const char *key, uint64_t *version, uint64_t *create)
{
	struct store_kv	 cur;
	int		 rc;

	memset(&cur, 0, sizeof cur);
	rc = sq_clean_find(f->s->impl, key, strlen(key), &cur);
	*version = cur.version;
	*create = fx_abs(f, 0) < cur.create_rev ? cur.create_rev -
	    fx_abs(f, 0) : 0;
	return (rc);
}

static void
test_clean_cache(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	uint64_t		 v, c;

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	assert_int_equal(clean(f, "a", &v, &c), -1);
	assert_int_equal(store_sqlite_checkpoint(f->s, &err), 0);
	assert_int_equal(clean(f, "a", &v, &c), 1);
	assert_true(v == 1 && c == 1);
	fx_put1(f, "a", "2");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 4, 0, S("b")), 1);
	fx_commit(f, 4);
	/* In slices: kv, the key index, the WAL. */
	fx_ckpt_slices(f, 20);
	assert_int_equal(clean(f, "a", &v, &c), 1);
	assert_true(v == 2 && c == 1);
	assert_int_equal(clean(f, "b", &v, &c), 0);
	/* b was deleted: a new b starts at version 1. */
	fx_begin(f, "a", "b");
	assert_int_equal(fx_put(f, 5, 0, S("b"), S("2")), 0);
	assert_int_equal(fx_put(f, 5, 1, S("a"), S("3")), 2);
	fx_commit(f, 5);
	assert_string_equal(fx_get(f, S("b")), "b@1/5/5=2");
	/* In a batch that rolls back: the cache keeps kv's old state. */
	fx_begin(f, "a", "c");
	assert_int_equal(fx_put(f, 6, 0, S("c"), S("1")), 0);
	assert_int_equal(fx_put(f, 6, 1, S("a"), S("4")), 3);
	assert_int_equal(fx_compact(f, 6, &err), 0);
	store_rollback(f->s);
	assert_int_equal(clean(f, "a", &v, &c), 1);
	assert_true(v == 2 && c == 1);
	assert_int_equal(clean(f, "c", &v, &c), -1);
	assert_string_equal(fx_get(f, S("a")), "a@3/1/5=3");
	/* A compaction past ckpt_rev checkpoints nothing: c is not in kv. */
	fx_begin(f, "a", "c");
	assert_int_equal(fx_put(f, 6, 0, S("c"), S("1")), 0);
	assert_int_equal(fx_compact(f, 6, &err), 0);
	assert_int_equal(fx_put(f, 6, 1, S("a"), S("4")), 3);
	fx_commit(f, 6);
	assert_int_equal(clean(f, "c", &v, &c), -1);
	assert_int_equal(store_sqlite_checkpoint(f->s, &err), 0);
	assert_int_equal(clean(f, "c", &v, &c), 1);
	assert_true(v == 1 && c == 6);
	assert_int_equal(clean(f, "a", &v, &c), 1);
	assert_true(v == 4 && c == 1);
	assert_string_equal(fx_get(f, S("a")), "a@4/1/6=4");
	fx_begin(f, "a", "c");
	assert_int_equal(fx_put(f, 7, 0, S("a"), S("5")), 4);
	assert_int_equal(fx_put(f, 7, 1, S("c"), S("2")), 1);
	fx_commit(f, 7);
	assert_int_equal(store_sqlite_checkpoint(f->s, &err), 0);
	fx_reopen(f, NULL);
	assert_string_equal(fx_get(f, S("a")), "a@5/1/7=5");
	assert_string_equal(fx_get(f, S("c")), "c@2/6/7=2");
}

/*
 * A quarter as many keys as the cache has slots (some of its pairs get
 * three), over three checkpoints: each put's previous version is exact
 * whether its key was evicted or not.
 */
static void
test_clean_evicted(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	char			 k[32];
	uint64_t		 rev;
	int			 i, round;

	for (round = 0; round < 3; round++) {
		rev = fx_rev(f) + 1;
		fx_begin(f);
		for (i = 0; i < SQ_CLEAN_SLOTS / 4; i++) {
			snprintf(k, sizeof k, "k/%d", i);
			/* Every 7th key is deleted in round 1. */
			if (round == 1 && i % 7 == 0) {
				assert_int_equal(fx_del(f, rev, (uint32_t)i,
				    k, strlen(k)), 1);
				continue;
			}
			assert_int_equal(fx_put(f, rev, (uint32_t)i, k,
			    strlen(k), S("v")), round == 2 && i % 7 == 0 ?
			    0 : (uint64_t)round);
		}
		fx_commit(f, rev);
		assert_int_equal(store_sqlite_checkpoint(f->s, &err), 0);
	}
}

#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		SQL(test_replay),
		SQL(test_replay_after_compaction),
		SQL(test_replay_many),
		SQL(test_undo_forgets),
		SQL(test_range_merged),
		SQL(test_range_merged_lease),
		SQL(test_sliced),
		SQL(test_sliced_crash),
		SQL(test_rev_from_log),
		SQL(test_rev_without_event),
		SQL(test_compact_behind_ckpt),
		SQL(test_clean_cache),
		SQL(test_clean_evicted),
	};

	return (cmocka_run_group_tests_name("test_store_log", tests, NULL,
	    NULL));
}
