/*
 * The SQLite backend's batches (store_sqlite.h): a batch is one BEGIN
 * IMMEDIATE transaction, a mark a savepoint; a write appends its event to
 * the history table and keeps the key's new state in memory
 * until a checkpoint writes it into kv (store_sqlite_log.c).
 */
#include <stdint.h>
#include <string.h>

#include "store/sqlite/store_sqlite.h"

int
store_sqlite_begin(struct store *s, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	if (store_sqlite_run(q, SQ_BEGIN, "begin", err) != 0)
		return (-1);
	q->in_txn = 1;
	q->broken = q->marked = 0;
	q->broken_code = STORE_ERR_INTERNAL;
	q->nkeys_begin = q->nkeys;
	q->compact_begin = s->head.compact_rev;
	q->pend_mark = 0;
	return (0);
}

/* A write may go on only in a live, unbroken transaction. */
int
store_sqlite_alive(struct store_sqlite *q, const char *what,
    struct store_err *err)
{
	if (!q->in_txn)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "sqlite: %s: no transaction is open", what));
	if (sqlite3_get_autocommit(q->db))
		q->broken = 1;
	if (q->broken)
		return (store_err_set(err, q->broken_code, "sqlite: %s: the "
		    "batch was aborted by an earlier error", what));
	return (0);
}

static int
store_sqlite_hist_add(struct store_sqlite *q, uint64_t seq,
    enum store_event_type type, const struct store_kv *kv,
    struct store_err *err)
{
	sqlite3_stmt	*st = q->st[SQ_HIST_ADD];
	uint64_t	 id;

	sqlite3_bind_int64(st, 1, (sqlite3_int64)kv->mod_rev);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)seq);
	sqlite3_bind_int(st, 3, (int)type);
	store_sqlite_bind_blob(st, 4, kv->key, kv->key_len);
	if (kv->value != NULL &&
	    store_sqlite_bind_blob(st, 5, kv->value, kv->value_len) != 0) {
		store_sqlite_done(st);
		return (store_err_set(err, STORE_ERR_INTERNAL, "sqlite: "
		    "value of %zu bytes is too large", kv->value_len));
	}
	sqlite3_bind_int64(st, 6, (sqlite3_int64)kv->version);
	sqlite3_bind_int64(st, 7, (sqlite3_int64)kv->create_rev);
	/*
	 * The id (SQ_ID_SHIFT): never one that was given before, even by a
	 * batch rolled back since (a gap is harmless, a repeat is not).
	 */
	id = kv->mod_rev << SQ_ID_SHIFT;
	if (id <= q->hist_id)
		id = q->hist_id + 1;
	q->hist_id = id;
	sqlite3_bind_int64(st, 8, (sqlite3_int64)id);
	if (kv->lease != 0)	/* else NULL (store_sqlite_done() clears) */
		sqlite3_bind_int64(st, 9, (sqlite3_int64)kv->lease);
	return (store_sqlite_run(q, SQ_HIST_ADD, "recording history", err));
}

/*
 * The key's current state as the batch sees it: its own writes, the dirty
 * map, then kv.  1 (cur filled), 0 (absent), -1.
 */
static int
store_sqlite_current(struct store_sqlite *q, const char *key, size_t key_len,
    struct store_kv *cur, struct store_err *err)
{
	sqlite3_stmt	*st = q->st[SQ_GET_VER];
	struct sq_ent	*e;
	int		 rc;

	if ((e = sq_find(q, key, key_len)) != NULL) {
		if (e->deleted)
			return (0);
		cur->version = e->version;
		cur->create_rev = e->create_rev;
		return (1);
	}
	if ((rc = sq_clean_find(q, key, key_len, cur)) >= 0)
		return (rc);
	store_sqlite_bind_blob(st, 1, key, key_len);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		cur->version = (uint64_t)sqlite3_column_int64(st, 0);
		cur->create_rev = (uint64_t)sqlite3_column_int64(st, 1);
	} else if (rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "reading a key", err);
	store_sqlite_done(st);
	return (rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1);
}

/* The write goes to the log and to the batch's pending writes. */
static int
store_sqlite_log_add(struct store_sqlite *q, uint32_t seq,
    enum store_event_type type, const struct store_kv *kv,
    struct store_err *err)
{
	struct sq_ent	*e;

	if (store_sqlite_hist_add(q, seq, type, kv, err) != 0) {
		q->broken = 1;
		return (-1);
	}
	e = sq_ent_new(kv->key, kv->key_len, kv->value, kv->value_len,
	    type == STORE_EVENT_DELETE);
	e->version = kv->version;
	e->create_rev = kv->create_rev;
	e->mod_rev = kv->mod_rev;
	sq_pend_add(q, e);
	return (0);
}

