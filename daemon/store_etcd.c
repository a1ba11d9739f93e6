/*
 * The etcd backend (see store_etcd.h): reads are etcd ranges, a write
 * request's writes are buffered in an overlay and sent as one etcd txn at
 * store_commit, guarded by the sentinel's mod_revision.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

void
etcd_ev_free(struct etcd_ev *ev)
{
	free(ev->key);
	free(ev->value);
	memset(ev, 0, sizeof *ev);
}

void
etcd_evs_push(struct etcd_evs *a, const struct etcd_ev *ev)
{
	if (a->n == a->cap) {
		if (a->head > 0 && a->head >= a->n / 2) {
			memmove(a->v, a->v + a->head,
			    (a->n - a->head) * sizeof *a->v);
			a->n -= a->head;
			a->head = 0;
		} else {
			a->cap = a->cap == 0 ? 64 : a->cap * 2;
			a->v = xrealloc(a->v, a->cap * sizeof *a->v);
		}
	}
	a->v[a->n++] = *ev;
	a->bytes += ev->key_len + ev->value_len + sizeof *ev;
}

/* Free the entries from keep_from on (all of them: 0). */
void
etcd_evs_clear(struct etcd_evs *a, size_t keep_from)
{
	while (a->n > keep_from && a->n > a->head) {
		a->n--;
		a->bytes -= a->v[a->n].key_len + a->v[a->n].value_len +
		    sizeof a->v[a->n];
		etcd_ev_free(&a->v[a->n]);
	}
	if (a->n == a->head) {
		a->n = a->head = 0;
		a->bytes = 0;
	}
}

int
etcd_ev_from_kv(struct store_etcd *e, const cJSON *kv, int deleted,
    struct etcd_ev *ev)
{
	unsigned char	*k;
	size_t		 klen;

	memset(ev, 0, sizeof *ev);
	k = etcd_unb64(kv, "key", &klen);
	if (klen <= e->prefix_len || memcmp(k, e->prefix, e->prefix_len) != 0) {
		free(k);
		return (-1);
	}
	ev->key_len = klen - e->prefix_len;
	ev->key = xmemdup(k + e->prefix_len, ev->key_len);
	free(k);
	ev->deleted = deleted;
	ev->mod_rev = etcd_u64(kv, "mod_revision");
	ev->rev = ev->mod_rev;
	if (!deleted) {
		ev->value = etcd_unb64(kv, "value", &ev->value_len);
		ev->version = etcd_u64(kv, "version");
		ev->create_rev = etcd_u64(kv, "create_revision");
	}
	return (0);
}

static char *
etcd_key64(struct store_etcd *e, const char *key, size_t len)
{
	char	*k, *s;

	k = xmalloc(e->prefix_len + len);
	memcpy(k, e->prefix, e->prefix_len);
	memcpy(k + e->prefix_len, key, len);
	s = etcd_b64(k, e->prefix_len + len);
	free(k);
	return (s);
}

static void
etcd_kv_of(const struct etcd_ev *ev, struct store_kv *kv, int with_value)
{
	memset(kv, 0, sizeof *kv);
	kv->key = ev->key;
	kv->key_len = ev->key_len;
	kv->value = with_value ? ev->value : NULL;
	kv->value_len = with_value ? ev->value_len : 0;
	kv->version = ev->version;
	kv->create_rev = ev->create_rev;
	kv->mod_rev = ev->mod_rev;
}

/* The header revision of a reply: etcd's revision when it answered. */
static uint64_t
etcd_header_rev(struct store_etcd *e, const cJSON *reply)
{
	uint64_t	 rev;

	rev = etcd_u64(cJSON_GetObjectItemCaseSensitive(reply, "header"),
	    "revision");
	if (rev > e->st->seen_rev)
		e->st->seen_rev = rev;
	return (rev);
}

