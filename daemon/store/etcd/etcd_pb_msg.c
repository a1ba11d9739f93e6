/*
 * etcd's messages, field by field (etcd_pb_int.h), from etcd 3.4's
 * rpc.proto and kv.proto: only the fields named there, by number; and the
 * rpcs that carry them, by gateway path and gRPC method.
 */
#include <string.h>

#include "store/etcd/etcd_pb.h"
#include "store/etcd/etcd_pb_int.h"

#define NF(a)	(sizeof (a) / sizeof (a)[0])
#define MSG(a)	{ a, NF(a) }

static const char *const cmp_result[] = { "EQUAL", "GREATER", "LESS",
    "NOT_EQUAL", NULL };
static const char *const cmp_target[] = { "VERSION", "CREATE", "MOD",
    "VALUE", "LEASE", NULL };
static const char *const sort_order[] = { "NONE", "ASCEND", "DESCEND",
    NULL };
static const char *const sort_target[] = { "KEY", "VERSION", "CREATE",
    "MOD", "VALUE", NULL };

static const struct pb_field f_compare[] = {
	{ "result", 1, PB_ENUM, 0, NULL, cmp_result },
	{ "target", 2, PB_ENUM, 0, NULL, cmp_target },
	{ "key", 3, PB_BYTES, 0, NULL, NULL },
	{ "version", 4, PB_INT, 0, NULL, NULL },
	{ "create_revision", 5, PB_INT, 0, NULL, NULL },
	{ "mod_revision", 6, PB_INT, 0, NULL, NULL },
	{ "value", 7, PB_BYTES, 0, NULL, NULL },
	{ "lease", 8, PB_INT, 0, NULL, NULL },
	{ "range_end", 64, PB_BYTES, 0, NULL, NULL },
};
static const struct pb_field f_range[] = {
	{ "key", 1, PB_BYTES, 0, NULL, NULL },
	{ "range_end", 2, PB_BYTES, 0, NULL, NULL },
	{ "limit", 3, PB_INT, 0, NULL, NULL },
	{ "revision", 4, PB_INT, 0, NULL, NULL },
	{ "sort_order", 5, PB_ENUM, 0, NULL, sort_order },
	{ "sort_target", 6, PB_ENUM, 0, NULL, sort_target },
	{ "serializable", 7, PB_BOOL, 0, NULL, NULL },
	{ "keys_only", 8, PB_BOOL, 0, NULL, NULL },
	{ "count_only", 9, PB_BOOL, 0, NULL, NULL },
	{ "min_mod_revision", 10, PB_INT, 0, NULL, NULL },
	{ "max_mod_revision", 11, PB_INT, 0, NULL, NULL },
	{ "min_create_revision", 12, PB_INT, 0, NULL, NULL },
	{ "max_create_revision", 13, PB_INT, 0, NULL, NULL },
};
static const struct pb_field f_put[] = {
	{ "key", 1, PB_BYTES, 0, NULL, NULL },
	{ "value", 2, PB_BYTES, 0, NULL, NULL },
	{ "lease", 3, PB_INT, 0, NULL, NULL },
	{ "prev_kv", 4, PB_BOOL, 0, NULL, NULL },
	{ "ignore_value", 5, PB_BOOL, 0, NULL, NULL },
	{ "ignore_lease", 6, PB_BOOL, 0, NULL, NULL },
};
static const struct pb_field f_delete[] = {
	{ "key", 1, PB_BYTES, 0, NULL, NULL },
	{ "range_end", 2, PB_BYTES, 0, NULL, NULL },
	{ "prev_kv", 3, PB_BOOL, 0, NULL, NULL },
};
static const struct pb_msg m_compare = MSG(f_compare);
static const struct pb_msg m_range = MSG(f_range);
static const struct pb_msg m_put = MSG(f_put);
static const struct pb_msg m_delete = MSG(f_delete);
static const struct pb_msg m_txn, m_requestop;
static const struct pb_field f_requestop[] = {
	{ "request_range", 1, PB_MSG, 0, &m_range, NULL },
	{ "request_put", 2, PB_MSG, 0, &m_put, NULL },
	{ "request_delete_range", 3, PB_MSG, 0, &m_delete, NULL },
	{ "request_txn", 4, PB_MSG, 0, &m_txn, NULL },
};
static const struct pb_field f_txn[] = {
	{ "compare", 1, PB_MSG, 1, &m_compare, NULL },
	{ "success", 2, PB_MSG, 1, &m_requestop, NULL },
	{ "failure", 3, PB_MSG, 1, &m_requestop, NULL },
};
static const struct pb_msg m_requestop = MSG(f_requestop);
static const struct pb_msg m_txn = MSG(f_txn);

