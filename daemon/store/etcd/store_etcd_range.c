/*
 * The etcd backend's range delete (store.h: store_delete_range()).  The
 * batch named the range (store_keys.rkey): its begin reads the range's keys
 * at the base (keys only) into the batch's snapshot, so that each found key
 * is compared by its mod_revision in the txn as any key read is, and one
 * more compare on the whole range fails the txn if a key was created in it
 * since.  The deletes are one etcd DeleteRange of the range in the txn: one
 * etcd revision, atomic, one delete event per key (etcd's own), each key
 * detached from its lease by etcd.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "store/etcd/store_etcd_commit.h"
#include "store/etcd/etcd_pb.h"
#include "store/store_range.h"

#define E(st)	((struct store_etcd *)(st)->impl)

static char *
etcd_dup(const char *p, size_t n)
{
	char	*s = xmalloc(n + 1);

	memcpy(s, p, n);
	s[n] = '\0';
	return (s);
}

void
etcd_batch_range_set(struct etcd_batch *b, const struct store_keys *ks)
{
	if (ks->rkey == NULL)
		return;
	b->has_range = 1;
	b->rkey = etcd_dup(ks->rkey, ks->rkey_len);
	b->rkey_len = ks->rkey_len;
	if (ks->rend != NULL) {
		b->rend = etcd_dup(ks->rend, ks->rend_len);
		b->rend_len = ks->rend_len;
	}
}

/*
 * [key, end) of user keys as etcd keys, raw, into lo and hi: PREFIX key,
 * and PREFIX end, or the end of PREFIX (never all 0xff: it ends "k/").
 */
static void
etcd_range_raw(struct store_etcd *e, const char *key, size_t klen,
    const char *end, size_t elen, struct buf *lo, struct buf *hi)
{
	char	 pe[ETCD_PREFIX_MAX];
	size_t	 n;

	buf_add(lo, e->prefix, e->prefix_len);
	buf_add(lo, key, klen);
	if (end != NULL) {
		buf_add(hi, e->prefix, e->prefix_len);
		buf_add(hi, end, elen);
	} else {
		n = store_prefix_end(e->prefix, e->prefix_len, pe);
		buf_add(hi, pe, n);
	}
}

static int
etcd_bytes_lt(const char *a, size_t al, const char *b, size_t bl)
{
	size_t	 n = al < bl ? al : bl;
	int	 c = memcmp(a, b, n);

	return (c < 0 || (c == 0 && al < bl));
}

static int
etcd_in_range(const char *k, size_t kl, const char *key, size_t klen,
    const char *end, size_t elen)
{
	return (!etcd_bytes_lt(k, kl, key, klen) &&
	    (end == NULL || etcd_bytes_lt(k, kl, end, elen)));
}

/* The range's keys at the batch's read rev came: into the snapshot. */
static void
etcd_begin_range_cb(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct etcd_batch	*b = arg;
	struct store_etcd	*e = b->e;
	struct etcd_evs		 evs;
	struct etcd_snap	*sn;
	size_t			 i, j, n0 = b->nsnap;
	int			 more, dup;

	if (reply == NULL) {
		etcd_begin_end(b, err);
		return;
	}
	if (b->read_rev == 0) {
		b->base_rev = b->read_rev = etcd_header_rev(e, reply);
		if (b->base_rev < e->st->head.rev)
			b->base_rev = e->st->head.rev;
	}
	memset(&evs, 0, sizeof evs);
	etcd_reply_kvs(e, reply, UINT64_MAX, &evs, &more);
	b->snap = xrealloc(b->snap, (n0 + (evs.n - evs.head) + 1) *
	    sizeof *b->snap);
	for (i = evs.head; i < evs.n; i++) {
		for (j = 0, dup = 0; j < n0 && !dup; j++)
			dup = b->snap[j].key_len == evs.v[i].key_len &&
			    memcmp(b->snap[j].key, evs.v[i].key,
			    evs.v[i].key_len) == 0;
		if (dup)
			continue;	/* read already, at the same rev */
		sn = &b->snap[b->nsnap++];
		memset(sn, 0, sizeof *sn);
		sn->key = etcd_dup(evs.v[i].key, evs.v[i].key_len);
		sn->key_len = evs.v[i].key_len;
		sn->found = 1;
		sn->ev = evs.v[i];
		memset(&evs.v[i], 0, sizeof evs.v[i]);
	}
	etcd_evs_free(&evs);
	etcd_begin_end(b, NULL);
}