/* The body of a range request for [key64, end64) at rev (0: current). */
static void
etcd_range_body(struct buf *b, const char *key64, const char *end64,
    uint64_t rev, uint64_t limit, int keys_only)
{
	buf_printf(b, "{\"key\":\"%s\"", key64);
	if (end64 != NULL)
		buf_printf(b, ",\"range_end\":\"%s\"", end64);
	if (rev != 0)
		buf_printf(b, ",\"revision\":\"%" PRIu64 "\"", rev);
	if (limit != 0)
		buf_printf(b, ",\"limit\":\"%" PRIu64 "\"", limit);
	if (keys_only == 1)
		buf_addstr(b, ",\"keys_only\":true");
	else if (keys_only == 2)
		buf_addstr(b, ",\"count_only\":true");
	buf_addstr(b, "}");
}

/* Range [key64, end64) at rev (0: current); the reply in *out. */
static int
etcd_range(struct store_etcd *e, const char *key64, const char *end64,
    uint64_t rev, uint64_t limit, int keys_only, cJSON **out,
    struct store_err *err)
{
	struct buf	 b;
	int		 rc;

	buf_init(&b);
	etcd_range_body(&b, key64, end64, rev, limit, keys_only);
	rc = etcd_http_call(&e->http, "/v3/kv/range", buf_cstr(&b), out, err);
	buf_free(&b);
	if (rc == 0)
		(void)etcd_header_rev(e, *out);
	return (rc);
}

/* The kvs of a range reply, at most limit of them, into out (in order). */
static void
etcd_reply_kvs(struct store_etcd *e, const cJSON *reply, uint64_t limit,
    struct etcd_evs *out, int *more)
{
	const cJSON	*it;
	struct etcd_ev	 ev;

	*more = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(reply,
	    "kvs")) {
		if (out->n - out->head == limit) {
			*more = 1;
			break;
		}
		if (etcd_ev_from_kv(e, it, 0, &ev) == 0)
			etcd_evs_push(out, &ev);
	}
}

static void
etcd_evs_free(struct etcd_evs *evs)
{
	etcd_evs_clear(evs, 0);
	free(evs->v);
	memset(evs, 0, sizeof *evs);
}

/* The newest overlay entry for key, or NULL. */
static const struct etcd_ev *
etcd_overlay_find(struct store_etcd *e, const char *key, size_t len)
{
	size_t	 i;

	for (i = e->overlay.n; i > e->overlay.head; i--) {
		const struct etcd_ev *ev = &e->overlay.v[i - 1];

		if (ev->key_len == len && memcmp(ev->key, key, len) == 0)
			return (ev);
	}
	return (NULL);
}

static void
etcd_snap_clear(struct store_etcd *e)
{
	size_t	 i;

	for (i = 0; i < e->nsnap; i++) {
		free(e->snap[i].key);
		etcd_ev_free(&e->snap[i].ev);
	}
	free(e->snap);
	e->snap = NULL;
	e->nsnap = 0;
}

static const struct etcd_snap *
etcd_snap_find(struct store_etcd *e, const char *key, size_t len)
{
	size_t	 i;

	for (i = 0; i < e->nsnap; i++) {
		if (e->snap[i].key_len == len &&
		    memcmp(e->snap[i].key, key, len) == 0)
			return (&e->snap[i]);
	}
	return (NULL);
}

static int
store_etcd_get(struct store *st, const char *key, size_t len,
    store_kv_cb cb, void *arg, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	const struct etcd_ev	*ov;
	const struct etcd_snap	*sn;
	struct etcd_evs		 evs;
	struct store_kv		 kv;
	cJSON			*reply;
	char			*k64;
	int			 rc, more;

	if (st->in_batch && (ov = etcd_overlay_find(e, key, len)) != NULL) {
		if (ov->deleted)
			return (0);
		etcd_kv_of(ov, &kv, 1);
		cb(&kv, arg);
		return (1);
	}
	if (st->in_batch && (sn = etcd_snap_find(e, key, len)) != NULL) {
		if (!sn->found)
			return (0);
		etcd_kv_of(&sn->ev, &kv, 1);
		cb(&kv, arg);
		return (1);
	}
	k64 = etcd_key64(e, key, len);
	rc = etcd_range(e, k64, NULL, st->in_batch ? st->base_rev : 0, 0, 0,
	    &reply, err);
	free(k64);
	if (rc != 0)
		return (-1);
	memset(&evs, 0, sizeof evs);
	etcd_reply_kvs(e, reply, 1, &evs, &more);
	cJSON_Delete(reply);
	if ((rc = evs.n > 0)) {
		etcd_kv_of(&evs.v[0], &kv, 1);
		cb(&kv, arg);
	}
	etcd_evs_free(&evs);
	return (rc);
}

