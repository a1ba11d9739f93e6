/*
 * The SQLite backend: one database file in WAL mode, schema 7:
 *
 *   kv(key, value, version, create_rev, mod_rev)	the live keys, as of
 *						meta 'ckpt_rev'
 *   history(id, rev, seq, type, key, value, version, create_rev, lease)
 *				every event from compact_rev on, appended
 *				by each commit, keyed by an id that grows
 *				with (rev, seq) (SQ_ID_SHIFT); a put's lease
 *				(NULL: none)
 *   history_by_key(key, rev, seq, id)	the key index of history's events
 *				from compact_rev up to meta 'keys_rev',
 *				filled when a read wants it (reads at a
 *				rev, a key's history: store_sqlite.h)
 *   kept(key, value, version, create_rev, rev, seq, lease)	each key's last
 *				event below compact_rev, if it is a put
 *   meta(name, value)		'schema', 'rev' (set by a commit whose
 *				newest event is not in history: the rev is
 *				SQ_REV_SQL), 'compact_rev', 'ckpt_rev',
 *				'keys_rev', 'nkeys' (the key count, kept by
 *				each commit)
 *   lease(id, ttl_ms, session), lease_key(key, lease)	store_sqlite_lease.c
 *
 * A commit appends to history only; the keys written since the last
 * checkpoint are served from memory until a checkpoint writes them into
 * kv, and history's tail past ckpt_rev is replayed at open
 * (store_sqlite_log.c).  A compaction moves the last puts below it into
 * kept and drops a range of history's pages.
 *
 * Keys are BLOBs so that SQLite orders them bytewise.  A batch is one
 * BEGIN IMMEDIATE transaction; a mark is a savepoint.  Every statement is
 * prepared once at open.  The key count is kept in memory (restored on
 * rollback and undo) and in meta, so that neither status nor open scans
 * the table.
 *
 * If a write fails after changing something, or SQLite rolls the whole
 * transaction back on an error, the batch is "broken": commit refuses it and
 * rolls back; undo to a mark taken before the failure repairs it.
 */
#include <sys/stat.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_local.h"
#include "store/store_snap.h"
#include "store/sqlite/store_sqlite.h"
#include "util.h"

#define SQ_BUSY_TIMEOUT_MS	5000
#define SQ_CACHE_DEFAULT	(32 * 1024 * 1024)

#define SQ_KV_COLS	"key, value, version, create_rev, mod_rev"
#define SQ_KEY_COLS	"key, NULL, version, create_rev, mod_rev"
/* The lease a live key is attached to: a sixth column (store_sqlite_row). */
#define SQ_LEASE_COL \
	", (SELECT lease FROM lease_key AS l WHERE l.key = kv.key)"
/* An event's row: an eighth column, the lease of a put's key. */
#define SQ_EV_COLS	"key, value, version, create_rev, rev, seq, type, lease"
#define SQ_H_EV_COLS \
	"h.key, h.value, h.version, h.create_rev, h.rev, h.seq, h.type, " \
	"h.lease"
/* history's row of a key index row k. */
#define SQ_BY_KEY \
	" FROM history_by_key AS k JOIN history AS h ON h.id = k.id "
/*
 * A range at rev ?4 (kept from ?5): each key's last event at or before
 * ?4 if it is a put, else (no event from ?5 to ?4) its row of kept.
 */
#define SQ_RANGE_AT_SQL(hk, hp) \
	"SELECT " SQ_H_EV_COLS SQ_BY_KEY "WHERE k.key >= ?1 " hk \
	"AND k.rev >= ?5 AND k.rev <= ?4 AND h.type = 0 AND NOT EXISTS " \
	"(SELECT 1 FROM history_by_key AS n WHERE n.key = k.key AND " \
	"n.rev <= ?4 AND (n.rev > k.rev OR (n.rev = k.rev AND " \
	"n.seq > k.seq))) UNION ALL SELECT key, value, version, " \
	"create_rev, rev, seq, 0, lease FROM kept AS p WHERE p.key >= ?1 " \
	hp "AND NOT EXISTS (SELECT 1 FROM history_by_key AS n WHERE " \
	"n.key = p.key AND n.rev >= ?5 AND n.rev <= ?4) ORDER BY 1 LIMIT ?3"

