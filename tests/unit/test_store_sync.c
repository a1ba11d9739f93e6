/*
 * Unit tests of the SQLite backend's fsync thread (store_sqlite_sync.c):
 * with an event loop (opts.base) and STORE_SYNC_FULL, a batch of more than
 * SQ_SYNC_INLINE events, or any batch while another is out, commits and
 * is out until the thread's fdatasync returns; it then lands on the loop,
 * in the order committed.  A batch out is seen by the batches begun after
 * it and by no read; it lands with its events handed to opts.notify and
 * its callback called, also when the store closes.  Each test drives the
 * store through its asynchronous calls and runs the loop until the
 * callbacks come (WAIT_MS at most).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/event.h>

#include "store/store_local.h"
#include "store_fx.h"

/* How long a test waits for a batch to land before it fails. */
#define WAIT_MS		2000
/* Puts in a batch that goes to the thread (more than SQ_SYNC_INLINE). */
#define BIG		8

static struct fx	 fx_sql = { .kind = "sqlite" };
static struct event_base *base;

/*
 * One batch: its puts (keys k0.., value its tag), and how it ended.  In a
 * pool, not on a test's stack: a test that fails with batches out lands
 * them when its teardown closes the store, after its frame is gone.
 */
struct batch {
	struct fx	*f;
	char		 tag[16];	/* the value of its puts */
	int		 nputs;		/* 0: a batch that writes nothing */
	int		 called;	/* its commit callback, how often */
	int		 failed;
	unsigned	 order;		/* its place among the callbacks */
	uint64_t	 rev;		/* the store's rev in its callback */
	uint64_t	 commit_rev;
	uint64_t	 base_rev;	/* at begin */
	uint64_t	 seen_ver;	/* k0's version, seen in the batch */
	uint64_t	 grant;		/* records this lease first */
	uint64_t	 lease;		/* k0's put is attached to it */
	struct batch	*then;		/* begun from its callback */
};

static unsigned	 ncalled;	/* callbacks so far, of every batch */
static struct batch	 pool[64];
static size_t		 npool;

static void	batch_start(struct batch *);

static void
batch_committed(void *arg, const struct store_err *err)
{
	struct batch	*b = arg;

	b->called++;
	b->failed = err != NULL;
	b->order = ++ncalled;
	b->rev = store_rev(b->f->s);
	b->commit_rev = store_commit_rev(b->f->s);
	if (b->then != NULL)
		batch_start(b->then);
}

static int
batch_kv(const struct store_kv *kv, void *arg)
{
	*(uint64_t *)arg = kv->version;
	return (0);
}

/* In begin's callback: the puts, one rev for all, then the commit. */
static void
batch_begun(void *arg, const struct store_err *err)
{
	struct batch		*b = arg;
	struct store		*s = b->f->s;
	struct store_err	 e;
	struct store_kv		 meta;
	uint64_t		 prev, rev = store_base_rev(s) + 1;
	char			 key[16];
	int			 i;

	if (err != NULL)
		fail_msg("begin: %s", err->msg);
	b->base_rev = store_base_rev(s);
	b->seen_ver = 0;
	if (store_get(s, S("k0"), batch_kv, &b->seen_ver, &e) < 0)
		fail_msg("get in a batch: %s", e.msg);
	if (b->grant != 0) {
		struct store_lease	 l = { b->grant, 60000, 0, 0 };

		if (store_lease_put(s, &l, &e) != 0)
			fail_msg("lease put: %s", e.msg);
	}
	for (i = 0; i < b->nputs; i++) {
		snprintf(key, sizeof key, "k%d", i);
		if (store_put_lease(s, rev, (uint32_t)i, key, strlen(key),
		    b->tag, strlen(b->tag), i == 0 ? b->lease : 0, &meta,
		    &prev, &e) != 0)
			fail_msg("put %s: %s", key, e.msg);
	}
	store_commit(s, b->nputs > 0 || b->grant != 0 ? rev : store_base_rev(s),
	    batch_committed, b);
}

static void
batch_start(struct batch *b)
{
	unsigned ends = b->f->s->ends;

	store_begin(b->f->s, NULL, batch_begun, b);
	/* A local store's begin answers before it returns, unless held. */
	assert_true(b->f->s->ends > ends || store_local_held(b->f->s));
}