/* Bytewise order; a is read as its first alen - 1 bytes plus a NUL. */
static int
etcd_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t	 i, n = alen < blen ? alen : blen;
	int	 ca, cb;

	for (i = 0; i < n; i++) {
		ca = i == alen - 1 ? 0 : (unsigned char)a[i];
		cb = (unsigned char)b[i];
		if (ca != cb)
			return (ca - cb);
	}
	return (alen < blen ? -1 : alen > blen);
}

/* Where a store_range starts and ends in etcd (base64, malloc'd). */
static void
etcd_range_bounds(struct store_etcd *e, const struct store_range *r,
    char **beg64, char **end64)
{
	char	*pfx;
	size_t	 plen = e->prefix_len + r->prefix_len;

	pfx = xmalloc(plen + 1);
	memcpy(pfx, e->prefix, e->prefix_len);
	memcpy(pfx + e->prefix_len, r->prefix, r->prefix_len);
	*end64 = etcd_prefix_end64(pfx, plen);
	if (r->after != NULL && etcd_bytes_cmp(r->after, r->after_len + 1,
	    r->prefix, r->prefix_len) > 0) {
		/* Just after "after": after + "\0". */
		char *a = xcalloc(1, e->prefix_len + r->after_len + 1);

		memcpy(a, e->prefix, e->prefix_len);
		memcpy(a + e->prefix_len, r->after, r->after_len);
		*beg64 = etcd_b64(a, e->prefix_len + r->after_len + 1);
		free(a);
	} else
		*beg64 = etcd_b64(pfx, plen);
	free(pfx);
}

static long
store_etcd_range(struct store *st, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct etcd_evs		 evs;
	struct store_kv		 kv;
	cJSON			*reply;
	char			*beg64, *end64;
	size_t			 i;
	int			 rc;

	etcd_range_bounds(e, r, &beg64, &end64);
	rc = etcd_range(e, beg64, end64, st->in_batch ? st->base_rev : 0,
	    r->limit + 1, r->keys_only ? 1 : 0, &reply, err);
	free(beg64);
	free(end64);
	if (rc != 0)
		return (-1);
	memset(&evs, 0, sizeof evs);
	etcd_reply_kvs(e, reply, r->limit, &evs, more);
	cJSON_Delete(reply);
	for (i = 0; i < evs.n; i++) {
		etcd_kv_of(&evs.v[i], &kv, !r->keys_only);
		if (cb(&kv, arg) != 0)
			break;
	}
	etcd_evs_free(&evs);
	return ((long)i);
}

/* An asynchronous get or range. */
struct etcd_aread {
	struct store_etcd	*e;
	uint64_t		 limit;
	int			 keys_only;
	store_read_done		 done;
	void			*arg;
};

static void
etcd_aread_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_aread	*ar = arg;
	struct etcd_evs		 evs;
	struct store_kv		*kvs;
	size_t			 i;
	int			 more;

	if (reply == NULL) {
		ar->done(ar->arg, -1, NULL, 0, err);
		free(ar);
		return;
	}
	(void)etcd_header_rev(ar->e, reply);
	memset(&evs, 0, sizeof evs);
	etcd_reply_kvs(ar->e, reply, ar->limit, &evs, &more);
	kvs = xcalloc(evs.n + 1, sizeof *kvs);
	for (i = 0; i < evs.n; i++)
		etcd_kv_of(&evs.v[i], &kvs[i], !ar->keys_only);
	ar->done(ar->arg, (long)evs.n, kvs, more, NULL);
	free(kvs);
	etcd_evs_free(&evs);
	free(ar);
}

static int
etcd_aread(struct store_etcd *e, const char *beg64, const char *end64,
    uint64_t limit, int keys_only, store_read_done done, void *arg,
    struct store_err *err)
{
	struct etcd_aread	*ar;
	struct buf		 b;
	int			 rc;