/* The answers. */
static const struct pb_field f_header[] = {
	{ "cluster_id", 1, PB_UINT, 0, NULL, NULL },
	{ "member_id", 2, PB_UINT, 0, NULL, NULL },
	{ "revision", 3, PB_INT, 0, NULL, NULL },
	{ "raft_term", 4, PB_UINT, 0, NULL, NULL },
};
static const struct pb_field f_kv[] = {
	{ "key", 1, PB_BYTES, 0, NULL, NULL },
	{ "create_revision", 2, PB_INT, 0, NULL, NULL },
	{ "mod_revision", 3, PB_INT, 0, NULL, NULL },
	{ "version", 4, PB_INT, 0, NULL, NULL },
	{ "value", 5, PB_BYTES, 0, NULL, NULL },
	{ "lease", 6, PB_INT, 0, NULL, NULL },
};
static const struct pb_msg m_header = MSG(f_header);
static const struct pb_msg m_kv = MSG(f_kv);
static const struct pb_field f_range_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "kvs", 2, PB_MSG, 1, &m_kv, NULL },
	{ "more", 3, PB_BOOL, 0, NULL, NULL },
	{ "count", 4, PB_INT, 0, NULL, NULL },
};
static const struct pb_field f_put_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "prev_kv", 2, PB_MSG, 0, &m_kv, NULL },
};
static const struct pb_field f_delete_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "deleted", 2, PB_INT, 0, NULL, NULL },
	{ "prev_kvs", 3, PB_MSG, 1, &m_kv, NULL },
};
static const struct pb_msg m_range_r = MSG(f_range_r);
static const struct pb_msg m_put_r = MSG(f_put_r);
static const struct pb_msg m_delete_r = MSG(f_delete_r);
static const struct pb_msg m_txn_r, m_responseop;
static const struct pb_field f_responseop[] = {
	{ "response_range", 1, PB_MSG, 0, &m_range_r, NULL },
	{ "response_put", 2, PB_MSG, 0, &m_put_r, NULL },
	{ "response_delete_range", 3, PB_MSG, 0, &m_delete_r, NULL },
	{ "response_txn", 4, PB_MSG, 0, &m_txn_r, NULL },
};
static const struct pb_field f_txn_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "succeeded", 2, PB_BOOL, 0, NULL, NULL },
	{ "responses", 3, PB_MSG, 1, &m_responseop, NULL },
};
static const struct pb_msg m_responseop = MSG(f_responseop);
static const struct pb_msg m_txn_r = MSG(f_txn_r);

