/*
 * The SQLite backend's log-structured commit (issue 18).  A batch's commit
 * appends its events to the log table and updates the meta row 'rev': one
 * append and one fsync, no B-tree leaf of `kv` or of history's key index
 * rewritten per key.  The state of the keys written since the last checkpoint is kept in
 * memory, in the "dirty" map (key -> its newest state, a delete as a
 * tombstone), and reads look there before `kv`.  A checkpoint writes the
 * dirty map into `kv` in one transaction, off the acknowledgement path (a
 * timer between turns of the loop, or at once when the map is full), moves
 * the log's rows into history, and sets meta 'ckpt_rev': every event up to
 * it is in `kv` and history, every later one in the log.  That
 * transaction need not be fsynced (synchronous = NORMAL): if it is lost in
 * a crash, its events are still in the log, and opening the database
 * replays the log (store_sqlite_recover()).  Reads of history at a rev
 * past ckpt_rev checkpoint first (store_sqlite_ckpt_for_read()); reading
 * the newest events (watches) takes history, then the log.
 *
 * A batch's own writes live in the "pending" list until it commits (a mark
 * is the list's length, undo truncates it); then they move to the dirty
 * map.  Compaction drops log events, so it first checkpoints everything,
 * the dirty map and the batch's pending writes, in the batch's own
 * transaction (store_sqlite_ckpt_in_batch()).
 */
#include <sys/time.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "store_sqlite.h"
#include "util.h"

/*
 * Checkpoint on the next turn past SOFT entries, at once past HARD ones or
 * HARD_BYTES: the larger a checkpoint, the fewer times each page of kv and
 * of history's key index is written per key (measured: BENCHMARKS.md).
 */
#define SQ_CKPT_SOFT		8192
#define SQ_CKPT_HARD		65536
#define SQ_CKPT_HARD_BYTES	(8 * 1024 * 1024)
/* Fewer entries wait at most this long for their checkpoint. */
#define SQ_CKPT_IDLE_MS		250

static uint64_t
sq_hash(const char *key, size_t len)
{
	uint64_t	 h = 14695981039346656037ULL;
	size_t		 i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 1099511628211ULL;
	}
	return (h);
}

struct sq_ent *
sq_ent_new(const char *key, size_t klen, const void *val, size_t vlen,
    int deleted)
{
	struct sq_ent	*e;

	/* The key and the value each end with a NUL, as SQLite's do. */
	e = xmalloc(sizeof *e + klen + 1 + (deleted ? 0 : vlen + 1));
	memset(e, 0, sizeof *e);
	e->key = (char *)(e + 1);
	memcpy(e->key, key, klen);
	e->key[klen] = '\0';
	e->klen = klen;
	e->hash = sq_hash(key, klen);
	e->deleted = deleted;
	if (!deleted) {
		e->val = (unsigned char *)e->key + klen + 1;
		if (vlen > 0)
			memcpy(e->val, val, vlen);
		e->val[vlen] = '\0';
		e->vlen = vlen;
	}
	return (e);
}

static size_t
sq_ent_bytes(const struct sq_ent *e)
{
	return (sizeof *e + e->klen + e->vlen);
}

static size_t
sq_map_slot(const struct sq_map *m, const char *key, size_t len,
    uint64_t h)
{
	size_t		 i = (size_t)h & (m->cap - 1);
	struct sq_ent	*e;

	while ((e = m->slot[i]) != NULL) {
		if (e->hash == h && e->klen == len &&
		    memcmp(e->key, key, len) == 0)
			break;
		i = (i + 1) & (m->cap - 1);
	}
	return (i);
}

struct sq_ent *
sq_map_find(const struct sq_map *m, const char *key, size_t len)
{
	if (m->n == 0)
		return (NULL);
	return (m->slot[sq_map_slot(m, key, len, sq_hash(key, len))]);
}

static void
sq_map_grow(struct sq_map *m)
{
	struct sq_ent	**old = m->slot;
	size_t		  i, oldcap = m->cap;

	m->cap = oldcap ? oldcap * 2 : 1024;
	m->slot = xcalloc(m->cap, sizeof *m->slot);
	for (i = 0; i < oldcap; i++)
		if (old[i] != NULL)
			m->slot[sq_map_slot(m, old[i]->key, old[i]->klen,
			    old[i]->hash)] = old[i];
	free(old);
}