int
store_sqlite_put(struct store *s, uint64_t rev, uint32_t seq,
    const char *key, size_t key_len, const void *value, size_t value_len,
    uint64_t lease, struct store_kv *meta, uint64_t *prev_version,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	struct store_kv		 kv, cur;
	int			 found;

	if (store_sqlite_alive(q, "put", err) != 0)
		return (-1);
	memset(&cur, 0, sizeof cur);
	if ((found = store_sqlite_current(q, key, key_len, &cur, err)) < 0)
		return (-1);
	memset(&kv, 0, sizeof kv);
	kv.key = key;
	kv.key_len = key_len;
	kv.value = value;
	kv.value_len = value_len;
	kv.mod_rev = rev;
	kv.version = found ? cur.version + 1 : 1;
	kv.create_rev = found ? cur.create_rev : rev;
	kv.lease = lease;
	if (store_sqlite_log_add(q, seq, STORE_EVENT_PUT, &kv, err) != 0)
		return (-1);
	if (kv.version == 1)
		q->nkeys++;
	*prev_version = kv.version - 1;
	*meta = kv;
	meta->value = NULL;
	meta->value_len = 0;
	return (0);
}

int
store_sqlite_del(struct store *s, uint64_t rev, uint32_t seq,
    const char *key, size_t key_len, int *deleted, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	struct store_kv		 kv, cur;
	int			 found;

	*deleted = 0;
	if (store_sqlite_alive(q, "delete", err) != 0)
		return (-1);
	if ((found = store_sqlite_current(q, key, key_len, &cur, err)) < 0)
		return (-1);
	if (!found)
		return (0);	/* it was absent */
	if (store_sqlite_lease_detach(q, key, key_len, err) != 0) {
		q->broken = 1;
		return (-1);
	}
	memset(&kv, 0, sizeof kv);
	kv.key = key;
	kv.key_len = key_len;
	kv.mod_rev = rev;
	if (store_sqlite_log_add(q, seq, STORE_EVENT_DELETE, &kv, err) != 0)
		return (-1);
	q->nkeys--;
	*deleted = 1;
	return (0);
}

int
store_sqlite_mark(struct store *s, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	if (!q->in_txn || sqlite3_get_autocommit(q->db))
		return (store_sqlite_alive(q, "mark", err));
	if (q->marked &&
	    store_sqlite_run(q, SQ_RELEASE, "releasing a mark", err) != 0)
		return (-1);
	q->marked = 0;
	if (store_sqlite_run(q, SQ_SAVEPOINT, "mark", err) != 0)
		return (-1);
	q->marked = 1;
	q->broken_mark = q->broken;
	q->nkeys_mark = q->nkeys;
	q->compact_mark = s->head.compact_rev;
	q->pend_mark = q->pend.n;
	return (0);
}

int
store_sqlite_undo(struct store *s, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	if (!q->in_txn || sqlite3_get_autocommit(q->db))
		return (store_sqlite_alive(q, "undo", err));
	if (!q->marked)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "sqlite: undo without a mark"));
	if (store_sqlite_run(q, SQ_ROLLBACK_TO, "undo", err) != 0 ||
	    store_sqlite_run(q, SQ_RELEASE, "undo", err) != 0) {
		q->broken = 1;
		return (-1);
	}
	q->marked = 0;
	q->keys_floor = 0;
	q->broken = q->broken_mark;
	q->nkeys = q->nkeys_mark;
	s->head.compact_rev = q->compact_mark;
	sq_pend_truncate(q, q->pend_mark);
	return (0);
}

void
store_sqlite_rollback(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct store_err	 err;

	if (!sqlite3_get_autocommit(q->db))
		store_sqlite_run(q, SQ_ROLLBACK, "rollback", &err);
	q->in_txn = q->marked = q->broken = 0;
	q->nkeys = q->nkeys_begin;
	q->keys_floor = 0;
	s->head.compact_rev = q->compact_begin;
	sq_pend_truncate(q, 0);
}

/* meta's row name to value. */
int
store_sqlite_set_meta(struct store_sqlite *q, const char *name, uint64_t value,
    struct store_err *err)
{
	sqlite3_stmt	*st = q->st[SQ_SET_META];

	sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)value);
	return (store_sqlite_run(q, SQ_SET_META, name, err));
}

