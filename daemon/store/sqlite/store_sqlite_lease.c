/*
 * The SQLite backend's leases (store.h; metad-protocol(7), LEASES): two
 * tables, written in the batch's transaction like every other write, so a
 * lease and the keys attached to it are durable together.
 *
 *   lease(id, ttl_ms, session)		one row a live lease
 *   lease_key(key, lease)		the live keys attached to a lease
 *
 * A key's lease is not a column of kv so that the kv table (and every
 * database made before leases) stays as it was: the tables are created if
 * missing at open.  While no key was ever leased (leased == 0) a put or
 * delete costs no lease_key statement.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_local.h"
#include "store/sqlite/store_sqlite.h"
#include "util.h"

enum {
	SQL_PUT,
	SQL_LIST,
	SQL_DROP,
	SQL_ATTACH,
	SQL_DETACH,
	SQL_KEYS,
	SQL_DROP_KEYS,
	SQL_ANY,
	SQL_OF,
	SQL_N
};

const char store_sqlite_lease_schema[] =
	"BEGIN IMMEDIATE;"
	"CREATE TABLE IF NOT EXISTS lease (id INTEGER PRIMARY KEY, "
	"    ttl_ms INTEGER NOT NULL, session INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS lease_key (key BLOB PRIMARY KEY, "
	"    lease INTEGER NOT NULL) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS lease_key_lease ON lease_key (lease, key);"
	"COMMIT;";

static const char *store_sqlite_lease_sql[SQL_N] = {
	"INSERT OR REPLACE INTO lease (id, ttl_ms, session) "
	    "VALUES (?1, ?2, ?3)",
	"SELECT id, ttl_ms, session FROM lease ORDER BY id",
	"DELETE FROM lease WHERE id = ?1",
	"INSERT OR REPLACE INTO lease_key (key, lease) VALUES (?1, ?2)",
	"DELETE FROM lease_key WHERE key = ?1",
	"SELECT key FROM lease_key WHERE lease = ?1 AND key > ?2 "
	    "ORDER BY key LIMIT ?3",
	"DELETE FROM lease_key WHERE lease = ?1",
	"SELECT 1 FROM lease_key LIMIT 1",
	"SELECT lease FROM lease_key WHERE key = ?1"
};

static int
lease_step(struct store_sqlite *q, int idx, const char *what,
    struct store_err *err)
{
	return (store_sqlite_run_stmt(q, q->lst[idx], what, err));
}

int
store_sqlite_lease_prepare(struct store_sqlite *q, struct store_err *err)
{
	int	 i, rc;

	for (i = 0; i < SQL_N; i++) {
		rc = sqlite3_prepare_v3(q->db, store_sqlite_lease_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &q->lst[i], NULL);
		if (rc != SQLITE_OK)
			return (store_sqlite_fail(q, rc,
			    store_sqlite_lease_sql[i], err));
	}
	rc = sqlite3_step(q->lst[SQL_ANY]);
	q->leased = rc == SQLITE_ROW;
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "reading lease_key", err);
	store_sqlite_done(q->lst[SQL_ANY]);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1);
}

/* The lease key is attached to, 0: none (or it could not be read). */
uint64_t
store_sqlite_lease_of(struct store_sqlite *q, const char *key, size_t len)
{
	sqlite3_stmt	*st = q->lst[SQL_OF];
	uint64_t	 lease = 0;

	if (!q->leased)
		return (0);
	store_sqlite_bind_blob(st, 1, key, len);
	if (sqlite3_step(st) == SQLITE_ROW)
		lease = (uint64_t)sqlite3_column_int64(st, 0);
	store_sqlite_done(st);
	return (lease);
}

void
store_sqlite_lease_finalize(struct store_sqlite *q)
{
	int	 i;

	for (i = 0; i < SQL_N; i++) {
		sqlite3_finalize(q->lst[i]);
		q->lst[i] = NULL;
	}
}

void
store_sqlite_read_leases(struct store *s, store_leases_done done, void *arg)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->lst[SQL_LIST];
	struct store_lease	*v = NULL;
	struct store_err	 err;
	size_t			 n = 0, cap = 0;
	int			 rc;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = xrealloc(v, cap * sizeof *v);
		}
		v[n].id = (uint64_t)sqlite3_column_int64(st, 0);
		v[n].ttl_ms = (uint64_t)sqlite3_column_int64(st, 1);
		v[n].session = sqlite3_column_int(st, 2);
		n++;
	}
	if (rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "reading leases", &err);
	store_sqlite_done(st);
	if (rc != SQLITE_DONE)
		done(arg, -1, NULL, &err);
	else
		done(arg, (long)n, v, NULL);
	free(v);
}

/* Keys of a lease after `after`, up to limit, into cb; *more. */
static long
lease_keys(struct store_sqlite *q, uint64_t lease, const char *after,
    size_t after_len, uint64_t limit, store_kv_cb cb, void *arg, int *more,
    struct store_err *err)
{
	sqlite3_stmt	*st = q->lst[SQL_KEYS];
	struct store_kv	 kv;
	long		 n = 0;
	int		 rc;

