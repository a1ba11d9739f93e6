/*
 * The reads: hello, ping, status, and get and list with the options of
 * metad-protocol(7), READS AT A REVISION and CONSISTENCY (a past rev,
 * min_rev, consistency).  The store says how it meets a consistency
 * (store_read_get_at()): a local one is linearizable either way; a read
 * with min_rev and no consistency is serializable, once the daemon's view
 * reached min_rev.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metad.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "ops/ops_read.h"
#include "core/reply.h"
#include "core/wait.h"

void
ops_hello(struct req *r)
{
	struct jw	 w;

	reply_begin(r, &w);
	JW_NAME(&w, "server");
	jw_cstr(&w, "metad");
	JW_NAME(&w, "version");
	jw_cstr(&w, METAD_VERSION);
	JW_NAME(&w, "protocol");
	jw_u64(&w, METAD_PROTOCOL);
	JW_NAME(&w, "backend");
	jw_cstr(&w, store_name(r->md->store));
	JW_NAME(&w, "access");
	jw_cstr(&w, req_access_name(r->access));
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	JW_NAME(&w, "max_value_bytes");
	jw_u64(&w, r->md->cfg.max_value_bytes);
	reply_end(r, &w);
	req_done(r);
}

void
ops_ping(struct req *r)
{
	struct jw	 w;

	reply_begin(r, &w);
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

int
ops_read_args(struct req *r, struct read_args *a, struct proto_err *e)
{
	const char	*c;
	size_t		 clen;
	int		 rc;

	if ((rc = proto_get_u64(r->json, "rev", 0, &a->rev, e)) == -1)
		return (-1);
	a->has_rev = rc == 1;
	if (proto_get_u64(r->json, "min_rev", 0, &a->min_rev, e) == -1)
		return (-1);
	a->timeout_ms = READ_TIMEOUT_DEFAULT_MS;
	if (proto_get_u64(r->json, "timeout_ms", 0, &a->timeout_ms, e) == -1)
		return (-1);
	if (a->timeout_ms > WAIT_TIMEOUT_MAX_MS)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"timeout_ms\" "
		    "is over the limit of %llu (24 hours)",
		    (unsigned long long)WAIT_TIMEOUT_MAX_MS));
	if ((rc = proto_get_str(r->json, "consistency", 0, &c, &clen,
	    e)) == -1)
		return (-1);
	if (rc == 1 && strcmp(c, "serializable") == 0)
		a->serializable = 1;
	else if (rc == 1 && strcmp(c, "linearizable") != 0)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field "
		    "\"consistency\" must be \"linearizable\" or "
		    "\"serializable\""));
	/* min_rev says what the read must see: the view, once there. */
	if (rc != 1 && a->min_rev > 0)
		a->serializable = 1;
	return (0);
}

/* A read's store error; compacted carries the compact rev. */
void
ops_read_fail(struct req *r, const struct store_err *se)
{
	struct jw	 w;

	if (se->code != STORE_ERR_COMPACTED) {
		reply_store_error(r, se);
		return;
	}
	reply_error_begin(r, &w, PROTO_COMPACTED, se->msg);
	JW_NAME(&w, "compact_rev");
	jw_u64(&w, store_compact_rev(r->md->store));
	reply_error_end(r, &w);
}

/*
 * "rev": 0 is the empty store, before any write (the store's own rev 0
 * means its current state): nothing, or compacted.
 */
int
ops_read_at_zero(struct req *r, const struct read_args *a)
{
	struct store_err	 se;

	if (!a->has_rev || a->rev != 0)
		return (0);
	if (store_compact_rev(r->md->store) > 0) {
		store_err_set(&se, STORE_ERR_COMPACTED, "rev 0 is compacted "
		    "(kept from %llu)",
		    (unsigned long long)store_compact_rev(r->md->store));
		ops_read_fail(r, &se);
		req_done(r);
		return (1);
	}
	return (-1);
}

