/*
 * The SQLite backend's records of idempotent writes (store.h;
 * metad-protocol(7), IDEMPOTENT WRITES): a table written in the batch's
 * transaction like every other write, so a record is durable with the
 * write it answers, and gone with it when the batch is rolled back.
 *
 *   idem(tok, answer, rev, expires)	one row a token, by expiry too
 *
 * A put drops at most STORE_IDEM_PURGE expired rows, the oldest first
 * (one seek in the expiry index), so the table stays about as large as
 * the tokens of one window; it skips that while no row can have expired
 * (idem_oldest: at most the oldest row's expiry; a rollback may leave it
 * above a row's, which is then dropped later, being absent anyway).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite/store_sqlite.h"
#include "util.h"

enum {
	SQI_GET,
	SQI_PUT,
	SQI_PURGE,
	SQI_OLDEST,
	SQI_N
};

const char store_sqlite_idem_schema[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS idem (tok BLOB PRIMARY KEY, "
	"    answer BLOB NOT NULL, rev INTEGER NOT NULL, "
	"    expires INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS idem_expires ON idem (expires);"
	"COMMIT;";

static const char *store_sqlite_idem_sql[SQI_N] = {
	"SELECT answer, rev, expires FROM idem WHERE tok = ?1",
	"INSERT OR REPLACE INTO idem (tok, answer, rev, expires) "
	    "VALUES (?1, ?2, ?3, ?4)",
	"DELETE FROM idem WHERE tok IN (SELECT tok FROM idem WHERE "
	    "expires <= ?1 ORDER BY expires LIMIT ?2)",
	"SELECT IFNULL(MIN(expires), 9223372036854775807) FROM idem"
};

/* idem_oldest from the table (0 if it cannot be read: purge each put). */
static void
idem_oldest_read(struct store_sqlite *q)
{
	sqlite3_stmt	*st = q->ist[SQI_OLDEST];

	q->idem_oldest = sqlite3_step(st) == SQLITE_ROW ?
	    (uint64_t)sqlite3_column_int64(st, 0) : 0;
	store_sqlite_done(st);
}

int
store_sqlite_idem_prepare(struct store_sqlite *q, struct store_err *err)
{
	int	 i, rc;

	for (i = 0; i < SQI_N; i++) {
		rc = sqlite3_prepare_v3(q->db, store_sqlite_idem_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &q->ist[i], NULL);
		if (rc != SQLITE_OK)
			return (store_sqlite_fail(q, rc,
			    store_sqlite_idem_sql[i], err));
	}
	idem_oldest_read(q);
	return (0);
}

void
store_sqlite_idem_finalize(struct store_sqlite *q)
{
	int	 i;

	for (i = 0; i < SQI_N; i++) {
		sqlite3_finalize(q->ist[i]);
		q->ist[i] = NULL;
	}
	free(q->idem_answer);
	q->idem_answer = NULL;
}

static int
idem_step(struct store_sqlite *q, int idx, const char *what,
    struct store_err *err)
{
	return (store_sqlite_run_stmt(q, q->ist[idx], what, err));
}

int
store_sqlite_idem_get(struct store *s, const void *tok, size_t len,
    struct store_idem *rec, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->ist[SQI_GET];
	const void		*a;
	int			 rc;

	if (store_sqlite_alive(q, "idem", err) != 0)
		return (-1);
	store_sqlite_bind_blob(st, 1, tok, len);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		if (rc != SQLITE_DONE)
			store_sqlite_fail(q, rc, "reading an idem record",
			    err);
		store_sqlite_done(st);
		return (rc == SQLITE_DONE ? 0 : -1);
	}
	/* A copy: the statement is reset before the caller reads it. */
	memset(rec, 0, sizeof *rec);
	rec->answer_len = (size_t)sqlite3_column_bytes(st, 0);
	a = sqlite3_column_blob(st, 0);
	free(q->idem_answer);
	q->idem_answer = xmalloc(rec->answer_len + 1);
	if (rec->answer_len > 0)
		memcpy(q->idem_answer, a, rec->answer_len);
	rec->answer = q->idem_answer;
	rec->rev = (uint64_t)sqlite3_column_int64(st, 1);
	rec->expires_ms = (uint64_t)sqlite3_column_int64(st, 2);
	store_sqlite_done(st);
	return (1);
}

int
store_sqlite_idem_put(struct store *s, const void *tok, size_t len,
    const struct store_idem *rec, uint64_t now_ms, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->ist[SQI_PUT];

	if (store_sqlite_alive(q, "idem", err) != 0)
		return (-1);
	if (q->idem_oldest <= now_ms) {
		sqlite3_bind_int64(q->ist[SQI_PURGE], 1, (sqlite3_int64)now_ms);
		sqlite3_bind_int(q->ist[SQI_PURGE], 2, STORE_IDEM_PURGE);
		if (idem_step(q, SQI_PURGE, "dropping expired idem records",
		    err) != 0)
			return (-1);
		idem_oldest_read(q);
	}
	if (rec->expires_ms < q->idem_oldest)
		q->idem_oldest = rec->expires_ms;
	store_sqlite_bind_blob(st, 1, tok, len);
	if (store_sqlite_bind_blob(st, 2, rec->answer, rec->answer_len) != 0) {
		store_sqlite_done(st);
		return (store_err_set(err, STORE_ERR_INTERNAL, "sqlite: an "
		    "answer of %zu bytes is too large", rec->answer_len));
	}
	sqlite3_bind_int64(st, 3, (sqlite3_int64)rec->rev);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)rec->expires_ms);
	return (idem_step(q, SQI_PUT, "recording an idem answer", err));
}
