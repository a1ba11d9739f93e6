#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metad.h"
#include "ops/fence.h"
#include "ops/ops.h"
#include "core/reply.h"
#include "store/store_range.h"

/* The metadata of one key, copied out of a store callback. */
struct key_meta {
	int		 found;
	struct store_kv	 kv;		/* key points into the request */
};

static int
write_meta_cb(const struct store_kv *kv, void *arg)
{
	struct key_meta	*m = arg;

	m->found = 1;
	m->kv.version = kv->version;
	m->kv.create_rev = kv->create_rev;
	m->kv.mod_rev = kv->mod_rev;
	return (0);
}

static int
write_lookup(struct req *r, const char *key, size_t klen,
    struct key_meta *m, struct store_err *se)
{
	memset(m, 0, sizeof *m);
	m->kv.key = key;
	m->kv.key_len = klen;
	if (store_get(r->md->store, key, klen, write_meta_cb, m, se) == -1)
		return (-1);
	return (0);
}

static int
write_args_precond(struct req *r, struct precond *pc, struct proto_err *e)
{
	int		 absent = 0, n = 0, rc;
	uint64_t	 v;

	pc->kind = PRECOND_NONE;
	if ((rc = proto_get_bool(r->json, "if_absent", 0, &absent, e)) == -1)
		return (-1);
	if (rc == 1 && absent) {
		pc->kind = PRECOND_ABSENT;
		n++;
	}
	if ((rc = proto_get_u64(r->json, "if_version", 0, &v, e)) == -1)
		return (-1);
	if (rc == 1) {
		pc->kind = PRECOND_VERSION;
		pc->n = v;
		n++;
	}
	if ((rc = proto_get_u64(r->json, "if_mod_rev", 0, &v, e)) == -1)
		return (-1);
	if (rc == 1) {
		pc->kind = PRECOND_MOD_REV;
		pc->n = v;
		n++;
	}
	if (n > 1)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give at most one of "
		    "\"if_absent\", \"if_version\" and \"if_mod_rev\""));
	return (0);
}

static int
write_args(struct req *r, int with_value, struct proto_err *e)
{
	struct write_args	*wa = &r->wa;

	if (proto_get_key(r->json, "key", 1, &wa->key, &wa->key_len, e) != 1)
		return (-1);
	if (with_value && proto_get_value(r->json, 1,
	    r->md->cfg.max_value_bytes, &wa->value, e) != 1)
		return (-1);
	if (write_args_precond(r, &wa->pc, e) != 0)
		return (-1);
	return (fence_parse(r->json, &wa->fence, e));
}

int
ops_put_prepare(struct req *r, struct proto_err *e)
{
	if (write_args(r, 1, e) != 0 ||
	    ops_lease_arg(r->json, 0, &r->wa.lease, e) == -1)
		return (-1);
	return (0);
}

/*
 * A delete of a range (metad-protocol(7), DELETE): "prefix":P, or "key"
 * with "range_end":E, and "fence"; no precondition of one key.
 */
static int
delete_range_args(struct req *r, int has_prefix, struct proto_err *e)
{
	struct write_args	*wa = &r->wa;
	static const char *const pcs[] = { "if_absent", "if_version",
				    "if_mod_rev" };
	char			*end;
	size_t			 i;

	for (i = 0; i < sizeof pcs / sizeof pcs[0]; i++)
		if (cJSON_GetObjectItemCaseSensitive(r->json, pcs[i]) != NULL)
			return (proto_fail(e, PROTO_BAD_REQUEST, "\"%s\" does "
			    "not apply to a range delete (a txn compares "
			    "keys one by one)", pcs[i]));
	wa->range = 1;
	if (has_prefix) {
		if (cJSON_GetObjectItemCaseSensitive(r->json, "key") != NULL ||
		    cJSON_GetObjectItemCaseSensitive(r->json,
		    "range_end") != NULL)
			return (proto_fail(e, PROTO_BAD_REQUEST, "give "
			    "\"prefix\", or \"key\" with \"range_end\", "
			    "not both"));
		if (proto_get_prefix(r->json, "prefix", &wa->key,
		    &wa->key_len, e) != 1)
			return (-1);
		end = xmalloc(wa->key_len + 1);
		if ((wa->end_len = store_prefix_end(wa->key, wa->key_len,
		    end)) > 0)
			wa->end = end;
		r->state = end;
		r->state_free = free;
	} else if (proto_get_key(r->json, "key", 1, &wa->key, &wa->key_len,
	    e) != 1 || proto_get_key(r->json, "range_end", 1, &wa->end,
	    &wa->end_len, e) != 1)
		return (-1);
	return (fence_parse(r->json, &wa->fence, e));
}