	ar = xcalloc(1, sizeof *ar);
	ar->e = e;
	ar->limit = limit;
	ar->keys_only = keys_only;
	ar->done = done;
	ar->arg = arg;
	buf_init(&b);
	etcd_range_body(&b, beg64, end64, 0, end64 != NULL ? limit + 1 : 0,
	    keys_only);
	rc = etcd_http_call_async(&e->http, "/v3/kv/range", buf_cstr(&b),
	    etcd_aread_cb, ar, err);
	buf_free(&b);
	if (rc != 0)
		free(ar);
	return (rc);
}

static int
store_etcd_get_async(struct store *st, const char *key, size_t len,
    store_read_done done, void *arg, struct store_err *err)
{
	char	*k64;
	int	 rc;

	k64 = etcd_key64(E(st), key, len);
	rc = etcd_aread(E(st), k64, NULL, 1, 0, done, arg, err);
	free(k64);
	return (rc);
}

static int
store_etcd_range_async(struct store *st, const struct store_range *r,
    store_read_done done, void *arg, struct store_err *err)
{
	char	*beg64, *end64;
	int	 rc;

	etcd_range_bounds(E(st), r, &beg64, &end64);
	rc = etcd_aread(E(st), beg64, end64, r->limit, r->keys_only ? 1 : 0,
	    done, arg, err);
	free(beg64);
	free(end64);
	return (rc);
}

/* The mod_revision of a range response's first kv, 0 if none. */
static uint64_t
etcd_first_mod(const cJSON *range)
{
	const cJSON	*kvs = cJSON_GetObjectItemCaseSensitive(range, "kvs");

	return (cJSON_GetArraySize(kvs) > 0 ?
	    etcd_u64(cJSON_GetArrayItem(kvs, 0), "mod_revision") : 0);
}

static int
store_etcd_begin(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	cJSON			*reply;

	etcd_evs_clear(&e->overlay, 0);
	e->mark = 0;
	etcd_snap_clear(e);
	if (etcd_range(e, e->sent64, NULL, 0, 0, 1, &reply, err) != 0)
		return (-1);
	st->base_rev = etcd_header_rev(e, reply);
	e->sent_mod = etcd_first_mod(reply);
	cJSON_Delete(reply);
	if (st->base_rev < st->rev)
		st->base_rev = st->rev;
	return (0);
}

static void
etcd_abegin_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct store		*st = arg;
	struct store_etcd	*e = E(st);
	const cJSON		*res, *range, *kvs;
	struct store_err	 e2;
	size_t			 i;

	if (reply == NULL) {
		etcd_snap_clear(e);
		e->begun(e->begun_arg, err);
		return;
	}
	res = cJSON_GetObjectItemCaseSensitive(reply, "responses");
	if ((size_t)cJSON_GetArraySize(res) != e->nsnap + 1) {
		etcd_snap_clear(e);
		store_err_set(&e2, STORE_ERR_INTERNAL, "etcd answered %d "
		    "ranges for %zu", cJSON_GetArraySize(res), e->nsnap + 1);
		e->begun(e->begun_arg, &e2);
		return;
	}
	/*
	 * Events that came meanwhile (st->rev) are from writes after the
	 * read: a metad one moved the sentinel, so the commit will conflict.
	 */
	st->base_rev = etcd_header_rev(e, reply);
	if (st->base_rev < st->rev)
		st->base_rev = st->rev;
	for (i = 0; i <= e->nsnap; i++) {
		range = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res,
		    (int)i), "response_range");
		if (i == 0) {
			e->sent_mod = etcd_first_mod(range);
			continue;
		}
		kvs = cJSON_GetObjectItemCaseSensitive(range, "kvs");
		e->snap[i - 1].found = cJSON_GetArraySize(kvs) > 0 &&
		    etcd_ev_from_kv(e, cJSON_GetArrayItem(kvs, 0), 0,
		    &e->snap[i - 1].ev) == 0;
	}
	e->begun(e->begun_arg, NULL);
}

/*
 * store_begin without blocking: one read-only etcd txn reads the sentinel
 * and the keys at one revision, the batch's base.
 */