static const char *store_sqlite_sql[SQ_NSTMT] = {
	"SELECT " SQ_KV_COLS SQ_LEASE_COL " FROM kv WHERE key = ?1",
	"DELETE FROM kv WHERE key = ?1",
	/* A write appends to history (no secondary index to update). */
	"INSERT INTO history (rev, seq, type, key, value, version, "
	    "create_rev, id, lease) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
	    "?9)",
	"SELECT " SQ_EV_COLS " FROM history WHERE id >= " SQ_ID_FROM("?1")
	    " AND rev >= ?1 ORDER BY id",
	/* Compaction: the events below ?1 go, a range of pages. */
	"DELETE FROM history WHERE id < " SQ_ID_FIRST("?1"),
	"UPDATE meta SET value = ?2 WHERE name = ?1",
	"SELECT " SQ_KV_COLS SQ_LEASE_COL " FROM kv WHERE key >= ?1 AND "
	    "key < ?2 "
	    "ORDER BY key LIMIT ?3",
	"SELECT " SQ_KV_COLS SQ_LEASE_COL " FROM kv WHERE key >= ?1 "
	    "ORDER BY key LIMIT ?3",
	"SELECT " SQ_KEY_COLS SQ_LEASE_COL " FROM kv WHERE key >= ?1 AND "
	    "key < ?2 "
	    "ORDER BY key LIMIT ?3",
	"SELECT " SQ_KEY_COLS SQ_LEASE_COL " FROM kv WHERE key >= ?1 "
	    "ORDER BY key LIMIT ?3",
	"BEGIN IMMEDIATE",
	"COMMIT",
	"ROLLBACK",
	"SAVEPOINT metad_mark",
	"RELEASE metad_mark",
	"ROLLBACK TO metad_mark",
	/* One seek in history_by_key (key, rev, seq), from ?3 up to ?2: */
	"SELECT " SQ_H_EV_COLS SQ_BY_KEY "WHERE k.key = ?1 AND k.rev <= ?2 "
	    "AND k.rev >= ?3 ORDER BY k.rev DESC, k.seq DESC LIMIT 1",
	SQ_RANGE_AT_SQL("AND k.key < ?2 ", "AND p.key < ?2 "),
	SQ_RANGE_AT_SQL("", ""),
	"SELECT " SQ_H_EV_COLS SQ_BY_KEY "WHERE k.key = ?1 AND k.rev >= ?2 "
	    "ORDER BY k.rev, k.seq",
	/*
	 * Compaction keeps each key's last event below it if it is a put,
	 * in kept (sq_kept_fill()): a key's last put replaces its row
	 * (SQ_KEPT_PUT, ?1 its id); a last delete takes the row away
	 * (SQ_KEPT_DEL, ?2 ?3 its rev, seq: an older row).
	 */
	"DELETE FROM kept WHERE key = ?1 AND (rev < ?2 OR (rev = ?2 AND "
	    "seq < ?3))",
	"INSERT OR REPLACE INTO kv (" SQ_KV_COLS ") VALUES (?1, ?2, ?3, ?4, ?5)",
	/* REPLACE: one seek a row, where an upsert's UPDATE seeks again. */
	"INSERT OR REPLACE INTO kept (key, value, version, create_rev, rev, "
	    "seq, lease) SELECT key, IFNULL(value, X''), version, create_rev, "
	    "rev, seq, lease FROM history WHERE id = ?1",
	/*
	 * A fill of the key index (a read's or a checkpoint's) indexes the
	 * events of (?1, ?2] by key, in key order, in a transaction of its
	 * own: OR ROLLBACK (a failure ends it) spares the statement journal,
	 * a copy of each page it changes in a temporary file (4 MiB a slice
	 * at 20000 keys).
	 */
	"INSERT OR ROLLBACK INTO history_by_key (key, rev, seq, id) SELECT "
	    "key, rev, seq, id FROM history WHERE id >= " SQ_ID_FROM("?1 + 1")
	    " AND rev > ?1 AND id < " SQ_ID_FIRST("?2 + 1") " "
	    "ORDER BY key, rev, seq",
	"DELETE FROM history_by_key WHERE rev < ?1",
	/* Past the key index (?3), when it cannot be filled: a scan. */
	"SELECT " SQ_EV_COLS " FROM history WHERE id >= " SQ_ID_FROM("?3 + 1")
	    " AND rev > ?3 AND id < " SQ_ID_FIRST("?2 + 1") " AND key = ?1 "
	    "ORDER BY id DESC LIMIT 1",
	"SELECT " SQ_EV_COLS " FROM history WHERE id >= "
	    SQ_ID_FROM("MAX(?3 + 1, ?2)") " AND rev > ?3 AND rev >= ?2 AND "
	    "key = ?1 ORDER BY id",
	/* A write's look at the key: one seek, not lease_key's too. */
	"SELECT version, create_rev FROM kv WHERE key = ?1",
	"SELECT key, value, version, create_rev, rev, seq, 0, lease FROM "
	    "kept WHERE key = ?1",
	/* The events below ?1, newest first: the first of a key is its last. */
	"SELECT key, id, type, rev, seq FROM history WHERE id < "
	    SQ_ID_FIRST("?1") " ORDER BY id DESC"
};

