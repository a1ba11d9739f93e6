/*
 * The etcd backend's batches (see store_etcd.h): store_begin reads the
 * sentinel and the keys the batch names at one revision, the batch's
 * writes are buffered in an overlay, and store_commit sends them as one
 * etcd txn guarded by the sentinel's mod_revision.  Reads outside a batch
 * are in store_etcd_read.c, the event stream and history in
 * store_etcd_watch.c.
 */
#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* The newest overlay entry for key, or NULL. */
const struct etcd_ev *
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
	e->nsnap = e->snap_next = e->snap_chunk = 0;
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
	struct store_kv		 kv;

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
	return (store_err_set(err, STORE_ERR_INTERNAL, "etcd: key \"%.*s\" "
	    "was not read with the batch", (int)(len > 64 ? 64 : len), key));
}

/* A field of a range response's first kv, 0 if there is none. */
uint64_t
etcd_first_u64(const cJSON *range, const char *name)
{
	const cJSON	*kvs = cJSON_GetObjectItemCaseSensitive(range, "kvs");

	return (cJSON_GetArraySize(kvs) > 0 ?
	    etcd_u64(cJSON_GetArrayItem(kvs, 0), name) : 0);
}

static uint64_t
etcd_first_mod(const cJSON *range)
{
	return (etcd_first_u64(range, "mod_revision"));
}

static int	etcd_begin_send(struct store_etcd *, struct store_err *);

static void
etcd_begin_fail(struct store_etcd *e, const struct store_err *err)
{
	store_done	 done = e->begun;

	etcd_snap_clear(e);
	e->begun = NULL;
	done(e->begun_arg, err);
}

/* A chunk of the batch's reads came: keep them, read the next chunk. */
static void
etcd_begin_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct store_etcd	*e = arg;
	struct store		*st = e->st;
	const cJSON		*res, *range, *kvs;
	struct store_err	 e2;
	size_t			 i, first = e->snap_next == 0, n;
	store_done		 done;

	if (reply == NULL) {
		etcd_begin_fail(e, err);
		return;
	}
	res = cJSON_GetObjectItemCaseSensitive(reply, "responses");
	n = (size_t)cJSON_GetArraySize(res);
	if (n != e->snap_chunk + first) {
		store_err_set(&e2, STORE_ERR_INTERNAL, "etcd answered %zu "
		    "ranges for %zu", n, e->snap_chunk + first);
		etcd_begin_fail(e, &e2);
		return;
	}
	if (first) {
		/*
		 * Events that came meanwhile (st->rev) are from writes after
		 * the read: a metad one moved the sentinel, so the commit will
		 * conflict.
		 */
		st->base_rev = e->read_rev = etcd_header_rev(e, reply);
		if (st->base_rev < st->rev)
			st->base_rev = st->rev;
		range = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(res, 0), "response_range");
		e->sent_mod = etcd_first_mod(range);
		e->sent_ver = etcd_first_u64(range, "version");
	}
	for (i = first; i < n; i++) {
		struct etcd_snap *sn = &e->snap[e->snap_next++];

		range = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res,
		    (int)i), "response_range");
		kvs = cJSON_GetObjectItemCaseSensitive(range, "kvs");
		sn->found = cJSON_GetArraySize(kvs) > 0 &&
		    etcd_ev_from_kv(e, cJSON_GetArrayItem(kvs, 0), 0,
		    &sn->ev) == 0;
	}
	if (e->snap_next < e->nsnap) {
		if (etcd_begin_send(e, &e2) != 0)
			etcd_begin_fail(e, &e2);
		return;
	}
	done = e->begun;
	e->begun = NULL;
	done(e->begun_arg, NULL);
}

/*
 * One read-only etcd txn of the batch's reads: the first reads the
 * sentinel and its revision is the batch's base; the others (past
 * ETCD_TXN_OPS_MAX keys) read at that base.
 */
