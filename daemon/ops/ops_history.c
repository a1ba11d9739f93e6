/*
 * The history op (metad-protocol(7), history): one key's puts and deletes,
 * oldest first, from from_rev (default: the oldest kept, compact_rev) in
 * the shape of watch events without "watch"; at most limit of them (a
 * revision is never cut: a txn may write the key more than once), and more
 * when others follow.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "metad.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "core/reply.h"

static void
ops_history_event(struct jw *w, const struct store_event *ev)
{
	jw_obj_open(w);
	jw_name(w, "event");
	jw_cstr(w, ev->type == STORE_EVENT_PUT ? "put" : "delete");
	jw_name(w, "key");
	jw_str(w, ev->kv.key, ev->kv.key_len);
	if (ev->type == STORE_EVENT_PUT) {
		jw_value(w, ev->kv.value, ev->kv.value_len);
		jw_name(w, "version");
		jw_u64(w, ev->kv.version);
		jw_name(w, "create_rev");
		jw_u64(w, ev->kv.create_rev);
	}
	jw_name(w, "mod_rev");
	jw_u64(w, ev->rev);
	jw_obj_close(w);
}

static void
ops_history_done(void *arg, long n, const struct store_event *evs, int more,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct jw	 w;
	long		 i;

	size_t		 len = 64;

	for (i = 0; i < n; i++)
		len += reply_kv_len(&evs[i].kv, evs[i].type ==
		    STORE_EVENT_PUT) + sizeof "\"event\":\"delete\",";
	if (n < 0)
		ops_read_fail(r, se);
	else if (reply_too_large(r, len, "ask for fewer events "
	    "(\"limit\", then \"from_rev\" past the last one)"))
		;
	else {
		reply_begin(r, &w);
		jw_name(&w, "events");
		jw_arr_open(&w);
		for (i = 0; i < n; i++)
			ops_history_event(&w, &evs[i]);
		jw_arr_close(&w);
		jw_name(&w, "more");
		jw_bool(&w, more);
		jw_name(&w, "rev");
		jw_u64(&w, store_read_rev(r->md->store));
		reply_end(r, &w);
	}
	req_done(r);
}

void
ops_history(struct req *r)
{
	struct store		*st = r->md->store;
	struct proto_err	 e;
	const char		*key;
	size_t			 klen;
	uint64_t		 from, limit = HISTORY_LIMIT_DEFAULT;

	from = store_compact_rev(st);
	if (proto_get_key(r->json, "key", 1, &key, &klen, &e) != 1 ||
	    proto_get_u64(r->json, "from_rev", 0, &from, &e) == -1 ||
	    proto_get_u64(r->json, "limit", 0, &limit, &e) == -1) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	if (limit == 0 || limit > HISTORY_LIMIT_MAX) {
		snprintf(e.msg, sizeof e.msg, "field \"limit\" must be from 1 "
		    "to %d", HISTORY_LIMIT_MAX);
		reply_error(r, PROTO_BAD_REQUEST, e.msg);
		req_done(r);
		return;
	}
	store_read_key_history(st, key, klen, from, (size_t)limit,
	    ops_history_done, r);
}

const struct op ops_history_entry = {
	.name = "history",
	.fields = { "key", "from_rev", "limit" },
	.run = ops_history,
};
