/*
 * The SQLite backend's schema (the tables are described in
 * store_sqlite.c): created at open, and a database of an older metad
 * migrated to this one (schema 1 to 2 is store_sqlite_migrate(), in
 * store_sqlite_rev.c).
 */
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"

#define SQ_SCHEMA_VERSION	7

static const char store_sqlite_schema_sql[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, "
	"    value INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, "
	"    value BLOB NOT NULL, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) "
	"    WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS history (rev INTEGER NOT NULL, "
	"    seq INTEGER NOT NULL, type INTEGER NOT NULL, key BLOB NOT NULL, "
	"    value BLOB, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, PRIMARY KEY (rev, seq)) "
	"    WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS history_by_key (key BLOB NOT NULL, "
	"    rev INTEGER NOT NULL, seq INTEGER NOT NULL, "
	"    PRIMARY KEY (key, rev, seq)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS kept (key BLOB PRIMARY KEY, "
	"    value BLOB NOT NULL, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, rev INTEGER NOT NULL, "
	"    seq INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO meta (name, value) VALUES ('schema', 1), "
	"    ('rev', 0), ('compact_rev', 0);"
	"COMMIT;";

int
store_sqlite_schema(struct store_sqlite *q, struct store_err *err)
{
	int	 rc;

	rc = sqlite3_exec(q->db, store_sqlite_schema_sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(q->db, store_sqlite_lease_schema, NULL, NULL,
		    NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(q->db, store_sqlite_idem_schema, NULL, NULL,
		    NULL);
	if (rc != SQLITE_OK) {
		store_sqlite_fail(q, rc, "creating the schema", err);
		if (!sqlite3_get_autocommit(q->db))
			sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
		return (-1);
	}
	return (0);
}

/*
 * Schema 4 to 5: history is where the commits append (4's log joins it),
 * indexed by key up to ckpt_rev in a table of its own (history_by_key,
 * filled by the checkpoints) instead of an index that every commit
 * updated; the events kept below compact_rev (each key's last put) move
 * to kept, so that compaction drops a range of history.  Older schemas
 * come here through 1 to 4, and a database of any of them that was never
 * written to (a new one) too.
 */
static const char store_sqlite_migrate5_sql[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS log (rev INTEGER NOT NULL, "
	"    seq INTEGER NOT NULL, type INTEGER NOT NULL, key BLOB NOT NULL, "
	"    value BLOB, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, PRIMARY KEY (rev, seq)) "
	"    WITHOUT ROWID;"
	"INSERT INTO history (rev, seq, type, key, value, version, "
	"    create_rev) SELECT rev, seq, type, key, value, version, "
	"    create_rev FROM log ORDER BY rev, seq;"
	"DROP TABLE log;"
	"DROP INDEX IF EXISTS history_key;"
	"INSERT OR REPLACE INTO kept (key, value, version, create_rev, rev, "
	"    seq) SELECT key, IFNULL(value, X''), version, create_rev, rev, "
	"    seq FROM history WHERE type = 0 AND rev < (SELECT value FROM "
	"    meta WHERE name = 'compact_rev') ORDER BY rev, seq;"
	"DELETE FROM history WHERE rev < (SELECT value FROM meta WHERE "
	"    name = 'compact_rev');"
	"DELETE FROM history_by_key;"
	"INSERT INTO history_by_key (key, rev, seq) SELECT key, rev, seq "
	"    FROM history WHERE rev <= (SELECT value FROM meta WHERE "
	"    name = 'ckpt_rev') ORDER BY key, rev, seq;"
	"UPDATE meta SET value = 5 WHERE name = 'schema';"
	"COMMIT;";

/*
 * Schema 5 to 6: history becomes a rowid table (store_sqlite.c): its
 * appends go at the end of a table B-tree, where a WITHOUT ROWID table's
 * balanced each leaf over its siblings (half the pages a commit writes).
 * The ids are store_sqlite_hist_add()'s: the i-th event in (rev, seq)
 * order gets max(id(i-1) + 1, rev << SQ_ID_SHIFT), that is i + the
 * largest (rev << SQ_ID_SHIFT) - j of the events j up to it.  The key
 * index gets each event's id, from compact_rev to ckpt_rev (its rows
 * below compact_rev are dead), and its rev in meta 'keys_rev'
 * (store_sqlite.h).  Every schema reaches 6 through 5: 5's tables are
 * the ones created for a new file.
 */
static const char store_sqlite_migrate6_sql[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE history6 (id INTEGER PRIMARY KEY, "
	"    rev INTEGER NOT NULL, seq INTEGER NOT NULL, "
	"    type INTEGER NOT NULL, key BLOB NOT NULL, value BLOB, "
	"    version INTEGER NOT NULL, create_rev INTEGER NOT NULL);"
	"INSERT INTO history6 (id, rev, seq, type, key, value, version, "
	"    create_rev) SELECT n + MAX(b - n) OVER (ORDER BY n), rev, seq, "
	"    type, key, value, version, create_rev FROM (SELECT "
	"    row_number() OVER (ORDER BY rev, seq) AS n, "
	    SQ_ID_FROM("rev") " AS b, rev, seq, type, key, value, version, "
	"    create_rev FROM history) ORDER BY n;"
	"DROP TABLE history;"
	"ALTER TABLE history6 RENAME TO history;"
	"CREATE TABLE history_by_key6 (key BLOB NOT NULL, "
	"    rev INTEGER NOT NULL, seq INTEGER NOT NULL, id INTEGER NOT NULL, "
	"    PRIMARY KEY (key, rev, seq)) WITHOUT ROWID;"
	"INSERT INTO history_by_key6 (key, rev, seq, id) SELECT key, rev, "
	"    seq, id FROM history WHERE rev >= (SELECT value FROM meta WHERE "
	"    name = 'compact_rev') AND rev <= IFNULL((SELECT value FROM meta "
	"    WHERE name = 'ckpt_rev'), 0) ORDER BY key, rev, seq;"
	"DROP TABLE history_by_key;"
	"ALTER TABLE history_by_key6 RENAME TO history_by_key;"
	"INSERT OR REPLACE INTO meta (name, value) VALUES ('keys_rev', "
	"    IFNULL((SELECT value FROM meta WHERE name = 'ckpt_rev'), 0));"
	"UPDATE meta SET value = 6 WHERE name = 'schema';"
	"COMMIT;";

/*
 * Schema 6 to 7: a put's event keeps the lease its key was attached to
 * (NULL: none, as every event before 7), so that history, a read at a
 * revision and a watch's events can say it, as the key's live row does.
 * Adding a column with no default rewrites nothing.
 */
static const char store_sqlite_migrate7_sql[] =
	"BEGIN IMMEDIATE;"
	"ALTER TABLE history ADD COLUMN lease INTEGER;"
	"ALTER TABLE kept ADD COLUMN lease INTEGER;"
	"UPDATE meta SET value = 7 WHERE name = 'schema';"
	"COMMIT;";

/* Runs a migration's SQL; a failure rolls it back. */
static int
sq_migrate(struct store_sqlite *q, const char *sql, int to,
    struct store_err *err)
{
	char	 what[64];
	int	 rc;

	rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		return (0);
	snprintf(what, sizeof what, "migrating the schema to version %d", to);
	store_sqlite_fail(q, rc, what, err);
	if (!sqlite3_get_autocommit(q->db))
		sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
	return (-1);
}

/*
 * Schema 3 to 4: a commit whose newest event is in the log (or checkpointed)
 * no longer sets meta 'rev' (one page fewer per fsync): the rev is the
 * newest of meta 'rev', 'ckpt_rev' and the log's.  3's meta is exact, so
 * nothing moves; the number stops a schema 3 binary, which reads meta only.
 */
static const char store_sqlite_migrate4_sql[] =
	"UPDATE meta SET value = 4 WHERE name = 'schema';";

/* Schema 2 to 3: kv is complete, so the checkpoint is at rev. */
static const char store_sqlite_migrate3_sql[] =
	"BEGIN IMMEDIATE;"
	"INSERT OR REPLACE INTO meta (name, value) VALUES ('ckpt_rev', "
	"    (SELECT value FROM meta WHERE name = 'rev'));"
	"INSERT OR REPLACE INTO meta (name, value) VALUES ('nkeys', "
	"    (SELECT COUNT(*) FROM kv));"
	"UPDATE meta SET value = 3 WHERE name = 'schema';"
	"COMMIT;";

int
store_sqlite_load(struct store *s, struct store_sqlite *q,
    struct store_err *err)
{
	uint64_t	 schema;

	if (store_sqlite_scalar(q, "SELECT value FROM meta "
	    "WHERE name = 'schema'", &schema, err) != 0 ||
	    store_sqlite_scalar(q, "SELECT value FROM meta "
	    "WHERE name = 'compact_rev'", &s->head.compact_rev, err) != 0)
		return (-1);
	if (schema == 1) {
		if (store_sqlite_migrate(q, err) != 0 ||
		    store_sqlite_scalar(q, "SELECT value FROM meta WHERE "
		    "name = 'compact_rev'", &s->head.compact_rev, err) != 0)
			return (-1);
		schema = 2;
	}
	if (schema == 2) {
		if (sq_migrate(q, store_sqlite_migrate3_sql, 3, err) != 0)
			return (-1);
		schema = 3;
	}
	if (schema == 3) {
		if (sq_migrate(q, store_sqlite_migrate4_sql, 4, err) != 0)
			return (-1);
		schema = 4;
	}
	if (schema == 4) {
		if (sq_migrate(q, store_sqlite_migrate5_sql, 5, err) != 0)
			return (-1);
		schema = 5;
	}
	if (schema == 5) {
		if (sq_migrate(q, store_sqlite_migrate6_sql, 6, err) != 0)
			return (-1);
		schema = 6;
	}
	if (schema == 6) {
		if (sq_migrate(q, store_sqlite_migrate7_sql, 7, err) != 0)
			return (-1);
		schema = 7;
	}
	if (schema == SQ_SCHEMA_VERSION &&
	    (store_sqlite_scalar(q, SQ_REV_SQL, &s->head.rev, err) != 0 ||
	    store_sqlite_scalar(q, "SELECT IFNULL(MAX(id), 0) FROM history",
	    &q->hist_id, err) != 0))
		return (-1);
	if (schema != SQ_SCHEMA_VERSION)
		return (store_err_set(err, STORE_ERR_INTERNAL, "database "
		    "schema version %llu is not the supported one (%d)",
		    (unsigned long long)schema, SQ_SCHEMA_VERSION));
	return (0);
}