/*
 * SQLite answers SQLITE_FULL for ENOSPC only; a write refused for a quota
 * (EDQUOT) or the file size limit (EFBIG) comes back as an I/O error.  All
 * three mean "full" to our callers: writes work again once space returns.
 */
static int
store_sqlite_no_space(int sys_errno)
{
#ifdef EDQUOT
	if (sys_errno == EDQUOT)
		return (1);
#endif
	return (sys_errno == ENOSPC || sys_errno == EFBIG);
}

/*
 * Call right after the failing sqlite3 call: for an I/O error, SQLite does
 * not always record the system errno (not when COMMIT fails writing the
 * WAL), so errno as the call left it is the next best witness.
 */
int
store_sqlite_fail(struct store_sqlite *q, int rc, const char *what,
    struct store_err *err)
{
	enum store_errcode	 code;
	char			 why[64] = "";
	int			 sys = errno;

	switch (rc & 0xff) {
	case SQLITE_FULL:
		code = STORE_ERR_FULL;
		break;
	case SQLITE_IOERR:
		if (q->db != NULL && sqlite3_system_errno(q->db) != 0)
			sys = sqlite3_system_errno(q->db);
		code = STORE_ERR_IO;
		if (store_sqlite_no_space(sys)) {
			code = STORE_ERR_FULL;
			snprintf(why, sizeof why, " (%s)", strerror(sys));
		}
		break;
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_CANTOPEN:
		code = STORE_ERR_IO;
		break;
	default:
		code = STORE_ERR_INTERNAL;
		break;
	}
	if (q->in_txn)
		q->broken_code = code;
	return (store_err_set(err, code, "sqlite: %s: %s%s", what,
	    q->db != NULL ? sqlite3_errmsg(q->db) : sqlite3_errstr(rc), why));
}

void
store_sqlite_done(sqlite3_stmt *st)
{
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
}

/* Steps a statement that returns no row we need, then resets it. */
int
store_sqlite_run(struct store_sqlite *q, enum store_sqlite_stmt idx,
    const char *what, struct store_err *err)
{
	return (store_sqlite_run_stmt(q, q->st[idx], what, err));
}

/* The same for any prepared statement (the lease and idem tables'). */
int
store_sqlite_run_stmt(struct store_sqlite *q, sqlite3_stmt *st,
    const char *what, struct store_err *err)
{
	int	 rc;

	rc = sqlite3_step(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		store_sqlite_fail(q, rc, what, err);
	store_sqlite_done(st);
	return (rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1);
}

int
store_sqlite_bind_blob(sqlite3_stmt *st, int i, const void *p, size_t len)
{
	return (sqlite3_bind_blob64(st, i, len > 0 ? p : "", len,
	    SQLITE_STATIC));
}

int
store_sqlite_scalar(struct store_sqlite *q, const char *sql, uint64_t *out,
    struct store_err *err)
{
	sqlite3_stmt	*st;
	int		 rc;

	*out = 0;
	if ((rc = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL)) != SQLITE_OK)
		return (store_sqlite_fail(q, rc, sql, err));
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		*out = (uint64_t)sqlite3_column_int64(st, 0);
	else if (rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, sql, err);
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1);
}

