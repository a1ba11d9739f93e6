/*
 * The etcd backend's batches (see store_etcd.h): store_begin reads the
 * keys the batch names at one revision (but blind ones), the batch's
 * writes are buffered in an overlay, and store_commit sends them as one
 * etcd txn guarded by those keys' mod_revisions (store_etcd_commit.c).
 * Up to ETCD_SLOTS batches are out at once; one at most is open.  Reads
 * outside a batch are in store_etcd_read.c, the event stream and history
 * in store_etcd_watch.c.
 */
#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "store/etcd/store_etcd.h"

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

void
etcd_batch_free(struct etcd_batch *b)
{
	size_t	 i;

	if (b == NULL)
		return;
	for (i = 0; i < b->nsnap; i++) {
		free(b->snap[i].key);
		free(b->snap[i].rec);
		etcd_ev_free(&b->snap[i].ev);
	}
	free(b->snap);
	free(b->rkey);
	free(b->rend);
	free(b);
}

static const struct etcd_snap *
etcd_snap_find(const struct etcd_batch *b, const char *key, size_t len)
{
	size_t	 i;

	for (i = 0; i < b->nsnap; i++) {
		if (b->snap[i].key_len == len &&
		    memcmp(b->snap[i].key, key, len) == 0)
			return (&b->snap[i]);
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
	if (st->in_batch && e->cur != NULL &&
	    (sn = etcd_snap_find(e->cur, key, len)) != NULL) {
		if (sn->unknown)
			return (store_err_set(err, STORE_ERR_UNAVAILABLE,
			    "the write was applied at rev %" PRIu64 ", but "
			    "what its key held before could not be read back "
			    "from etcd", e->cur->base_rev + 1));
		if (!sn->found)
			return (0);	/* or blind: not read */
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

static int	etcd_begin_send(struct etcd_batch *, struct store_err *);

/* The batch's reads are in (or failed): it opens, or ends. */
void
etcd_begin_end(struct etcd_batch *b, const struct store_err *err)
{
	struct store_etcd	*e = b->e;
	struct store		*st = e->st;

	LIST_REMOVE(b, entry);
	if (err != NULL) {
		b->begun(b->begun_arg, err);
		etcd_batch_free(b);
		return;
	}
	etcd_evs_clear(&e->overlay, 0);
	etcd_idem_clear(e);
	e->mark = e->marked = e->drange = 0;
	e->compact_to = 0;
	e->compact_begin = st->head.compact_rev;
	e->cur = b;
	st->head.base_rev = b->base_rev;
	/* The caller commits the batch (which takes it) or rolls it back. */
	b->begun(b->begun_arg, NULL);
}

/* A chunk of the batch's reads came: keep them, read the next chunk. */
static void
etcd_begin_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_batch	*b = arg;
	struct store_etcd	*e = b->e;
	const cJSON		*res, *range, *kvs;
	struct etcd_snap	*sn;
	struct store_err	 e2;
	size_t			 i, n, first = b->read_rev == 0;

	if (reply == NULL) {
		etcd_begin_end(b, err);
		return;
	}
	res = cJSON_GetObjectItemCaseSensitive(reply, "responses");
	n = (size_t)cJSON_GetArraySize(res);
	if (n != b->snap_chunk) {
		store_err_set(&e2, STORE_ERR_INTERNAL, "etcd answered %zu "
		    "ranges for %zu", n, b->snap_chunk);
		etcd_begin_end(b, &e2);
		return;
	}
	if (first) {
		b->base_rev = b->read_rev = etcd_header_rev(e, reply);
		if (b->base_rev < e->st->head.rev)
			b->base_rev = e->st->head.rev;
	}
	for (i = 0; i < n; i++) {
		while (b->snap[b->snap_next].blind)
			b->snap_next++;
		sn = &b->snap[b->snap_next++];
		range = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res,
		    (int)i), "response_range");
		kvs = cJSON_GetObjectItemCaseSensitive(range, "kvs");
		if (sn->idem) {
			etcd_idem_snap(sn, kvs);
			continue;
		}
		sn->found = cJSON_GetArraySize(kvs) > 0 &&
		    etcd_ev_from_kv(e, cJSON_GetArrayItem(kvs, 0), 0,
		    &sn->ev) == 0;
	}
	if (etcd_begin_send(b, &e2) != 0)
		etcd_begin_end(b, &e2);
}