static void
ops_get_answer(struct req *r, const struct store_kv *kv)
{
	struct jw	 w;

	reply_begin(r, &w);
	reply_kv(&w, "kv", kv, 1);
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

static void
ops_get_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req	*r = arg;

	if (n >= 0) {
		ops_get_answer(r, n > 0 ? &kvs[0] : NULL);
		return;
	}
	ops_read_fail(r, se);
	req_done(r);
}

static void
ops_get_go(struct req *r)
{
	struct read_args	*a = r->state;

	switch (ops_read_at_zero(r, a)) {
	case 1:
		return;
	case -1:
		ops_get_answer(r, NULL);
		return;
	}
	store_read_get_at(r->md->store, a->key, a->key_len, a->rev,
	    a->serializable, ops_get_done, r);
}

/* A read with its arguments in r->state: now, or once min_rev is seen. */
void
ops_read_start(struct req *r, struct read_args *a, void (*go)(struct req *))
{
	r->state = a;
	if (r->state_free == NULL)
		r->state_free = free;
	if (a->min_rev > 0)
		wait_rev(r, a->min_rev, a->timeout_ms, go);
	else
		go(r);
}

void
ops_get(struct req *r)
{
	struct proto_err	 e;
	struct read_args	*a;

	if (r->json != NULL &&
	    cJSON_GetObjectItemCaseSensitive(r->json, "keys") != NULL) {
		ops_mget(r);
		return;
	}
	a = xmalloc(sizeof *a);		/* not calloc: see conn_handle() */
	memset(a, 0, sizeof *a);
	if (r->json == NULL) {
		/* ops_fast: a key and consistency, other options' defaults */
		a->key = r->wa.key;
		a->key_len = r->wa.key_len;
		a->timeout_ms = READ_TIMEOUT_DEFAULT_MS;
		a->serializable = r->serializable;
	} else if (proto_get_key(r->json, "key", 1, &a->key, &a->key_len,
	    &e) != 1 || ops_read_args(r, a, &e) != 0) {
		free(a);
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	ops_read_start(r, a, ops_get_go);
}

/*
 * "key" with "range_end": the keys in [key, range_end), as etcd's ranges,
 * instead of a prefix.
 */
static int
ops_list_span(struct req *r, struct store_range *rg, struct proto_err *e)
{
	int	 has_key = cJSON_GetObjectItemCaseSensitive(r->json, "key") != NULL;
	int	 has_end = cJSON_GetObjectItemCaseSensitive(r->json, "range_end") != NULL;

	if (!has_key && !has_end)
		return (0);
	if (has_key != has_end)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give \"key\" and "
		    "\"range_end\" together (the keys in [key, range_end))"));
	if (cJSON_GetObjectItemCaseSensitive(r->json, "prefix") != NULL)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give \"prefix\", or "
		    "\"key\" with \"range_end\", not both"));
	if (proto_get_key(r->json, "key", 1, &rg->start, &rg->start_len,
	    e) != 1 || proto_get_key(r->json, "range_end", 1, &rg->end,
	    &rg->end_len, e) != 1)
		return (-1);
	return (0);
}

static int
ops_list_args(struct req *r, struct store_range *rg, int *count_only,
    struct proto_err *e)
{
	uint64_t	 limit = LIST_LIMIT_DEFAULT;
	int		 keys_only = 0;

