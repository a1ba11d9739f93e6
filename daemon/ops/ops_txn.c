/*
 * The txn op (metad-protocol(7), TRANSACTIONS): if all compares of "if"
 * hold, run "then", else run "else"; atomically, at one rev.
 *
 * A compare is {"key":K, T:X} with exactly one target T: "version" (0 when
 * the key is absent), "create_rev", "mod_rev" (both 0 when absent) or
 * "value"/"value_b64" (never holds on an absent key), and an optional
 * "result": "=" (default), "!=", "<" or ">" (values compare bytewise), as
 * in etcd.  The ops are put, delete and get; a branch may write a key once.
 * Writes take seq 0, 1, ... in op order; a get sees the txn's own earlier
 * writes.  A txn that writes nothing does not advance the rev.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metad.h"
#include "ops/fence.h"
#include "ops/ops.h"
#include "ops/ops_txn.h"
#include "core/reply.h"

static const char *txn_results[] = { "=", "!=", "<", ">" };

/* Fields of put and delete that have no meaning inside a txn. */
static const char *txn_refused[] = {
	"if_absent", "if_version", "if_mod_rev", "fence"
};

static void
txn_free(void *arg)
{
	struct txn	*t = arg;
	size_t		 i;

	if (t == NULL)
		return;
	for (i = 0; i < t->ncmps; i++)
		proto_bytes_free(&t->cmps[i].value);
	for (i = 0; i < t->then.n; i++)
		proto_bytes_free(&t->then.ops[i].value);
	for (i = 0; i < t->els.n; i++)
		proto_bytes_free(&t->els.ops[i].value);
	free(t->cmps);
	free(t->then.ops);
	free(t->els.ops);
	free(t);
}

static int
txn_parse_result(const cJSON *o, struct txn_cmp *c, struct proto_err *e)
{
	const char	*s;
	size_t		 len, i;
	int		 rc;

	c->result = TXN_EQ;
	if ((rc = proto_get_str(o, "result", 0, &s, &len, e)) != 1)
		return (rc);
	for (i = 0; i < sizeof txn_results / sizeof txn_results[0]; i++) {
		if (strcmp(s, txn_results[i]) == 0) {
			c->result = (enum txn_result)i;
			return (0);
		}
	}
	return (proto_fail(e, PROTO_BAD_REQUEST, "field \"result\" must be "
	    "\"=\", \"!=\", \"<\" or \">\""));
}

static int
txn_parse_target(const cJSON *o, const char *name, enum txn_target target,
    struct txn_cmp *c, int *n, struct proto_err *e)
{
	uint64_t	 v;
	int		 rc;

	if ((rc = proto_get_u64(o, name, 0, &v, e)) != 1)
		return (rc);
	c->target = target;
	c->n = v;
	(*n)++;
	return (0);
}

static int
txn_parse_cmp(const cJSON *o, size_t max, struct txn_cmp *c,
    struct proto_err *e)
{
	int	 n = 0, rc;

	if (!cJSON_IsObject(o))
		return (proto_fail(e, PROTO_BAD_REQUEST, "a compare must be an "
		    "object such as {\"key\":K,\"version\":N}"));
	if (ops_fields_check_txn("compare", o, e) != 0)
		return (-1);
	if (proto_get_key(o, "key", 1, &c->key, &c->key_len, e) != 1)
		return (-1);
	if (txn_parse_target(o, "version", TXN_VERSION, c, &n, e) != 0 ||
	    txn_parse_target(o, "create_rev", TXN_CREATE_REV, c, &n, e) != 0 ||
	    txn_parse_target(o, "mod_rev", TXN_MOD_REV, c, &n, e) != 0)
		return (-1);
	if ((rc = proto_get_value(o, 0, max, &c->value, e)) == -1)
		return (-1);
	if (rc == 1) {
		c->target = TXN_VALUE;
		n++;
	}
	if (n != 1)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give exactly one of "
		    "\"version\", \"create_rev\", \"mod_rev\" and \"value\" "
		    "(or \"value_b64\")"));
	return (txn_parse_result(o, c, e));
}