/*
 * One read-only etcd txn of the batch's reads (blind keys are not read):
 * the revision of the first is the batch's base; the others (past
 * ETCD_TXN_OPS_MAX keys) read at that base.  Done when all are read.
 */
static int
etcd_begin_send(struct etcd_batch *b, struct store_err *err)
{
	struct store_etcd	*e = b->e;
	struct buf		 b64;
	char			*k64;
	size_t			 i;
	int			 rc;

	while (b->snap_next < b->nsnap && b->snap[b->snap_next].blind)
		b->snap_next++;
	if (b->snap_next == b->nsnap && b->has_range && !b->range_read)
		return (etcd_begin_range(b, err));
	if (b->snap_next == b->nsnap) {
		if (b->read_rev == 0)	/* nothing to read */
			b->base_rev = store_read_rev(e->st);
		etcd_begin_end(b, NULL);
		return (0);
	}
	buf_init(&b64);
	buf_addstr(&b64, "{\"success\":[");
	b->snap_chunk = 0;
	for (i = b->snap_next; i < b->nsnap &&
	    b->snap_chunk < ETCD_TXN_OPS_MAX; i++) {
		if (b->snap[i].blind)
			continue;
		k64 = (b->snap[i].idem ? etcd_idem_key64 : etcd_key64)(e,
		    b->snap[i].key, b->snap[i].key_len);
		buf_printf(&b64, "%s{\"request_range\":{\"key\":\"%s\"",
		    b->snap_chunk > 0 ? "," : "", k64);
		if (b->read_rev != 0)
			buf_printf(&b64, ",\"revision\":\"%" PRIu64 "\"",
			    b->read_rev);
		buf_addstr(&b64, "}}");
		free(k64);
		b->snap_chunk++;
	}
	buf_addstr(&b64, "]}");
	rc = etcd_call_async(&e->client, "/v3/kv/txn", buf_cstr(&b64),
	    etcd_begin_cb, b, err);
	buf_free(&b64);
	return (rc);
}

/*
 * Open a batch: read the keys it names at one revision, the base.  Other
 * batches may be out meanwhile (store.h); each opens when its reads are
 * in.
 */
static void
store_etcd_begin(struct store *st, const struct store_keys *keys,
    store_done done, void *arg)
{
	struct store_etcd	*e = E(st);
	struct etcd_batch	*b;
	struct etcd_snap	*sn;
	struct store_err	 err;
	size_t			 i;

	b = xcalloc(1, sizeof *b);
	b->e = e;
	b->begun = done;
	b->begun_arg = arg;
	b->snap = xcalloc(keys->n + 1, sizeof *b->snap);
	for (i = 0; i < keys->n; i++) {
		if ((sn = (struct etcd_snap *)etcd_snap_find(b,
		    keys->k[i].key, keys->k[i].len)) != NULL) {
			sn->blind = sn->blind && keys->k[i].blind;
			continue;
		}
		sn = &b->snap[b->nsnap++];
		sn->key = xmemdup(keys->k[i].key, keys->k[i].len);
		sn->key_len = keys->k[i].len;
		sn->blind = keys->k[i].blind;
		sn->idem = keys->k[i].idem;
	}
	etcd_batch_range_set(b, keys);
	LIST_INSERT_HEAD(&e->begins, b, entry);
	if (etcd_begin_send(b, &err) != 0)
		etcd_begin_end(b, &err);
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
    uint64_t lease, struct store_kv *meta, uint64_t *prev_version,
    struct store_err *err)
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
	ev.lease = lease;
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

