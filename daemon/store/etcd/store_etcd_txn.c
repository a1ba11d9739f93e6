/*
 * The bodies of the etcd backend's write txns (store_etcd_commit.c), in
 * protobuf (etcd_pb.h), for its gRPC API: the txn of a batch, with its
 * compares, its slot's token and its writes; the resolve of a txn whose
 * answer was lost; the read of a landed txn's blind keys; and what a
 * failed txn's range of its slot says.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/etcd/store_etcd_commit.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* The slot's key (in k, of ETCD_SLOT_KEY_MAX bytes): its length. */
static size_t
etcd_slot_key(struct store_etcd *e, int slot, char *k)
{
	int	 n;

	n = snprintf(k, ETCD_SLOT_KEY_MAX, "%s%" PRIu64, e->slotpfx,
	    e->slots[slot].name);
	return (n < 0 ? 0 : (size_t)n < ETCD_SLOT_KEY_MAX ? (size_t)n :
	    ETCD_SLOT_KEY_MAX - 1);
}

/* A bytes field: PREFIX key. */
static void
etcd_pb_key(struct buf *out, uint32_t no, struct store_etcd *e,
    const char *key, size_t len)
{
	etcd_pb_put_len(out, no, e->prefix_len + len);
	buf_add(out, e->prefix, e->prefix_len);
	buf_add(out, key, len);
}

/* A compare of key's (len bytes) mod_revision with rev. */
void
etcd_pb_cmp_mod(struct buf *out, const char *key, size_t len, uint64_t rev)
{
	size_t	 m = etcd_pb_begin(out, ETCD_PB_TXN_COMPARE);

	etcd_pb_put_int(out, ETCD_PB_CMP_TARGET, ETCD_PB_CMP_TARGET_MOD);
	etcd_pb_put_bytes(out, ETCD_PB_CMP_KEY, key, len);
	etcd_pb_put_int(out, ETCD_PB_CMP_MOD, rev);
	etcd_pb_put_int(out, ETCD_PB_CMP_RESULT, ETCD_PB_CMP_EQUAL);
	etcd_pb_end(out, m);
}

/* A success op: the put of value at key, attached to lease (0: none). */
void
etcd_pb_put_op(struct buf *out, const void *key, size_t klen,
    const void *value, size_t vlen, uint64_t lease)
{
	size_t	 op = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
	size_t	 put = etcd_pb_begin(out, ETCD_PB_OP_PUT);

	etcd_pb_put_bytes(out, ETCD_PB_PUT_KEY, key, klen);
	etcd_pb_put_bytes(out, ETCD_PB_PUT_VALUE, value, vlen);
	if (lease != 0)
		etcd_pb_put_int(out, ETCD_PB_PUT_LEASE, lease);
	etcd_pb_end(out, put);
	etcd_pb_end(out, op);
}

/* The put of value at the slot's key k, a success op. */
static void
etcd_pb_slot_put(struct buf *out, const char *k, size_t klen,
    const char *value)
{
	size_t	 op = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
	size_t	 put = etcd_pb_begin(out, ETCD_PB_OP_PUT);

	etcd_pb_put_bytes(out, ETCD_PB_PUT_KEY, k, klen);
	etcd_pb_put_bytes(out, ETCD_PB_PUT_VALUE, value, strlen(value));
	etcd_pb_end(out, put);
	etcd_pb_end(out, op);
}

/* The read of the slot's key k, the failure op. */
static void
etcd_pb_slot_read(struct buf *out, const char *k, size_t klen)
{
	size_t	 op = etcd_pb_begin(out, ETCD_PB_TXN_FAILURE);
	size_t	 rg = etcd_pb_begin(out, ETCD_PB_OP_RANGE);

	etcd_pb_put_bytes(out, ETCD_PB_RANGE_KEY, k, klen);
	etcd_pb_end(out, rg);
	etcd_pb_end(out, op);
}

/*
 * etcd's --max-txn-ops (128 by default) bounds the compares, and the ops
 * of each branch, of a txn and of each txn nested in it, with what the
 * outer levels use taken off (checkTxnRequest, etcd 3.4's
 * server/etcdserver/api/v3rpc/key.go).  A txn whose writes and slot are
 * more than that puts its writes in nested txns of ETCD_TXN_NEST_OPS each
 * (2 for a txn of 128, under 128 - 3); one whose compares would be more
 * compares the span of the keys it read in one (see below).
 */
#define ETCD_TXN_FLAT_MAX	128
#define ETCD_TXN_NEST_OPS	64

/* The writes the txn sends (a later write of a key wins). */
static size_t
etcd_txn_nops(struct store_etcd *e)
{
	const struct etcd_ev	*ev;
	size_t			 i, n = 0;

	for (i = e->overlay.head; i < e->overlay.n; i++) {
		ev = &e->overlay.v[i];
		n += !etcd_drange_skip(e, i) &&
		    etcd_overlay_find(e, ev->key, ev->key_len) == ev;
	}
	return (n);
}