static int
txn_parse_kind(const cJSON *o, struct txn_op *op, struct proto_err *e)
{
	const char	*name;
	size_t		 len, i;

	if (proto_get_str(o, "op", 1, &name, &len, e) != 1)
		return (-1);
	if (strcmp(name, "put") == 0)
		op->type = TXN_PUT;
	else if (strcmp(name, "delete") == 0)
		op->type = TXN_DELETE;
	else if (strcmp(name, "get") == 0)
		op->type = TXN_GET;
	else
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"op\" must be "
		    "\"put\", \"delete\" or \"get\""));
	for (i = 0; i < sizeof txn_refused / sizeof txn_refused[0]; i++) {
		if (cJSON_GetObjectItemCaseSensitive(o, txn_refused[i]) != NULL)
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"%s\" "
			    "is not allowed in a txn op (use \"if\" compares "
			    "and the txn's \"fence\")", txn_refused[i]));
	}
	return (0);
}

static int
txn_parse_op(const cJSON *o, size_t max, struct txn_op *op,
    struct proto_err *e)
{
	if (!cJSON_IsObject(o))
		return (proto_fail(e, PROTO_BAD_REQUEST, "an op must be an "
		    "object such as {\"op\":\"put\",\"key\":K,\"value\":V}"));
	if (txn_parse_kind(o, op, e) != 0)
		return (-1);
	if (ops_fields_check_txn(op->type == TXN_PUT ? "put" :
	    op->type == TXN_DELETE ? "delete" : "get", o, e) != 0)
		return (-1);
	if (proto_get_key(o, "key", 1, &op->key, &op->key_len, e) != 1)
		return (-1);
	if (op->type == TXN_PUT &&
	    proto_get_value(o, 1, max, &op->value, e) != 1)
		return (-1);
	if (ops_lease_arg(o, 0, &op->lease, e) == -1)
		return (-1);
	if (op->lease != 0 && op->type != TXN_PUT)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"lease\" "
		    "goes with a put only"));
	return (0);
}

/* A branch writes each key at most once (etcd's "duplicate key"). */
static int
txn_check_dup(const struct txn_branch *b, const char *name, size_t i,
    struct proto_err *e)
{
	const struct txn_op	*op = &b->ops[i], *prev;
	size_t			 j;

	if (op->type == TXN_GET)
		return (0);
	for (j = 0; j < i; j++) {
		prev = &b->ops[j];
		if (prev->type != TXN_GET && prev->key_len == op->key_len &&
		    memcmp(prev->key, op->key, op->key_len) == 0)
			return (proto_fail(e, PROTO_BAD_REQUEST, "duplicate key: "
			    "%s[%zu] already writes it (a branch writes a key "
			    "at most once)", name, j));
	}
	return (0);
}

static int
txn_parse_branch(struct req *r, const char *name, const cJSON *list,
    struct txn_branch *b, struct proto_err *e)
{
	const cJSON	*o;
	size_t		 i, n;

	if (list == NULL)
		return (0);
	n = (size_t)cJSON_GetArraySize(list);
	b->ops = xcalloc(n > 0 ? n : 1, sizeof *b->ops);
	b->n = n;
	i = 0;
	cJSON_ArrayForEach(o, list) {
		if (txn_parse_op(o, r->md->cfg.max_value_bytes, &b->ops[i],
		    e) != 0 || txn_check_dup(b, name, i, e) != 0)
			return (ops_fail_at(e, name, i));
		i++;
	}
	return (0);
}

static int
txn_parse_cmps(struct req *r, struct txn *t, const cJSON *list,
    struct proto_err *e)
{
	const cJSON	*o;
	size_t		 i, n;

	if (list == NULL)
		return (0);
	n = (size_t)cJSON_GetArraySize(list);
	t->cmps = xcalloc(n > 0 ? n : 1, sizeof *t->cmps);
	t->ncmps = n;
	i = 0;
	cJSON_ArrayForEach(o, list) {
		if (txn_parse_cmp(o, r->md->cfg.max_value_bytes, &t->cmps[i],
		    e) != 0)
			return (ops_fail_at(e, "if", i));
		i++;
	}
	return (0);
}

/*
 * What the prepared txn does (its row's does): REQ_READS if a branch holds
 * a get, REQ_WRITES if one holds a put or a delete.
 */
static int
ops_txn_does(const struct req *r)
{
	const struct txn	*t = r->state;
	size_t			 i;
	int			 does = 0;

	for (i = 0; i < t->then.n + t->els.n; i++)
		does |= (i < t->then.n ? t->then.ops[i] :
		    t->els.ops[i - t->then.n]).type == TXN_GET ? REQ_READS :
		    REQ_WRITES;
	return (does);
}

