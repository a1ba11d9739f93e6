/*
 * The SQLite backend's checkpoints (issue 18; the log-structured commit is
 * described in store_sqlite_log.c).  A checkpoint runs in slices of a few
 * milliseconds, one per turn of the loop, so that commits and reads go on
 * between them instead of waiting for the whole of it (10-50 ms measured
 * in one piece: BENCHMARKS.md):
 *
 *   1. the dirty map is frozen (new commits fill a fresh one) and sorted;
 *      SQ_CK_KV: each slice writes the next of its entries into kv, in a
 *      transaction of its own (not fsynced: history holds their events);
 *   2. SQ_CK_LOG: ckpt_rev to frozen_rev;
 *   3. SQ_CK_KEYS: while the key index is wanted (store_sqlite.h: the
 *      writes paused, or it lags SQ_KEYS_LAG), each slice indexes
 *      history's next revs by key (history_by_key, in key order),
 *      SQ_SLICE_KEYS_STEP a statement while its time lasts, and sets
 *      keys_rev to the last;
 *   4. SQ_CK_WAL: SQLite's own checkpoint (WAL into the database file),
 *      which also runs on its own, between slices or none, once the WAL
 *      holds SQ_WAL_COPY frames.
 *
 * Reads look in the dirty map, then the frozen one, then kv, so a key half
 * way through step 1 reads the same.  A crash in step 1 leaves kv with
 * some keys at states newer than ckpt_rev: replaying history's tail at open
 * (every event past ckpt_rev) overrides them with the same or newer ones.
 * Anything that needs the whole checkpoint at once (a range read, a map
 * past its hard limit) finishes it in one transaction, without the key
 * index: store_sqlite_checkpoint().
 */
#include <sys/time.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"
#include "util.h"

/*
 * A slice's budget in kv, and the revs of history indexed by key per
 * slice: each slice rewrites the pages of the key index it touches, so
 * the events go in few, large slices (schema 4 moved 4096 revs a slice
 * into history, and 1024 cost 10% of the puts/s at 64 clients; schema 5's
 * index rows are smaller: 16384 took 11.2 -> 10.8 us a put, BENCHMARKS.md).
 */
#define SQ_SLICE_US		2000
#define SQ_SLICE_LOG_REVS	16384
/*
 * ... indexed SQ_SLICE_KEYS_STEP revs a statement, as many as fit in the
 * slice's time (SQ_SLICE_US, at least one): a whole SQ_SLICE_LOG_REVS at
 * once took up to 330 ms on a loaded machine (issue 39, BENCHMARKS.md).
 */
#define SQ_SLICE_KEYS_STEP	2048

static void
sq_arm(struct store_sqlite *q, int ms)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };

	if (q->ckpt_ev == NULL)
		return;
	event_del(q->ckpt_ev);
	event_add(q->ckpt_ev, &tv);
}


/* When the next checkpoint is due, in ms from now (0: now). */
int64_t
store_sqlite_ckpt_due(const struct sq_ckpt_load *l)
{
	int64_t	 idle = SQ_CKPT_IDLE_MS - l->last_ms;
	int64_t	 busy = (l->busy ? SQ_CKPT_BUSY_MS : SQ_CKPT_IDLE_MS) -
	    l->first_ms;

	if (l->keys >= SQ_CKPT_SOFT || l->bytes >= SQ_CKPT_SOFT_BYTES ||
	    l->revs >= SQ_CKPT_SOFT_REVS || l->wal_pages >= SQ_CKPT_SOFT_WAL ||
	    idle <= 0 || busy <= 0)
		return (0);
	return (idle < busy ? idle : busy);
}

/*
 * When this store's next checkpoint is due, at now (us; 0: read the
 * clock), as store_sqlite_ckpt_due(); -1: none is to be made.  Without a
 * loop only the sizes count.
 */