int
ops_delete_prepare(struct req *r, struct proto_err *e)
{
	int	 has_prefix = cJSON_GetObjectItemCaseSensitive(r->json,
		    "prefix") != NULL;

	r->wa.range = 0;
	if (has_prefix || cJSON_GetObjectItemCaseSensitive(r->json,
	    "range_end") != NULL)
		return (delete_range_args(r, has_prefix, e));
	return (write_args(r, 0, e));
}

static int
write_precond_holds(const struct precond *pc, const struct key_meta *m)
{
	switch (pc->kind) {
	case PRECOND_NONE:
		return (1);
	case PRECOND_ABSENT:
		return (!m->found);
	case PRECOND_VERSION:
		return (pc->n == 0 ? !m->found :
		    m->found && m->kv.version == pc->n);
	case PRECOND_MOD_REV:
		return (m->found && m->kv.mod_rev == pc->n);
	}
	return (0);
}

static void
write_precond_failed(struct req *r, const struct precond *pc,
    const struct key_meta *m)
{
	struct jw	 w;
	char		 msg[PROTO_MSG_MAX];

	switch (pc->kind) {
	case PRECOND_ABSENT:
		snprintf(msg, sizeof msg, "key exists (version %llu)",
		    (unsigned long long)m->kv.version);
		break;
	case PRECOND_VERSION:
		if (m->found)
			snprintf(msg, sizeof msg, "version is %llu, not %llu",
			    (unsigned long long)m->kv.version,
			    (unsigned long long)pc->n);
		else
			snprintf(msg, sizeof msg, "key is absent, not at "
			    "version %llu", (unsigned long long)pc->n);
		break;
	default:
		if (m->found)
			snprintf(msg, sizeof msg, "mod_rev is %llu, not %llu",
			    (unsigned long long)m->kv.mod_rev,
			    (unsigned long long)pc->n);
		else
			snprintf(msg, sizeof msg, "key is absent, not at "
			    "mod_rev %llu", (unsigned long long)pc->n);
		break;
	}
	reply_error_begin(r, &w, PROTO_FAILED_PRECONDITION, msg);
	reply_kv(&w, "current", m->found ? &m->kv : NULL, 0);
	reply_error_end(r, &w);
}

/* Fence and precondition; 1 to go on, 0 answered, -1 store error. */
static int
write_check(struct req *r, struct key_meta *m, struct store_err *se)
{
	int	 rc;

	if ((rc = fence_check(r, &r->wa.fence, se)) != 1)
		return (rc);
	if (r->wa.pc.kind == PRECOND_NONE)
		return (1);
	if (write_lookup(r, r->wa.key, r->wa.key_len, m, se) != 0)
		return (-1);
	if (!write_precond_holds(&r->wa.pc, m)) {
		write_precond_failed(r, &r->wa.pc, m);
		return (0);
	}
	return (1);
}

/*
 * A put with no precondition and no fence writes whatever the key holds:
 * it reads the key only to report it (blind, store.h).
 */
void
ops_write_keys(struct req *r, struct store_keys *ks)
{
	if (r->wa.range) {
		ks->rkey = r->wa.key;
		ks->rkey_len = r->wa.key_len;
		ks->rend = r->wa.end;
		ks->rend_len = r->wa.end_len;
		if (r->wa.fence.set)
			store_keys_add(ks, r->wa.fence.key,
			    r->wa.fence.key_len);
		return;
	}
	store_keys_add_as(ks, r->wa.key, r->wa.key_len,
	    r->op->apply == ops_put_apply && r->wa.pc.kind == PRECOND_NONE &&
	    !r->wa.fence.set);
	if (r->wa.fence.set)
		store_keys_add(ks, r->wa.fence.key, r->wa.fence.key_len);
}

