/*
 * Unit tests of when the SQLite backend checkpoints (store_sqlite_ckpt.c):
 * store_sqlite_ckpt_due() on its own, at and below each bound; then a
 * store on a loop of its own (opts.base, as in the daemon), driven by
 * batches on a timer: large batches that never pause are checkpointed
 * once their oldest write is SQ_CKPT_BUSY_MS old, not every
 * SQ_CKPT_IDLE_MS; single puts every SQ_CKPT_IDLE_MS; writes that stop
 * SQ_CKPT_IDLE_MS after the last one; a long tail at once (in slices past
 * SQ_CKPT_SOFT_REVS, in one transaction past SQ_CKPT_HARD_REVS); the
 * WAL's size comes from SQLite's WAL hook, and at SQ_WAL_COPY frames the
 * WAL is copied on its own.  A checkpoint is counted when
 * it ends (q->ckpts, SQLite's WAL copy, its last step).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "store_fx.h"
#include "store/sqlite/store_sqlite.h"

static struct fx	 fx_sql = { .kind = "sqlite" };
static struct event_base *base;

/* The load below every bound, its times as given, busy or not. */
static int64_t
due(int64_t first_ms, int64_t last_ms, int busy)
{
	struct sq_ckpt_load	 l = { 1, 100, 1, 1, first_ms, last_ms, busy };

	return (store_sqlite_ckpt_due(&l));
}

static void
test_due(void **state)
{
	struct sq_ckpt_load	 l = { SQ_CKPT_SOFT - 1, SQ_CKPT_SOFT_BYTES - 1,
	    SQ_CKPT_SOFT_REVS - 1, SQ_CKPT_SOFT_WAL - 1, SQ_CKPT_BUSY_MS - 1,
	    SQ_CKPT_IDLE_MS - 1, 1 };
	struct sq_ckpt_load	 m;

	(void)state;
	/* Below every bound: the nearer of idle and busy. */
	assert_int_equal(due(0, 0, 1), SQ_CKPT_IDLE_MS);
	assert_int_equal(due(900, 10, 1), SQ_CKPT_BUSY_MS - 900);
	assert_int_equal(due(300, 200, 1), SQ_CKPT_IDLE_MS - 200);
	/* Not busy: the oldest write waits SQ_CKPT_IDLE_MS only. */
	assert_int_equal(due(100, 10, 0), SQ_CKPT_IDLE_MS - 100);
	assert_int_equal(due(SQ_CKPT_IDLE_MS, 0, 0), 0);
	assert_int_equal(due(SQ_CKPT_IDLE_MS, 0, 1), SQ_CKPT_IDLE_MS);
	assert_int_equal(store_sqlite_ckpt_due(&l), 1);
	/* Each bound on its own: due now. */
	m = l, m.keys++;
	assert_int_equal(store_sqlite_ckpt_due(&m), 0);
	m = l, m.bytes++;
	assert_int_equal(store_sqlite_ckpt_due(&m), 0);
	m = l, m.revs++;
	assert_int_equal(store_sqlite_ckpt_due(&m), 0);
	m = l, m.wal_pages++;
	assert_int_equal(store_sqlite_ckpt_due(&m), 0);
	assert_int_equal(due(0, SQ_CKPT_IDLE_MS, 1), 0);
	assert_int_equal(due(SQ_CKPT_BUSY_MS, 0, 1), 0);
	/* Half of the hard bounds: memory and the replay stay below them. */
	assert_int_equal(SQ_CKPT_SOFT * 2, SQ_CKPT_HARD);
	assert_int_equal(SQ_CKPT_SOFT_BYTES * 2, SQ_CKPT_HARD_BYTES);
	assert_int_equal(SQ_CKPT_SOFT_REVS * 2, SQ_CKPT_HARD_REVS);
}

static int64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/*
 * A batch of per puts every every_ms until until_ms (from t0), on the
 * loop's timer.
 */
struct writer {
	struct fx	*f;
	struct event	*ev;
	int64_t		 t0, until_ms, every_ms, last, gap, pauses;
	int		 n, per;
};

static void
writer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct writer	*w = arg;
	struct timeval	 tv = { 0, (suseconds_t)w->every_ms * 1000 };
	int64_t		 t = now_ms();
	uint64_t	 rev = fx_rev(w->f) + 1;
	char		 key[16];
	int		 i;

	(void)fd;
	(void)what;
	if (t - w->t0 >= w->until_ms)
		return;
	if (w->n > 0 && t - w->last > w->gap)
		w->gap = t - w->last;
	/* A gap near SQ_CKPT_IDLE_MS may let an idle checkpoint in. */
	if (w->n > 0 && t - w->last >= SQ_CKPT_IDLE_MS - w->every_ms)
		w->pauses += 1 + (t - w->last) / SQ_CKPT_IDLE_MS;
	w->last = t;
	fx_begin(w->f);
	for (i = 0; i < w->per; i++) {
		snprintf(key, sizeof key, "k%d", (w->n * w->per + i) % 7);
		fx_put(w->f, rev, (uint32_t)i, key, strlen(key), S("v"));
	}
	w->n++;
	fx_commit(w->f, rev);
	evtimer_add(w->ev, &tv);
}