static int64_t
sq_due(struct store *s, int64_t now)
{
	struct store_sqlite	*q = s->impl;
	struct sq_ckpt_load	 l;

	if (q->dirty.n == 0)
		return (-1);
	memset(&l, 0, sizeof l);
	l.keys = q->dirty.n;
	l.bytes = q->dirty.bytes;
	l.revs = s->head.rev - q->ckpt_rev;
	l.wal_pages = q->wal_pages;
	if (q->ckpt_ev != NULL) {
		if (now == 0)
			now = mono_us();
		l.first_ms = (now - q->first_us) / 1000;
		l.last_ms = (now - q->last_us) / 1000;
	}
	l.busy = q->events > SQ_CKPT_BUSY_BATCH * q->batches;
	return (store_sqlite_ckpt_due(&l));
}

/* SQLite's WAL hook: the frames in the WAL after each commit. */
static int
sq_wal_hook(void *arg, sqlite3 *db, const char *name, int pages)
{
	(void)db;
	(void)name;
	((struct store_sqlite *)arg)->wal_pages = pages;
	return (SQLITE_OK);
}

/* A map's entries into *v (grown to fit), in key order; their count. */
static size_t
sq_sort(const struct sq_map *m, struct sq_ent ***v, size_t *cap)
{
	size_t	 i, n = 0;

	if (*cap < m->n) {
		*cap = m->cap;
		*v = xrealloc(*v, *cap * sizeof **v);
	}
	for (i = 0; i < m->cap; i++)
		if (m->slot[i] != NULL)
			(*v)[n++] = m->slot[i];
	qsort(*v, n, sizeof **v, sq_ent_cmp);
	return (n);
}

/* What is left of frozen, then the dirty map, into kv (in key order). */
static int
sq_apply_all(struct store_sqlite *q, struct store_err *err)
{
	size_t	 i, n;

	for (i = q->fdone; i < q->fn; i++)
		if (sq_apply(q, q->fsorted[i], err) != 0)
			return (-1);
	if (q->dirty.n == 0)
		return (0);
	n = sq_sort(&q->dirty, &q->sorted, &q->sorted_cap);
	for (i = 0; i < n; i++)
		if (sq_apply(q, q->sorted[i], err) != 0)
			return (-1);
	return (0);
}

/*
 * ckpt_rev to rev (kv holds every event up to it); the events a
 * compaction left in history because they were past ckpt_rev then go.
 */
static int
sq_ckpt_rev(struct store *s, uint64_t rev, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	uint64_t		 drop;

	if (q->hist_left) {
		drop = s->head.compact_rev <= rev + 1 ? s->head.compact_rev :
		    rev + 1;
		sqlite3_bind_int64(q->st[SQ_HIST_DROP], 1, (sqlite3_int64)drop);
		if (store_sqlite_run(q, SQ_HIST_DROP, "checkpoint", err) != 0)
			return (-1);
		q->hist_left = drop < s->head.compact_rev;
	}
	return (store_sqlite_set_meta(q, "ckpt_rev", rev, err));
}

/* Where the key index's next fill starts: nobody reads below compact_rev. */
uint64_t
store_sqlite_keys_from(const struct store *s)
{
	const struct store_sqlite	*q = s->impl;

	return (q->keys_rev + 1 >= s->head.compact_rev ? q->keys_rev :
	    s->head.compact_rev - 1);
}

/* history's events of (from, to] into the key index, keys_rev to to. */
static int
sq_keys_fill(struct store *s, uint64_t from, uint64_t to,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	sqlite3_bind_int64(q->st[SQ_KEYS_FILL], 1, (sqlite3_int64)from);
	sqlite3_bind_int64(q->st[SQ_KEYS_FILL], 2, (sqlite3_int64)to);
	if (store_sqlite_run(q, SQ_KEYS_FILL, "indexing history", err) != 0)
		return (-1);
	return (store_sqlite_set_meta(q, "keys_rev", to, err));
}

/* The key index lags rev by SQ_KEYS_LAG revs or more. */
static int
sq_keys_lag(const struct store *s, uint64_t rev)
{
	uint64_t	 from = store_sqlite_keys_from(s);

	return (from < rev && rev - from >= SQ_KEYS_LAG);
}

/*
 * Does a checkpoint up to rev index history towards it (store_sqlite.h):
 * the writes paused (none in the dirty map), or the index lags.
 */
static int
sq_keys_want(const struct store *s, uint64_t rev)
{
	const struct store_sqlite	*q = s->impl;

	return (store_sqlite_keys_from(s) < rev && (q->dirty.n == 0 ||
	    sq_keys_lag(s, rev)));
}