/* e replaces the entry of its key; owned: the replaced one is freed. */
static void
sq_map_set(struct sq_map *m, struct sq_ent *e, int owned)
{
	size_t	 i;

	if ((m->n + 1) * 4 > m->cap * 3)
		sq_map_grow(m);
	i = sq_map_slot(m, e->key, e->klen, e->hash);
	if (m->slot[i] == NULL)
		m->n++;
	else if (owned) {
		m->bytes -= sq_ent_bytes(m->slot[i]);
		free(m->slot[i]);
	}
	m->slot[i] = e;
	m->bytes += sq_ent_bytes(e);
}

/* Empties the map, keeping its slots (no churn of the table itself). */
static void
sq_map_clear(struct sq_map *m, int owned)
{
	size_t	 i;

	if (m->n == 0)
		return;
	for (i = 0; i < m->cap; i++) {
		if (owned)
			free(m->slot[i]);
		m->slot[i] = NULL;
	}
	m->n = m->bytes = 0;
}

void
sq_map_free(struct sq_map *m, int owned)
{
	sq_map_clear(m, owned);
	free(m->slot);
	memset(m, 0, sizeof *m);
}

/* Adds a write of the open batch (it now owns e). */
void
sq_pend_add(struct store_sqlite *q, struct sq_ent *e)
{
	struct sq_pend	*p = &q->pend;

	if (p->n == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 256;
		p->v = xrealloc(p->v, p->cap * sizeof *p->v);
	}
	p->v[p->n++] = e;
	sq_map_set(&p->idx, e, 0);
}

/* Forgets the batch's writes from the n-th on. */
void
sq_pend_truncate(struct store_sqlite *q, size_t n)
{
	struct sq_pend	*p = &q->pend;
	size_t		 i;

	if (n >= p->n)
		return;
	for (i = n; i < p->n; i++)
		free(p->v[i]);
	p->n = n;
	sq_map_clear(&p->idx, 0);
	for (i = 0; i < n; i++)
		sq_map_set(&p->idx, p->v[i], 0);
}

/* The newest state of a key not yet in kv: the batch's, then the map's. */
struct sq_ent *
sq_find(struct store_sqlite *q, const char *key, size_t len)
{
	struct sq_ent	*e = NULL;

	if (q->in_txn)
		e = sq_map_find(&q->pend.idx, key, len);
	if (e == NULL)
		e = sq_map_find(&q->dirty, key, len);
	return (e);
}

/* Writes one entry's state into kv. */
static int
sq_apply(struct store_sqlite *q, const struct sq_ent *e,
    struct store_err *err)
{
	sqlite3_stmt	*st;

	if (e->deleted) {
		store_sqlite_bind_blob(q->st[SQ_DELETE], 1, e->key, e->klen);
		return (store_sqlite_run(q, SQ_DELETE, "checkpoint", err));
	}
	st = q->st[SQ_KV_SET];
	store_sqlite_bind_blob(st, 1, e->key, e->klen);
	store_sqlite_bind_blob(st, 2, e->val, e->vlen);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)e->version);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)e->create_rev);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)e->mod_rev);
	return (store_sqlite_run(q, SQ_KV_SET, "checkpoint", err));
}

int
sq_ent_cmp(const void *a, const void *b)
{
	const struct sq_ent	*x = *(struct sq_ent *const *)a;
	const struct sq_ent	*y = *(struct sq_ent *const *)b;
	size_t			 n = x->klen < y->klen ? x->klen : y->klen;
	int			 c = memcmp(x->key, y->key, n);

	if (c != 0)
		return (c);
	return (x->klen < y->klen ? -1 : x->klen > y->klen);
}