static void
tick_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
}

/* Run the loop for ms; the checkpoints that ended meanwhile. */
static uint64_t
run_for(struct fx *f, int64_t ms)
{
	struct store_sqlite	*q = f->s->impl;
	uint64_t		 before = q->ckpts;
	int64_t			 end = now_ms() + ms;
	struct timeval		 tv = { 0, 5000 };
	struct event		*tick;

	/* The loop wakes at least every 5 ms, so the end is on time. */
	tick = event_new(base, -1, EV_PERSIST, tick_cb, NULL);
	assert_non_null(tick);
	event_add(tick, &tv);
	while (now_ms() < end)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(tick);
	return (q->ckpts - before);
}

/* Batches of per puts every 50 ms for 1.8 s: the checkpoints meanwhile. */
static uint64_t
write_for(struct fx *f, int per, int64_t *pauses)
{
	struct writer	 w = { .f = f, .every_ms = 50, .until_ms = 1800,
	    .per = per };
	uint64_t	 n;

	w.ev = evtimer_new(base, writer_cb, &w);
	assert_non_null(w.ev);
	w.t0 = now_ms();
	writer_cb(-1, 0, &w);
	n = run_for(f, 1800);
	event_free(w.ev);
	*pauses = w.pauses;
	print_message("%d batches of %d, %llu checkpoints, longest gap %lld "
	    "ms\n", w.n, per, (unsigned long long)n, (long long)w.gap);
	assert_true(w.n >= 20);
	return (n);
}

/*
 * Batches of 3 puts every 50 ms (a busy loop's, larger than
 * SQ_CKPT_BUSY_BATCH) for 1.8 s: no pause of SQ_CKPT_IDLE_MS, so only the
 * oldest write's age starts a checkpoint (about one a second); without
 * that rule there would be none, with the old one (250 ms after a write)
 * six or more.  A pause of the test itself (a loaded machine) is an idle
 * time: it may add one each.
 */
static void
test_busy(void **state)
{
	struct fx	*f = *state;
	int64_t		 pauses;
	uint64_t	 n;

	n = write_for(f, SQ_CKPT_BUSY_BATCH + 1, &pauses);
	assert_true(n >= 1);
	assert_true(n <= 2 + (uint64_t)pauses);
	/* Then idle: the rest is checkpointed, once. */
	assert_int_equal(run_for(f, SQ_CKPT_IDLE_MS + 400), 1);
	assert_int_equal(run_for(f, 400), 0);
}

/*
 * Single puts every 50 ms (one client's: the loop is not busy): the
 * oldest write waits SQ_CKPT_IDLE_MS only, about four checkpoints a
 * second (a checkpoint's own time comes between them).
 */
static void
test_light(void **state)
{
	struct fx	*f = *state;
	int64_t		 pauses;

	assert_true(write_for(f, 1, &pauses) >= 4);
}

/* One put, then nothing: checkpointed SQ_CKPT_IDLE_MS later, not before. */
static void
test_idle(void **state)
{
	struct fx	*f = *state;

	fx_put1(f, "a", "1");
	assert_int_equal(run_for(f, SQ_CKPT_IDLE_MS / 2), 0);
	assert_int_equal(run_for(f, SQ_CKPT_IDLE_MS + 400), 1);
	assert_string_equal(fx_get(f, S("a")), "a@1/1/1=1");
}

/* One put of key at rev (revs may jump: a store's writers leave gaps). */
static void
put_at(struct fx *f, uint64_t rev, const char *key)
{
	fx_begin(f);
	fx_put(f, rev, 0, key, strlen(key), S("v"));
	fx_commit(f, rev);
}

/*
 * A tail of SQ_CKPT_SOFT_REVS events is checkpointed at once in slices
 * (not after SQ_CKPT_IDLE_MS); one of SQ_CKPT_HARD_REVS in one
 * transaction as its batch lands, without the loop.  The tail a landing
 * sees ends at the batch before it: so one batch more each time.
 */
