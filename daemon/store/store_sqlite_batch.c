/*
 * The SQLite backend's batches (store_sqlite.h): a batch is one BEGIN
 * IMMEDIATE transaction, a mark a savepoint; every write also records its
 * event in the history table, in the same transaction.
 */
#include <stdint.h>
#include <string.h>

#include "store_sqlite.h"

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
	q->compact_begin = s->compact_rev;
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
	return (store_sqlite_run(q, SQ_HIST_ADD, "recording history", err));
}

/* Write kv's value at kv->mod_rev; fills in its version and create_rev. */
static int
store_sqlite_upsert(struct store_sqlite *q, struct store_kv *kv,
    struct store_err *err)
{
	sqlite3_stmt	*st = q->st[SQ_UPSERT];
	int		 rc;

	store_sqlite_bind_blob(st, 1, kv->key, kv->key_len);
	if (store_sqlite_bind_blob(st, 2, kv->value, kv->value_len) != 0) {
		store_sqlite_done(st);
		return (store_err_set(err, STORE_ERR_INTERNAL, "sqlite: "
		    "value of %zu bytes is too large", kv->value_len));
	}
	sqlite3_bind_int64(st, 3, (sqlite3_int64)kv->mod_rev);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		store_sqlite_done(st);
		return (store_sqlite_fail(q, rc, "writing a key", err));
	}
	kv->version = (uint64_t)sqlite3_column_int64(st, 0);
	kv->create_rev = (uint64_t)sqlite3_column_int64(st, 1);
	store_sqlite_done(st);
	return (0);
}

int
store_sqlite_put(struct store *s, uint64_t rev, uint32_t seq,
    const char *key, size_t key_len, const void *value, size_t value_len,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	struct store_kv		 kv;

	if (store_sqlite_alive(q, "put", err) != 0)
		return (-1);
	memset(&kv, 0, sizeof kv);
	kv.key = key;
	kv.key_len = key_len;
	kv.value = value;
	kv.value_len = value_len;
	kv.mod_rev = rev;
	if (store_sqlite_upsert(q, &kv, err) != 0)
		return (-1);
	if (store_sqlite_hist_add(q, seq, STORE_EVENT_PUT, &kv, err) != 0) {
		q->broken = 1;
		return (-1);
	}
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
	struct store_kv		 kv;

	*deleted = 0;
	if (store_sqlite_alive(q, "delete", err) != 0)
		return (-1);
	store_sqlite_bind_blob(q->st[SQ_DELETE], 1, key, key_len);
	if (store_sqlite_run(q, SQ_DELETE, "deleting a key", err) != 0)
		return (-1);
	if (sqlite3_changes(q->db) == 0)
		return (0);	/* it was absent */
	if (store_sqlite_lease_detach(q, key, key_len, err) != 0) {
		q->broken = 1;
		return (-1);
	}
	memset(&kv, 0, sizeof kv);
	kv.key = key;
	kv.key_len = key_len;
	kv.mod_rev = rev;
	if (store_sqlite_hist_add(q, seq, STORE_EVENT_DELETE, &kv, err) != 0) {
		q->broken = 1;
		return (-1);
	}
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
	q->compact_mark = s->compact_rev;
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
	q->broken = q->broken_mark;
	q->nkeys = q->nkeys_mark;
	s->compact_rev = q->compact_mark;
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
	s->compact_rev = q->compact_begin;
}

static int
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

	if (store_sqlite_alive(q, "commit", err) != 0 ||
	    store_sqlite_set_meta(q, "rev", rev, err) != 0 ||
	    store_sqlite_run(q, SQ_COMMIT, "commit", err) != 0) {
		store_sqlite_rollback(s);
		return (-1);
	}
	q->in_txn = q->marked = 0;
	return (0);
}

int
store_sqlite_compact(struct store *s, uint64_t rev, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;

	if (store_sqlite_alive(q, "compact", err) != 0)
		return (-1);
	sqlite3_bind_int64(q->st[SQ_HIST_DROP_OLD], 1, (sqlite3_int64)rev);
	sqlite3_bind_int64(q->st[SQ_HIST_DROP_OLD], 2,
	    (sqlite3_int64)s->compact_rev);
	if (store_sqlite_run(q, SQ_HIST_DROP_OLD, "compacting history",
	    err) != 0)
		return (-1);
	sqlite3_bind_int64(q->st[SQ_HIST_DROP], 1, (sqlite3_int64)rev);
	sqlite3_bind_int64(q->st[SQ_HIST_DROP], 2,
	    (sqlite3_int64)s->compact_rev);
	if (store_sqlite_run(q, SQ_HIST_DROP, "compacting history", err) != 0) {
		q->broken = 1;
		return (-1);
	}
	if (store_sqlite_set_meta(q, "compact_rev", rev, err) != 0) {
		q->broken = 1;
		return (-1);
	}
	return (0);
}