	memset(rg, 0, sizeof *rg);
	if (proto_get_prefix(r->json, "prefix", &rg->prefix, &rg->prefix_len,
	    e) == -1 || ops_list_span(r, rg, e) != 0)
		return (-1);
	if (proto_get_bool(r->json, "count_only", 0, count_only, e) == -1 ||
	    proto_get_bool(r->json, "reverse", 0, &rg->reverse, e) == -1)
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
ops_list_answer(struct req *r, long n, const struct store_kv *kvs, int more)
{
	struct read_args	*a = r->state;
	struct jw		 w;
	size_t			 len = 64;
	long			 i;

	for (i = 0; i < n; i++)
		len += reply_kv_len(&kvs[i], !a->rg.keys_only);
	if (reply_too_large(r, len, "ask for fewer keys (\"limit\", then "
	    "\"after\" the last one), or \"keys_only\"")) {
		req_done(r);
		return;
	}
	reply_begin(r, &w);
	JW_NAME(&w, "kvs");
	jw_arr_open(&w);
	for (i = 0; i < n; i++)
		reply_kv(&w, NULL, &kvs[i], !a->rg.keys_only);
	jw_arr_close(&w);
	JW_NAME(&w, "more");
	jw_bool(&w, more);
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

static void
ops_list_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req	*r = arg;

	if (n >= 0) {
		ops_list_answer(r, n, kvs, more);
		return;
	}
	ops_read_fail(r, se);
	req_done(r);
}

static void
ops_list_go(struct req *r)
{
	struct read_args	*a = r->state;

	switch (ops_read_at_zero(r, a)) {
	case 1:
		return;
	case -1:
		ops_list_answer(r, 0, NULL, 0);
		return;
	}
	a->rg.rev = a->rev;
	a->rg.serializable = a->serializable;
	store_read_range(r->md->store, &a->rg, ops_list_done, r);
}

void
ops_list(struct req *r)
{
	struct proto_err	 e;
	struct read_args	*a;
	int			 count_only = 0;

	a = xcalloc(1, sizeof *a);
	if (ops_list_args(r, &a->rg, &count_only, &e) != 0 ||
	    ops_read_args(r, a, &e) != 0) {
		free(a);
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	if (count_only) {
		ops_list_count(r, a);
		return;
	}
	ops_read_start(r, a, ops_list_go);
}

/* "endpoints":[{"url":U,"healthy":B},...] for a remote store. */
static void
ops_status_endpoints(struct jw *w, const struct store_stats *st)
{
	unsigned	 i;

	if (st->nendpoints == 0)
		return;
	JW_NAME(w, "endpoints");
	jw_arr_open(w);
	for (i = 0; i < st->nendpoints; i++) {
		jw_obj_open(w);
		JW_NAME(w, "url");
		jw_cstr(w, st->endpoint[i].url);
		JW_NAME(w, "healthy");
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
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(md->store));
	JW_NAME(&w, "compact_rev");
	jw_u64(&w, store_compact_rev(md->store));
	JW_NAME(&w, "keys");
	jw_u64(&w, st->keys);
	JW_NAME(&w, "db_bytes");
	jw_u64(&w, st->db_bytes);
	JW_NAME(&w, "connections");
	jw_u64(&w, md->nconns);
	JW_NAME(&w, "watches");
	jw_u64(&w, md->nwatches);
	JW_NAME(&w, "uptime_s");
	jw_u64(&w, (uint64_t)(time(NULL) - md->started));
	JW_NAME(&w, "backend");
	jw_cstr(&w, store_name(md->store));
	ops_status_endpoints(&w, st);
	if (st->view[0] != '\0') {
		JW_NAME(&w, "view");
		jw_cstr(&w, st->view);
	}
	reply_end(r, &w);
	req_done(r);
}

void
ops_status(struct req *r)
{
	store_read_stats(r->md->store, ops_status_done, r);
}

const struct op ops_hello_entry = {
	.name = "hello",
	.run = ops_hello,
};

const struct op ops_ping_entry = {
	.name = "ping",
	.run = ops_ping,
};

const struct op ops_get_entry = {
	.name = "get",
	.fields = { "key", "keys", "rev", "min_rev", "consistency",
	    "timeout_ms" },
	.run = ops_get,
};

const struct op ops_list_entry = {
	.name = "list",
	.fields = { "prefix", "after", "limit", "keys_only", "rev", "min_rev",
	    "consistency", "timeout_ms", "key", "range_end", "count_only",
	    "reverse" },
	.run = ops_list,
};

const struct op ops_status_entry = {
	.name = "status",
	.run = ops_status,
};