/*
 * The writes (success ops); per > 0: in nested txns of per each.  Puts of
 * blind keys carry prev_kv: what the key held before.  The leases they
 * name go to c->lease (the first) and c->lease_other (another, the last).
 */
static void
etcd_txn_ops(struct etcd_commit *c, size_t per, struct buf *out)
{
	struct store_etcd	*e = E(c->st);
	struct etcd_batch	*b = c->b;
	const struct etcd_ev	*ev;
	const struct etcd_snap	*sn;
	size_t			 i, j, n = 0, nest = 0, txn = 0, op, w;

	for (i = e->overlay.head; i < e->overlay.n; i++) {
		ev = &e->overlay.v[i];
		if (etcd_drange_skip(e, i))
			continue;	/* in the range delete's DeleteRange */
		if (etcd_overlay_find(e, ev->key, ev->key_len) != ev)
			continue;	/* a later write of the key wins */
		if (per > 0 && n % per == 0) {
			if (n > 0) {
				etcd_pb_end(out, txn);
				etcd_pb_end(out, nest);
			}
			nest = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
			txn = etcd_pb_begin(out, ETCD_PB_OP_TXN);
		}
		n++;
		if (etcd_drange_first(e, i)) {
			etcd_pb_drange(out, e, b);
			continue;
		}
		op = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
		if (ev->deleted) {
			w = etcd_pb_begin(out, ETCD_PB_OP_DELETE);
			etcd_pb_key(out, ETCD_PB_DELETE_KEY, e, ev->key,
			    ev->key_len);
			etcd_pb_end(out, w);
			etcd_pb_end(out, op);
			continue;
		}
		for (j = 0, sn = NULL; j < b->nsnap; j++) {
			if (b->snap[j].blind &&
			    b->snap[j].key_len == ev->key_len &&
			    memcmp(b->snap[j].key, ev->key, ev->key_len) == 0)
				sn = &b->snap[j];
		}
		w = etcd_pb_begin(out, ETCD_PB_OP_PUT);
		etcd_pb_key(out, ETCD_PB_PUT_KEY, e, ev->key, ev->key_len);
		etcd_pb_put_bytes(out, ETCD_PB_PUT_VALUE, ev->value,
		    ev->value_len);
		if (sn != NULL)
			etcd_pb_put_int(out, ETCD_PB_PUT_PREV_KV, 1);
		if (ev->lease != 0) {
			etcd_pb_put_int(out, ETCD_PB_PUT_LEASE, ev->lease);
			if (c->lease == 0)
				c->lease = ev->lease;
			else if (ev->lease != c->lease)
				c->lease_other = ev->lease;
		}
		etcd_pb_end(out, w);
		etcd_pb_end(out, op);
	}
	if (per > 0 && n > 0) {
		etcd_pb_end(out, txn);
		etcd_pb_end(out, nest);
	}
}

/*
 * The compares of the keys the batch read: each found key's mod_revision
 * as read; each absent key's 0, or, when there are more than
 * ETCD_TXN_ABSENT_MAX of them, one compare on the span of them all: no
 * key in it written after the read (a key created since has a newer
 * mod_revision; a write to another key of the span is a false conflict,
 * run again).  A txn then compares 1 + its found keys + at most
 * ETCD_TXN_ABSENT_MAX; past ETCD_TXN_FLAT_MAX, 2: its slot and one span
 * over every key it read (a found key, too, is unwritten since the read).
 */
#define ETCD_TXN_ABSENT_MAX	8

/* Bytewise, a proper prefix first (store.h). */
static int
etcd_snap_cmp(const struct etcd_snap *a, const struct etcd_snap *b)
{
	size_t	 n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int	 c = memcmp(a->key, b->key, n);

	if (c != 0)
		return (c);
	return (a->key_len < b->key_len ? -1 : a->key_len > b->key_len);
}

static void
etcd_txn_compares(struct store_etcd *e, struct etcd_batch *b, int idem,
    struct buf *out)
{
	const struct etcd_snap	*lo = NULL, *hi = NULL, *sn;
	char			*k;
	size_t			 i, nabsent = 0, nfound = 0, m;
	int			 fold;

