/*
 * The SQLite backend's log-structured commit (issue 18; schema 6).  A
 * batch's commit appends its events to history, keyed by an id that grows
 * with (rev, seq): one append and one fsync, no B-tree leaf of `kv` or of
 * a key index rewritten per key.  The state of the keys written since the
 * last checkpoint is kept in memory, in the "dirty" map (key -> its newest
 * state, a delete as a tombstone), and reads look there before `kv`.  A
 * checkpoint writes the dirty map into `kv` off the acknowledgement path
 * (in slices between turns of the loop, store_sqlite_ckpt.c, or at once
 * when it is full) and sets meta 'ckpt_rev': every event up to it is in
 * `kv`, the later ones in history only (its "tail").  That transaction
 * need not be fsynced (synchronous = NORMAL): if it is lost in a crash,
 * its events are still in history, and opening the database replays the
 * tail (store_sqlite_recover()).  Reads of kv past ckpt_rev checkpoint
 * first (store_sqlite_ckpt_for_read()); reads at a rev fill the key index
 * first (store_sqlite_keys_for_read(), store_sqlite.h); reading the newest
 * events (watches) is a read of history by rev.
 *
 * A batch's own writes live in the "pending" list until it commits (a mark
 * is the list's length, undo truncates it); then they move to the dirty
 * map.  A compaction past ckpt_rev leaves the events past ckpt_rev in
 * history (the replay needs them; nothing else reads below compact_rev),
 * and the checkpoint that has them drops them.
 */
#include <sys/time.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"
#include "store/store_hash.h"
#include "util.h"

/* Keyed (store_hash.h): a client chooses the keys these maps hold. */
uint64_t
sq_hash(const char *key, size_t len)
{
	return (store_hash_bytes(key, len));
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
	uint64_t	 t;
	struct sq_ent	*e;

	while ((t = m->tag[i]) != 0) {
		if (t == (h | 1) && (e = m->slot[i])->klen == len &&
		    memcmp(e->key, key, len) == 0)
			break;
		i = (i + 1) & (m->cap - 1);
	}
	return (i);
}

/* h: sq_hash() of the key, computed once for the maps a lookup tries. */
struct sq_ent *
sq_map_find_h(const struct sq_map *m, const char *key, size_t len,
    uint64_t h)
{
	if (m->n == 0)
		return (NULL);
	return (m->slot[sq_map_slot(m, key, len, h)]);
}

struct sq_ent *
sq_map_find(const struct sq_map *m, const char *key, size_t len)
{
	return (sq_map_find_h(m, key, len, sq_hash(key, len)));
}

static void
sq_map_grow(struct sq_map *m)
{
	struct sq_ent	**old = m->slot;
	size_t		  i, j, oldcap = m->cap;

	m->cap = oldcap ? oldcap * 2 : 1024;
	m->slot = xcalloc(m->cap, sizeof *m->slot);
	free(m->tag);
	m->tag = xcalloc(m->cap, sizeof *m->tag);
	for (i = 0; i < oldcap; i++)
		if (old[i] != NULL) {
			j = sq_map_slot(m, old[i]->key, old[i]->klen,
			    old[i]->hash);
			m->slot[j] = old[i];
			m->tag[j] = old[i]->hash | 1;
		}
	free(old);
}

/* e replaces the entry of its key; owned: the replaced one is freed. */
void
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
	m->tag[i] = e->hash | 1;
	m->bytes += sq_ent_bytes(e);
}

/* Empties the map, keeping its slots (no churn of the table itself). */
void
sq_map_clear(struct sq_map *m, int owned)
{
	size_t	 i;

	if (m->n == 0)
		return;
	for (i = 0; owned && i < m->cap; i++)
		free(m->slot[i]);
	memset(m->slot, 0, m->cap * sizeof *m->slot);
	memset(m->tag, 0, m->cap * sizeof *m->tag);
	m->n = m->bytes = 0;
}

