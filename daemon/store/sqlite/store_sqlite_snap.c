/*
 * Snapshots and the sqlite backend: its own snapshot, by SQLite's online
 * backup API, and the writer of a metad database that the snapshots of
 * other backends use (store_snap.h).
 *
 * The backup copies SQ_SNAP_STEP_PAGES pages a turn of the event loop,
 * from the daemon's own connection: the writes it commits meanwhile
 * through that connection are copied into the backup as SQLite writes
 * them (sqlite3_backup_step(3)), so the finished copy is the database as
 * of the last of them, and its rev is the one its meta table holds.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_snap.h"
#include "store/sqlite/store_sqlite.h"
#include "util.h"

/* Pages a step copies: 1 MiB of 4 KiB pages, a few ms of the loop. */
#define SQ_SNAP_STEP_PAGES	256

struct store_sqlite_writer {
	struct store_sqlite	 q;
	sqlite3_stmt		*insert;
};

struct store_sqlite_snap {
	struct store_sqlite	 dst;
	sqlite3_backup		*backup;
};

static int
store_sqlite_snap_open(struct store_sqlite *q, const char *path,
    struct store_err *err)
{
	int	 rc;

	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return (store_sqlite_fail(q, rc, path, err));
	sqlite3_extended_result_codes(q->db, 1);
	return (0);
}

/* The file is fsynced by whoever keeps it: no journal, no sync here. */
struct store_sqlite_writer *
store_sqlite_writer_open(const char *path, struct store_err *err)
{
	struct store_sqlite_writer	*w;
	int				 rc;

	w = xcalloc(1, sizeof *w);
	if (store_sqlite_snap_open(&w->q, path, err) != 0)
		goto fail;
	rc = sqlite3_exec(w->q.db, "PRAGMA journal_mode = OFF; "
	    "PRAGMA synchronous = OFF;", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		store_sqlite_fail(&w->q, rc, path, err);
		goto fail;
	}
	if (store_sqlite_schema(&w->q, err) != 0)
		goto fail;
	rc = sqlite3_exec(w->q.db, "BEGIN", NULL, NULL, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(w->q.db, "INSERT INTO kv (key, value, "
		    "version, create_rev, mod_rev) VALUES (?1, ?2, ?3, ?4, ?5)",
		    -1, &w->insert, NULL);
	if (rc != SQLITE_OK) {
		store_sqlite_fail(&w->q, rc, path, err);
		goto fail;
	}
	return (w);
fail:
	store_sqlite_writer_free(w);
	return (NULL);
}

int
store_sqlite_writer_add(struct store_sqlite_writer *w,
    const struct store_kv *kv, struct store_err *err)
{
	sqlite3_stmt	*st = w->insert;
	int		 rc;

	store_sqlite_bind_blob(st, 1, kv->key, kv->key_len);
	store_sqlite_bind_blob(st, 2, kv->value, kv->value_len);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)kv->version);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)kv->create_rev);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)kv->mod_rev);
	rc = sqlite3_step(st);
	store_sqlite_done(st);
	if (rc != SQLITE_DONE)
		return (store_sqlite_fail(&w->q, rc, "writing a snapshot", err));
	return (0);
}

int
store_sqlite_writer_finish(struct store_sqlite_writer *w, uint64_t rev,
    struct store_err *err)
{
	char	 sql[160];
	int	 rc;

	snprintf(sql, sizeof sql, "UPDATE meta SET value = %llu WHERE name "
	    "IN ('rev', 'compact_rev'); COMMIT;", (unsigned long long)rev);
	if ((rc = sqlite3_exec(w->q.db, sql, NULL, NULL, NULL)) != SQLITE_OK)
		return (store_sqlite_fail(&w->q, rc, "writing a snapshot", err));
	sqlite3_finalize(w->insert);
	w->insert = NULL;
	if ((rc = sqlite3_close(w->q.db)) != SQLITE_OK)
		return (store_sqlite_fail(&w->q, rc, "closing a snapshot", err));
	w->q.db = NULL;
	return (0);
}

void
store_sqlite_writer_free(struct store_sqlite_writer *w)
{
	if (w == NULL)
		return;
	sqlite3_finalize(w->insert);
	sqlite3_close(w->q.db);
	free(w);
}

static void
store_sqlite_snap_cleanup(struct store_snapshot *snap)
{
	struct store_sqlite_snap	*b = snap->impl;

	if (b->backup != NULL)
		sqlite3_backup_finish(b->backup);
	sqlite3_close(b->dst.db);
	free(b);
}

/* The copy's own rev, then closed: 0 or -1. */
static int
store_sqlite_snap_finish(struct store_snapshot *snap, struct store_err *err)
{
	struct store_sqlite_snap	*b = snap->impl;
	sqlite3_stmt			*st = NULL;
	int				 rc;

	rc = sqlite3_backup_finish(b->backup);
	b->backup = NULL;
	if (rc != SQLITE_OK)
		return (store_sqlite_fail(&b->dst, rc, "backup", err));
	rc = sqlite3_prepare_v2(b->dst.db, SQ_REV_SQL, -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		snap->rev = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW)
		return (store_sqlite_fail(&b->dst, rc, "backup's rev", err));
	if ((rc = sqlite3_close(b->dst.db)) != SQLITE_OK)
		return (store_sqlite_fail(&b->dst, rc, "closing a backup", err));
	b->dst.db = NULL;
	return (0);
}

static void
store_sqlite_snap_step(struct store_snapshot *snap)
{
	struct store_sqlite_snap	*b = snap->impl;
	struct store_err		 err;
	int				 rc;

	/* Between batches only: a local batch opens and ends in one turn. */
	if (snap->store->in_batch) {
		store_snapshot_again(snap);
		return;
	}
	rc = sqlite3_backup_step(b->backup, SQ_SNAP_STEP_PAGES);
	if (rc == SQLITE_OK || rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		store_snapshot_again(snap);
	else if (rc != SQLITE_DONE) {
		store_sqlite_fail(&b->dst, rc, "backup", &err);
		store_snapshot_end(snap, &err);
	} else {
		/* The copy holds batches out: durable before it is done. */
		store_sqlite_sync_now(snap->store->impl);
		if (store_sqlite_snap_finish(snap, &err) != 0)
			store_snapshot_end(snap, &err);
		else
			store_snapshot_end(snap, NULL);
	}
}

int
store_sqlite_snapshot(struct store_snapshot *snap, struct store_err *err)
{
	struct store_sqlite		*q = snap->store->impl;
	struct store_sqlite_snap	*b;

	b = xcalloc(1, sizeof *b);
	if (store_sqlite_snap_open(&b->dst, snap->path, err) != 0) {
		sqlite3_close(b->dst.db);
		free(b);
		return (-1);
	}
	b->backup = sqlite3_backup_init(b->dst.db, "main", q->db, "main");
	if (b->backup == NULL) {
		store_err_set(err, STORE_ERR_INTERNAL, "sqlite: backup: %s",
		    sqlite3_errmsg(b->dst.db));
		sqlite3_close(b->dst.db);
		free(b);
		return (-1);
	}
	snap->impl = b;
	snap->step = store_sqlite_snap_step;
	snap->cleanup = store_sqlite_snap_cleanup;
	store_snapshot_again(snap);
	return (0);
}
