/*
 * The bodies of the etcd backend's write txns (store_etcd_commit.c): the
 * txn of a batch, with its compares, its slot's token and its writes; the
 * resolve of a txn whose answer was lost; the read of a landed txn's blind
 * keys; and what a failed txn's range of its slot says.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_etcd_commit.h"

#define E(st)	((struct store_etcd *)(st)->impl)

char *
etcd_slot_key64(struct store_etcd *e, int slot)
{
	char	 k[ETCD_PREFIX_MAX + 24];
	int	 n;

	n = snprintf(k, sizeof k, "%s%" PRIu64, e->slotpfx,
	    e->slots[slot].name);
	return (etcd_b64(k, (size_t)n));
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
		n += etcd_overlay_find(e, ev->key, ev->key_len) == ev;
	}
	return (n);
}

/*
 * The writes, each after a comma; per > 0: in nested txns of per each.
 * Puts of blind keys carry prev_kv: what the key held before.
 */
static void
etcd_txn_ops(struct store_etcd *e, struct etcd_batch *b, size_t per,
    struct buf *out)
{
	const struct etcd_ev	*ev;
	const struct etcd_snap	*sn;
	char			*k64, *v64;
	size_t			 i, j, n = 0;

	for (i = e->overlay.head; i < e->overlay.n; i++) {
		ev = &e->overlay.v[i];
		if (etcd_overlay_find(e, ev->key, ev->key_len) != ev)
			continue;	/* a later write of the key wins */
		if (per > 0 && n % per == 0)
			buf_addstr(out, n > 0 ? "]}},{\"request_txn\":{"
			    "\"success\":[" : ",{\"request_txn\":{"
			    "\"success\":[");
		else
			buf_addc(out, ',');
		n++;
		k64 = etcd_key64(e, ev->key, ev->key_len);
		if (ev->deleted)
			buf_printf(out, "{\"request_delete_range\":{\"key\":"
			    "\"%s\"}}", k64);
		else {
			for (j = 0, sn = NULL; j < b->nsnap; j++) {
				if (b->snap[j].blind &&
				    b->snap[j].key_len == ev->key_len &&
				    memcmp(b->snap[j].key, ev->key,
				    ev->key_len) == 0)
					sn = &b->snap[j];
			}
			v64 = etcd_b64(ev->value, ev->value_len);
			buf_printf(out, "{\"request_put\":{\"key\":\"%s\","
			    "\"value\":\"%s\"%s", k64, v64, sn != NULL ?
			    ",\"prev_kv\":true" : "");
			if (ev->lease != 0)
				buf_printf(out, ",\"lease\":\"%" PRIu64 "\"",
				    ev->lease);
			buf_addstr(out, "}}");
			free(v64);
		}
		free(k64);
	}
	if (per > 0 && n > 0)
		buf_addstr(out, "]}}");
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
etcd_txn_compares(struct store_etcd *e, struct etcd_batch *b,
    struct buf *out)
{
	const struct etcd_snap	*lo = NULL, *hi = NULL, *sn;
	char			*k64, *end, *k;
	size_t			 i, nabsent = 0, nfound = 0;
	int			 fold;

	for (i = 0; i < b->nsnap; i++) {
		nabsent += !b->snap[i].blind && !b->snap[i].found;
		nfound += !b->snap[i].blind && b->snap[i].found;
	}
	/* With the slot's, past etcd's limit: all in the span's. */
	fold = 1 + nfound + (nabsent > ETCD_TXN_ABSENT_MAX ? 1 : nabsent) >
	    ETCD_TXN_FLAT_MAX;
	for (i = 0; i < b->nsnap; i++) {
		sn = &b->snap[i];
		if (sn->blind)
			continue;
		if (fold || (!sn->found && nabsent > ETCD_TXN_ABSENT_MAX)) {
			if (lo == NULL || etcd_snap_cmp(sn, lo) < 0)
				lo = sn;
			if (hi == NULL || etcd_snap_cmp(sn, hi) > 0)
				hi = sn;
			continue;
		}
		k64 = etcd_key64(e, sn->key, sn->key_len);
		buf_printf(out, ",{\"target\":\"MOD\",\"key\":\"%s\","
		    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}",
		    k64, sn->found ? sn->ev.mod_rev : 0);
		free(k64);
	}
	if (lo == NULL)
		return;
	k64 = etcd_key64(e, lo->key, lo->key_len);
	/* The end: just past hi, hi with a NUL byte after it. */
	k = xmalloc(e->prefix_len + hi->key_len + 1);
	memcpy(k, e->prefix, e->prefix_len);
	memcpy(k + e->prefix_len, hi->key, hi->key_len);
	k[e->prefix_len + hi->key_len] = '\0';
	end = etcd_b64(k, e->prefix_len + hi->key_len + 1);
	free(k);
	buf_printf(out, ",{\"target\":\"MOD\",\"key\":\"%s\",\"range_end\":"
	    "\"%s\",\"mod_revision\":\"%" PRIu64 "\",\"result\":\"LESS\"}",
	    k64, end, b->read_rev + 1);
	free(k64);
	free(end);
}