static void
test_revs(void **state)
{
	struct fx		*f = *state;
	struct store_sqlite	*q = f->s->impl;
	uint64_t		 rev;
	char			 want[64];

	put_at(f, 1, "a");
	put_at(f, 2 + SQ_CKPT_SOFT_REVS, "b");
	put_at(f, 3 + SQ_CKPT_SOFT_REVS, "c");
	assert_int_equal(run_for(f, SQ_CKPT_IDLE_MS / 2), 1);
	assert_true(q->ckpt_rev >= fx_abs(f, 2 + SQ_CKPT_SOFT_REVS));
	rev = fx_rev(f) + 1;
	put_at(f, rev, "d");
	put_at(f, rev + 1 + SQ_CKPT_HARD_REVS, "e");
	assert_int_equal(q->ckpts, 1);
	put_at(f, rev + 2 + SQ_CKPT_HARD_REVS, "f");
	assert_int_equal(q->ckpts, 2);		/* the loop did not run */
	assert_int_equal(q->ckpt_rev, fx_abs(f, rev + 1 + SQ_CKPT_HARD_REVS));
	/* e is read back from kv as it was written. */
	snprintf(want, sizeof want, "e@1/%llu/%llu=v",
	    (unsigned long long)(rev + 1 + SQ_CKPT_HARD_REVS),
	    (unsigned long long)(rev + 1 + SQ_CKPT_HARD_REVS));
	assert_string_equal(fx_get(f, S("e")), want);
}

/*
 * The WAL's frames come from SQLite's WAL hook after every commit: they
 * grow with each, are in the file, and start again after a checkpoint.
 */
static void
test_wal_pages(void **state)
{
	struct fx		*f = *state;
	struct store_sqlite	*q = f->s->impl;
	struct stat		 st;
	int			 one;

	fx_put1(f, "a", "1");
	one = q->wal_pages;
	assert_true(one >= 1);
	fx_put1(f, "b", "2");
	fx_put1(f, "c", "3");
	assert_true(q->wal_pages > one);
	assert_int_equal(stat(q->wal_path, &st), 0);
	assert_true(st.st_size >= 32 + (off_t)q->wal_pages * (4096 + 24));
	assert_int_equal(run_for(f, SQ_CKPT_IDLE_MS + 400), 1);
	assert_int_equal(q->wal_pages, 0);	/* all of it in the file */
	fx_put1(f, "d", "4");
	assert_true(q->wal_pages >= 1 && q->wal_pages <= one + 1);
}

/*
 * At SQ_WAL_COPY frames the WAL goes into the database file on the loop's
 * next turn, on its own: the frames start again, and the maps are not
 * checkpointed (ckpt_rev and the dirty map stay; no checkpoint ended).
 */
static void
test_wal_copy(void **state)
{
	struct fx		*f = *state;
	struct store_sqlite	*q = f->s->impl;
	static char		 big[40000];
	uint64_t		 ckpts = q->ckpts, rev = q->ckpt_rev;
	int			 i;

	memset(big, 'x', sizeof big - 1);
	for (i = 0; q->wal_pages < SQ_WAL_COPY; i++) {
		assert_true(i < SQ_WAL_COPY);
		fx_put1(f, "big", big);
	}
	assert_int_equal(q->ckpt_rev, rev);
	event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
	assert_int_equal(q->wal_pages, 0);
	assert_int_equal(q->ckpts, ckpts);
	assert_int_equal(q->ckpt_rev, rev);
	assert_int_equal(q->dirty.n, 1);
	fx_put1(f, "big", big);
	assert_true(q->wal_pages >= 1 && q->wal_pages < 64);
}

/* Rows of the key index past rev, read on the store's own connection. */
static uint64_t
keys_rows(struct fx *f, uint64_t rev)
{
	struct store_err	 err;
	char			 sql[96];
	uint64_t		 n = 0;

	snprintf(sql, sizeof sql, "SELECT COUNT(*) FROM history_by_key "
	    "WHERE rev > %llu", (unsigned long long)fx_abs(f, rev));
	assert_int_equal(store_sqlite_scalar(f->s->impl, sql, &n, &err), 0);
	return (n);
}

/*
 * The key index is left to the reads while writes go on: a checkpoint
 * with a write landed since its freeze indexes nothing; one the writes
 * paused for indexes up to its rev; one whose index lags SQ_KEYS_LAG revs
 * indexes a slice of it even so.
 */
