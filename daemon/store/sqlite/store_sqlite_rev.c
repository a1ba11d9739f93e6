/*
 * The SQLite backend's range reads and reads at a revision.  A range at
 * the current rev walks kv (after a checkpoint; when none can be written,
 * kv merged with the map of keys written since: store_sqlite_range_merged).
 * The state of a key at R is its last event at or before R: one seek in
 * history_by_key (key, rev, seq) from compact_rev on, then history's row
 * of it; with none there, its row of kept (its last put below
 * compact_rev, store_sqlite_compact()), so that is exact at every kept R.
 * The key index holds the events up to keys_rev: a read at a rev past
 * it fills it first (store_sqlite_keys_for_read()), or when it cannot,
 * scans history past it; one key's history reads the index then history
 * past it.  Also the schema migration that makes a schema 1 database fit
 * that rule.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/store_local.h"
#include "store/sqlite/store_sqlite.h"
#include "util.h"
#include "store/store_range.h"

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
	sqlite3_stmt		*st = NULL;
	struct store_event	 ev;
	int			 rc = SQLITE_DONE, found = 0;

	/*
	 * The key index up to rev first, or (the disk is full) a look in
	 * history's tail past it (a scan: not indexed by key yet).
	 */
	if (store_sqlite_keys_for_read(s, rev, err) != 0) {
		st = q->st[SQ_TAIL_GET_AT];
		store_sqlite_bind_blob(st, 1, key, key_len);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
		sqlite3_bind_int64(st, 3,
		    (sqlite3_int64)store_sqlite_keys_from(s));
		if ((rc = sqlite3_step(st)) != SQLITE_ROW)
			store_sqlite_done(st);
	}
	/* Then the key index from compact_rev on, then kept. */
	if (rc == SQLITE_DONE) {
		st = q->st[SQ_GET_AT];
		store_sqlite_bind_blob(st, 1, key, key_len);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)rev);
		sqlite3_bind_int64(st, 3, (sqlite3_int64)s->head.compact_rev);
		if ((rc = sqlite3_step(st)) != SQLITE_ROW)
			store_sqlite_done(st);
	}
	if (rc == SQLITE_DONE) {
		st = q->st[SQ_KEPT_GET];
		store_sqlite_bind_blob(st, 1, key, key_len);
		rc = sqlite3_step(st);
	}
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

/*
 * The range as bounds on key: lo <= key < hi (store_range_span(): the
 * prefix, start, end and after).
 */
void
store_sqlite_bounds(const struct store_range *r, struct store_sqlite_span *b)
{
	struct store_span	 sp;

	store_range_span(r, &sp);
	b->lo = sp.lo;
	b->lo_len = sp.lo_len;
	b->hi = sp.hi;
	b->hi_len = sp.hi_len;
}

long
store_sqlite_walk(struct store_sqlite *q, sqlite3_stmt *st,
    const struct store_range *r, store_kv_cb cb, void *arg, int *more,
    struct store_err *err)
{
	struct store_kv	 kv;
	uint64_t	 count = 0;
	int		 rc, stop = 0;

	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (count == r->limit || stop) {
			*more = 1;
			break;
		}
		store_sqlite_row(st, r->keys_only, &kv);
		count++;
		stop = cb(&kv, arg) != 0;
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return (store_sqlite_fail(q, rc, "range", err));
	return ((long)count);
}

long
store_sqlite_range_at(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_sqlite		*q = s->impl;
	struct store_sqlite_span	 b;
	sqlite3_stmt			*st;
	long				 n;

	if (store_sqlite_keys_for_read(s, r->rev, err) != 0)
		return (-1);
	memset(&b, 0, sizeof b);
	store_sqlite_bounds(r, &b);
	st = q->st[b.hi != NULL ? SQ_RANGE_AT : SQ_RANGE_AT_OPEN];
	if (r->reverse && (st = store_sqlite_desc(q, st, err)) == NULL) {
		free(b.lo);
		free(b.hi);
		return (-1);
	}
	store_sqlite_bind_blob(st, 1, b.lo, b.lo_len);
	if (b.hi != NULL)
		store_sqlite_bind_blob(st, 2, b.hi, b.hi_len);
	sqlite3_bind_int64(st, 3, r->limit >= INT64_MAX ? -1 :
	    (sqlite3_int64)r->limit + 1);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)r->rev);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)s->head.compact_rev);
	n = store_sqlite_walk(q, st, r, cb, arg, more, err);
	if (r->reverse)
		sqlite3_finalize(st);
	else
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
	sqlite3_stmt		*st;
	struct store_event	 ev;
	int			 i, rc = SQLITE_DONE;

	/*
	 * Through the key index, then history's tail past it (a scan,
	 * empty unless the index could not be filled).
	 */
	(void)store_sqlite_keys_for_read(s, s->head.rev, err);
	for (i = 0; i < 2 && rc == SQLITE_DONE; i++) {
		st = q->st[i == 0 ? SQ_KEY_HIST : SQ_TAIL_KEY_HIST];
		store_sqlite_bind_blob(st, 1, key, key_len);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)from_rev);
		if (i == 1)
			sqlite3_bind_int64(st, 3,
			    (sqlite3_int64)store_sqlite_keys_from(s));
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			store_sqlite_event(st, &ev);
			if (cb(&ev, arg) != 0)
				break;
		}
		if (rc != SQLITE_ROW && rc != SQLITE_DONE)
			store_sqlite_fail(q, rc, "reading a key's history",
			    err);
		store_sqlite_done(st);
	}
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1);
}