/* The watch stream (rpc.proto's Watch): one create or progress request. */
static const char *const ev_type[] = { "PUT", "DELETE", NULL };
static const struct pb_field f_wcreate[] = {
	{ "key", 1, PB_BYTES, 0, NULL, NULL },
	{ "range_end", 2, PB_BYTES, 0, NULL, NULL },
	{ "start_revision", 3, PB_INT, 0, NULL, NULL },
	{ "progress_notify", 4, PB_BOOL, 0, NULL, NULL },
	{ "prev_kv", 6, PB_BOOL, 0, NULL, NULL },
};
static const struct pb_field f_wcancel[] = {
	{ "watch_id", 1, PB_INT, 0, NULL, NULL },
};
static const struct pb_msg m_wcreate = MSG(f_wcreate);
static const struct pb_msg m_wcancel = MSG(f_wcancel);
static const struct pb_field f_watch[] = {
	{ "create_request", 1, PB_MSG, 0, &m_wcreate, NULL },
	{ "cancel_request", 2, PB_MSG, 0, &m_wcancel, NULL },
};
static const struct pb_field f_event[] = {
	{ "type", 1, PB_ENUM, 0, NULL, ev_type },
	{ "kv", 2, PB_MSG, 0, &m_kv, NULL },
	{ "prev_kv", 3, PB_MSG, 0, &m_kv, NULL },
};
static const struct pb_msg m_event = MSG(f_event);
static const struct pb_field f_watch_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "watch_id", 2, PB_INT, 0, NULL, NULL },
	{ "created", 3, PB_BOOL, 0, NULL, NULL },
	{ "canceled", 4, PB_BOOL, 0, NULL, NULL },
	{ "compact_revision", 5, PB_INT, 0, NULL, NULL },
	{ "cancel_reason", 6, PB_STRING, 0, NULL, NULL },
	{ "fragment", 7, PB_BOOL, 0, NULL, NULL },
	{ "events", 11, PB_MSG, 1, &m_event, NULL },
};
static const struct pb_msg m_watch = MSG(f_watch);
static const struct pb_msg m_watch_r = MSG(f_watch_r);

/* KV.Compact */
static const struct pb_field f_compact[] = {
	{ "revision", 1, PB_INT, 0, NULL, NULL },
	{ "physical", 2, PB_BOOL, 0, NULL, NULL },
};
static const struct pb_field f_header_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
};
static const struct pb_msg m_compact = MSG(f_compact);
static const struct pb_msg m_header_r = MSG(f_header_r);

/* Maintenance.Status: no request field. */
static const struct pb_field f_status_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "version", 2, PB_STRING, 0, NULL, NULL },
	{ "dbSize", 3, PB_INT, 0, NULL, NULL },
	{ "leader", 4, PB_UINT, 0, NULL, NULL },
	{ "raftIndex", 5, PB_UINT, 0, NULL, NULL },
	{ "raftTerm", 6, PB_UINT, 0, NULL, NULL },
	{ "raftAppliedIndex", 7, PB_UINT, 0, NULL, NULL },
	{ "errors", 8, PB_STRING, 1, NULL, NULL },
	{ "dbSizeInUse", 9, PB_INT, 0, NULL, NULL },
	{ "isLearner", 10, PB_BOOL, 0, NULL, NULL },
};
static const struct pb_msg m_empty = { NULL, 0 };
static const struct pb_msg m_status_r = MSG(f_status_r);

/* The Lease service. */
static const struct pb_field f_lgrant[] = {
	{ "TTL", 1, PB_INT, 0, NULL, NULL },
	{ "ID", 2, PB_INT, 0, NULL, NULL },
};
static const struct pb_field f_lgrant_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "ID", 2, PB_INT, 0, NULL, NULL },
	{ "TTL", 3, PB_INT, 0, NULL, NULL },
	{ "error", 4, PB_STRING, 0, NULL, NULL },
};
static const struct pb_field f_lid[] = {	/* revoke, keepalive */
	{ "ID", 1, PB_INT, 0, NULL, NULL },
};
static const struct pb_field f_lka_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "ID", 2, PB_INT, 0, NULL, NULL },
	{ "TTL", 3, PB_INT, 0, NULL, NULL },
};
static const struct pb_field f_lttl[] = {
	{ "ID", 1, PB_INT, 0, NULL, NULL },
	{ "keys", 2, PB_BOOL, 0, NULL, NULL },
};
static const struct pb_field f_lttl_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "ID", 2, PB_INT, 0, NULL, NULL },
	{ "TTL", 3, PB_INT, 0, NULL, NULL },
	{ "grantedTTL", 4, PB_INT, 0, NULL, NULL },
	{ "keys", 5, PB_BYTES, 1, NULL, NULL },
};
static const struct pb_msg m_lid = MSG(f_lid);
static const struct pb_field f_lleases_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "leases", 2, PB_MSG, 1, &m_lid, NULL },	/* LeaseStatus */
};
static const struct pb_msg m_lgrant = MSG(f_lgrant);
static const struct pb_msg m_lgrant_r = MSG(f_lgrant_r);
static const struct pb_msg m_lka_r = MSG(f_lka_r);
static const struct pb_msg m_lttl = MSG(f_lttl);
static const struct pb_msg m_lttl_r = MSG(f_lttl_r);
static const struct pb_msg m_lleases_r = MSG(f_lleases_r);