/*
 * The txn: the slot's and the read keys' compares, the slot's token and
 * the writes, and on failure the slot.
 */
void
etcd_txn_body(struct etcd_commit *c, struct buf *out)
{
	struct store_etcd	*e = E(c->st);
	char			*s64, *v64;
	size_t			 n;

	s64 = etcd_slot_key64(e, c->slot);
	buf_printf(out, "{\"compare\":[{\"target\":\"MOD\",\"key\":\"%s\","
	    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}", s64,
	    c->known);
	etcd_txn_compares(e, c->b, out);
	v64 = etcd_b64(c->token, strlen(c->token));
	buf_printf(out, "],\"success\":[{\"request_put\":{\"key\":\"%s\","
	    "\"value\":\"%s\"}}", s64, v64);
	free(v64);
	n = etcd_txn_nops(e);
	etcd_txn_ops(e, c->b, 1 + n > ETCD_TXN_FLAT_MAX ? ETCD_TXN_NEST_OPS :
	    0, out);
	buf_printf(out, "],\"failure\":[{\"request_range\":{\"key\":\"%s\"}}"
	    "]}", s64);
	free(s64);
}

/* What the slot holds (a failed txn's range): whose token, and when. */
int
etcd_slot_is(const cJSON *reply, const char *token, const char *pre,
    uint64_t *mod)
{
	const cJSON	*kv;
	unsigned char	*v;
	size_t		 vlen, plen = strlen(pre), tlen = strlen(token);
	int		 mine;

	kv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(
	    cJSON_GetObjectItemCaseSensitive(reply, "responses"), 0),
	    "response_range"), "kvs"), 0);
	*mod = kv != NULL ? etcd_u64(kv, "mod_revision") : 0;
	if (kv == NULL)
		return (0);
	v = etcd_unb64(kv, "value", &vlen);
	mine = vlen == plen + tlen && memcmp(v, pre, plen) == 0 &&
	    memcmp(v + plen, token, tlen) == 0;
	free(v);
	return (mine);
}

/*
 * The resolve: if the slot is unmoved, void it (no copy of the txn can
 * land after); else read it.
 */
void
etcd_resolve_body(struct etcd_commit *c, struct buf *out)
{
	char	*s64, *v64, v[96];

	s64 = etcd_slot_key64(E(c->st), c->slot);
	snprintf(v, sizeof v, "void %s", c->token);
	v64 = etcd_b64(v, strlen(v));
	buf_printf(out, "{\"compare\":[{\"target\":\"MOD\",\"key\":\"%s\","
	    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}],"
	    "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}"
	    "],\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}", s64,
	    c->known, s64, v64, s64);
	free(s64);
	free(v64);
}

void
etcd_blind_body(struct etcd_commit *c, struct buf *out)
{
	struct etcd_batch	*b = c->b;
	char			*k64;
	size_t			 i;
	int			 n = 0;

	buf_addstr(out, "{\"success\":[");
	for (i = 0; i < b->nsnap; i++) {
		if (!b->snap[i].blind)
			continue;
		k64 = etcd_key64(E(c->st), b->snap[i].key, b->snap[i].key_len);
		buf_printf(out, "%s{\"request_range\":{\"key\":\"%s\","
		    "\"revision\":\"%" PRIu64 "\"}}", n++ > 0 ? "," : "", k64,
		    c->landed);
		free(k64);
	}
	buf_addstr(out, "]}");
}