int
etcd_begin_range(struct etcd_batch *b, struct store_err *err)
{
	struct store_etcd	*e = b->e;
	struct buf		 lo, hi, body;
	char			*lo64, *hi64;
	int			 rc;

	b->range_read = 1;
	buf_init(&lo);
	buf_init(&hi);
	buf_init(&body);
	etcd_range_raw(e, b->rkey, b->rkey_len, b->rend, b->rend_len, &lo,
	    &hi);
	lo64 = etcd_b64(lo.data, lo.len);
	hi64 = etcd_b64(hi.data, hi.len);
	etcd_range_body(&body, lo64, hi64, b->read_rev, 0, 1);
	rc = etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&body),
	    etcd_begin_range_cb, b, err);
	free(lo64);
	free(hi64);
	buf_free(&lo);
	buf_free(&hi);
	buf_free(&body);
	return (rc);
}

static int
etcd_snapp_cmp(const void *a, const void *b)
{
	const struct etcd_snap	*x = *(const struct etcd_snap *const *)a;
	const struct etcd_snap	*y = *(const struct etcd_snap *const *)b;

	if (etcd_bytes_lt(x->key, x->key_len, y->key, y->key_len))
		return (-1);
	return (etcd_bytes_lt(y->key, y->key_len, x->key, x->key_len));
}

int
store_etcd_del_range(struct store *st, uint64_t rev, const char *key,
    size_t klen, const char *end, size_t elen, uint64_t *n,
    struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct etcd_batch	*b = e->cur;
	struct etcd_snap	**v;
	size_t			 i, nv = 0, from = e->overlay.n;
	int			 deleted;

	*n = 0;
	if (b == NULL || !b->has_range || klen != b->rkey_len ||
	    memcmp(key, b->rkey, klen) != 0 || (end == NULL) !=
	    (b->rend == NULL) || (end != NULL && (elen != b->rend_len ||
	    memcmp(end, b->rend, elen) != 0)))
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd: the "
		    "range was not read with the batch"));
	v = xcalloc(b->nsnap + 1, sizeof *v);
	for (i = 0; i < b->nsnap; i++)
		if (b->snap[i].found && etcd_in_range(b->snap[i].key,
		    b->snap[i].key_len, key, klen, end, elen))
			v[nv++] = &b->snap[i];
	qsort(v, nv, sizeof *v, etcd_snapp_cmp);
	for (i = 0; i < nv; i++) {
		if (st->backend->del(st, rev, (uint32_t)*n, v[i]->key,
		    v[i]->key_len, &deleted, err) != 0) {
			free(v);
			return (-1);
		}
		*n += deleted;
	}
	free(v);
	if (*n > 0) {
		e->drange = 1;
		e->drange_from = from;
		e->drange_to = e->overlay.n;
	}
	return (0);
}

int
etcd_drange_skip(const struct store_etcd *e, size_t i)
{
	return (e->drange && i > e->drange_from && i < e->drange_to);
}

int
etcd_drange_first(const struct store_etcd *e, size_t i)
{
	return (e->drange && i == e->drange_from);
}

/* The DeleteRange of the batch's range delete, a success op. */
void
etcd_pb_drange(struct buf *out, struct store_etcd *e,
    const struct etcd_batch *b)
{
	struct buf	 lo, hi;
	size_t		 op, w;

	buf_init(&lo);
	buf_init(&hi);
	etcd_range_raw(e, b->rkey, b->rkey_len, b->rend, b->rend_len, &lo,
	    &hi);
	op = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
	w = etcd_pb_begin(out, ETCD_PB_OP_DELETE);
	etcd_pb_put_bytes(out, ETCD_PB_DELETE_KEY, lo.data,
	    lo.len);
	etcd_pb_put_bytes(out, ETCD_PB_DELETE_RANGE_END, hi.data,
	    hi.len);
	etcd_pb_end(out, w);
	etcd_pb_end(out, op);
	buf_free(&lo);
	buf_free(&hi);
}

/* No key of the batch's range written after its read: a compare. */
void
etcd_pb_range_cmp(struct buf *out, struct store_etcd *e,
    const struct etcd_batch *b)
{
	struct buf	 lo, hi;
	size_t		 m;

	buf_init(&lo);
	buf_init(&hi);
	etcd_range_raw(e, b->rkey, b->rkey_len, b->rend, b->rend_len, &lo,
	    &hi);
	m = etcd_pb_begin(out, ETCD_PB_TXN_COMPARE);
	etcd_pb_put_int(out, ETCD_PB_CMP_TARGET, ETCD_PB_CMP_TARGET_MOD);
	etcd_pb_put_bytes(out, ETCD_PB_CMP_KEY, lo.data, lo.len);
	etcd_pb_put_bytes(out, ETCD_PB_CMP_RANGE_END, hi.data,
	    hi.len);
	etcd_pb_put_int(out, ETCD_PB_CMP_MOD, b->read_rev + 1);
	etcd_pb_put_int(out, ETCD_PB_CMP_RESULT, ETCD_PB_CMP_LESS);
	etcd_pb_end(out, m);
	buf_free(&lo);
	buf_free(&hi);
}