static void
sq_sync_mode(struct store_sqlite *q, const char *mode)
{
	char	 sql[64];

	if (q->sync_full) {
		snprintf(sql, sizeof sql, "PRAGMA synchronous = %s", mode);
		sqlite3_exec(q->db, sql, NULL, NULL, NULL);
	}
}

/* A transaction of the checkpoint's, not fsynced (history holds it). */
static int
sq_ck_begin(struct store_sqlite *q, struct store_err *err)
{
	sq_sync_mode(q, "NORMAL");
	if (store_sqlite_run(q, SQ_BEGIN, "checkpoint", err) != 0) {
		sq_sync_mode(q, "FULL");
		return (-1);
	}
	q->in_txn = 1;
	return (0);
}

static int
sq_ck_end(struct store_sqlite *q, int rc, struct store_err *err)
{
	if (rc == 0 && store_sqlite_run(q, SQ_COMMIT, "checkpoint", err) != 0)
		rc = -1;
	if (rc != 0 && !sqlite3_get_autocommit(q->db))
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	q->in_txn = 0;
	sq_sync_mode(q, "FULL");
	return (rc);
}

/*
 * SQLite's own checkpoint (WAL into the database file, and its fsyncs),
 * not on a commit's path (it is off: wal_autocheckpoint = 0).  PASSIVE: a
 * failure leaves the WAL as it is, to be tried again next time.
 */
static void
sq_wal_copy(struct store_sqlite *q)
{
	int	 log = -1, done = -1;

	/* All of it copied: the next commit writes the WAL from its start. */
	if (sqlite3_wal_checkpoint_v2(q->db, NULL, SQLITE_CHECKPOINT_PASSIVE,
	    &log, &done) == SQLITE_OK && done == log)
		q->wal_pages = 0;
}

/* The checkpoint's last step. */
static void
sq_wal_ckpt(struct store *s, int64_t t0)
{
	struct store_sqlite	*q = s->impl;

	sq_wal_copy(q);
	q->ck_phase = SQ_CK_IDLE;
	q->ckpts++;
	/* The checkpoint is over: its time, every slice's, is reported. */
	store_report(s, STORE_REPORT_CHECKPOINT, NULL, STORE_ERR_NONE,
	    (double)(q->ck_us + mono_us() - t0) / 1e6);
	q->ck_us = 0;
}

/* The frozen map is in kv and history: it goes. */
static void
sq_frozen_done(struct store_sqlite *q)
{
	sq_map_clear(&q->frozen, 1);
	q->fn = q->fdone = 0;
}

/*
 * Outside a batch: the whole checkpoint (what is left of one in slices,
 * then the dirty map) in one transaction, then the maps are emptied.
 */
int
store_sqlite_checkpoint(struct store *s, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	int64_t			 t0 = mono_us();
	int			 rc, keys;

	if ((q->dirty.n == 0 && q->ck_phase == SQ_CK_IDLE) || q->in_txn)
		return (0);
	if (q->dirty.n > 0 || q->ck_phase != SQ_CK_WAL) {
		if (sq_ck_begin(q, err) != 0)
			return (-1);
		rc = sq_apply_all(q, err);
		if (rc == 0)
			rc = sq_ckpt_rev(s, s->head.rev, err);
		/* Writes go on (a read or a bound forced this one). */
		keys = rc == 0 && sq_keys_lag(s, s->head.rev);
		if (keys)
			rc = sq_keys_fill(s, store_sqlite_keys_from(s),
			    s->head.rev, err);
		if (sq_ck_end(q, rc, err) != 0) {
			q->ck_us += mono_us() - t0;
			return (-1);
		}
		sq_clean_fill(q, &q->frozen, NULL, 0);
		sq_clean_fill(q, &q->dirty, NULL, 0);
		sq_frozen_done(q);
		sq_map_clear(&q->dirty, 1);
		q->ckpt_rev = s->head.rev;
		if (keys)
			q->keys_rev = s->head.rev;
	}
	sq_wal_ckpt(s, t0);
	return (0);
}