/*
 * The lowest revision whose events etcd still has: a binary search over
 * ranges finds its compaction point C, whose state it keeps but not its
 * events (a delete at C is gone), so history starts at C + 1.
 */
static int
etcd_find_compact_rev(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	uint64_t		 lo = 1, hi = st->head.rev, mid;
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
	st->head.compact_rev = lo > 1 ? lo + 1 : 0;
	return (0);
}

static int
etcd_names(struct store_etcd *e, const char *prefix, struct store_err *err)
{
	size_t	 n = strlen(prefix);
	char	 slots[ETCD_PREFIX_MAX];

	if (n + 24 > ETCD_PREFIX_MAX)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd prefix "
		    "of %zu bytes (the limit is %d)", n, ETCD_PREFIX_MAX - 24));
	snprintf(e->prefix, sizeof e->prefix, "%sk/", prefix);
	e->prefix_len = n + 2;
	snprintf(e->sentinel, sizeof e->sentinel, "%srev", prefix);
	snprintf(e->slotpfx, sizeof e->slotpfx, "%ss/%016" PRIx64 "/",
	    prefix, e->id);
	e->kbeg64 = etcd_b64(e->prefix, e->prefix_len);
	e->kend64 = etcd_prefix_end64(e->prefix, e->prefix_len);
	e->sent64 = etcd_b64(e->sentinel, strlen(e->sentinel));
	snprintf(slots, sizeof slots, "%ss/", prefix);
	e->slots64 = etcd_b64(slots, n + 2);
	e->slotsend64 = etcd_prefix_end64(slots, n + 2);
	/*
	 * The stream: the whole prefix, so that st->rev also passes the
	 * revisions of slot writes (a lost write's fence has no user event),
	 * which the view's linearizable reads wait for (etcd_probe_body()).
	 */
	e->wbeg64 = etcd_b64(prefix, n);
	e->wend64 = etcd_prefix_end64(prefix, n);
	return (0);
}

/* The newest slot write of any daemon: store_etcd.h. */
void
etcd_probe_body(struct store_etcd *e, struct buf *b)
{
	buf_printf(b, "{\"key\":\"%s\",\"range_end\":\"%s\",\"limit\":1,"
	    "\"sort_order\":\"DESCEND\",\"sort_target\":\"MOD\","
	    "\"keys_only\":true}", e->slots64, e->slotsend64);
}

/*
 * Where etcd is now: the store's rev, and the newest revision metad wrote
 * (the newest slot write of any daemon; or the sentinel's, which metad
 * wrote before slots), below which history is read back from etcd.
 */
static int
etcd_load(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct buf		 b;
	cJSON			*reply;
	uint64_t		 last;
	int			 rc;

	if (etcd_range(e, e->sent64, NULL, 0, 0, 1, &reply, err) != 0)
		return (-1);
	st->head.rev = etcd_header_rev(e, reply);
	last = etcd_first_u64(reply, "mod_revision");
	cJSON_Delete(reply);
	buf_init(&b);
	etcd_probe_body(e, &b);
	rc = etcd_call_sync(&e->client, "/v3/kv/range", buf_cstr(&b), &reply,
	    err);
	buf_free(&b);
	if (rc != 0)
		return (-1);
	if (etcd_first_u64(reply, "mod_revision") > last)
		last = etcd_first_u64(reply, "mod_revision");
	cJSON_Delete(reply);
	e->before_cache = last;
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
	LIST_INIT(&e->begins);
	LIST_INIT(&e->commits_out);
	LIST_INIT(&e->lcalls);
	LIST_INIT(&e->rwaits);
	e->st = st;
	e->opts = *opts;
	if (getrandom(&e->id, sizeof e->id, 0) != sizeof e->id)
		e->id = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	st->impl = e;
	if (etcd_names(e, opts->prefix != NULL ? opts->prefix :
	    ETCD_PREFIX_DEFAULT, err) != 0 ||
	    etcd_client_init(&e->client, arg, opts, st, err) != 0 ||
	    etcd_load(st, err) != 0 || etcd_find_compact_rev(st, err) != 0) {
		store_etcd_close(st);
		return (-1);
	}
	e->cache_from = st->head.rev + 1;
	if (opts->base != NULL && store_etcd_watch_start(e, err) != 0) {
		store_etcd_close(st);
		return (-1);
	}
	etcd_idem_open(e);
	return (0);
}