int
ops_txn_prepare(struct req *r, struct proto_err *e)
{
	struct txn	*t;
	const cJSON	*cif, *cthen, *celse;
	size_t		 nif, nthen, nelse;

	t = xcalloc(1, sizeof *t);
	r->state = t;
	r->state_free = txn_free;
	if (ops_field_list(r->json, "if", &cif, &nif, e) != 0 ||
	    ops_field_list(r->json, "then", &cthen, &nthen, e) != 0 ||
	    ops_field_list(r->json, "else", &celse, &nelse, e) != 0)
		return (-1);
	if (nif > TXN_MAX_COMPARES)
		return (proto_fail(e, PROTO_BAD_REQUEST, "txn has %zu compares, "
		    "the limit is %d", nif, TXN_MAX_COMPARES));
	if (nthen + nelse > TXN_MAX_OPS)
		return (proto_fail(e, PROTO_BAD_REQUEST, "txn has %zu ops in "
		    "\"then\" and \"else\", the limit is %d", nthen + nelse,
		    TXN_MAX_OPS));
	if (fence_parse(r->json, &t->fence, e) != 0 ||
	    txn_parse_cmps(r, t, cif, e) != 0 ||
	    txn_parse_branch(r, "then", cthen, &t->then, e) != 0 ||
	    txn_parse_branch(r, "else", celse, &t->els, e) != 0)
		return (-1);
	return (0);
}

/* How a (-1, 0, 1) ordering of have against want meets the result. */
static int
txn_holds(enum txn_result res, int order)
{
	switch (res) {
	case TXN_EQ:
		return (order == 0);
	case TXN_NE:
		return (order != 0);
	case TXN_LT:
		return (order < 0);
	case TXN_GT:
		return (order > 0);
	}
	return (0);
}

static int
txn_order_u64(uint64_t have, uint64_t want)
{
	return (have < want ? -1 : have > want);
}

static int
txn_order_bytes(const void *a, size_t alen, const void *b, size_t blen)
{
	size_t	 n = alen < blen ? alen : blen;
	int	 c = 0;

	if (n > 0)
		c = memcmp(a, b, n);
	if (c != 0)
		return (c < 0 ? -1 : 1);
	return (txn_order_u64(alen, blen));
}

struct txn_eval {
	const struct txn_cmp	*c;
	int			 holds;
};

static int
txn_eval_cb(const struct store_kv *kv, void *arg)
{
	struct txn_eval		*ev = arg;
	const struct txn_cmp	*c = ev->c;
	int			 order = 0;

	switch (c->target) {
	case TXN_VERSION:
		order = txn_order_u64(kv->version, c->n);
		break;
	case TXN_CREATE_REV:
		order = txn_order_u64(kv->create_rev, c->n);
		break;
	case TXN_MOD_REV:
		order = txn_order_u64(kv->mod_rev, c->n);
		break;
	case TXN_VALUE:
		order = txn_order_bytes(kv->value, kv->value_len,
		    c->value.data, c->value.len);
		break;
	}
	ev->holds = txn_holds(c->result, order);
	return (0);
}

/* 1 if every compare holds, 0 if one does not, -1 on a store error. */
static int
txn_compare(struct req *r, const struct txn *t, struct store_err *se)
{
	struct txn_eval	 ev;
	size_t		 i;
	int		 found;

	for (i = 0; i < t->ncmps; i++) {
		ev.c = &t->cmps[i];
		ev.holds = 0;
		found = store_get(r->md->store, ev.c->key, ev.c->key_len,
		    txn_eval_cb, &ev, se);
		if (found == -1)
			return (-1);
		/* An absent key has version, create_rev and mod_rev 0. */
		if (!found && ev.c->target != TXN_VALUE)
			ev.holds = txn_holds(ev.c->result,
			    txn_order_u64(0, ev.c->n));
		if (!ev.holds)
			return (0);
	}
	return (1);
}

/* The state of a running branch. */
struct txn_run {
	struct req		*r;
	struct jw		*w;
	uint64_t		 rev;
	uint32_t		 seq;	/* of the next write */
	int			 wrote;
};

static int
txn_run_put(struct txn_run *run, const struct txn_op *op,
    struct store_err *se)
{
	struct store_kv	 kv;
	uint64_t	 prev = 0;

	if (store_put_lease(run->r->md->store, run->rev, run->seq, op->key,
	    op->key_len, op->value.data, op->value.len, op->lease, &kv, &prev,
	    se) != 0)
		return (-1);
	run->seq++;
	run->wrote = 1;
	kv.key = op->key;
	kv.key_len = op->key_len;
	reply_kv(run->w, "kv", &kv, 0);
	jw_name(run->w, "prev_version");
	jw_u64(run->w, prev);
	return (0);
}

static int
txn_run_delete(struct txn_run *run, const struct txn_op *op,
    struct store_err *se)
{
	int	 deleted = 0;

