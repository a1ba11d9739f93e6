/*
 * Unit tests of the versioned store's history (store_cases.h): its order
 * and chunks, etcd's replay of it, compaction and the local stores'
 * history trim.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_cases.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

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

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
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
	};

	return (store_cases_run("test_store_history", tests,
	    sizeof tests / sizeof tests[0], &fx_etcd));
}