void
sq_map_free(struct sq_map *m, int owned)
{
	sq_map_clear(m, owned);
	free(m->slot);
	free(m->tag);
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

/*
 * The newest state of a key not yet in kv: in a batch, its own, then the
 * batches' out; then the maps' (all that a read outside a batch sees).
 */
struct sq_ent *
sq_find(struct store_sqlite *q, const char *key, size_t len)
{
	struct sq_ent	*e = NULL;
	uint64_t	 h = sq_hash(key, len);

	if (q->in_txn) {		/* a batch's: on the ones out too */
		e = sq_map_find_h(&q->pend.idx, key, len, h);
		if (e == NULL && !STAILQ_EMPTY(&q->out))
			e = store_sqlite_out_find(q, key, len, h);
	}
	if (e == NULL)
		e = sq_map_find_h(&q->dirty, key, len, h);
	if (e == NULL)
		e = sq_map_find_h(&q->frozen, key, len, h);
	return (e);
}

/* Writes one entry's state into kv. */
int
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

void
store_sqlite_log_free(struct store_sqlite *q)
{
	if (q->ckpt_ev != NULL)
		event_free(q->ckpt_ev);
	sq_pend_truncate(q, 0);
	free(q->pend.v);
	sq_map_free(&q->pend.idx, 0);
	sq_map_free(&q->dirty, 1);
	sq_map_free(&q->frozen, 1);
	free(q->sorted);
	free(q->fsorted);
	free(q->clean);
}

/*
 * Two slots a key (h's pair): the key's own if it has one, else an empty
 * one, else the first's (whose key moves to the second's).  A key is in
 * one slot at most.
 */
static struct sq_clean *
sq_clean_slot(struct store_sqlite *q, const char *key, size_t len,
    uint64_t h, int fill)
{
	struct sq_clean	*c = &q->clean[h & (SQ_CLEAN_SLOTS - 2)];
	int		 i;

	for (i = 0; i < 2; i++)
		if (c[i].hash == h && c[i].klen == len &&
		    memcmp(c[i].key, key, len) == 0)
			return (&c[i]);
	if (!fill)
		return (NULL);
	if (c[0].klen == 0)
		return (&c[0]);
	if (c[1].klen == 0)
		return (&c[1]);
	c[1] = c[0];		/* the second's key goes */
	return (&c[0]);
}

static void
sq_clean_set(struct store_sqlite *q, const struct sq_ent *e)
{
	struct sq_clean	*c;

	if (e->klen == 0 || e->klen > SQ_CLEAN_KEY)
		return;
	c = sq_clean_slot(q, e->key, e->klen, e->hash, 1);
	c->hash = e->hash;
	c->klen = (uint32_t)e->klen;
	memcpy(c->key, e->key, e->klen);
	c->version = e->deleted ? 0 : e->version;
	c->create_rev = e->deleted ? 0 : e->create_rev;
}

void
sq_clean_fill(struct store_sqlite *q, const struct sq_map *m,
    struct sq_ent **v, size_t n)
{
	size_t	 i;

	if (q->clean == NULL)
		q->clean = xcalloc(SQ_CLEAN_SLOTS, sizeof *q->clean);
	for (i = 0; m != NULL && m->n > 0 && i < m->cap; i++)
		if (m->slot[i] != NULL)
			sq_clean_set(q, m->slot[i]);
	for (i = 0; i < n; i++)
		sq_clean_set(q, v[i]);
}

int
sq_clean_find(struct store_sqlite *q, const char *key, size_t len,
    struct store_kv *cur)
{
	struct sq_clean		*c;
	uint64_t		 h;

	if (q->clean == NULL || len == 0 || len > SQ_CLEAN_KEY)
		return (-1);
	h = sq_hash(key, len);
	if ((c = sq_clean_slot(q, key, len, h, 0)) == NULL)
		return (-1);
	if (c->version == 0)
		return (0);
	cur->version = c->version;
	cur->create_rev = c->create_rev;
	return (1);
}

/*
 * At open: history's tail (the events past ckpt_rev, whose checkpoint a
 * crash lost) into the dirty map, one sequential read; the checkpoint
 * comes later, on the loop (store_sqlite_log_init()), so that start-up
 * does not wait for it.  The tail is at most what a checkpoint is
 * forced at (SQ_CKPT_HARD_REVS events, or SQ_CKPT_HARD entries or bytes
 * in the dirty map), plus one batch.
 */
int
store_sqlite_recover(struct store *s, uint64_t ckpt_rev,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->st[SQ_HIST_GET];
	struct store_event	 ev;
	struct sq_ent		*e;
	int			 rc;

	q->ckpt_rev = ckpt_rev;
	q->hist_left = 1;	/* a compaction's, before a crash */
	sqlite3_bind_int64(st, 1, (sqlite3_int64)ckpt_rev + 1);
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
		return (store_sqlite_fail(q, rc, "replaying history's tail",
		    err));
	q->replayed = q->dirty.n;
	/* Without a loop (tools, tests), at once. */
	if (s->opts.base == NULL)
		return (store_sqlite_checkpoint(s, err));
	return (0);
}