static struct batch *
batch_new(struct fx *f, const char *tag, int nputs)
{
	struct batch	*b;

	assert_true(npool < sizeof pool / sizeof pool[0]);
	b = &pool[npool++];
	memset(b, 0, sizeof *b);
	b->f = f;
	snprintf(b->tag, sizeof b->tag, "%s", tag);
	b->nputs = nputs;
	return (b);
}

static void
wait_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	*(int *)arg = 1;
}

/* Runs the loop until b's callback came; fails after WAIT_MS. */
static void
wait_called(struct batch *b)
{
	struct timeval	 tv = { WAIT_MS / 1000, (WAIT_MS % 1000) * 1000 };
	struct event	*timer;
	int		 late = 0;

	timer = evtimer_new(base, wait_timeout, &late);
	assert_non_null(timer);
	evtimer_add(timer, &tv);
	while (!b->called && !late)
		if (event_base_loop(base, EVLOOP_ONCE) == -1)
			break;
	event_free(timer);
	if (!b->called)
		fail_msg("the batch of %s did not land in %d ms", b->tag,
		    WAIT_MS);
	assert_int_equal(b->called, 1);
	assert_false(b->failed);
}

static int
sync_setup(void **state)
{
	if (fx_loop_setup(state, STORE_SYNC_FULL) != 0)
		return (-1);
	base = ((struct fx *)*state)->opts.base;
	ncalled = 0;
	npool = 0;
	return (0);
}

static int
sync_teardown(void **state)
{
	base = NULL;
	return (fx_loop_teardown(state));
}

/* k0 outside a batch ("" when absent). */
static const char *
get0(struct fx *f)
{
	return (fx_get(f, S("k0")));
}

/*
 * A small batch with nothing out is fsynced at once: answered before
 * store_commit() returns.  A big one is out: its callback waits, and no
 * read sees it (get, range, history, a key's history, stats, a read at
 * its rev) until it lands; then they all do.
 */
static void
test_out_unseen(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r;
	struct store_err	 err;
	struct batch		*a, *b;
	int			 more;

	a = batch_new(f, "old", 1);
	batch_start(a);
	assert_int_equal(a->called, 1);		/* inline: durable now */
	assert_int_equal(fx_rev(f), 1);
	assert_string_equal(fx_notes(f), "0-1");

	b = batch_new(f, "new", BIG);
	batch_start(b);
	assert_int_equal(b->called, 0);		/* out: fsync to come */
	assert_int_equal(f->s->out, 1);
	assert_false(f->s->in_batch);
	assert_int_equal(fx_rev(f), 1);
	assert_string_equal(get0(f), "k0@1/1/1=old");
	assert_string_equal(fx_get(f, S("k7")), "");
	memset(&r, 0, sizeof r);
	r.prefix = "k";
	r.prefix_len = 1;
	r.limit = 100;
	assert_string_equal(fx_list(f, &r, 1, 0), "k0@1/1/1=old");
	assert_int_equal(fx_nkeys(f), 1);
	assert_string_equal(fx_history(f, 1), "1.0:k0@1/1/1=old");
	assert_int_equal(fx_key_history(f, S("k0"), 1, 100, &more, &err), 1);
	assert_string_equal(buf_cstr(&f->out), "1.0:k0@1/1/1=old");
	assert_int_equal(fx_get_at_err(f, S("k0"), 2, &err), -1);
	assert_int_equal(err.code, STORE_ERR_FUTURE);
	assert_string_equal(fx_get_at(f, S("k0"), 1), "k0@1/1/1=old");
	assert_string_equal(fx_notes(f), "");

	wait_called(b);
	assert_int_equal(b->rev, fx_abs(f, 2));
	assert_int_equal(b->commit_rev, fx_abs(f, 2));
	assert_int_equal(f->s->out, 0);
	assert_string_equal(fx_notes(f), "1-2");
	assert_string_equal(get0(f), "k0@2/1/2=new");
	assert_string_equal(fx_get(f, S("k7")), "k7@1/2/2=new");
	assert_int_equal(fx_nkeys(f), BIG);
	assert_string_equal(fx_get_at(f, S("k0"), 2), "k0@2/1/2=new");
	assert_int_equal(fx_key_history(f, S("k0"), 1, 100, &more, &err), 2);
	assert_string_equal(buf_cstr(&f->out),
	    "1.0:k0@1/1/1=old 2.0:k0@2/1/2=new");
	fx_list(f, &r, BIG, 0);
}

/*
 * A batch begun while another is out builds on it (k0 at version 2 after
 * version 1), is out too, even small, and lands after it: callbacks and
 * notifications in rev order.
 */