static int
sq_keycmp(const char *a, size_t al, const char *b, size_t bl)
{
	int	 c = memcmp(a, b, al < bl ? al : bl);

	if (c != 0)
		return (c);
	return (al < bl ? -1 : al > bl);
}

static void
sq_ent_kv(const struct sq_ent *e, int keys_only, struct store_kv *kv)
{
	memset(kv, 0, sizeof *kv);
	kv->key = e->key;
	kv->key_len = e->klen;
	if (!keys_only) {
		kv->value = e->val;
		kv->value_len = e->vlen;
	}
	kv->version = e->version;
	kv->create_rev = e->create_rev;
	kv->mod_rev = e->mod_rev;
}

static int
sq_in_span(const struct sq_ent *e, const struct store_sqlite_span *b)
{
	return (sq_keycmp(e->key, e->klen, b->lo, b->lo_len) >= 0 &&
	    (b->hi == NULL ||
	    sq_keycmp(e->key, e->klen, b->hi, b->hi_len) < 0));
}

/*
 * The entries in [lo, hi) of the dirty map, and of the frozen one (a
 * checkpoint's under way) where the dirty map has none of their key, into
 * q->sorted, in key order.
 */
static size_t
sq_dirty_span(struct store_sqlite *q, const struct store_sqlite_span *b)
{
	struct sq_ent	*e;
	size_t		 i, n = 0;

	if (q->sorted_cap < q->dirty.cap + q->frozen.cap) {
		q->sorted_cap = q->dirty.cap + q->frozen.cap;
		q->sorted = xrealloc(q->sorted, q->sorted_cap *
		    sizeof *q->sorted);
	}
	for (i = 0; i < q->dirty.cap; i++)
		if ((e = q->dirty.slot[i]) != NULL && sq_in_span(e, b))
			q->sorted[n++] = e;
	for (i = 0; i < q->frozen.cap; i++)
		if ((e = q->frozen.slot[i]) != NULL && sq_in_span(e, b) &&
		    sq_map_find(&q->dirty, e->key, e->klen) == NULL)
			q->sorted[n++] = e;
	qsort(q->sorted, n, sizeof *q->sorted, sq_ent_cmp);
	return (n);
}

/*
 * A range at the current rev without a checkpoint (when one cannot be
 * written: the disk is full): kv's rows merged with the maps', an
 * entry of the map replacing or (a delete) hiding kv's row of its key.
 */
long
store_sqlite_range_merged(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_sqlite		*q = s->impl;
	struct store_sqlite_span	 b;
	struct store_kv			 kv;
	sqlite3_stmt			*st;
	const struct sq_ent		*d;
	size_t				 i = 0, nd;
	uint64_t			 count = 0;
	int				 rc, c, stop = 0;

	if (r->reverse)
		return (store_err_set(err, STORE_ERR_FULL, "sqlite: a "
		    "descending range needs the checkpoint that the full "
		    "disk holds back"));
	memset(&b, 0, sizeof b);
	store_sqlite_bounds(r, &b);
	nd = sq_dirty_span(q, &b);
	st = q->st[b.hi != NULL ? SQ_RANGE : SQ_RANGE_OPEN];
	store_sqlite_bind_blob(st, 1, b.lo, b.lo_len);
	if (b.hi != NULL)
		store_sqlite_bind_blob(st, 2, b.hi, b.hi_len);
	sqlite3_bind_int64(st, 3, -1);
	rc = sqlite3_step(st);
	while (rc == SQLITE_ROW || i < nd) {
		d = i < nd ? q->sorted[i] : NULL;
		c = 1;		/* c < 0: kv's row next, else d */
		if (rc == SQLITE_ROW) {
			store_sqlite_row(st, r->keys_only, &kv);
			c = d == NULL ? -1 : sq_keycmp(kv.key, kv.key_len,
			    d->key, d->klen);
		}
		if (c >= 0 && d->deleted) {
			i++;
			if (c == 0)
				rc = sqlite3_step(st);
			continue;
		}
		if (count == r->limit || stop) {
			*more = 1;
			break;
		}
		if (c >= 0) {
			sq_ent_kv(d, r->keys_only, &kv);
			kv.lease = store_sqlite_lease_of(q, kv.key,
			    kv.key_len);
		}
		count++;
		stop = cb(&kv, arg) != 0;
		if (c >= 0)
			i++;
		if (c <= 0)
			rc = sqlite3_step(st);
	}
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "range", err);
	store_sqlite_done(st);
	free(b.lo);
	free(b.hi);
	return (rc == SQLITE_ROW || rc == SQLITE_DONE ? (long)count : -1);
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