static int
store_sqlite_connect(struct store_sqlite *q, const char *path,
    const struct store_options *opts, struct store_err *err)
{
	static const char	*syncs[] = { "FULL", "NORMAL", "OFF" };
	unsigned int		 sync = (unsigned int)opts->sync;
	char			 sql[256];
	size_t			 cache;
	int			 rc;

	/* One thread uses the connection: no mutexes. */
	rc = sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, store_sqlite_vfs());
	if (rc != SQLITE_OK)
		return (store_sqlite_fail(q, rc, path, err));
	sqlite3_extended_result_codes(q->db, 1);
	sqlite3_busy_timeout(q->db, SQ_BUSY_TIMEOUT_MS);
	cache = opts->cache_bytes != 0 ? opts->cache_bytes : SQ_CACHE_DEFAULT;
	/*
	 * No other process opens the database (metad(8), DESCRIPTION): hold
	 * it exclusively, which also spares a lock and a shared-memory
	 * index per read, and makes a second daemon on the same file fail
	 * at start.
	 */
	snprintf(sql, sizeof sql, "PRAGMA locking_mode = EXCLUSIVE; "
	    "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; "
	    "PRAGMA synchronous = %s; PRAGMA cache_size = -%zu; "
	    "BEGIN IMMEDIATE; COMMIT;",
	    syncs[sync < 3 ? sync : 0], cache / 1024 > 0 ? cache / 1024 : 1);
	if ((rc = sqlite3_exec(q->db, sql, NULL, NULL, NULL)) != SQLITE_OK)
		return (store_sqlite_fail(q, rc, path, err));
	xasprintf(&q->wal_path, "%s-wal", path);
	q->sync_full = sync == STORE_SYNC_FULL;
	return (0);
}


static int
store_sqlite_prepare(struct store_sqlite *q, struct store_err *err)
{
	int	 i, rc;

	for (i = 0; i < SQ_NSTMT; i++) {
		rc = sqlite3_prepare_v3(q->db, store_sqlite_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &q->st[i], NULL);
		if (rc != SQLITE_OK)
			return (store_sqlite_fail(q, rc, store_sqlite_sql[i],
			    err));
	}
	return (0);
}

static void
store_sqlite_close(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	int			 i;

	if (q == NULL)
		return;
	store_sqlite_sync_stop(s);
	/* A clean close leaves no log tail to replay. */
	if (q->st[SQ_NSTMT - 1] != NULL) {
		struct store_err	 err;

		store_sqlite_checkpoint(s, &err);
	}
	store_sqlite_log_free(q);
	for (i = 0; i < SQ_NSTMT; i++)
		sqlite3_finalize(q->st[i]);
	store_sqlite_lease_finalize(q);
	store_sqlite_idem_finalize(q);
	sqlite3_close(q->db);
	free(q->wal_path);
	free(q);
	s->impl = NULL;
}

