/*
 * etcd's KV messages: gateway JSON <-> protobuf (etcd_pb.h), driven by a
 * table of each message's fields.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "store/etcd/etcd_pb.h"
#include "util.h"

enum pb_type { PB_BYTES, PB_INT, PB_UINT, PB_BOOL, PB_ENUM, PB_MSG };

struct pb_msg;

struct pb_field {
	const char		*name;		/* the gateway's (OrigName) */
	uint32_t		 no;
	enum pb_type		 type;
	int			 repeated;	/* of messages only */
	const struct pb_msg	*msg;		/* PB_MSG */
	const char *const	*names;		/* PB_ENUM, NULL-ended */
};

struct pb_msg {
	const struct pb_field	*f;
	size_t			 n;
};

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
	{ "fragment", 7, PB_BOOL, 0, NULL, NULL },
	{ "events", 11, PB_MSG, 1, &m_event, NULL },
};
static const struct pb_msg m_watch = MSG(f_watch);
static const struct pb_msg m_watch_r = MSG(f_watch_r);

static const struct {
	const char		*path, *method;
	const struct pb_msg	*req, *resp;
} rpcs[] = {
	[ETCD_PB_RANGE] = { "/v3/kv/range", "/etcdserverpb.KV/Range",
	    &m_range, &m_range_r },
	[ETCD_PB_PUT] = { "/v3/kv/put", "/etcdserverpb.KV/Put", &m_put,
	    &m_put_r },
	[ETCD_PB_DELETE] = { "/v3/kv/deleterange",
	    "/etcdserverpb.KV/DeleteRange", &m_delete, &m_delete_r },
	[ETCD_PB_TXN] = { "/v3/kv/txn", "/etcdserverpb.KV/Txn", &m_txn,
	    &m_txn_r },
	/* A stream: no gateway path is routed to it (etcd_pb_rpc_of). */
	[ETCD_PB_WATCH] = { "", "/etcdserverpb.Watch/Watch", &m_watch,
	    &m_watch_r },
};

enum etcd_pb_rpc
etcd_pb_rpc_of(const char *path)
{
	unsigned	 i;

	for (i = 0; i < ETCD_PB_WATCH; i++) {
		if (strcmp(path, rpcs[i].path) == 0)
			return ((enum etcd_pb_rpc)i);
	}
	return (ETCD_PB_NONE);
}

const char *
etcd_pb_method(enum etcd_pb_rpc rpc)
{
	return (rpc < ETCD_PB_NONE ? rpcs[rpc].method : NULL);
}

/* Encoding. */

static int	pb_encode_msg(const struct pb_msg *, const cJSON *, struct buf *,
		    int, const char **);