int
store_sqlite_commit(struct store *s, uint64_t rev, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	int			 logged;

	/*
	 * The batch's newest event, at rev, is in the log (or checkpointed:
	 * ckpt_rev): meta 'rev' need not say it (SQ_REV_SQL), a page less.
	 */
	logged = q->pend.n > 0 && q->pend.v[q->pend.n - 1]->mod_rev == rev;
	if (store_sqlite_alive(q, "commit", err) != 0 ||
	    (!logged && store_sqlite_set_meta(q, "rev", rev, err) != 0) ||
	    (q->nkeys != q->nkeys_begin &&
	    store_sqlite_set_meta(q, "nkeys", q->nkeys, err) != 0) ||
	    store_sqlite_run(q, SQ_COMMIT, "commit", err) != 0) {
		store_sqlite_rollback(s);
		return (-1);
	}
	q->in_txn = q->marked = 0;
	if (q->sync != NULL && store_sqlite_sync_commit(s) == 1)
		return (1);			/* durable later */
	store_sqlite_landed(s, &q->pend);
	return (0);
}

/* A statement of compaction's, bound to rev. */
static int
sq_compact_run(struct store_sqlite *q, enum store_sqlite_stmt idx,
    uint64_t rev, struct store_err *err)
{
	sqlite3_bind_int64(q->st[idx], 1, (sqlite3_int64)rev);
	if (store_sqlite_run(q, idx, "compacting history", err) != 0) {
		q->broken = 1;
		return (-1);
	}
	return (0);
}

/*
 * kept gets each key's last event below rev if it is a put, and loses the
 * key's row if it is a delete: the events are read newest first, and only
 * a key's first counts (a set of the keys seen).  In SQL (the last put's
 * id by key, GROUP BY) the sort of the events was most of the time: 11 ms
 * of the loop a trim of 25000 revs over 1000 keys, this one about 3
 * (BENCHMARKS.md).
 */
static int
sq_kept_fill(struct store_sqlite *q, uint64_t rev, struct store_err *err)
{
	sqlite3_stmt	*st = q->st[SQ_HIST_BELOW], *del = q->st[SQ_KEPT_DEL];
	struct sq_map	 seen;
	const char	*key;
	size_t		 klen;
	uint64_t	 h;
	int		 rc, x = 0;

	memset(&seen, 0, sizeof seen);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)rev);
	while (x == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		key = sqlite3_column_blob(st, 0);
		klen = (size_t)sqlite3_column_bytes(st, 0);
		h = sq_hash(key, klen);
		if (sq_map_find_h(&seen, key, klen, h) != NULL)
			continue;
		sq_map_set(&seen, sq_ent_new(key, klen, NULL, 0, 1), 1);
		if (sqlite3_column_int(st, 2) == STORE_EVENT_PUT) {
			sqlite3_bind_int64(q->st[SQ_KEPT_PUT], 1,
			    sqlite3_column_int64(st, 1));
			x = store_sqlite_run(q, SQ_KEPT_PUT,
			    "compacting history", err);
		} else {
			sqlite3_bind_value(del, 1, sqlite3_column_value(st, 0));
			sqlite3_bind_int64(del, 2, sqlite3_column_int64(st, 3));
			sqlite3_bind_int64(del, 3, sqlite3_column_int64(st, 4));
			x = store_sqlite_run(q, SQ_KEPT_DEL,
			    "compacting history", err);
		}
	}
	if (x == 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "compacting history", err);
	store_sqlite_done(st);
	sq_map_free(&seen, 1);
	if (x == 0 && rc == SQLITE_DONE)
		return (0);
	q->broken = 1;
	return (-1);
}

int
store_sqlite_compact(struct store *s, uint64_t rev, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	uint64_t		 drop, live;

	if (store_sqlite_alive(q, "compact", err) != 0)
		return (-1);
	if (sq_kept_fill(q, rev, err) != 0)
		return (-1);
	/*
	 * The events past ckpt_rev stay in history until a checkpoint has
	 * them (a replay at open needs them): they are below compact_rev,
	 * so nothing reads them, and the checkpoint drops them
	 * (sq_ckpt_rev()).
	 */
	drop = rev <= q->ckpt_rev + 1 ? rev : q->ckpt_rev + 1;
	if (drop < rev)
		q->hist_left = 1;
	if (sq_compact_run(q, SQ_HIST_DROP, drop, err) != 0)
		return (-1);
	/*
	 * The key index's rows below rev are dead (reads at a rev seek
	 * from compact_rev on): dropped in one pass over the index once
	 * they are as many as the live ones, so each pass costs about two
	 * rows a row dropped.  Forgotten by a rollback: the next one does.
	 */
	live = q->keys_rev >= rev ? q->keys_rev + 1 - rev : 0;
	if (drop == rev && rev > q->keys_floor && rev - q->keys_floor >= live) {
		if (sq_compact_run(q, SQ_KEYS_TRIM, rev, err) != 0)
			return (-1);
		q->keys_floor = rev;
	}
	if (store_sqlite_set_meta(q, "compact_rev", rev, err) != 0) {
		q->broken = 1;
		return (-1);
	}
	return (0);
}