static int
store_etcd_begin_async(struct store *st, const struct store_keys *keys,
    store_commit_done done, void *arg, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct buf		 b;
	char			*k64;
	size_t			 i;
	int			 rc;

	etcd_evs_clear(&e->overlay, 0);
	e->mark = 0;
	etcd_snap_clear(e);
	e->begun = done;
	e->begun_arg = arg;
	e->snap = xcalloc(keys->n + 1, sizeof *e->snap);
	buf_init(&b);
	buf_printf(&b, "{\"success\":[{\"request_range\":{\"key\":\"%s\","
	    "\"keys_only\":true}}", e->sent64);
	for (i = 0; i < keys->n; i++) {
		if (etcd_snap_find(e, keys->k[i].key, keys->k[i].len) != NULL)
			continue;
		e->snap[e->nsnap].key = xmemdup(keys->k[i].key,
		    keys->k[i].len);
		e->snap[e->nsnap].key_len = keys->k[i].len;
		e->nsnap++;
		k64 = etcd_key64(e, keys->k[i].key, keys->k[i].len);
		buf_printf(&b, ",{\"request_range\":{\"key\":\"%s\"}}", k64);
		free(k64);
	}
	buf_addstr(&b, "]}");
	rc = etcd_http_call_async(&e->http, "/v3/kv/txn", buf_cstr(&b),
	    etcd_abegin_cb, st, err);
	buf_free(&b);
	if (rc != 0)
		etcd_snap_clear(e);
	return (rc);
}

struct etcd_meta {
	int		 found;
	uint64_t	 version, create_rev;
};

static int
etcd_meta_cb(const struct store_kv *kv, void *arg)
{
	struct etcd_meta	*m = arg;

	m->found = 1;
	m->version = kv->version;
	m->create_rev = kv->create_rev;
	return (0);
}

static int
store_etcd_put(struct store *st, uint64_t rev, uint32_t seq,
    const char *key, size_t len, const void *value, size_t vlen,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct etcd_meta	 m;
	struct etcd_ev		 ev;

	memset(&m, 0, sizeof m);
	if (store_etcd_get(st, key, len, etcd_meta_cb, &m, err) == -1)
		return (-1);
	memset(&ev, 0, sizeof ev);
	ev.rev = rev;
	ev.seq = seq;
	ev.key = xmemdup(key, len);
	ev.key_len = len;
	ev.value = xmemdup(value, vlen);	/* and a NUL after it */
	ev.value_len = vlen;
	ev.version = m.found ? m.version + 1 : 1;
	ev.create_rev = m.found ? m.create_rev : rev;
	ev.mod_rev = rev;
	etcd_evs_push(&e->overlay, &ev);
	*prev_version = m.found ? m.version : 0;
	etcd_kv_of(&ev, meta, 0);
	return (0);
}

static int
store_etcd_del(struct store *st, uint64_t rev, uint32_t seq,
    const char *key, size_t len, int *deleted, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct etcd_meta	 m;
	struct etcd_ev		 ev;

	memset(&m, 0, sizeof m);
	*deleted = 0;
	if (store_etcd_get(st, key, len, etcd_meta_cb, &m, err) == -1)
		return (-1);
	if (!m.found)
		return (0);
	memset(&ev, 0, sizeof ev);
	ev.rev = ev.mod_rev = rev;
	ev.seq = seq;
	ev.deleted = 1;
	ev.key = xmemdup(key, len);
	ev.key_len = len;
	etcd_evs_push(&e->overlay, &ev);
	*deleted = 1;
	return (0);
}

static int
store_etcd_mark(struct store *st, struct store_err *err)
{
	E(st)->mark = E(st)->overlay.n;
	return (0);
}

static int
store_etcd_undo(struct store *st, struct store_err *err)
{
	etcd_evs_clear(&E(st)->overlay, E(st)->mark);
	return (0);
}

static void
store_etcd_rollback(struct store *st)
{
	etcd_evs_clear(&E(st)->overlay, 0);
}

