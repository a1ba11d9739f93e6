/*
 * The SQLite backend's schema (the tables are described in
 * store_sqlite.c): created at open, and a database of an older metad
 * migrated to this one (schema 1 to 2 is store_sqlite_migrate(), in
 * store_sqlite_rev.c).
 */
#include <stdint.h>

#include <sqlite3.h>

#include "store_sqlite.h"

#define SQ_SCHEMA_VERSION	4

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
	"CREATE INDEX IF NOT EXISTS history_key ON history (key, rev);"
	"CREATE TABLE IF NOT EXISTS log (rev INTEGER NOT NULL, "
	"    seq INTEGER NOT NULL, type INTEGER NOT NULL, key BLOB NOT NULL, "
	"    value BLOB, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, PRIMARY KEY (rev, seq)) "
	"    WITHOUT ROWID;"
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
	if (rc != SQLITE_OK) {
		store_sqlite_fail(q, rc, "creating the schema", err);
		if (!sqlite3_get_autocommit(q->db))
			sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
		return (-1);
	}
	return (0);
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
	int		 rc;

	if (store_sqlite_scalar(q, "SELECT value FROM meta "
	    "WHERE name = 'schema'", &schema, err) != 0 ||
	    store_sqlite_scalar(q, "SELECT value FROM meta "
	    "WHERE name = 'compact_rev'", &s->compact_rev, err) != 0)
		return (-1);
	if (schema == 1) {
		if (store_sqlite_migrate(q, err) != 0 ||
		    store_sqlite_scalar(q, "SELECT value FROM meta WHERE "
		    "name = 'compact_rev'", &s->compact_rev, err) != 0)
			return (-1);
		schema = 2;
	}
	if (schema == 2) {
		rc = sqlite3_exec(q->db, store_sqlite_migrate3_sql, NULL, NULL,
		    NULL);
		if (rc != SQLITE_OK) {
			store_sqlite_fail(q, rc, "migrating the schema to "
			    "version 3", err);
			if (!sqlite3_get_autocommit(q->db))
				sqlite3_exec(q->db, "ROLLBACK", NULL, NULL,
				    NULL);
			return (-1);
		}
		schema = 3;
	}
	if (schema == 3) {
		rc = sqlite3_exec(q->db, store_sqlite_migrate4_sql, NULL, NULL,
		    NULL);
		if (rc != SQLITE_OK)
			return (store_sqlite_fail(q, rc, "migrating the schema "
			    "to version 4", err));
		schema = 4;
	}
	if (schema == SQ_SCHEMA_VERSION &&
	    store_sqlite_scalar(q, SQ_REV_SQL, &s->rev, err) != 0)
		return (-1);
	if (schema != SQ_SCHEMA_VERSION)
		return (store_err_set(err, STORE_ERR_INTERNAL, "database "
		    "schema version %llu is not the supported one (%d)",
		    (unsigned long long)schema, SQ_SCHEMA_VERSION));
	return (0);
}