static int
store_sqlite_open(struct store *s, const char *path,
    const struct store_options *opts, struct store_err *err)
{
	struct store_sqlite	*q;
	uint64_t		 ckpt_rev;

	q = xcalloc(1, sizeof *q);
	s->impl = q;
	STAILQ_INIT(&q->out);
	STAILQ_INIT(&q->out_free);
	STAILQ_INIT(&q->lreads);
	if (store_sqlite_mkdirs(path, err) != 0 ||
	    store_sqlite_connect(q, path, opts, err) != 0 ||
	    store_sqlite_schema(q, err) != 0 ||
	    store_sqlite_load(s, q, err) != 0 ||
	    store_sqlite_prepare(q, err) != 0 ||
	    store_sqlite_scalar(q, "SELECT value FROM meta WHERE "
	    "name = 'ckpt_rev'", &ckpt_rev, err) != 0 ||
	    store_sqlite_scalar(q, "SELECT value FROM meta WHERE "
	    "name = 'keys_rev'", &q->keys_rev, err) != 0 ||
	    store_sqlite_scalar(q, "SELECT value FROM meta WHERE "
	    "name = 'nkeys'", &q->nkeys, err) != 0 ||
	    store_sqlite_recover(s, ckpt_rev, err) != 0 ||
	    store_sqlite_lease_prepare(q, err) != 0 ||
	    store_sqlite_idem_prepare(q, err) != 0 ||
	    store_sqlite_sync_parent(path, err) != 0) {
		store_sqlite_close(s);
		return (-1);
	}
	store_sqlite_log_init(s, opts->base);
	return (0);
}

/* Reads the row of a kv or history select (same first five columns). */
void
store_sqlite_row(sqlite3_stmt *st, int keys_only, struct store_kv *kv)
{
	kv->key = (const char *)sqlite3_column_text(st, 0);
	kv->key_len = (size_t)sqlite3_column_bytes(st, 0);
	kv->value = NULL;
	kv->value_len = 0;
	if (!keys_only) {
		kv->value = sqlite3_column_blob(st, 1);
		kv->value_len = (size_t)sqlite3_column_bytes(st, 1);
		if (kv->value == NULL)
			kv->value = (const unsigned char *)"";
	}
	kv->version = (uint64_t)sqlite3_column_int64(st, 2);
	kv->create_rev = (uint64_t)sqlite3_column_int64(st, 3);
	kv->mod_rev = (uint64_t)sqlite3_column_int64(st, 4);
	/* A kv row has the lease as a sixth column, an event's an eighth. */
	switch (sqlite3_column_count(st)) {
	case 6:
		kv->lease = (uint64_t)sqlite3_column_int64(st, 5);
		break;
	case 8:
		kv->lease = (uint64_t)sqlite3_column_int64(st, 7);
		break;
	default:
		kv->lease = 0;
	}
}

static int
store_sqlite_get(struct store *s, const char *key, size_t key_len,
    store_kv_cb cb, void *arg, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->st[SQ_GET];
	struct store_kv		 kv;
	struct sq_ent		*e;
	int			 rc, found = 0;

	if ((e = sq_find(q, key, key_len)) != NULL) {
		if (e->deleted)
			return (0);
		memset(&kv, 0, sizeof kv);
		kv.key = e->key;
		kv.key_len = e->klen;
		kv.value = e->val;
		kv.value_len = e->vlen;
		kv.version = e->version;
		kv.create_rev = e->create_rev;
		kv.mod_rev = e->mod_rev;
		kv.lease = store_sqlite_lease_of(q, key, key_len);
		cb(&kv, arg);
		return (1);
	}
	store_sqlite_bind_blob(st, 1, key, key_len);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		store_sqlite_row(st, 0, &kv);
		cb(&kv, arg);
		found = 1;
	} else if (rc != SQLITE_DONE)
		found = store_sqlite_fail(q, rc, "get", err);
	store_sqlite_done(st);
	return (found);
}

static long
store_sqlite_range(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_sqlite		*q = s->impl;
	struct store_sqlite_span	 b;
	sqlite3_stmt			*st;
	enum store_sqlite_stmt		 idx;
	long				 n;

	if (r->rev != 0)
		return (store_sqlite_range_at(s, r, cb, arg, more, err));
	/*
	 * kv must hold every key: checkpoint first, or (the checkpoint
	 * cannot be written: the disk is full) merge the map into kv's rows.
	 */
	if (store_sqlite_ckpt_for_read(s, s->head.rev, err) != 0)
		return (store_sqlite_range_merged(s, r, cb, arg, more, err));
	memset(&b, 0, sizeof b);
	store_sqlite_bounds(r, &b);
	if (r->keys_only)
		idx = b.hi != NULL ? SQ_RANGE_KEYS : SQ_RANGE_KEYS_OPEN;
	else
		idx = b.hi != NULL ? SQ_RANGE : SQ_RANGE_OPEN;
	st = q->st[idx];
	if (r->reverse && (st = store_sqlite_desc(q, st, err)) == NULL)
		n = -1;
	else {
		store_sqlite_bind_blob(st, 1, b.lo, b.lo_len);
		if (b.hi != NULL)
			store_sqlite_bind_blob(st, 2, b.hi, b.hi_len);
		sqlite3_bind_int64(st, 3, r->limit >= INT64_MAX ? -1 :
		    (sqlite3_int64)r->limit + 1);
		n = store_sqlite_walk(q, st, r, cb, arg, more, err);
		if (r->reverse)
			sqlite3_finalize(st);
		else
			store_sqlite_done(st);
	}
	free(b.lo);
	free(b.hi);
	return (n);
}