/* Step 1: the dirty map frozen, in key order. */
static void
sq_freeze(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct sq_map		 t = q->frozen;

	q->frozen = q->dirty;		/* frozen is empty: swap them */
	q->dirty = t;
	q->frozen_rev = s->head.rev;
	q->fn = sq_sort(&q->frozen, &q->fsorted, &q->fsorted_cap);
	q->fdone = 0;
	q->ck_phase = SQ_CK_KV;
}

/* One slice, outside a batch; 1 if there is more to do, -1 on error. */
int
store_sqlite_ckpt_slice(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct store_err	 err;
	int64_t			 t0 = mono_us(), until = t0 + SQ_SLICE_US;
	uint64_t		 rev, from, to, rev0;
	size_t			 i;
	int			 rc = 0;

	if (q->in_txn)
		return (1);
	if (q->ck_phase == SQ_CK_IDLE) {
		if (q->dirty.n == 0)
			return (0);
		sq_freeze(s);
	}
	/* Not wanted (any more: compacted or written to since). */
	if (q->ck_phase == SQ_CK_KEYS && !sq_keys_want(s, q->frozen_rev))
		q->ck_phase = SQ_CK_WAL;
	if (q->ck_phase == SQ_CK_WAL) {
		sq_wal_ckpt(s, t0);
		return (sq_due(s, 0) == 0);
	}
	if (sq_ck_begin(q, &err) != 0) {
		q->ck_us += mono_us() - t0;
		return (-1);
	}
	i = q->fdone;
	rev = q->ckpt_rev;
	to = q->keys_rev;
	if (q->ck_phase == SQ_CK_KV) {
		for (; i < q->fn && rc == 0; i++) {
			rc = sq_apply(q, q->fsorted[i], &err);
			if ((i & 31) == 31 && mono_us() >= until)
				break;
		}
		if (i < q->fn)
			i++;
	} else if (q->ck_phase == SQ_CK_LOG) {
		rev = q->frozen_rev;
		rc = sq_ckpt_rev(s, rev, &err);
	} else {
		from = store_sqlite_keys_from(s);
		rev0 = from;
		do {
			to = from + SQ_SLICE_KEYS_STEP;
			if (to > q->frozen_rev)
				to = q->frozen_rev;
			rc = sq_keys_fill(s, from, to, &err);
			from = to;
		} while (rc == 0 && to < q->frozen_rev &&
		    to - rev0 < SQ_SLICE_LOG_REVS && mono_us() < until);
	}
	q->ck_us += mono_us() - t0;
	if (sq_ck_end(q, rc, &err) != 0)
		return (-1);
	q->fdone = i > q->fn ? q->fn : i;
	q->ckpt_rev = rev;
	q->keys_rev = to;
	if (q->ck_phase == SQ_CK_KV && q->fdone == q->fn)
		q->ck_phase = SQ_CK_LOG;
	else if (q->ck_phase == SQ_CK_LOG) {
		sq_clean_fill(q, &q->frozen, NULL, 0);
		sq_frozen_done(q);
		q->ck_phase = SQ_CK_KEYS;	/* or straight to WAL, next */
	}
	return (1);
}

/*
 * kv holds the events up to ckpt_rev; a read of kv that needs later ones
 * checkpoints first.  Outside a batch only.
 */
int
store_sqlite_ckpt_for_read(struct store *s, uint64_t rev,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	if (rev <= q->ckpt_rev || (q->dirty.n == 0 && q->frozen.n == 0))
		return (0);
	if (q->in_txn)
		return (store_err_set(err, STORE_ERR_INTERNAL, "sqlite: a "
		    "read at a revision inside a batch"));
	return (store_sqlite_checkpoint(s, err));
}

/*
 * The key index up to rev (the store's at most: no batch out), at once,
 * in a transaction of its own.  Outside a batch only; -1 inside one or if
 * the write failed (the disk is full): the caller reads history's tail
 * past store_sqlite_keys_from() instead.
 */
