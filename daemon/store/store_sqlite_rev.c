/*
 * The SQLite backend's reads at a revision and one key's history, over the
 * history table and its index history_key (key, rev, seq): the state of a
 * key at R is its last event at or before R, one seek.  history holds the
 * events up to the last checkpoint; a read that needs later ones
 * checkpoints first (store_sqlite_log.c).  Compaction keeps a
 * key's last put below the compaction point (store_sqlite_compact()), so
 * that is exact at every kept R.  Also the schema migration that makes an
 * older database fit that rule.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store_local.h"
#include "store_sqlite.h"

void
store_sqlite_event(sqlite3_stmt *st, struct store_event *ev)
{
	memset(ev, 0, sizeof *ev);
	ev->type = (enum store_event_type)sqlite3_column_int(st, 6);
	store_sqlite_row(st, ev->type == STORE_EVENT_DELETE, &ev->kv);
	ev->rev = ev->kv.mod_rev;
	ev->seq = (uint32_t)sqlite3_column_int64(st, 5);
}

int
store_sqlite_get_at(struct store *s, const char *key, size_t key_len,
    uint64_t rev, store_kv_cb cb, void *arg, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->st[SQ_GET_AT];
	struct store_event	 ev;
	int			 rc, found = 0;

	if (store_sqlite_ckpt_for_read(s, rev, err) != 0)
		return (-1);
	store_sqlite_bind_blob(st, 1, key, key_len);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		store_sqlite_event(st, &ev);
		if (ev.type == STORE_EVENT_PUT) {
			cb(&ev.kv, arg);
			found = 1;
		}
	} else if (rc != SQLITE_DONE)
		found = store_sqlite_fail(q, rc, "get at a revision", err);
	store_sqlite_done(st);
	return (found);
}

long
store_sqlite_range_at(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_sqlite		*q = s->impl;
	struct store_sqlite_span	 b;
	sqlite3_stmt			*st;
	long				 n;

	if (store_sqlite_ckpt_for_read(s, r->rev, err) != 0)
		return (-1);
	memset(&b, 0, sizeof b);
	store_sqlite_bounds(r, &b);
	st = q->st[b.hi != NULL ? SQ_RANGE_AT : SQ_RANGE_AT_OPEN];
	store_sqlite_bind_blob(st, 1, b.lo, b.lo_len);
	if (b.hi != NULL)
		store_sqlite_bind_blob(st, 2, b.hi, b.hi_len);
	sqlite3_bind_int64(st, 3, r->limit >= INT64_MAX ? -1 :
	    (sqlite3_int64)r->limit + 1);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)r->rev);
	n = store_sqlite_walk(q, st, r, cb, arg, more, err);
	store_sqlite_done(st);
	free(b.lo);
	free(b.hi);
	return (n);
}

int
store_sqlite_key_history(struct store *s, const char *key, size_t key_len,
    uint64_t from_rev, store_event_cb cb, void *arg, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->st[SQ_KEY_HIST];
	struct store_event	 ev;
	int			 rc;

	if (store_sqlite_ckpt_for_read(s, s->rev, err) != 0)
		return (-1);
	store_sqlite_bind_blob(st, 1, key, key_len);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)from_rev);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_sqlite_event(st, &ev);
		if (cb(&ev, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "reading a key's history", err);
	store_sqlite_done(st);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1);
}

/*
 * Schema 1 compacted every event below compact_rev.  To make every kept
 * revision exact again: compact_rev rises to the newest first kept event
 * of a key that existed before it (a delete, or a put of version > 1,
 * with no event of that key before); a key written before compact_rev and
 * never since gets its put back from kv (seq numbers of a rev that has no
 * row left); then the rule of store_sqlite_compact() applies at the new
 * compact_rev.
 */
static const char store_sqlite_migrate_sql[] =
	"BEGIN IMMEDIATE;"
	"CREATE INDEX IF NOT EXISTS history_key ON history (key, rev);"
	"UPDATE meta SET value = MAX(value, COALESCE((SELECT MAX(h.rev) "
	"    FROM history AS h WHERE (h.type = 1 OR h.version > 1) AND "
	"    NOT EXISTS (SELECT 1 FROM history AS p WHERE p.key = h.key AND "
	"    (p.rev < h.rev OR (p.rev = h.rev AND p.seq < h.seq)))), 0)) "
	"    WHERE name = 'compact_rev';"
	"INSERT INTO history (rev, seq, type, key, value, version, "
	"    create_rev) SELECT mod_rev, ROW_NUMBER() OVER (PARTITION BY "
	"    mod_rev ORDER BY key) - 1, 0, key, value, version, create_rev "
	"    FROM kv WHERE NOT EXISTS (SELECT 1 FROM history AS h "
	"    WHERE h.key = kv.key);"
	"DELETE FROM history WHERE rev < (SELECT value FROM meta WHERE "
	"    name = 'compact_rev') AND (type = 1 OR EXISTS (SELECT 1 FROM "
	"    history AS n WHERE n.key = history.key AND n.rev < (SELECT value "
	"    FROM meta WHERE name = 'compact_rev') AND (n.rev > history.rev OR "
	"    (n.rev = history.rev AND n.seq > history.seq))));"
	"UPDATE meta SET value = 2 WHERE name = 'schema';"
	"COMMIT;";

int
store_sqlite_migrate(struct store_sqlite *q, struct store_err *err)
{
	int	 rc;

	rc = sqlite3_exec(q->db, store_sqlite_migrate_sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		store_sqlite_fail(q, rc, "migrating the schema to version 2",
		    err);
		if (!sqlite3_get_autocommit(q->db))
			sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
		return (-1);
	}
	return (0);
}