static int
etcd_begin_send(struct store_etcd *e, struct store_err *err)
{
	struct buf	 b;
	char		*k64;
	size_t		 i, end;
	int		 rc, first = e->snap_next == 0;

	buf_init(&b);
	buf_addstr(&b, "{\"success\":[");
	if (first)
		buf_printf(&b, "{\"request_range\":{\"key\":\"%s\","
		    "\"keys_only\":true}}", e->sent64);
	end = e->snap_next + ETCD_TXN_OPS_MAX - first;
	if (end > e->nsnap)
		end = e->nsnap;
	e->snap_chunk = end - e->snap_next;
	for (i = e->snap_next; i < end; i++) {
		k64 = etcd_key64(e, e->snap[i].key, e->snap[i].key_len);
		buf_printf(&b, "%s{\"request_range\":{\"key\":\"%s\"",
		    i > e->snap_next || first ? "," : "", k64);
		if (!first)
			buf_printf(&b, ",\"revision\":\"%" PRIu64 "\"",
			    e->read_rev);
		buf_addstr(&b, "}}");
		free(k64);
	}
	buf_addstr(&b, "]}");
	rc = etcd_http_call_async(&e->http, "/v3/kv/txn", buf_cstr(&b),
	    etcd_begin_cb, e, err);
	buf_free(&b);
	return (rc);
}

/* Open a batch: read the sentinel and the keys at one revision, the base. */
static void
store_etcd_begin(struct store *st, const struct store_keys *keys,
    store_done done, void *arg)
{
	struct store_etcd	*e = E(st);
	struct store_err	 err;
	size_t			 i;

	etcd_evs_clear(&e->overlay, 0);
	e->mark = e->marked = 0;
	e->compact_to = 0;
	e->compact_begin = st->compact_rev;
	etcd_snap_clear(e);
	e->begun = done;
	e->begun_arg = arg;
	e->snap = xcalloc(keys->n + 1, sizeof *e->snap);
	for (i = 0; i < keys->n; i++) {
		if (etcd_snap_find(e, keys->k[i].key, keys->k[i].len) != NULL)
			continue;
		e->snap[e->nsnap].key = xmemdup(keys->k[i].key,
		    keys->k[i].len);
		e->snap[e->nsnap].key_len = keys->k[i].len;
		e->nsnap++;
	}
	if (etcd_begin_send(e, &err) != 0)
		etcd_begin_fail(e, &err);
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

/*
 * A write of key at rev into the batch's overlay: what the key holds in the
 * batch now (m), then the event.  -1 on a store error.
 */
static int
etcd_overlay_write(struct store *st, uint64_t rev, uint32_t seq,
    const char *key, size_t len, struct etcd_meta *m, struct etcd_ev *ev,
    struct store_err *err)
{
	memset(m, 0, sizeof *m);
	if (store_etcd_get(st, key, len, etcd_meta_cb, m, err) == -1)
		return (-1);
	memset(ev, 0, sizeof *ev);
	ev->rev = ev->mod_rev = rev;
	ev->seq = seq;
	ev->key_len = len;
	return (0);
}

static int
store_etcd_put(struct store *st, uint64_t rev, uint32_t seq,
    const char *key, size_t len, const void *value, size_t vlen,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	struct etcd_meta	 m;
	struct etcd_ev		 ev;

	if (etcd_overlay_write(st, rev, seq, key, len, &m, &ev, err) != 0)
		return (-1);
	ev.key = xmemdup(key, len);
	ev.value = xmemdup(value, vlen);	/* and a NUL after it */
	ev.value_len = vlen;
	ev.version = m.found ? m.version + 1 : 1;
	ev.create_rev = m.found ? m.create_rev : rev;
	etcd_evs_push(&E(st)->overlay, &ev);
	*prev_version = m.found ? m.version : 0;
	etcd_kv_of(&ev, meta, 0);
	return (0);
}

static int
store_etcd_del(struct store *st, uint64_t rev, uint32_t seq,
    const char *key, size_t len, int *deleted, struct store_err *err)
{
	struct etcd_meta	 m;
	struct etcd_ev		 ev;

	*deleted = 0;
	if (etcd_overlay_write(st, rev, seq, key, len, &m, &ev, err) != 0)
		return (-1);
	if (!m.found)
		return (0);
	ev.deleted = 1;
	ev.key = xmemdup(key, len);
	etcd_evs_push(&E(st)->overlay, &ev);
	*deleted = 1;
	return (0);
}

static int
store_etcd_mark(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);

	e->mark = e->overlay.n;
	e->compact_to_mark = e->compact_to;
	e->compact_rev_mark = st->compact_rev;
	e->marked = 1;
	return (0);
}

