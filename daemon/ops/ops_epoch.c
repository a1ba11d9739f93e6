/*
 * epoch_get and epoch_bump (metad-protocol(7), EPOCHS).  An epoch is a key
 * whose value is the JSON text {"epoch":N,"owner":"..."}; an absent key is
 * epoch 0.  Answers carry the epoch object
 * {"key","epoch","owner","version","mod_rev"}.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/epoch.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"

struct epoch_bump {
	const char	*key;		/* into the request */
	size_t		 key_len;
	const char	*owner;
	size_t		 owner_len;
	int		 has_if;
	uint64_t	 if_epoch;
};

#define OPS_EPOCH_NOT_DOC	"the key does not hold an epoch document " \
				EPOCH_DOC_FORM

static void
ops_epoch_got(void *arg, long n, const struct store_kv *kv, int more,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct proto_err	 e;
	struct epoch_cur	 cur;
	struct jw		 w;
	const char		*key;
	size_t			 klen;

	if (n < 0)
		reply_store_error(r, se);
	else {
		/* Checked when the request came. */
		(void)proto_get_key(r->json, "key", 1, &key, &klen, &e);
		epoch_cur_of(&cur, key, klen, n > 0 ? kv : NULL);
		if (cur.found && !cur.doc_ok)
			reply_error(r, PROTO_BAD_REQUEST, OPS_EPOCH_NOT_DOC);
		else {
			reply_begin(r, &w);
			epoch_json(&w, "epoch", &cur);
			jw_name(&w, "rev");
			jw_u64(&w, store_read_rev(r->md->store));
			reply_end(r, &w);
		}
	}
	req_done(r);
}

void
ops_epoch_get(struct req *r)
{
	struct proto_err	 e;
	const char		*key;
	size_t			 klen;

	if (proto_get_key(r->json, "key", 1, &key, &klen, &e) != 1) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	store_read_get(r->md->store, key, klen, ops_epoch_got, r);
}

int
ops_epoch_bump_prepare(struct req *r, struct proto_err *e)
{
	struct epoch_bump	*b;
	int			 rc;

	b = xcalloc(1, sizeof *b);
	r->state = b;
	r->state_free = free;
	if (proto_get_key(r->json, "key", 1, &b->key, &b->key_len, e) != 1)
		return (-1);
	if ((rc = proto_get_str(r->json, "owner", 0, &b->owner, &b->owner_len,
	    e)) == -1)
		return (-1);
	if (rc == 0)
		b->owner = "";
	if (b->owner_len > OWNER_MAX_BYTES)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"owner\" is "
		    "%zu bytes, the limit is %d", b->owner_len,
		    OWNER_MAX_BYTES));
	if ((rc = proto_get_u64(r->json, "if_epoch", 0, &b->if_epoch,
	    e)) == -1)
		return (-1);
	b->has_if = rc == 1;
	if (cJSON_GetObjectItemCaseSensitive(r->json, "fence") != NULL)
		return (proto_fail(e, PROTO_BAD_REQUEST, "epoch_bump takes no "
		    "\"fence\"; use \"if_epoch\""));
	return (0);
}

/* The bump may go on: 1; answered (bad_request, failed_precondition): 0. */
static int
epoch_bump_check(struct req *r, const struct epoch_bump *b,
    const struct epoch_cur *cur)
{
	struct jw	 w;
	char		 msg[PROTO_MSG_MAX];

	if (cur->found && !cur->doc_ok) {
		reply_error(r, PROTO_BAD_REQUEST, OPS_EPOCH_NOT_DOC);
		return (0);
	}
	if (b->has_if && cur->doc.epoch != b->if_epoch) {
		snprintf(msg, sizeof msg, "epoch is %llu, not %llu",
		    (unsigned long long)cur->doc.epoch,
		    (unsigned long long)b->if_epoch);
		reply_error_begin(r, &w, PROTO_FAILED_PRECONDITION, msg);
		epoch_json(&w, "current", cur);
		reply_error_end(r, &w);
		return (0);
	}
	if (cur->doc.epoch >= JSON_INT_MAX) {
		reply_error(r, PROTO_BAD_REQUEST, "the epoch is at its limit "
		    "(2^53 - 1)");
		return (0);
	}
	return (1);
}

void
ops_epoch_bump_keys(struct req *r, struct store_keys *ks)
{
	const struct epoch_bump	*b = r->state;

	store_keys_add(ks, b->key, b->key_len);
}

int
ops_epoch_bump_apply(struct req *r, uint64_t rev, int *wrote,
    struct store_err *se)
{
	struct epoch_bump	*b = r->state;
	struct epoch_cur	 cur;
	struct store_kv		 kv;
	struct buf		 doc;
	struct jw		 w;
	int			 rc;

	if (epoch_read(r->md->store, b->key, b->key_len, &cur, se) != 0)
		return (-1);
	if (epoch_bump_check(r, b, &cur) == 0)
		return (0);
	buf_init(&doc);
	epoch_doc_write(&doc, cur.doc.epoch + 1, b->owner);
	rc = store_put(r->md->store, rev, 0, b->key, b->key_len, doc.data,
	    doc.len, &kv, NULL, se);
	buf_free(&doc);
	if (rc != 0)
		return (-1);
	*wrote = 1;
	cur.found = cur.doc_ok = 1;
	cur.doc.epoch++;
	memcpy(cur.doc.owner, b->owner, b->owner_len + 1);
	cur.version = kv.version;
	cur.mod_rev = kv.mod_rev;
	reply_begin(r, &w);
	epoch_json(&w, "epoch", &cur);
	jw_name(&w, "rev");
	jw_u64(&w, rev);
	reply_end(r, &w);
	return (0);
}

const struct op ops_epoch_get_entry = {
	.name = "epoch_get",
	.fields = { "key" },
	.run = ops_epoch_get,
};

const struct op ops_epoch_bump_entry = {
	.name = "epoch_bump",
	.flags = OP_WRITE | OP_ONE_WRITE | OP_IDEM,
	.fields = { "key", "owner", "if_epoch", "fence" },
	.prepare = ops_epoch_bump_prepare,
	.apply = ops_epoch_bump_apply,
	.keys = ops_epoch_bump_keys,
};