static int
store_sqlite_history(struct store *s, uint64_t from_rev, store_event_cb cb,
    void *arg, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->st[SQ_HIST_GET];
	struct store_event	 ev;
	int			 rc;

	/* history holds every event from compact_rev on, in rev order. */
	sqlite3_bind_int64(st, 1, (sqlite3_int64)from_rev);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_sqlite_event(st, &ev);
		if (cb(&ev, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "reading history", err);
	store_sqlite_done(st);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1);
}

static int
store_sqlite_stats(struct store *s, struct store_stats *st,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	struct stat		 sb;
	uint64_t		 pages, page_size;

	if (store_sqlite_scalar(q, "PRAGMA page_count", &pages, err) != 0 ||
	    store_sqlite_scalar(q, "PRAGMA page_size", &page_size, err) != 0)
		return (-1);
	st->keys = STAILQ_EMPTY(&q->out) ? q->nkeys : q->nkeys_landed;
	st->db_bytes = pages * page_size;
	if (stat(q->wal_path, &sb) == 0) {
		st->wal_bytes = (uint64_t)sb.st_size;
		st->db_bytes += st->wal_bytes;
	}
	return (0);
}

static const struct store_local store_sqlite_local = {
	store_sqlite_range,
	store_sqlite_history,
	store_sqlite_get_at,
	store_sqlite_key_history,
	store_sqlite_stats,
	store_sqlite_begin,
	store_sqlite_commit
};

const struct store_backend store_sqlite_backend = {
	.name = "sqlite",
	/* Open and close. */
	.open = store_sqlite_open,
	.close = store_sqlite_close,
	/* Batches and commits. */
	.batch_max = 0,
	.batches_out = SQ_BATCHES_OUT,
	/* In order, each on the ones before (store_sqlite_sync.c). */
	.ordered = 1,
	.begin = store_local_begin,
	.get = store_sqlite_get,
	.put = store_sqlite_put,
	.del = store_sqlite_del,
	.del_range = store_sqlite_del_range,
	.mark = store_sqlite_mark,
	.undo = store_sqlite_undo,
	.compact = store_sqlite_compact,
	.commit = store_local_commit,
	.rollback = store_sqlite_rollback,
	/* Reads. */
	.read_get = store_local_read_get,
	.read_range = store_local_read_range,
	/* History. */
	.read_history = store_local_read_history,
	.read_key_history = store_local_read_key_history,
	/* Leases the daemon times: reads, and writes in a batch. */
	.read_leases = store_sqlite_read_leases,
	.read_lease_keys = store_sqlite_read_lease_keys,
	.lease_put = store_sqlite_lease_put,
	.lease_attach = store_sqlite_lease_attach,
	.lease_revoke = store_sqlite_lease_revoke,
	/* Idempotent writes' records, in a batch. */
	.idem_get = store_sqlite_idem_get,
	.idem_put = store_sqlite_idem_put,
	/* Snapshots. */
	.snapshot = store_sqlite_snapshot,
	/* Status. */
	.read_stats = store_local_read_stats,
	.reports = STORE_REPORTS(STORE_REPORT_FSYNC) |
	    STORE_REPORTS(STORE_REPORT_CHECKPOINT) | STORE_REPORTS_WAL,
	/* The synchronous side store_local.c calls. */
	.local = &store_sqlite_local,
};