static int
store_etcd_undo(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);

	if (!e->marked)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "undo without a mark"));
	etcd_evs_clear(&e->overlay, e->mark);
	e->compact_to = e->compact_to_mark;
	st->compact_rev = e->compact_rev_mark;
	e->marked = 0;
	return (0);
}

/* The batch just committed, again: its snapshot stays, nothing written. */
static void
store_etcd_reopen(struct store *st)
{
	struct store_etcd	*e = E(st);

	etcd_evs_clear(&e->overlay, 0);
	e->mark = 0;
	e->compact_to = 0;
	e->compact_begin = st->compact_rev;
}

static void
store_etcd_rollback(struct store *st)
{
	etcd_evs_clear(&E(st)->overlay, 0);
	E(st)->compact_to = 0;
	st->compact_rev = E(st)->compact_begin;
}

/* Compaction is etcd's own, of the whole cluster, at commit. */
static int
store_etcd_compact(struct store *st, uint64_t rev, struct store_err *err)
{
	E(st)->compact_to = rev;
	return (0);
}

/*
 * The lowest revision whose events etcd still has: a binary search over
 * ranges finds its compaction point C, whose state it keeps but not its
 * events (a delete at C is gone), so history starts at C + 1.
 */
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
	/* etcd's compaction at lo keeps no event of lo (a delete's). */
	st->compact_rev = lo > 1 ? lo + 1 : 0;
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

/* Where etcd is now: the store's rev, and the sentinel's mod_revision. */
static int
etcd_load(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	cJSON			*reply;

	if (etcd_range(e, e->sent64, NULL, 0, 0, 1, &reply, err) != 0)
		return (-1);
	st->rev = etcd_header_rev(e, reply);
	e->sent_mod = etcd_first_mod(reply);
	cJSON_Delete(reply);
	return (0);
}

static void store_etcd_close(struct store *);

static int
store_etcd_open(struct store *st, const char *arg,
    const struct store_options *opts, struct store_err *err)
{
	struct store_etcd	*e;

	e = xcalloc(1, sizeof *e);
	LIST_INIT(&e->replays);
	e->st = st;
	e->opts = *opts;
	if (getrandom(&e->id, sizeof e->id, 0) != sizeof e->id)
		e->id = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	buf_init(&e->wbuf);
	st->impl = e;
	if (etcd_names(e, opts->prefix != NULL ? opts->prefix :
	    ETCD_PREFIX_DEFAULT, err) != 0 ||
	    etcd_http_init(&e->http, arg, opts->base, err) != 0 ||
	    etcd_load(st, err) != 0 || etcd_find_compact_rev(st, err) != 0) {
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
	store_etcd_replays_free(e);
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

/*
 * One write request a batch: etcd gives each txn a revision of its own,
 * and a request's writes must share one.
 */
const struct store_backend store_etcd_backend = {
	"etcd",
	1,
	store_etcd_open,
	store_etcd_close,
	store_etcd_read_get,
	store_etcd_read_range,
	store_etcd_read_history,
	store_etcd_read_stats,
	store_etcd_begin,
	store_etcd_get,
	store_etcd_put,
	store_etcd_del,
	store_etcd_mark,
	store_etcd_undo,
	store_etcd_compact,
	store_etcd_commit,
	store_etcd_rollback,
	store_etcd_reopen,
	NULL,
	store_etcd_read_key_history,
	NULL,
	NULL, NULL, NULL, NULL, NULL	/* leases: not yet on etcd */
};