	*more = 0;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)lease);
	store_sqlite_bind_blob(st, 2, after != NULL ? after : "",
	    after != NULL ? after_len : 0);
	sqlite3_bind_int64(st, 3, limit >= INT64_MAX ? -1 :
	    (sqlite3_int64)limit + 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if ((uint64_t)n == limit) {
			*more = 1;
			break;
		}
		memset(&kv, 0, sizeof kv);
		kv.key = (const char *)sqlite3_column_blob(st, 0);
		kv.key_len = (size_t)sqlite3_column_bytes(st, 0);
		kv.lease = lease;
		n++;
		if (cb(&kv, arg) != 0)
			break;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		n = store_sqlite_fail(q, rc, "reading a lease's keys", err);
	store_sqlite_done(st);
	return (n);
}

/*
 * A lease's keys read while batches are out (store_sqlite_sync.c): the
 * lease_key table already has their attaches, so the read waits for them
 * to land, and no batch begins meanwhile (store_local_hold()).
 */
struct sq_lread {
	STAILQ_ENTRY(sq_lread) entry;
	uint64_t	 lease, limit;
	char		*after;
	size_t		 after_len;
	store_read_done	 done;
	void		*arg;
};

/* The batches out landed: the reads that waited for them. */
void
store_sqlite_lreads_run(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct sq_lread		*r;

	while ((r = STAILQ_FIRST(&q->lreads)) != NULL) {
		STAILQ_REMOVE_HEAD(&q->lreads, entry);
		store_sqlite_read_lease_keys(s, r->lease, r->after,
		    r->after_len, r->limit, r->done, r->arg);
		free(r->after);
		free(r);
	}
	store_local_release(s);
}

void
store_sqlite_read_lease_keys(struct store *s, uint64_t lease,
    const char *after, size_t after_len, uint64_t limit,
    store_read_done done, void *arg)
{
	struct store_sqlite	*q = s->impl;
	struct store_err	 err;
	struct store_kvbuf	 a;
	struct sq_lread		*r;
	int			 more;

	if (!STAILQ_EMPTY(&q->out)) {
		r = xcalloc(1, sizeof *r);
		r->lease = lease;
		r->limit = limit;
		if (after != NULL) {
			r->after = xmalloc(after_len + 1);
			memcpy(r->after, after, after_len);
			r->after_len = after_len;
		}
		r->done = done;
		r->arg = arg;
		STAILQ_INSERT_TAIL(&q->lreads, r, entry);
		store_local_hold(s);
		return;
	}
	memset(&a, 0, sizeof a);
	if (lease_keys(s->impl, lease, after, after_len, limit,
	    store_kvbuf_add, &a, &more, &err) < 0)
		done(arg, -1, NULL, 0, &err);
	else
		done(arg, (long)a.n, a.v, more, NULL);
	store_kvbuf_free(&a);
}

int
store_sqlite_lease_put(struct store *s, const struct store_lease *l,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->lst[SQL_PUT];

	if (store_sqlite_alive(q, "lease", err) != 0)
		return (-1);
	sqlite3_bind_int64(st, 1, (sqlite3_int64)l->id);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)l->ttl_ms);
	sqlite3_bind_int(st, 3, l->session != 0);
	return (lease_step(q, SQL_PUT, "recording a lease", err));
}

int
store_sqlite_lease_detach(struct store_sqlite *q, const char *key,
    size_t key_len, struct store_err *err)
{
	if (!q->leased)
		return (0);
	store_sqlite_bind_blob(q->lst[SQL_DETACH], 1, key, key_len);
	return (lease_step(q, SQL_DETACH, "detaching a key", err));
}

int
store_sqlite_lease_attach(struct store *s, const char *key, size_t key_len,
    uint64_t lease, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	sqlite3_stmt		*st = q->lst[SQL_ATTACH];
	int			 rc;

	if (store_sqlite_alive(q, "lease", err) != 0)
		return (-1);
	if (lease == 0)
		rc = store_sqlite_lease_detach(q, key, key_len, err);
	else {
		store_sqlite_bind_blob(st, 1, key, key_len);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)lease);
		rc = lease_step(q, SQL_ATTACH, "attaching a key", err);
		if (rc == 0)
			q->leased = 1;
	}
	if (rc != 0)
		q->broken = 1;
	return (rc);
}

int
store_sqlite_lease_revoke(struct store *s, uint64_t rev, uint64_t lease,
    uint64_t *n, struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	struct store_kvbuf	 a;
	size_t			 i;
	int			 more, deleted;

	*n = 0;
	if (store_sqlite_alive(q, "lease revoke", err) != 0)
		return (-1);
	memset(&a, 0, sizeof a);
	if (lease_keys(q, lease, NULL, 0, INT64_MAX, store_kvbuf_add, &a, &more,
	    err) < 0) {
		store_kvbuf_free(&a);
		return (-1);
	}
	for (i = 0; i < a.n; i++) {
		if (store_sqlite_del(s, rev, (uint32_t)*n, a.v[i].key,
		    a.v[i].key_len, &deleted, err) != 0) {
			store_kvbuf_free(&a);
			return (-1);
		}
		*n += deleted;
	}
	store_kvbuf_free(&a);
	sqlite3_bind_int64(q->lst[SQL_DROP_KEYS], 1, (sqlite3_int64)lease);
	sqlite3_bind_int64(q->lst[SQL_DROP], 1, (sqlite3_int64)lease);
	if (lease_step(q, SQL_DROP_KEYS, "revoking a lease", err) != 0 ||
	    lease_step(q, SQL_DROP, "revoking a lease", err) != 0) {
		q->broken = 1;
		return (-1);
	}
	return (0);
}
