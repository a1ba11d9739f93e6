/*
 * The SQLite backend's descending ranges (a range statement with its
 * ORDER BY turned around), and its range delete (store.h: store_delete_range()): the
 * keys that may be in the range -- kv's rows and the entries of every map
 * a key's newest state may be in (the batch's own, the batches' out, the
 * dirty and the frozen map) -- in key order, each deleted as
 * store_sqlite_del() does, which reads the key's true state.
 */
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"
#include "util.h"

sqlite3_stmt *
store_sqlite_desc(struct store_sqlite *q, sqlite3_stmt *asc,
    struct store_err *err)
{
	const char	*sql = sqlite3_sql(asc), *at, *p;
	sqlite3_stmt	*st = NULL;
	char		*desc;
	size_t		 n;
	int		 rc;

	for (at = NULL, p = sql; (p = strstr(p, " LIMIT ?3")) != NULL; p++)
		at = p;
	if (at == NULL) {
		store_err_set(err, STORE_ERR_INTERNAL, "sqlite: a range "
		    "statement without its LIMIT");
		return (NULL);
	}
	n = (size_t)(at - sql);
	xasprintf(&desc, "%.*s DESC%s", (int)n, sql, at);
	rc = sqlite3_prepare_v2(q->db, desc, -1, &st, NULL);
	free(desc);
	if (rc != SQLITE_OK) {
		store_sqlite_fail(q, rc, "a descending range", err);
		return (NULL);
	}
	return (st);
}

struct sq_cands {
	struct sq_ent	**v;
	size_t		  n, cap;
};

static int
sq_range_has(const char *key, size_t len, const char *lo, size_t lo_len,
    const char *hi, size_t hi_len)
{
	struct sq_ent	 a, b;
	struct sq_ent	*pa = &a, *pb = &b;

	a.key = (char *)key;
	a.klen = len;
	b.key = (char *)lo;
	b.klen = lo_len;
	if (sq_ent_cmp(&pa, &pb) < 0)
		return (0);
	if (hi == NULL)
		return (1);
	b.key = (char *)hi;
	b.klen = hi_len;
	return (sq_ent_cmp(&pa, &pb) < 0);
}

static void
sq_cand_add(struct sq_cands *c, const char *key, size_t len)
{
	if (c->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 64;
		c->v = xrealloc(c->v, c->cap * sizeof *c->v);
	}
	c->v[c->n++] = sq_ent_new(key, len, NULL, 0, 1);
}

static void
sq_cand_map(struct sq_cands *c, const struct sq_map *m, const char *lo,
    size_t lo_len, const char *hi, size_t hi_len)
{
	const struct sq_ent	*e;
	size_t			 i;

	for (i = 0; i < m->cap; i++)
		if ((e = m->slot[i]) != NULL && sq_range_has(e->key, e->klen,
		    lo, lo_len, hi, hi_len))
			sq_cand_add(c, e->key, e->klen);
}

static void
sq_cand_pend(struct sq_cands *c, const struct sq_pend *p, const char *lo,
    size_t lo_len, const char *hi, size_t hi_len)
{
	size_t	 i;

	for (i = 0; i < p->n; i++)
		if (sq_range_has(p->v[i]->key, p->v[i]->klen, lo, lo_len, hi,
		    hi_len))
			sq_cand_add(c, p->v[i]->key, p->v[i]->klen);
}

static int
sq_cand_kv(struct store_sqlite *q, struct sq_cands *c, const char *lo,
    size_t lo_len, const char *hi, size_t hi_len, struct store_err *err)
{
	sqlite3_stmt	*st = q->st[hi != NULL ? SQ_RANGE_KEYS :
			    SQ_RANGE_KEYS_OPEN];
	struct store_kv	 kv;
	int		 rc;

	store_sqlite_bind_blob(st, 1, lo, lo_len);
	if (hi != NULL)
		store_sqlite_bind_blob(st, 2, hi, hi_len);
	sqlite3_bind_int64(st, 3, -1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		store_sqlite_row(st, 1, &kv);
		sq_cand_add(c, kv.key, kv.key_len);
	}
	if (rc != SQLITE_DONE)
		store_sqlite_fail(q, rc, "range delete", err);
	store_sqlite_done(st);
	return (rc == SQLITE_DONE ? 0 : -1);
}

int
store_sqlite_del_range(struct store *s, uint64_t rev, const char *key,
    size_t key_len, const char *end, size_t end_len, uint64_t *n,
    struct store_err *err)
{
	struct store_sqlite	*q = s->impl;
	struct sq_cands		 c;
	struct sq_out		*o;
	size_t			 i;
	int			 rc = 0, deleted;

	*n = 0;
	if (store_sqlite_alive(q, "range delete", err) != 0)
		return (-1);
	memset(&c, 0, sizeof c);
	if (sq_cand_kv(q, &c, key, key_len, end, end_len, err) != 0)
		rc = -1;
	sq_cand_pend(&c, &q->pend, key, key_len, end, end_len);
	STAILQ_FOREACH(o, &q->out, entry)
		sq_cand_pend(&c, &o->pend, key, key_len, end, end_len);
	sq_cand_map(&c, &q->dirty, key, key_len, end, end_len);
	sq_cand_map(&c, &q->frozen, key, key_len, end, end_len);
	if (c.n > 0)
		qsort(c.v, c.n, sizeof *c.v, sq_ent_cmp);
	for (i = 0; i < c.n && rc == 0; i++) {
		if (i > 0 && sq_ent_cmp(&c.v[i - 1], &c.v[i]) == 0)
			continue;
		if (store_sqlite_del(s, rev, (uint32_t)*n, c.v[i]->key,
		    c.v[i]->klen, &deleted, err) != 0)
			rc = -1;
		else
			*n += deleted;
	}
	for (i = 0; i < c.n; i++)
		free(c.v[i]);
	free(c.v);
	return (rc);
}