/* A JSON int64: a string of digits (the gateway's) or a number. */
static int
pb_json_int(const cJSON *it, uint64_t *v)
{
	char		*end;
	long long	 ll;

	if (cJSON_IsNumber(it)) {
		if (it->valuedouble < -9.2e18 || it->valuedouble > 9.2e18)
			return (-1);
		*v = (uint64_t)(long long)it->valuedouble;
		return (0);
	}
	if (!cJSON_IsString(it) || it->valuestring[0] == '\0')
		return (-1);
	errno = 0;
	ll = strtoll(it->valuestring, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	*v = (uint64_t)ll;
	return (0);
}

static int
pb_encode_field(const struct pb_field *f, const cJSON *it, struct buf *b,
    int depth, const char **why)
{
	struct buf	 sub;
	unsigned char	*raw;
	uint64_t	 v = 0;
	long		 r;
	size_t		 n;
	unsigned	 i;

	switch (f->type) {
	case PB_BYTES:
		if (!cJSON_IsString(it))
			return (*why = "a bytes field is not a string", -1);
		n = strlen(it->valuestring);
		raw = xmalloc(n / 4 * 3 + 3);
		if ((r = b64_decode(it->valuestring, n, raw)) < 0) {
			free(raw);
			return (*why = "a bytes field is not base64", -1);
		}
		etcd_pb_put_bytes(b, f->no, raw, (size_t)r);
		free(raw);
		return (0);
	case PB_INT:
	case PB_UINT:
		if (pb_json_int(it, &v) != 0)
			return (*why = "an int64 field is not an integer", -1);
		break;
	case PB_BOOL:
		if (!cJSON_IsBool(it))
			return (*why = "a bool field is not true or false", -1);
		v = cJSON_IsTrue(it);
		break;
	case PB_ENUM:
		if (cJSON_IsString(it)) {
			for (i = 0; f->names[i] != NULL; i++) {
				if (strcmp(f->names[i], it->valuestring) == 0)
					break;
			}
			if (f->names[i] == NULL)
				return (*why = "an unknown enum name", -1);
			v = i;
		} else if (pb_json_int(it, &v) != 0)
			return (*why = "an enum field is not a name", -1);
		break;
	case PB_MSG:
		if (!cJSON_IsObject(it))
			return (*why = "a message field is not an object", -1);
		buf_init(&sub);
		if (pb_encode_msg(f->msg, it, &sub, depth + 1, why) != 0) {
			buf_free(&sub);
			return (-1);
		}
		etcd_pb_put_bytes(b, f->no, sub.data, sub.len);
		buf_free(&sub);
		return (0);
	}
	etcd_pb_put_int(b, f->no, v);
	return (0);
}

static int
pb_encode_msg(const struct pb_msg *m, const cJSON *obj, struct buf *b,
    int depth, const char **why)
{
	const cJSON		*it, *el;
	const struct pb_field	*f;
	size_t			 i;

	if (depth > ETCD_PB_DEPTH_MAX)
		return (*why = "too deeply nested", -1);
	cJSON_ArrayForEach(it, obj) {
		for (i = 0, f = NULL; i < m->n && f == NULL; i++) {
			if (it->string != NULL &&
			    strcmp(m->f[i].name, it->string) == 0)
				f = &m->f[i];
		}
		if (f == NULL)
			return (*why = "an unknown field", -1);
		if (!f->repeated) {
			if (pb_encode_field(f, it, b, depth, why) != 0)
				return (-1);
			continue;
		}
		if (!cJSON_IsArray(it))
			return (*why = "a repeated field is not an array", -1);
		cJSON_ArrayForEach(el, it) {
			if (pb_encode_field(f, el, b, depth, why) != 0)
				return (-1);
		}
	}
	return (0);
}

int
etcd_pb_encode(enum etcd_pb_rpc rpc, const char *json, struct buf *out,
    const char **why)
{
	cJSON	*j;
	int	 rc;

	if (rpc >= ETCD_PB_NONE)
		return (*why = "not a KV call", -1);
	if ((j = cJSON_Parse(json)) == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return (*why = "the request is not a JSON object", -1);
	}
	rc = pb_encode_msg(rpcs[rpc].req, j, out, 0, why);
	cJSON_Delete(j);
	return (rc);
}

/* Decoding. */

static int	pb_walk(const struct pb_msg *, const uint8_t *, size_t, int,
		    cJSON *);

/*
 * A new string item that takes s (malloc'd: cJSON frees its strings with
 * free(), the hooks being its defaults), under the field's constant name.
 */
static void
pb_add_string(cJSON *obj, const char *name, char *s)
{
	cJSON	*it = cJSON_CreateNull();

	it->type = cJSON_String;
	it->valuestring = s;
	cJSON_AddItemToObjectCS(obj, name, it);
}

/* v in decimal, as a string item (an int64's sign if signed). */
static void
pb_add_int(cJSON *obj, const char *name, uint64_t v, int is_signed)
{
	char	 t[24], *s;
	size_t	 n = 0, i;
	int	 neg = is_signed && (int64_t)v < 0;

	if (neg)
		v = (uint64_t)0 - v;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	s = xmalloc(n + neg + 1);
	if (neg)
		s[0] = '-';
	for (i = 0; i < n; i++)
		s[neg + i] = t[n - 1 - i];
	s[n + neg] = '\0';
	pb_add_string(obj, name, s);
}

/*
 * A field's value into obj; with obj NULL, only checked.  seen: the fields
 * of obj given before (a bit per index in the table): only those can be
 * there already, to be replaced (proto3: the last one wins).
 */
static int
pb_decode_value(const struct pb_field *f, cJSON *obj, int wt, uint64_t v,
    const uint8_t *p, size_t n, int depth, int seen)
{
	cJSON	*sub, *arr;
	char	*s;
	int	 k;

	if ((f->type == PB_BYTES || f->type == PB_MSG) != (wt == 2))
		return (-1);	/* the wrong wire type */
	if (obj == NULL)
		return (f->type == PB_MSG ? pb_walk(f->msg, p, n, depth + 1,
		    NULL) : 0);
	if (seen && !(f->type == PB_MSG && f->repeated))
		cJSON_DeleteItemFromObjectCaseSensitive(obj, f->name);
	switch (f->type) {
	case PB_BYTES:
		if (n > 0) {
			s = xmalloc(b64_encoded_len(n) + 1);
			b64_encode(p, n, s);
			pb_add_string(obj, f->name, s);
		}
		return (0);
	case PB_INT:
	case PB_UINT:
		if (v != 0)
			pb_add_int(obj, f->name, v, f->type == PB_INT);
		return (0);
	case PB_BOOL:
		if (v != 0)
			cJSON_AddItemToObjectCS(obj, f->name, cJSON_CreateTrue());
		return (0);
	case PB_ENUM:
		for (k = 0; v != 0 && f->names[k] != NULL && (uint64_t)k < v;
		    k++)
			;
		if (v != 0 && f->names[k] != NULL)
			cJSON_AddItemToObjectCS(obj, f->name,
			    cJSON_CreateString(f->names[k]));
		else if (v != 0)
			cJSON_AddItemToObjectCS(obj, f->name,
			    cJSON_CreateNumber((double)v));
		return (0);
	case PB_MSG:
		sub = cJSON_CreateObject();
		if (pb_walk(f->msg, p, n, depth + 1, sub) != 0) {
			cJSON_Delete(sub);
			return (-1);
		}
		if (!f->repeated) {
			/* Proto3: a message given twice is merged; rare. */
			cJSON_AddItemToObjectCS(obj, f->name, sub);
			return (0);
		}
		arr = seen ? cJSON_GetObjectItemCaseSensitive(obj, f->name) :
		    NULL;
		if (arr == NULL) {
			arr = cJSON_CreateArray();
			cJSON_AddItemToObjectCS(obj, f->name, arr);
		}
		cJSON_AddItemToArray(arr, sub);
		return (0);
	}
	return (-1);
}

/* The message m in p[0..n) into obj (NULL: only checked); -1: malformed. */
static int
pb_walk(const struct pb_msg *m, const uint8_t *p, size_t n, int depth,
    cJSON *obj)
{
	const struct pb_field	*f;
	const uint8_t		*end = p + n, *data = NULL;
	uint64_t		 v = 0, seen = 0;
	uint32_t		 no;
	size_t			 i, len = 0;
	int			 rc, wt;

	if (depth > ETCD_PB_DEPTH_MAX)
		return (-1);
	while ((rc = etcd_pb_next(&p, end, &no, &wt, &v, &data, &len)) == 1) {
		for (i = 0, f = NULL; i < m->n && f == NULL; i++) {
			if (m->f[i].no == no)
				f = &m->f[i];
		}
		if (f == NULL)
			continue;	/* unknown: skipped */
		i--;	/* f's index: < 64 (the tables are short) */
		if ((wt == 1 || wt == 5) ||
		    pb_decode_value(f, obj, wt, v, data, len, depth,
		    (seen >> i & 1) != 0) != 0)
			return (-1);
		seen |= (uint64_t)1 << i;
	}
	return (rc);
}

static cJSON *
pb_decode_msg(const struct pb_msg *m, const uint8_t *p, size_t n, int depth)
{
	cJSON	*obj = cJSON_CreateObject();

	if (pb_walk(m, p, n, depth, obj) != 0) {
		cJSON_Delete(obj);
		return (NULL);
	}
	return (obj);
}

cJSON *
etcd_pb_decode(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (NULL);
	return (pb_decode_msg(rpcs[rpc].resp, p, n, 0));
}

cJSON *
etcd_pb_decode_request(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (NULL);
	return (pb_decode_msg(rpcs[rpc].req, p, n, 0));
}

int
etcd_pb_check(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (-1);
	return (pb_walk(rpcs[rpc].resp, p, n, 0, NULL));
}
