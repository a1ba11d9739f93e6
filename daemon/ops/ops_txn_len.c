/*
 * A txn's answer sized before it is built (metad-protocol(7), LIMITS): an
 * answer past --max-answer-bytes is refused whole, before any of the
 * branch's writes is applied, so the txn writes nothing.
 */
#include <string.h>

#include "metad.h"
#include "ops/ops_txn.h"
#include "core/reply.h"
#include "core/req.h"

/* An op's result around its kv, at most: {"op":"delete","prev_version":N} */
#define TXN_LEN_OP	64
/* The answer around the results: ok, succeeded, rev, the braces. */
#define TXN_LEN_FIXED	96

struct txn_len {
	size_t	 n;
	size_t	 limit;
};

static int
txn_len_get_cb(const struct store_kv *kv, void *arg)
{
	struct txn_len	*l = arg;

	/* The raw bytes are a floor of the escaped: past the limit already,
	 * the value is not scanned. */
	if (l->n + kv->key_len + kv->value_len > l->limit)
		l->n += kv->key_len + kv->value_len;
	else
		l->n += reply_kv_len(kv, 1);
	return (0);
}

/* The write of key an earlier op of the branch makes, or NULL. */
static const struct txn_op *
txn_len_written(const struct txn_branch *b, size_t i)
{
	const struct txn_op	*op = &b->ops[i];
	size_t			 j;

	for (j = 0; j < i; j++) {
		if (b->ops[j].type != TXN_GET &&
		    b->ops[j].key_len == op->key_len &&
		    memcmp(b->ops[j].key, op->key, op->key_len) == 0)
			return (&b->ops[j]);
	}
	return (NULL);
}

static int
txn_len_get(struct req *r, const struct txn_branch *b, size_t i,
    struct txn_len *l, struct store_err *se)
{
	const struct txn_op	*op = &b->ops[i], *w;
	struct store_kv		 kv;

	if ((w = txn_len_written(b, i)) != NULL) {
		if (w->type == TXN_DELETE)
			return (0);
		memset(&kv, 0, sizeof kv);
		kv.key = w->key;
		kv.key_len = w->key_len;
		kv.value = w->value.data;
		kv.value_len = w->value.len;
		return (txn_len_get_cb(&kv, l));
	}
	if (store_get(r->md->store, op->key, op->key_len, txn_len_get_cb, l,
	    se) == -1)
		return (-1);
	return (0);
}

size_t
ops_txn_len(struct req *r, const struct txn_branch *b, size_t limit,
    struct store_err *se)
{
	struct txn_len	 l;
	struct store_kv	 kv;
	size_t		 i;

	l.n = TXN_LEN_FIXED + r->id_len;
	l.limit = limit;
	for (i = 0; i < b->n && l.n <= limit; i++) {
		l.n += TXN_LEN_OP;
		if (b->ops[i].type == TXN_GET) {
			if (txn_len_get(r, b, i, &l, se) != 0)
				return ((size_t)-1);
			continue;
		}
		memset(&kv, 0, sizeof kv);
		kv.key = b->ops[i].key;
		kv.key_len = b->ops[i].key_len;
		l.n += reply_kv_len(&kv, 0);
	}
	return (l.n);
}
