/*
 * Unit tests of the versioned store (store_cases.h), each backend's own
 * cases: SQLite's bad files and failing writes, etcd's asynchronous
 * reads, its unnamed keys, conflicts and writers outside; and the model:
 * the same random batches on two backends agree.
 */
#include <sys/resource.h>

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_cases.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

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

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
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

	return (store_cases_run("test_store_backend", tests,
	    sizeof tests / sizeof tests[0], &fx_etcd));
}
