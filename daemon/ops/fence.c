/*
 * Fences (metad-protocol(7), FENCES): put, delete and txn may carry
 * "fence":{"key":K,"epoch":N}; the write happens only if the epoch stored
 * at K is exactly N, checked in the same batch as the write.  An absent
 * fence key counts as epoch 0.
 */
#include <stdio.h>
#include <string.h>

#include "ops/epoch.h"
#include "ops/fence.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"

int
fence_parse(const cJSON *obj, struct fence *f, struct proto_err *e)
{
	static const char *const fields[] = { "key", "epoch", NULL };
	const cJSON	*fo;
	size_t		 len;

	memset(f, 0, sizeof *f);
	fo = cJSON_GetObjectItemCaseSensitive(obj, "fence");
	if (fo == NULL || cJSON_IsNull(fo))
		return (0);
	if (!cJSON_IsObject(fo))
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"fence\" must "
		    "be an object {\"key\":K,\"epoch\":N}"));
	if (ops_fields_check_obj(fields, fo, "\"fence\"", e) != 0)
		return (-1);
	if (proto_get_key(fo, "key", 1, &f->key, &f->key_len, e) != 1 ||
	    proto_get_u64(fo, "epoch", 1, &f->epoch, e) != 1) {
		len = strlen(e->msg);
		snprintf(e->msg + len, sizeof e->msg - len, " (in \"fence\")");
		return (-1);
	}
	f->set = 1;
	return (0);
}

static void
fence_failed(struct req *r, const struct fence *f,
    const struct epoch_cur *cur)
{
	struct jw	 w;
	char		 msg[PROTO_MSG_MAX];

	snprintf(msg, sizeof msg, "the epoch at the fence key is %llu, the write "
	    "carried %llu", (unsigned long long)cur->doc.epoch,
	    (unsigned long long)f->epoch);
	reply_error_begin(r, &w, PROTO_FENCED, msg);
	jw_name(&w, "current");
	jw_obj_open(&w);
	jw_name(&w, "key");
	jw_str(&w, f->key, f->key_len);
	jw_name(&w, "epoch");
	jw_u64(&w, cur->doc.epoch);
	jw_name(&w, "owner");
	jw_cstr(&w, cur->doc.owner);
	jw_obj_close(&w);
	reply_error_end(r, &w);
}

/*
 * Check the fence inside the batch; 1 if the write may go on, 0 if it was
 * answered (fenced, or the fence key holds no epoch), -1 on a store error.
 */
int
fence_check(struct req *r, const struct fence *f, struct store_err *se)
{
	struct epoch_cur	 cur;

	if (!f->set)
		return (1);
	if (epoch_read(r->md->store, f->key, f->key_len, &cur, se) != 0)
		return (-1);
	if (cur.found && !cur.doc_ok) {
		reply_error(r, PROTO_BAD_REQUEST, "the fence key does not "
		    "hold an epoch document " EPOCH_DOC_FORM);
		return (0);
	}
	if (cur.doc.epoch == f->epoch)
		return (1);
	fence_failed(r, f, &cur);
	return (0);
}