int
ops_put_apply(struct req *r, uint64_t rev, int *wrote, struct store_err *se)
{
	struct write_args	*wa = &r->wa;
	struct key_meta		 m;
	struct store_kv		 kv;
	struct jw		 w;
	uint64_t		 prev = 0;
	int			 rc;

	if (wa->lease != 0 && !ops_lease_live(r, wa->lease))
		return (0);
	if ((rc = write_check(r, &m, se)) != 1)
		return (rc);
	if (store_put_lease(r->md->store, rev, 0, wa->key, wa->key_len,
	    wa->value.data, wa->value.len, wa->lease, &kv, &prev, se) != 0)
		return (-1);
	*wrote = 1;
	kv.key = wa->key;
	kv.key_len = wa->key_len;
	reply_begin(r, &w);
	reply_kv(&w, "kv", &kv, 0);
	JW_NAME(&w, "prev_version");
	jw_u64(&w, prev);
	JW_NAME(&w, "rev");
	jw_u64(&w, rev);
	reply_end(r, &w);
	return (0);
}

/* [key, end) holds no key: end at or below key. */
static int
delete_range_empty(const struct write_args *wa)
{
	size_t	 n = wa->key_len < wa->end_len ? wa->key_len : wa->end_len;
	int	 c;

	if (wa->end == NULL)
		return (0);
	c = memcmp(wa->end, wa->key, n);
	return (c < 0 || (c == 0 && wa->end_len <= wa->key_len));
}

static int
delete_range_apply(struct req *r, uint64_t rev, int *wrote,
    struct store_err *se)
{
	struct write_args	*wa = &r->wa;
	struct jw		 w;
	uint64_t		 n = 0;
	int			 rc;

	if ((rc = fence_check(r, &wa->fence, se)) != 1)
		return (rc);
	if (!delete_range_empty(wa) && store_delete_range(r->md->store, rev,
	    wa->key, wa->key_len, wa->end, wa->end_len, &n, se) != 0)
		return (-1);
	*wrote = n > 0;
	reply_begin(r, &w);
	JW_NAME(&w, "deleted");
	jw_u64(&w, n);
	JW_NAME(&w, "rev");
	jw_u64(&w, n > 0 ? rev : rev - 1);
	reply_end(r, &w);
	return (0);
}

int
ops_delete_apply(struct req *r, uint64_t rev, int *wrote,
    struct store_err *se)
{
	struct write_args	*wa = &r->wa;
	struct key_meta		 m;
	struct jw		 w;
	int			 rc, deleted = 0;

	if (wa->range)
		return (delete_range_apply(r, rev, wrote, se));
	if ((rc = write_check(r, &m, se)) != 1)
		return (rc);
	if (store_delete(r->md->store, rev, 0, wa->key,
	    wa->key_len, &deleted, se) != 0)
		return (-1);
	*wrote = deleted;
	reply_begin(r, &w);
	JW_NAME(&w, "deleted");
	jw_bool(&w, deleted);
	JW_NAME(&w, "rev");
	jw_u64(&w, deleted ? rev : rev - 1);
	reply_end(r, &w);
	return (0);
}

const struct op ops_put_entry = {
	.name = "put",
	.flags = OP_WRITE | OP_ONE_WRITE,
	.fields = { "key", "value", "value_b64", "if_absent", "if_version",
	    "if_mod_rev", "fence", "lease" },
	.prepare = ops_put_prepare,
	.apply = ops_put_apply,
	.keys = ops_write_keys,
};

const struct op ops_delete_entry = {
	.name = "delete",
	.flags = OP_WRITE | OP_ONE_WRITE,
	.fields = { "key", "if_absent", "if_version", "if_mod_rev", "fence",
	    "prefix", "range_end" },
	.prepare = ops_delete_prepare,
	.apply = ops_delete_apply,
	.keys = ops_write_keys,
};