static void
store_etcd_close(struct store *st)
{
	struct store_etcd	*e = E(st);
	struct etcd_batch	*b;
	struct store_err	 err;

	if (e == NULL)
		return;
	store_etcd_watch_stop(e);
	store_etcd_replays_free(e);
	etcd_evs_clear(&e->overlay, 0);
	free(e->overlay.v);
	etcd_idem_clear(e);
	buf_free(&e->idem_val);
	if (e->cur != NULL && !e->cur->landed)
		etcd_batch_free(e->cur);
	e->cur = NULL;
	etcd_batch_free(e->last);
	e->last = NULL;
	etcd_evs_clear(&e->cache, 0);
	free(e->cache.v);
	etcd_client_close(&e->client);
	store_etcd_leases_free(e);
	store_etcd_watch_end(e);
	/* What etcd never answered ends so, now that it never will. */
	store_etcd_commits_end(e);
	etcd_idem_close(e);
	while ((b = LIST_FIRST(&e->begins)) != NULL) {
		store_err_set(&err, STORE_ERR_UNAVAILABLE, "the store closed "
		    "before etcd answered");
		etcd_begin_end(b, &err);
	}
	free(e->kbeg64);
	free(e->kend64);
	free(e->sent64);
	free(e->slots64);
	free(e->slotsend64);
	free(e->wbeg64);
	free(e->wend64);
	free(e);
	st->impl = NULL;
}

/*
 * One write request a batch: etcd gives each txn a revision of its own,
 * and a request's writes must share one.  ETCD_SLOTS batches out at once.
 */
const struct store_backend store_etcd_backend = {
	.name = "etcd",
	/* Open and close. */
	.open = store_etcd_open,
	.close = store_etcd_close,
	/* Batches and commits. */
	.batch_max = 1,
	.batches_out = ETCD_SLOTS,
	.ordered = 0,	/* batches land where etcd puts them */
	.begin = store_etcd_begin,
	.get = store_etcd_get,
	.put = store_etcd_put,
	.del = store_etcd_del,
	.del_range = store_etcd_del_range,
	.mark = store_etcd_mark,
	.undo = store_etcd_undo,
	.compact = store_etcd_compact,
	.commit = store_etcd_commit,
	.rollback = store_etcd_rollback,
	.reopen = store_etcd_reopen,
	/* Reads. */
	.read_get = store_etcd_read_get,
	.read_range = store_etcd_read_range,
	/* History. */
	.read_history = store_etcd_read_history,
	.read_key_history = store_etcd_read_key_history,
	/* Leases: reads, and attaching a key in a batch. */
	.read_leases = store_etcd_read_leases,
	.read_lease_keys = store_etcd_read_lease_keys,
	.lease_attach = store_etcd_lease_attach,
	/* Leases: etcd's own (store_etcd_lease.c); no records. */
	.lease_grant = store_etcd_lease_grant,
	.lease_idem_get = store_etcd_lease_idem_get,
	.lease_keepalive = store_etcd_lease_keepalive,
	.lease_get = store_etcd_lease_get,
	.lease_revoke_now = store_etcd_lease_revoke_now,
	.idem_get = store_etcd_idem_get,
	.idem_put = store_etcd_idem_put,
	.idem_fix = store_etcd_idem_fix,
	.lease_count = store_etcd_lease_count,
	/* Status. */
	.read_stats = store_etcd_read_stats,
	.reports = STORE_REPORTS(STORE_REPORT_CALL),
};