	if (store_delete(run->r->md->store, run->rev, run->seq, op->key,
	    op->key_len, &deleted, se) != 0)
		return (-1);
	if (deleted) {
		run->seq++;
		run->wrote = 1;
	}
	jw_name(run->w, "deleted");
	jw_bool(run->w, deleted);
	return (0);
}

static int
txn_get_cb(const struct store_kv *kv, void *arg)
{
	reply_kv(arg, "kv", kv, 1);
	return (0);
}

static int
txn_run_get(struct txn_run *run, const struct txn_op *op,
    struct store_err *se)
{
	int	 found;

	found = store_get(run->r->md->store, op->key, op->key_len, txn_get_cb,
	    run->w, se);
	if (found == -1)
		return (-1);
	if (!found)
		reply_kv(run->w, "kv", NULL, 0);
	return (0);
}

static int
txn_run_branch(struct txn_run *run, const struct txn_branch *b,
    struct store_err *se)
{
	static const char	*names[] = { "put", "delete", "get" };
	const struct txn_op	*op;
	size_t			 i;
	int			 rc = 0;

	for (i = 0; i < b->n; i++) {
		op = &b->ops[i];
		jw_obj_open(run->w);
		jw_name(run->w, "op");
		jw_cstr(run->w, names[op->type]);
		switch (op->type) {
		case TXN_PUT:
			rc = txn_run_put(run, op, se);
			break;
		case TXN_DELETE:
			rc = txn_run_delete(run, op, se);
			break;
		case TXN_GET:
			rc = txn_run_get(run, op, se);
			break;
		}
		if (rc != 0)
			return (-1);
		jw_obj_close(run->w);
	}
	return (0);
}

static void
txn_branch_keys(const struct txn_branch *b, struct store_keys *ks)
{
	size_t	 i;

	for (i = 0; i < b->n; i++)
		store_keys_add(ks, b->ops[i].key, b->ops[i].key_len);
}

void
ops_txn_keys(struct req *r, struct store_keys *ks)
{
	const struct txn	*t = r->state;
	size_t			 i;

	if (t->fence.set)
		store_keys_add(ks, t->fence.key, t->fence.key_len);
	for (i = 0; i < t->ncmps; i++)
		store_keys_add(ks, t->cmps[i].key, t->cmps[i].key_len);
	txn_branch_keys(&t->then, ks);
	txn_branch_keys(&t->els, ks);
}

/* 1 if every lease the branch's puts name lives, else 0 (answered). */
static int
txn_leases_live(struct req *r, const struct txn_branch *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++) {
		if (b->ops[i].lease != 0 && !ops_lease_live(r, b->ops[i].lease))
			return (0);
	}
	return (1);
}

int
ops_txn_apply(struct req *r, uint64_t rev, int *wrote, struct store_err *se)
{
	struct txn		*t = r->state;
	const struct txn_branch	*b;
	struct txn_run		 run;
	struct jw		 w;
	size_t			 len;
	int			 rc, ok;

	if ((rc = fence_check(r, &t->fence, se)) != 1)
		return (rc);
	if ((ok = txn_compare(r, t, se)) == -1)
		return (-1);
	b = ok ? &t->then : &t->els;
	if (!txn_leases_live(r, b))
		return (0);
	/* Sized before any write of it: refused, the txn writes nothing. */
	if ((len = ops_txn_len(r, b, r->md->cfg.max_answer_bytes, se)) ==
	    (size_t)-1)
		return (-1);
	if (reply_too_large(r, len, "get fewer or smaller values in one txn "
	    "(split its gets over several txns, or read them with get)"))
		return (0);
	memset(&run, 0, sizeof run);
	run.r = r;
	run.w = &w;
	run.rev = rev;
	reply_begin(r, &w);
	jw_name(&w, "succeeded");
	jw_bool(&w, ok);
	jw_name(&w, "results");
	jw_arr_open(&w);
	if (txn_run_branch(&run, b, se) != 0)
		return (-1);
	jw_arr_close(&w);
	jw_name(&w, "rev");
	jw_u64(&w, run.wrote ? rev : rev - 1);
	reply_end(r, &w);
	*wrote = run.wrote;
	return (0);
}

const struct op ops_txn_entry = {
	.name = "txn",
	.flags = OP_WRITE | OP_IDEM,
	.fields = { "if", "then", "else", "fence" },
	.prepare = ops_txn_prepare,
	.does = ops_txn_does,
	.apply = ops_txn_apply,
	.keys = ops_txn_keys,
};