/* The txn body: the sentinel compare, then each key's last write. */
static void
etcd_txn_body(struct store_etcd *e, struct buf *b)
{
	const struct etcd_ev	*ev;
	char			*k64, *v64;
	size_t			 i;

	buf_printf(b, "{\"compare\":[{\"target\":\"MOD\",\"key\":\"%s\","
	    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}],"
	    "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"\"}}",
	    e->sent64, e->sent_mod, e->sent64);
	for (i = e->overlay.head; i < e->overlay.n; i++) {
		ev = &e->overlay.v[i];
		if (etcd_overlay_find(e, ev->key, ev->key_len) != ev)
			continue;	/* a later write of the key wins */
		k64 = etcd_key64(e, ev->key, ev->key_len);
		if (ev->deleted)
			buf_printf(b, ",{\"request_delete_range\":{\"key\":"
			    "\"%s\"}}", k64);
		else {
			v64 = etcd_b64(ev->value, ev->value_len);
			buf_printf(b, ",{\"request_put\":{\"key\":\"%s\","
			    "\"value\":\"%s\"}}", k64, v64);
			free(v64);
		}
		free(k64);
	}
	buf_addstr(b, "]}");
}

/* What etcd answered to a write's txn: landed (st->commit_rev), or not. */
static int
etcd_txn_result(struct store *st, const cJSON *reply, struct store_err *err)
{
	uint64_t	 got;

	got = etcd_header_rev(E(st), reply);
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply,
	    "succeeded")))
		return (store_err_set(err, STORE_ERR_CONFLICT, "etcd moved "
		    "on since rev %" PRIu64 " (another writer)", st->base_rev));
	st->commit_rev = got;
	return (0);
}

/*
 * Writes commit with store_etcd_commit_async(); a batch committed here
 * wrote nothing (a compaction's).
 */
static int
store_etcd_commit(struct store *st, uint64_t rev, struct store_err *err)
{
	struct store_etcd	*e = E(st);

	if (e->overlay.n == e->overlay.head)
		return (0);
	etcd_evs_clear(&e->overlay, 0);
	return (store_err_set(err, STORE_ERR_INTERNAL, "etcd writes commit "
	    "asynchronously"));
}

struct etcd_acommit {
	struct store		*st;
	store_commit_done	 done;
	void			*arg;
};

static void
etcd_acommit_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_acommit	*ac = arg;
	struct store_err	 e2;

	if (reply == NULL)
		ac->done(ac->arg, err);
	else if (etcd_txn_result(ac->st, reply, &e2) != 0)
		ac->done(ac->arg, &e2);
	else
		ac->done(ac->arg, NULL);
	free(ac);
}

static int
store_etcd_commit_async(struct store *st, uint64_t rev,
    store_commit_done done, void *arg, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct etcd_acommit	*ac;
	struct buf		 b;
	int			 rc;

	if (e->overlay.n == e->overlay.head)
		return (store_err_set(err, STORE_ERR_INTERNAL, "a commit "
		    "with nothing written"));
	ac = xcalloc(1, sizeof *ac);
	ac->st = st;
	ac->done = done;
	ac->arg = arg;
	buf_init(&b);
	etcd_txn_body(e, &b);
	rc = etcd_http_call_async(&e->http, "/v3/kv/txn", buf_cstr(&b),
	    etcd_acommit_cb, ac, err);
	buf_free(&b);
	etcd_evs_clear(&e->overlay, 0);
	if (rc != 0)
		free(ac);
	return (rc);
}

static int
store_etcd_compact(struct store *st, uint64_t rev, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	char			 body[96];
	cJSON			*reply;

	snprintf(body, sizeof body, "{\"revision\":\"%" PRIu64 "\"}", rev);
	if (etcd_http_call(&e->http, "/v3/kv/compaction", body, &reply,
	    err) != 0)
		return (err->code == STORE_ERR_COMPACTED ? 0 : -1);
	cJSON_Delete(reply);
	return (0);
}

static int
store_etcd_stats(struct store *st, struct store_stats *ss,
    struct store_err *err)
{
	struct store_etcd	*e = E(st);
	cJSON			*reply;
	unsigned		 i;

