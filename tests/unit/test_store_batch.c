/*
 * Unit tests of the versioned store's batches (store_cases.h): the
 * notifications of their commits, the batch protocol, a commit below the
 * rev, batches across close and reopen, a no-op delete, batches of many
 * keys and the largest request; bad store specs, and what a store holds
 * across a reopen.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_cases.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

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

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		ALL(test_notify),
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
	};

	return (store_cases_run("test_store_batch", tests,
	    sizeof tests / sizeof tests[0], &fx_etcd));
}