/* The dirty map into kv, in key order (each leaf page visited once). */
static int
sq_apply_dirty(struct store_sqlite *q, struct store_err *err)
{
	struct sq_map	*m = &q->dirty;
	size_t		 i, n = 0;

	if (m->n == 0)
		return (0);
	if (q->sorted_cap < m->n) {
		q->sorted_cap = m->cap;
		q->sorted = xrealloc(q->sorted, q->sorted_cap *
		    sizeof *q->sorted);
	}
	for (i = 0; i < m->cap; i++)
		if (m->slot[i] != NULL)
			q->sorted[n++] = m->slot[i];
	qsort(q->sorted, n, sizeof *q->sorted, sq_ent_cmp);
	for (i = 0; i < n; i++)
		if (sq_apply(q, q->sorted[i], err) != 0)
			return (-1);
	return (0);
}

/* The log into history (its key index updated once for them all). */
static int
sq_move_log(struct store_sqlite *q, uint64_t rev, struct store_err *err)
{
	sqlite3_stmt	*st = q->st[SQ_SET_META];

	if (store_sqlite_run(q, SQ_LOG_MOVE, "checkpoint", err) != 0 ||
	    store_sqlite_run(q, SQ_LOG_CLEAR, "checkpoint", err) != 0)
		return (-1);
	sqlite3_bind_text(st, 1, "ckpt_rev", -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
	return (store_sqlite_run(q, SQ_SET_META, "checkpoint", err));
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

/*
 * Outside a batch: the dirty map into kv, in a transaction of its own that
 * is not fsynced (the log holds its events), then the map is emptied.
 */
int
store_sqlite_checkpoint(struct store *s, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	int			 rc;

	if (q->dirty.n == 0 || q->in_txn)
		return (0);
	sq_sync_mode(q, "NORMAL");
	rc = store_sqlite_run(q, SQ_BEGIN, "checkpoint", err);
	if (rc == 0) {
		q->in_txn = 1;
		if (sq_apply_dirty(q, err) != 0 ||
		    sq_move_log(q, s->rev, err) != 0 ||
		    store_sqlite_run(q, SQ_COMMIT, "checkpoint", err) != 0) {
			if (!sqlite3_get_autocommit(q->db))
				sqlite3_exec(q->db, "ROLLBACK", NULL, NULL,
				    NULL);
			rc = -1;
		}
		q->in_txn = 0;
	}
	sq_sync_mode(q, "FULL");
	if (rc == 0) {
		sq_map_clear(&q->dirty, 1);
		q->ckpt_rev = s->rev;
		q->ckpts++;
		/*
		 * SQLite's own checkpoint (WAL into the database file, and
		 * its fsyncs) here too, not on a commit's path (it is off:
		 * wal_autocheckpoint = 0).  PASSIVE: a failure leaves the
		 * WAL as it is, to be tried again next time.
		 */
		sqlite3_wal_checkpoint_v2(q->db, NULL,
		    SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	}
	return (rc);
}

/*
 * history and kv hold the events up to ckpt_rev; a read of history (or of
 * kv) that needs later ones checkpoints first.  Outside a batch only.
 */
int
store_sqlite_ckpt_for_read(struct store *s, uint64_t rev,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	if (rev <= q->ckpt_rev || q->dirty.n == 0)
		return (0);
	if (q->in_txn)
		return (store_err_set(err, STORE_ERR_INTERNAL, "sqlite: a "
		    "read at a revision inside a batch"));
	return (store_sqlite_checkpoint(s, err));
}

/*
 * Inside the open batch (before a compaction drops log events): the dirty
 * map and the batch's writes so far into kv, ckpt_rev to the newest of
 * them.  The map is emptied when the batch commits.
 */
int
store_sqlite_ckpt_in_batch(struct store *s, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	uint64_t		 rev = s->rev;
	size_t			 i;

	if (sq_apply_dirty(q, err) != 0)
		return (-1);
	for (i = 0; i < q->pend.n; i++) {
		if (sq_apply(q, q->pend.v[i], err) != 0)
			return (-1);
		if (q->pend.v[i]->mod_rev > rev)
			rev = q->pend.v[i]->mod_rev;
	}
	if (sq_move_log(q, rev, err) != 0)
		return (-1);
	q->ckpt_in_batch = 1;
	q->ckpt_rev_batch = rev;
	q->pend_ckpt = q->pend.n;
	return (0);
}

static void
sq_ckpt_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store		*s = arg;
	struct store_err	 err;

	(void)fd;
	(void)what;
	/* On failure the map stays: the next commit tries again. */
	store_sqlite_checkpoint(s, &err);
}

/* The batch committed: its writes join the dirty map. */
void
store_sqlite_committed(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct store_err	 err;
	struct timeval		 tv = { 0, 0 };
	size_t			 i;

	i = 0;
	if (q->ckpt_in_batch) {
		/* kv has the map and the batch's writes up to pend_ckpt. */
		sq_map_clear(&q->dirty, 1);
		for (; i < q->pend_ckpt; i++)
			free(q->pend.v[i]);
		q->ckpt_rev = q->ckpt_rev_batch;
		q->ckpt_in_batch = 0;
	}
	for (; i < q->pend.n; i++)
		sq_map_set(&q->dirty, q->pend.v[i], 1);
	q->pend.n = 0;
	sq_map_clear(&q->pend.idx, 0);
	if (q->dirty.n == 0)
		return;
	if (q->dirty.n >= SQ_CKPT_HARD || q->dirty.bytes >= SQ_CKPT_HARD_BYTES ||
	    q->ckpt_ev == NULL) {
		/* Without a loop (tools, tests): past SOFT, at once. */
		if (q->ckpt_ev == NULL && q->dirty.n < SQ_CKPT_SOFT &&
		    q->dirty.bytes < SQ_CKPT_HARD_BYTES)
			return;
		store_sqlite_checkpoint(s, &err);
		return;
	}
	if (q->dirty.n >= SQ_CKPT_SOFT) {
		event_del(q->ckpt_ev);
		event_add(q->ckpt_ev, &tv);
	} else if (!evtimer_pending(q->ckpt_ev, NULL)) {
		tv.tv_usec = SQ_CKPT_IDLE_MS * 1000;
		event_add(q->ckpt_ev, &tv);
	}
}

void
store_sqlite_log_init(struct store *s, struct event_base *base)
{
	struct store_sqlite	*q = s->impl;

	struct timeval		 tv = { 0, SQ_CKPT_IDLE_MS * 1000 };

	if (base != NULL)
		q->ckpt_ev = evtimer_new(base, sq_ckpt_cb, s);
	/* The log replayed at open is checkpointed once the loop runs. */
	if (q->ckpt_ev != NULL && q->dirty.n > 0)
		event_add(q->ckpt_ev, &tv);
}

void
store_sqlite_log_free(struct store_sqlite *q)
{
	if (q->ckpt_ev != NULL)
		event_free(q->ckpt_ev);
	sq_pend_truncate(q, 0);
	free(q->pend.v);
	sq_map_free(&q->pend.idx, 0);
	sq_map_free(&q->dirty, 1);
	free(q->sorted);
}

/*
 * At open: the log (the events past ckpt_rev, whose checkpoint a crash
 * lost) into the dirty map, one sequential read; the checkpoint comes
 * later, on the loop (store_sqlite_log_init()), so that start-up does not
 * wait for it.  The log is at most what the dirty map holds before a
 * checkpoint is forced (SQ_CKPT_HARD entries or bytes, plus one batch).
 */
int
store_sqlite_recover(struct store *s, uint64_t ckpt_rev,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->st[SQ_LOG_GET];
	struct store_event	 ev;
	struct sq_ent		*e;
	int			 rc;

	q->ckpt_rev = ckpt_rev;
	sqlite3_bind_int64(st, 1, 0);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_sqlite_event(st, &ev);
		e = sq_ent_new(ev.kv.key, ev.kv.key_len, ev.kv.value,
		    ev.kv.value_len, ev.type == STORE_EVENT_DELETE);
		e->version = ev.kv.version;
		e->create_rev = ev.kv.create_rev;
		e->mod_rev = ev.rev;
		sq_map_set(&q->dirty, e, 1);
	}
	store_sqlite_done(st);
	if (rc != SQLITE_DONE)
		return (store_sqlite_fail(q, rc, "replaying the log", err));
	q->replayed = q->dirty.n;
	/* Without a loop (tools, tests), at once. */
	if (s->opts.base == NULL)
		return (store_sqlite_checkpoint(s, err));
	return (0);
}