	for (i = 0; i < b->nsnap; i++) {
		if (b->snap[i].idem)
			continue;	/* the caller's compare */
		nabsent += !b->snap[i].blind && !b->snap[i].found;
		nfound += !b->snap[i].blind && b->snap[i].found;
	}
	/* With the slot's (and idem's), past etcd's limit: in the span's. */
	fold = 1 + idem + b->has_range + nfound + (nabsent >
	    ETCD_TXN_ABSENT_MAX ? 1 : nabsent) > ETCD_TXN_FLAT_MAX;
	if (b->has_range)
		etcd_pb_range_cmp(out, e, b);
	for (i = 0; i < b->nsnap; i++) {
		sn = &b->snap[i];
		if (sn->blind || sn->idem)
			continue;
		if (fold || (!sn->found && nabsent > ETCD_TXN_ABSENT_MAX)) {
			if (lo == NULL || etcd_snap_cmp(sn, lo) < 0)
				lo = sn;
			if (hi == NULL || etcd_snap_cmp(sn, hi) > 0)
				hi = sn;
			continue;
		}
		m = etcd_pb_begin(out, ETCD_PB_TXN_COMPARE);
		etcd_pb_put_int(out, ETCD_PB_CMP_TARGET,
		    ETCD_PB_CMP_TARGET_MOD);
		etcd_pb_key(out, ETCD_PB_CMP_KEY, e, sn->key, sn->key_len);
		etcd_pb_put_int(out, ETCD_PB_CMP_MOD, sn->found ?
		    sn->ev.mod_rev : 0);
		etcd_pb_put_int(out, ETCD_PB_CMP_RESULT, ETCD_PB_CMP_EQUAL);
		etcd_pb_end(out, m);
	}
	if (lo == NULL)
		return;
	m = etcd_pb_begin(out, ETCD_PB_TXN_COMPARE);
	etcd_pb_put_int(out, ETCD_PB_CMP_TARGET, ETCD_PB_CMP_TARGET_MOD);
	etcd_pb_key(out, ETCD_PB_CMP_KEY, e, lo->key, lo->key_len);
	/* The end: just past hi, hi with a NUL byte after it. */
	k = xmalloc(hi->key_len + 1);
	memcpy(k, hi->key, hi->key_len);
	k[hi->key_len] = '\0';
	etcd_pb_key(out, ETCD_PB_CMP_RANGE_END, e, k, hi->key_len + 1);
	free(k);
	etcd_pb_put_int(out, ETCD_PB_CMP_MOD, b->read_rev + 1);
	etcd_pb_put_int(out, ETCD_PB_CMP_RESULT, ETCD_PB_CMP_LESS);
	etcd_pb_end(out, m);
}

/*
 * The txn: the slot's and the read keys' compares, the slot's token and
 * the writes, and on failure the slot.
 */
void
etcd_txn_body(struct etcd_commit *c, struct buf *out)
{
	struct store_etcd	*e = E(c->st);
	char			 k[ETCD_SLOT_KEY_MAX];
	size_t			 klen = etcd_slot_key(e, c->slot, k), n;

	buf_reserve(out, 512);	/* a put's txn at once */
	etcd_pb_cmp_mod(out, k, klen, c->known);
	etcd_txn_compares(e, c->b, c->idem, out);
	if (c->idem)
		etcd_pb_cmp_mod(out, c->idem_key.data, c->idem_key.len,
		    c->idem_mod);
	etcd_pb_slot_put(out, k, klen, c->token);
	if (c->idem)
		etcd_pb_put_op(out, c->idem_key.data, c->idem_key.len,
		    c->idem_val.data, c->idem_val.len, 0);
	n = etcd_txn_nops(e) + c->idem;
	etcd_txn_ops(c, 1 + n > ETCD_TXN_FLAT_MAX ? ETCD_TXN_NEST_OPS : 0,
	    out);
	etcd_pb_slot_read(out, k, klen);
}

/* What the slot holds (a failed txn's range): whose token, and when. */
int
etcd_slot_is(const struct etcd_pb_txn *reply, const char *token,
    const char *pre, uint64_t *mod)
{
	struct etcd_pb_txn	 t = *reply;
	struct etcd_pb_kv	 kv;
	const uint8_t		*r;
	size_t			 n, plen = strlen(pre), tlen = strlen(token);
	int			 op;

	*mod = 0;
	if (etcd_pb_txn_next(&t, &op, &r, &n) != 1 ||
	    op != ETCD_PB_OP_RANGE || etcd_pb_op_kv(op, r, n, &kv) != 1)
		return (0);
	*mod = kv.mod_rev;
	return (kv.value_len == plen + tlen &&
	    memcmp(kv.value, pre, plen) == 0 &&
	    memcmp(kv.value + plen, token, tlen) == 0);
}

/*
 * The resolve: if the slot is unmoved, void it (no copy of the txn can
 * land after); else read it.
 */
void
etcd_resolve_body(struct etcd_commit *c, struct buf *out)
{
	char	 k[ETCD_SLOT_KEY_MAX], v[96];
	size_t	 klen = etcd_slot_key(E(c->st), c->slot, k);

	snprintf(v, sizeof v, "void %s", c->token);
	etcd_pb_cmp_mod(out, k, klen, c->known);
	etcd_pb_slot_put(out, k, klen, v);
	etcd_pb_slot_read(out, k, klen);
}

void
etcd_blind_body(struct etcd_commit *c, struct buf *out)
{
	struct etcd_batch	*b = c->b;
	size_t			 i, op, rg;

	for (i = 0; i < b->nsnap; i++) {
		if (!b->snap[i].blind)
			continue;
		op = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
		rg = etcd_pb_begin(out, ETCD_PB_OP_RANGE);
		etcd_pb_key(out, ETCD_PB_RANGE_KEY, E(c->st), b->snap[i].key,
		    b->snap[i].key_len);
		etcd_pb_put_int(out, ETCD_PB_RANGE_REV, c->landed);
		etcd_pb_end(out, rg);
		etcd_pb_end(out, op);
	}
}