static void
test_out_chain(void **state)
{
	struct fx	*f = *state;
	struct batch	 *a, *b, *c;

	a = batch_new(f, "a", BIG);
	b = batch_new(f, "b", BIG);
	c = batch_new(f, "c", 1);
	batch_start(a);
	batch_start(b);
	batch_start(c);
	assert_int_equal(a->base_rev, fx_abs(f, 0));
	assert_int_equal(b->base_rev, fx_abs(f, 1));
	assert_int_equal(c->base_rev, fx_abs(f, 2));
	assert_int_equal(a->seen_ver, 0);
	assert_int_equal(b->seen_ver, 1);	/* a's k0, out */
	assert_int_equal(c->seen_ver, 2);
	/* c is small, but behind batches out: out too. */
	assert_int_equal(a->called + b->called + c->called, 0);
	assert_int_equal(f->s->out, 3);
	assert_string_equal(get0(f), "");
	assert_int_equal(fx_nkeys(f), 0);

	wait_called(c);
	assert_int_equal(a->called + b->called, 2);
	assert_int_equal(a->order, 1);
	assert_int_equal(b->order, 2);
	assert_int_equal(c->order, 3);
	assert_int_equal(a->rev, fx_abs(f, 1));
	assert_int_equal(b->rev, fx_abs(f, 2));
	assert_int_equal(c->rev, fx_abs(f, 3));
	assert_string_equal(fx_notes(f), "0-1 1-2 2-3");
	assert_string_equal(get0(f), "k0@3/1/3=c");
	assert_string_equal(fx_get(f, S("k1")), "k1@2/1/2=b");
	assert_int_equal(fx_nkeys(f), BIG);
	assert_string_equal(fx_history(f, 3), "3.0:k0@3/1/3=c");
}

/*
 * Many batches out at once (one fdatasync may cover several): each lands
 * once, in order, and the last state holds every write.
 */
static void
test_out_many(void **state)
{
	struct fx	*f = *state;
	struct batch	*b[40];
	char		 tag[8], want[64];
	int		 i;

	for (i = 0; i < 40; i++) {
		snprintf(tag, sizeof tag, "t%d", i);
		b[i] = batch_new(f, tag, i % 3 == 0 ? BIG : 1 + i % 4);
		batch_start(b[i]);
		assert_int_equal(b[i]->base_rev, fx_abs(f, (uint64_t)i));
		assert_int_equal(b[i]->seen_ver, (uint64_t)i);
	}
	assert_int_equal(ncalled, 0);
	wait_called(b[39]);
	for (i = 0; i < 40; i++) {
		assert_int_equal(b[i]->called, 1);
		assert_int_equal(b[i]->order, (unsigned)i + 1);
		assert_int_equal(b[i]->rev, fx_abs(f, (uint64_t)i + 1));
	}
	snprintf(want, sizeof want, "k0@40/1/40=t39");
	assert_string_equal(get0(f), want);
	assert_int_equal(fx_nkeys(f), BIG);
}

/*
 * A batch that wrote nothing, committed while another is out, lands
 * behind it: its callback comes after the other's.
 */
static void
test_out_clean_behind(void **state)
{
	struct fx	*f = *state;
	struct batch	 *a, *c;

	a = batch_new(f, "a", BIG);
	c = batch_new(f, "c", 0);
	batch_start(a);
	batch_start(c);
	assert_int_equal(c->seen_ver, 1);	/* on a */
	assert_int_equal(a->called + c->called, 0);
	wait_called(c);
	assert_int_equal(a->called, 1);
	assert_int_equal(a->order, 1);
	assert_int_equal(c->order, 2);
	assert_int_equal(c->commit_rev, fx_abs(f, 1));
	assert_string_equal(fx_notes(f), "0-1");
}

/*
 * Ordered (store.h): batches land in the order committed.  a is out, a
 * clean c behind it; a's callback begins and commits d (small: nothing
 * is out of the backend's any more), which must still land after c.
 */
static void
test_out_clean_then_next(void **state)
{
	struct fx	*f = *state;
	struct batch	 *a, *c, *d;

	a = batch_new(f, "a", BIG);
	c = batch_new(f, "c", 0);
	d = batch_new(f, "d", 1);
	a->then = d;
	batch_start(a);
	batch_start(c);
	assert_int_equal(a->called + c->called, 0);
	wait_called(d);
	wait_called(c);
	assert_int_equal(a->order, 1);
	if (c->order != 2 || d->order != 3)
		fail_msg("committed a, c (clean), then d from a's callback: "
		    "callbacks came a %u, c %u, d %u", a->order, c->order,
		    d->order);
	/* c was committed before d: its answer knows nothing of d's rev. */
	assert_int_equal(c->rev, fx_abs(f, 1));
	assert_int_equal(d->rev, fx_abs(f, 2));
	assert_string_equal(get0(f), "k0@2/1/2=d");
}