static void
test_keys_busy(void **state)
{
	struct fx		*f = *state;
	struct store_sqlite	*q = f->s->impl;
	uint64_t		 r0 = fx_abs(f, 0);

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	assert_int_equal(store_sqlite_ckpt_slice(f->s), 1);	/* frozen */
	fx_put1(f, "c", "1");
	fx_ckpt_slices(f, 100);
	assert_int_equal(q->ckpt_rev, fx_abs(f, 2));
	assert_int_equal(q->keys_rev, r0);
	assert_int_equal(keys_rows(f, 0), 0);
	/* Nothing written since its freeze: c's checkpoint indexes 1-3. */
	fx_ckpt_slices(f, 100);
	assert_int_equal(q->ckpt_rev, fx_abs(f, 3));
	assert_int_equal(q->keys_rev, fx_abs(f, 3));
	assert_int_equal(keys_rows(f, 0), 3);
	/* Busy, but the index lags SQ_KEYS_LAG: one slice of it. */
	put_at(f, SQ_KEYS_LAG - 6, "d");
	assert_int_equal(store_sqlite_ckpt_slice(f->s), 1);
	fx_put1(f, "e", "1");
	fx_ckpt_slices(f, 100);
	assert_int_equal(q->keys_rev, r0 + 3);		/* lags LAG - 9 */
	put_at(f, SQ_KEYS_LAG + 14, "f");
	assert_int_equal(store_sqlite_ckpt_slice(f->s), 1);
	fx_put1(f, "g", "1");
	fx_ckpt_slices(f, 100);
	assert_int_equal(q->ckpt_rev, fx_abs(f, SQ_KEYS_LAG + 14));
	assert_true(q->keys_rev > r0 + 3);
	assert_true(q->keys_rev < fx_abs(f, SQ_KEYS_LAG + 14));
	assert_int_equal(keys_rows(f, 0), 3);
	/* A checkpoint at once (no loop: past a soft bound) indexes it all. */
	put_at(f, 2 * SQ_KEYS_LAG + 20, "h");
	fx_put1(f, "i", "1");	/* h's landing saw the tail before it */
	assert_int_equal(q->ckpt_rev, fx_abs(f, 2 * SQ_KEYS_LAG + 20));
	assert_int_equal(q->keys_rev, fx_abs(f, 2 * SQ_KEYS_LAG + 20));
	assert_int_equal(keys_rows(f, 0), 8);
}

/*
 * Reads fill the key index: a read at a rev up to it, a key's history up
 * to the store's rev; never below compact_rev (nobody reads there).  Its
 * rev is in the file.
 */
static void
test_keys_read(void **state)
{
	struct fx		*f = *state;
	struct store_sqlite	*q;
	struct store_err	 err;
	int			 i, more;

	for (i = 1; i <= 10; i++)
		fx_put1(f, i % 2 ? "a" : "b", "1");
	fx_reopen(f, NULL);	/* a clean close: kv, not the index */
	q = f->s->impl;
	assert_int_equal(q->keys_rev, fx_abs(f, 0));
	assert_string_equal(fx_get_at(f, S("a"), 4), "a@2/1/3=1");
	assert_int_equal(q->keys_rev, fx_abs(f, 4));
	assert_int_equal(keys_rows(f, 0), 4);
	assert_string_equal(fx_get_at(f, S("b"), 2), "b@1/2/2=1");
	assert_int_equal(q->keys_rev, fx_abs(f, 4));
	assert_int_equal(fx_key_history(f, S("b"), 1, 10, &more, &err), 5);
	assert_int_equal(q->keys_rev, fx_abs(f, 10));
	fx_reopen(f, NULL);
	q = f->s->impl;
	assert_int_equal(q->keys_rev, fx_abs(f, 10));
	/* 11-20, compacted to 15: 11-13 are never indexed. */
	for (i = 11; i <= 20; i++)
		fx_put1(f, i % 2 ? "a" : "b", "1");
	assert_int_equal(fx_compact(f, 15, &err), 0);
	assert_string_equal(fx_get_at(f, S("a"), 17), "a@9/1/17=1");
	assert_int_equal(q->keys_rev, fx_abs(f, 17));
	assert_int_equal(keys_rows(f, 10), 3);		/* 15-17 */
	assert_string_equal(fx_get_at(f, S("b"), 15), "b@7/2/14=1");
}

/* Every commit lands at once (no fsync thread): batches as made. */
static int
ckpt_setup(void **state)
{
	if (fx_loop_setup(state, STORE_SYNC_NORMAL) != 0)
		return (-1);
	base = ((struct fx *)*state)->opts.base;
	return (0);
}

static int
ckpt_teardown(void **state)
{
	base = NULL;
	return (fx_loop_teardown(state));
}

#define SQL(t)	{ #t "/sqlite", t, ckpt_setup, ckpt_teardown, &fx_sql }
/* No loop: the test drives the checkpoint. */
#define SQLX(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_due),
		SQL(test_busy),
		SQL(test_light),
		SQL(test_idle),
		SQL(test_revs),
		SQL(test_wal_pages),
		SQL(test_wal_copy),
		SQLX(test_keys_busy),
		SQLX(test_keys_read),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