int
store_sqlite_keys_for_read(struct store *s, uint64_t rev,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	uint64_t		 from = store_sqlite_keys_from(s);
	int			 rc;

	if (rev > s->head.rev)
		rev = s->head.rev;
	if (rev <= from)
		return (0);
	if (q->in_txn)
		return (store_err_set(err, STORE_ERR_INTERNAL, "sqlite: a "
		    "read at a revision inside a batch"));
	if (sq_ck_begin(q, err) != 0)
		return (-1);
	rc = sq_keys_fill(s, from, rev, err);
	if (sq_ck_end(q, rc, err) != 0)
		return (-1);
	q->keys_rev = rev;
	return (0);
}

static void
sq_ckpt_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store		*s = arg;
	struct store_sqlite	*q = s->impl;
	int64_t			 due, t0;
	int			 rc;

	(void)fd;
	(void)what;
	/* A batch open across turns: after it (not a busy loop). */
	if (q->in_txn) {
		sq_arm(q, 1);
		return;
	}
	/*
	 * The WAL at its bound: copied on a turn of its own (SQ_WAL_COPY),
	 * its time reported as a checkpoint's.
	 */
	if (q->wal_pages >= SQ_WAL_COPY && q->ck_phase != SQ_CK_WAL) {
		t0 = mono_us();
		sq_wal_copy(q);
		store_report(s, STORE_REPORT_CHECKPOINT, NULL, STORE_ERR_NONE,
		    (double)(mono_us() - t0) / 1e6);
		if (q->ck_phase != SQ_CK_IDLE)
			sq_arm(q, 0);
		else if ((due = sq_due(s, 0)) >= 0)
			sq_arm(q, (int)due);
		return;
	}
	/* Not due yet: the writes went on since the timer was set. */
	if (q->ck_phase == SQ_CK_IDLE && (due = sq_due(s, 0)) != 0) {
		if (due > 0)
			sq_arm(q, (int)due);
		return;
	}
	/* On failure the maps stay: tried again a while later. */
	rc = store_sqlite_ckpt_slice(s);
	if (rc > 0)
		sq_arm(q, 0);
	else if (rc < 0)
		sq_arm(q, SQ_CKPT_IDLE_MS);
	else if ((due = sq_due(s, 0)) >= 0)
		sq_arm(q, (int)due);
}

/* A batch landed (durable): its writes join the dirty map. */
void
store_sqlite_landed(struct store *s, struct sq_pend *p)
{
	struct store_sqlite	*q = s->impl;
	struct store_err	 err;
	int64_t			 now = mono_us(), due;
	size_t			 i;

	if (p->n > 0) {
		q->last_us = now;
		if (q->dirty.n == 0) {
			q->first_us = q->last_us;
			q->batches = q->events = 0;
		}
		q->batches++;
		q->events += p->n;
	}
	for (i = 0; i < p->n; i++)
		sq_map_set(&q->dirty, p->v[i], 1);
	p->n = 0;
	sq_map_clear(&p->idx, 0);
	if (q->dirty.n == 0)
		return;
	if (q->dirty.n + q->frozen.n >= SQ_CKPT_HARD ||
	    q->dirty.bytes + q->frozen.bytes >= SQ_CKPT_HARD_BYTES ||
	    s->head.rev - q->ckpt_rev >= SQ_CKPT_HARD_REVS ||
	    q->ckpt_ev == NULL) {
		/* Without a loop (tools, tests): past SOFT, at once. */
		if (q->ckpt_ev == NULL && sq_due(s, now) != 0)
			return;
		store_sqlite_checkpoint(s, &err);
		return;
	}
	if (q->wal_pages >= SQ_WAL_COPY) {
		sq_arm(q, 0);
		return;
	}
	/* A checkpoint under way has its timer armed already. */
	if (q->ck_phase != SQ_CK_IDLE)
		return;
	if ((due = sq_due(s, now)) == 0 || !evtimer_pending(q->ckpt_ev, NULL))
		sq_arm(q, (int)due);
}

void
store_sqlite_log_init(struct store *s, struct event_base *base)
{
	struct store_sqlite	*q = s->impl;

	sqlite3_wal_hook(q->db, sq_wal_hook, q);
	if (base != NULL)
		q->ckpt_ev = evtimer_new(base, sq_ckpt_cb, s);
	store_sqlite_sync_start(s, base);
	/* The tail replayed at open is checkpointed once the loop runs. */
	if (q->dirty.n > 0)
		sq_arm(q, SQ_CKPT_IDLE_MS);
}