/*
 * Closing the store with a batch out lands it (its callback is called)
 * and the data are there after reopening.
 */
static void
test_out_close(void **state)
{
	struct fx	*f = *state;
	struct batch	 *a, *b;

	a = batch_new(f, "a", BIG);
	b = batch_new(f, "b", 2);
	batch_start(a);
	batch_start(b);
	assert_int_equal(a->called + b->called, 0);
	store_close(f->s);
	f->s = NULL;
	assert_int_equal(a->called, 1);
	assert_int_equal(b->called, 1);
	assert_false(a->failed);
	assert_false(b->failed);
	assert_int_equal(a->order, 1);
	assert_int_equal(b->order, 2);
	fx_reopen(f, NULL);
	assert_int_equal(fx_rev(f), 2);
	assert_string_equal(get0(f), "k0@2/1/2=b");
	assert_string_equal(fx_get(f, S("k7")), "k7@1/1/1=a");
	assert_int_equal(fx_nkeys(f), BIG);
}

/* The keys attached to a lease, as a read outside a batch sees them. */
struct lkeys {
	int		 calls;
	long		 n;
	char		 first[16];
	unsigned	 after;		/* batch callbacks before it */
};

static void
lkeys_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *err)
{
	struct lkeys	*lk = arg;

	(void)more;
	if (err != NULL)
		fail_msg("lease keys: %s", err->msg);
	lk->calls++;
	lk->n = n;
	lk->after = ncalled;
	if (n > 0)
		snprintf(lk->first, sizeof lk->first, "%s", kvs[0].key);
}

static long
lkeys_count(struct fx *f, uint64_t lease)
{
	struct lkeys	 lk;

	memset(&lk, 0, sizeof lk);
	store_read_lease_keys(f->s, lease, NULL, 0, 100, lkeys_done, &lk);
	assert_int_equal(lk.calls, 1);
	if (lk.n > 0)
		assert_string_equal(lk.first, "k0");
	return (lk.n);
}

/*
 * Leases are read outside batches too (the lease_info op lists a lease's
 * keys), from the lease_key table, which a batch out has written already:
 * such a read waits until the batches out landed, and no batch begins
 * meanwhile (one begun then lands after the read's answer).
 */
static void
test_out_lease_keys(void **state)
{
	struct fx	*f = *state;
	struct batch	*a, *b, *c;
	struct lkeys	 lk;

	a = batch_new(f, "a", 0);
	a->grant = 7;
	batch_start(a);
	assert_int_equal(a->called, 1);		/* inline: durable now */
	assert_int_equal(lkeys_count(f, 7), 0);
	b = batch_new(f, "b", BIG);
	b->lease = 7;
	batch_start(b);
	assert_int_equal(b->called, 0);
	assert_string_equal(get0(f), "");
	memset(&lk, 0, sizeof lk);
	store_read_lease_keys(f->s, 7, NULL, 0, 100, lkeys_done, &lk);
	if (lk.calls != 0)
		fail_msg("lease 7 listed %ld keys while k0's batch is out",
		    lk.n);
	/* Held back until the read is answered. */
	c = batch_new(f, "c", 1);
	batch_start(c);
	assert_int_equal(c->called, 0);
	wait_called(b);
	assert_int_equal(lk.calls, 1);
	assert_int_equal(lk.n, 1);
	assert_string_equal(lk.first, "k0");
	assert_int_equal(lk.after, b->order);
	wait_called(c);
	assert_int_equal(c->order, b->order + 1);
	assert_int_equal(c->base_rev, b->rev);
	/* c's put of k0 named no lease: k0 left lease 7. */
	assert_int_equal(lkeys_count(f, 7), 0);
}

#define SQL(t)	{ #t "/sqlite", t, sync_setup, sync_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		SQL(test_out_unseen),
		SQL(test_out_chain),
		SQL(test_out_many),
		SQL(test_out_clean_behind),
		SQL(test_out_clean_then_next),
		SQL(test_out_close),
		SQL(test_out_lease_keys),
	};

	return (cmocka_run_group_tests_name("test_store_sync", tests, NULL,
	    NULL));
}