	if (etcd_range(e, e->kbeg64, e->kend64, 0, 0, 2, &reply, err) != 0)
		return (-1);
	ss->keys = etcd_u64(reply, "count");
	cJSON_Delete(reply);
	if (etcd_http_call(&e->http, "/v3/maintenance/status", "{}", &reply,
	    err) != 0)
		return (-1);
	ss->db_bytes = etcd_u64(reply, "dbSize");
	cJSON_Delete(reply);
	for (i = 0; i < e->http.nep; i++) {
		etcd_http_probe(&e->http, i);
		snprintf(ss->endpoint[i].url, sizeof ss->endpoint[i].url,
		    "%s", e->http.ep[i].url);
		ss->endpoint[i].healthy = e->http.ep[i].healthy;
	}
	ss->nendpoints = e->http.nep;
	return (0);
}

/* The lowest revision etcd still has: a binary search over ranges. */
static int
etcd_find_compact_rev(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	uint64_t		 lo = 1, hi = st->rev, mid;
	cJSON			*reply;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (etcd_range(e, e->sent64, NULL, mid, 0, 2, &reply,
		    err) == 0) {
			cJSON_Delete(reply);
			hi = mid;
		} else if (err->code == STORE_ERR_COMPACTED)
			lo = mid + 1;
		else
			return (-1);
	}
	st->compact_rev = lo > 1 ? lo : 0;
	return (0);
}

static int
etcd_names(struct store_etcd *e, const char *prefix, struct store_err *err)
{
	size_t	 n = strlen(prefix);

	if (n + 4 > ETCD_PREFIX_MAX)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd prefix "
		    "of %zu bytes (the limit is %d)", n, ETCD_PREFIX_MAX - 4));
	snprintf(e->prefix, sizeof e->prefix, "%sk/", prefix);
	e->prefix_len = n + 2;
	snprintf(e->sentinel, sizeof e->sentinel, "%srev", prefix);
	e->kbeg64 = etcd_b64(e->prefix, e->prefix_len);
	e->kend64 = etcd_prefix_end64(e->prefix, e->prefix_len);
	e->sent64 = etcd_b64(e->sentinel, strlen(e->sentinel));
	e->wbeg64 = etcd_b64(prefix, n);
	e->wend64 = etcd_prefix_end64(prefix, n);
	return (0);
}

static void store_etcd_close(struct store *);

static int
store_etcd_open(struct store *st, const char *arg,
    const struct store_options *opts, struct store_err *err)
{
	struct store_etcd	*e;

	e = xcalloc(1, sizeof *e);
	e->st = st;
	e->opts = *opts;
	buf_init(&e->wbuf);
	st->impl = e;
	if (etcd_names(e, opts->prefix != NULL ? opts->prefix :
	    ETCD_PREFIX_DEFAULT, err) != 0 ||
	    etcd_http_init(&e->http, arg, opts->base, err) != 0 ||
	    store_etcd_begin(st, err) != 0 ||
	    (st->rev = st->base_rev, etcd_find_compact_rev(st, err)) != 0) {
		store_etcd_close(st);
		return (-1);
	}
	e->cache_from = st->rev + 1;
	e->before_cache = e->sent_mod;
	if (opts->base != NULL && store_etcd_watch_start(e, err) != 0) {
		store_etcd_close(st);
		return (-1);
	}
	return (0);
}

static void
store_etcd_close(struct store *st)
{
	struct store_etcd	*e = E(st);

	if (e == NULL)
		return;
	store_etcd_watch_stop(e);
	etcd_evs_clear(&e->overlay, 0);
	free(e->overlay.v);
	etcd_snap_clear(e);
	etcd_evs_clear(&e->cache, 0);
	free(e->cache.v);
	etcd_http_close(&e->http);
	buf_free(&e->wbuf);
	free(e->kbeg64);
	free(e->kend64);
	free(e->sent64);
	free(e->wbeg64);
	free(e->wend64);
	free(e);
	st->impl = NULL;
}

const struct store_backend store_etcd_backend = {
	"etcd",
	store_etcd_open,
	store_etcd_close,
	store_etcd_get,
	store_etcd_range,
	store_etcd_begin,
	store_etcd_put,
	store_etcd_del,
	store_etcd_mark,
	store_etcd_undo,
	store_etcd_commit,
	store_etcd_rollback,
	store_etcd_history,
	store_etcd_compact,
	store_etcd_stats,
	STORE_CAP_PER_REQUEST,
	store_etcd_get_async,
	store_etcd_range_async,
	store_etcd_commit_async,
	store_etcd_begin_async
};