/* Auth.Authenticate: a user's token. */
static const struct pb_field f_auth[] = {
	{ "name", 1, PB_STRING, 0, NULL, NULL },
	{ "password", 2, PB_STRING, 0, NULL, NULL },
};
static const struct pb_field f_auth_r[] = {
	{ "header", 1, PB_MSG, 0, &m_header, NULL },
	{ "token", 2, PB_STRING, 0, NULL, NULL },
};
static const struct pb_msg m_auth = MSG(f_auth);
static const struct pb_msg m_auth_r = MSG(f_auth_r);

const struct pb_rpc pb_rpcs[ETCD_PB_NONE] = {
	[ETCD_PB_RANGE] = { "/v3/kv/range", "/etcdserverpb.KV/Range",
	    &m_range, &m_range_r },
	[ETCD_PB_PUT] = { "/v3/kv/put", "/etcdserverpb.KV/Put", &m_put,
	    &m_put_r },
	[ETCD_PB_DELETE] = { "/v3/kv/deleterange",
	    "/etcdserverpb.KV/DeleteRange", &m_delete, &m_delete_r },
	[ETCD_PB_TXN] = { "/v3/kv/txn", "/etcdserverpb.KV/Txn", &m_txn,
	    &m_txn_r },
	[ETCD_PB_COMPACT] = { "/v3/kv/compaction", "/etcdserverpb.KV/Compact",
	    &m_compact, &m_header_r },
	[ETCD_PB_STATUS] = { "/v3/maintenance/status",
	    "/etcdserverpb.Maintenance/Status", &m_empty, &m_status_r },
	[ETCD_PB_LEASE_GRANT] = { "/v3/lease/grant",
	    "/etcdserverpb.Lease/LeaseGrant", &m_lgrant, &m_lgrant_r },
	[ETCD_PB_LEASE_REVOKE] = { "/v3/lease/revoke",
	    "/etcdserverpb.Lease/LeaseRevoke", &m_lid, &m_header_r },
	[ETCD_PB_LEASE_KEEPALIVE] = { "/v3/lease/keepalive",
	    "/etcdserverpb.Lease/LeaseKeepAlive", &m_lid, &m_lka_r },
	[ETCD_PB_LEASE_TTL] = { "/v3/lease/timetolive",
	    "/etcdserverpb.Lease/LeaseTimeToLive", &m_lttl, &m_lttl_r },
	[ETCD_PB_LEASE_LEASES] = { "/v3/lease/leases",
	    "/etcdserverpb.Lease/LeaseLeases", &m_empty, &m_lleases_r },
	/* A stream: no gateway path is routed to it (etcd_pb_rpc_of). */
	[ETCD_PB_WATCH] = { "", "/etcdserverpb.Watch/Watch", &m_watch,
	    &m_watch_r },
	[ETCD_PB_AUTH] = { "/v3/auth/authenticate",
	    "/etcdserverpb.Auth/Authenticate", &m_auth, &m_auth_r },
};

enum etcd_pb_rpc
etcd_pb_rpc_of(const char *path)
{
	unsigned	 i;

	for (i = 0; i < ETCD_PB_NONE; i++) {
		if (pb_rpcs[i].path[0] != '\0' &&
		    strcmp(path, pb_rpcs[i].path) == 0)
			return ((enum etcd_pb_rpc)i);
	}
	return (ETCD_PB_NONE);
}

const char *
etcd_pb_method(enum etcd_pb_rpc rpc)
{
	return (rpc < ETCD_PB_NONE ? pb_rpcs[rpc].method : NULL);
}

