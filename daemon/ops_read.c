#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conn.h"
#include "metad.h"
#include "metad_limits.h"
#include "ops.h"
#include "reply.h"

void
ops_hello(struct req *r)
{
	struct jw	 w;

	reply_begin(r, &w);
	jw_name(&w, "server");
	jw_cstr(&w, "metad");
	jw_name(&w, "version");
	jw_cstr(&w, METAD_VERSION);
	jw_name(&w, "protocol");
	jw_u64(&w, METAD_PROTOCOL);
	jw_name(&w, "backend");
	jw_cstr(&w, r->md->store->backend->name);
	jw_name(&w, "access");
	jw_cstr(&w, conn_access_name(r->conn->access));
	jw_name(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

void
ops_ping(struct req *r)
{
	struct jw	 w;

	reply_begin(r, &w);
	jw_name(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

static void
ops_get_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct jw	 w;

	if (n < 0)
		reply_store_error(r, se);
	else {
		reply_begin(r, &w);
		reply_kv(&w, "kv", n > 0 ? &kvs[0] : NULL, 1);
		jw_name(&w, "rev");
		jw_u64(&w, store_read_rev(r->md->store));
		reply_end(r, &w);
	}
	req_done(r);
}

void
ops_get(struct req *r)
{
	struct proto_err	 e;
	const char		*key;
	size_t			 klen;

	if (proto_get_key(r->json, "key", 1, &key, &klen, &e) != 1) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	store_read_get(r->md->store, key, klen, ops_get_done, r);
}

static int
ops_list_args(struct req *r, struct store_range *rg, struct proto_err *e)
{
	uint64_t	 limit = LIST_LIMIT_DEFAULT;
	int		 keys_only = 0;

	memset(rg, 0, sizeof *rg);
	if (proto_get_prefix(r->json, "prefix", &rg->prefix, &rg->prefix_len,
	    e) == -1)
		return (-1);
	if (proto_get_prefix(r->json, "after", &rg->after, &rg->after_len,
	    e) == -1)
		return (-1);
	if (rg->after_len == 0)
		rg->after = NULL;
	if (proto_get_u64(r->json, "limit", 0, &limit, e) == -1)
		return (-1);
	if (limit == 0 || limit > LIST_LIMIT_MAX)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"limit\" "
		    "must be from 1 to %d", LIST_LIMIT_MAX));
	if (proto_get_bool(r->json, "keys_only", 0, &keys_only, e) == -1)
		return (-1);
	rg->limit = limit;
	rg->keys_only = keys_only;
	return (0);
}

static void
ops_list_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct proto_err	 e;
	struct jw		 w;
	long			 i;
	int			 keys_only = 0;

	if (n < 0)
		reply_store_error(r, se);
	else {
		/* Checked when the request came. */
		(void)proto_get_bool(r->json, "keys_only", 0, &keys_only, &e);
		reply_begin(r, &w);
		jw_name(&w, "kvs");
		jw_arr_open(&w);
		for (i = 0; i < n; i++)
			reply_kv(&w, NULL, &kvs[i], !keys_only);
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
ops_list(struct req *r)
{
	struct proto_err	 e;
	struct store_range	 rg;

	if (ops_list_args(r, &rg, &e) != 0) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	store_read_range(r->md->store, &rg, ops_list_done, r);
}

/* "endpoints":[{"url":U,"healthy":B},...] for a remote store. */
static void
ops_status_endpoints(struct jw *w, const struct store_stats *st)
{
	unsigned	 i;

	if (st->nendpoints == 0)
		return;
	jw_name(w, "endpoints");
	jw_arr_open(w);
	for (i = 0; i < st->nendpoints; i++) {
		jw_obj_open(w);
		jw_name(w, "url");
		jw_cstr(w, st->endpoint[i].url);
		jw_name(w, "healthy");
		jw_bool(w, st->endpoint[i].healthy);
		jw_obj_close(w);
	}
	jw_arr_close(w);
}

static void
ops_status_done(void *arg, const struct store_stats *st,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct metad	*md = r->md;
	struct jw	 w;

	if (st == NULL) {
		reply_store_error(r, se);
		req_done(r);
		return;
	}
	reply_begin(r, &w);
	jw_name(&w, "rev");
	jw_u64(&w, store_read_rev(md->store));
	jw_name(&w, "compact_rev");
	jw_u64(&w, md->store->compact_rev);
	jw_name(&w, "keys");
	jw_u64(&w, st->keys);
	jw_name(&w, "db_bytes");
	jw_u64(&w, st->db_bytes);
	jw_name(&w, "connections");
	jw_u64(&w, md->nconns);
	jw_name(&w, "watches");
	jw_u64(&w, md->nwatches);
	jw_name(&w, "uptime_s");
	jw_u64(&w, (uint64_t)(time(NULL) - md->started));
	jw_name(&w, "backend");
	jw_cstr(&w, md->store->backend->name);
	ops_status_endpoints(&w, st);
	reply_end(r, &w);
	req_done(r);
}

void
ops_status(struct req *r)
{
	store_read_stats(r->md->store, ops_status_done, r);
}
