/*
 * Keys: get, list, put, delete, txn, and ping and compact; the kv objects
 * they answer.
 */
#include <stdlib.h>
#include <string.h>

#include "md_int.h"
#include "proto.h"

uint64_t
md_u64(const cJSON *obj, const char *name)
{
	uint64_t	 v;

	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(obj, name),
	    &v) != 0)
		return (0);
	return (v);
}

int
md_u64_req(struct md_client *h, const cJSON *obj, const char *name,
    uint64_t *out)
{
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(obj, name),
	    out) != 0)
		return (md_fail(h, MD_E_PROTOCOL, "metad's answer has no "
		    "valid \"%s\"", name));
	return (0);
}

void
md_req_open(struct md_client *h, struct jw *w, struct buf *b, const char *op)
{
	buf_init(b);
	jw_init(w, b);
	jw_obj_open(w);
	jw_name(w, "id");
	jw_u64(w, ++h->next_id);
	jw_name(w, "op");
	jw_cstr(w, op);
}

/*
 * A kv object (or a put event) as one allocation; -1 if malformed.  The
 * value's bytes are proto_kv_value's: a \u0000 in "value" is a NUL byte,
 * counted in value_len.
 */
int
md_kv_parse(const cJSON *j, struct md_kv **out)
{
	const cJSON		*key;
	struct proto_bytes	 v;
	struct md_kv		*kv;
	size_t			 klen;
	char			*p;
	int			 has;

	*out = NULL;
	key = cJSON_GetObjectItemCaseSensitive(j, "key");
	if (!cJSON_IsString(key) || (has = proto_kv_value(j, &v)) < 0)
		return (-1);
	klen = strlen(key->valuestring);
	kv = xcalloc(1, sizeof *kv + klen + 1 + v.len + 1);
	p = (char *)(kv + 1);
	kv->key = p;
	kv->key_len = klen;
	memcpy(p, key->valuestring, klen);
	p += klen + 1;
	if (has) {
		kv->value = p;
		kv->value_len = v.len;
		if (v.len > 0)
			memcpy(p, v.data, v.len);
	}
	proto_bytes_free(&v);
	kv->version = md_u64(j, "version");
	kv->create_rev = md_u64(j, "create_rev");
	kv->mod_rev = md_u64(j, "mod_rev");
	kv->lease = md_u64(j, "lease");
	*out = kv;
	return (0);
}

void
md_kv_free(struct md_kv *kv)
{
	free(kv);
}

struct md_kv *
md_kv_dup(const struct md_kv *kv)
{
	struct md_kv	*d;
	char		*p;

	d = xcalloc(1, sizeof *d + kv->key_len + 1 + kv->value_len + 1);
	*d = *kv;
	p = (char *)(d + 1);
	d->key = p;
	memcpy(p, kv->key, kv->key_len);
	p += kv->key_len + 1;
	if (kv->value != NULL) {
		d->value = p;
		memcpy(p, kv->value, kv->value_len);
	}
	return (d);
}

static int
md_check_key(struct md_client *h, const char *key)
{
	struct proto_err	 e;

	md_clearerr(h);
	if (key == NULL)
		return (md_seterr(h, MD_E_INVALID, "no key"));
	if (proto_check_key(key, strlen(key), "key", &e) != 0)
		return (md_seterr(h, MD_E_INVALID, "%s", e.msg));
	return (0);
}

static void
md_read_fields(struct jw *w, const struct md_read_opts *o)
{
	if (o == NULL)
		return;
	if (o->rev != 0) {
		jw_name(w, "rev");
		jw_u64(w, o->rev);
	}
	if (o->min_rev != 0) {
		jw_name(w, "min_rev");
		jw_u64(w, o->min_rev);
	}
	if (o->serializable) {
		jw_name(w, "consistency");
		jw_cstr(w, "serializable");
	}
}

int
md_do(struct md_client *h, struct jw *w, struct buf *b, cJSON **resp)
{
	int	 rc;

	jw_obj_close(w);
	rc = md_call_ok(h, b, resp);
	buf_free(b);
	return (rc);
}

int
md_get(struct md_client *h, const char *key, const struct md_read_opts *o,
    struct md_kv **kv, uint64_t *rev)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp, *j;

	*kv = NULL;
	if (md_check_key(h, key) != 0)
		return (-1);
	md_req_open(h, &w, &b, "get");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	md_read_fields(&w, o);
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	j = cJSON_GetObjectItemCaseSensitive(resp, "kv");
	if ((cJSON_IsObject(j) && md_kv_parse(j, kv) != 0) ||
	    (!cJSON_IsObject(j) && !cJSON_IsNull(j)) ||
	    (rev != NULL && md_u64_req(h, resp, "rev", rev) != 0)) {
		md_kv_free(*kv);
		*kv = NULL;
		cJSON_Delete(resp);
		if (h->err == MD_OK)
			md_fail(h, MD_E_PROTOCOL, "metad sent an invalid kv");
		return (-1);
	}
	cJSON_Delete(resp);
	return (0);
}

void
md_list_free(struct md_list *l)
{
	size_t	 i;

	if (l->kvs != NULL)
		for (i = 0; i < l->n; i++)
			free(l->kvs[i].key);
	free(l->kvs);
	memset(l, 0, sizeof *l);
}

/* kvs[i] own their key (and value, in the same allocation). */
static int
md_list_fill(struct md_client *h, const cJSON *resp, struct md_list *l)
{
	const cJSON	*kvs, *j;
	struct md_kv	*kv;
	int		 n;

	kvs = cJSON_GetObjectItemCaseSensitive(resp, "kvs");
	if (!cJSON_IsArray(kvs) || md_u64_req(h, resp, "rev", &l->rev) != 0)
		return (md_fail(h, MD_E_PROTOCOL, "metad's list answer has "
		    "no kvs or rev"));
	l->more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "more"));
	n = cJSON_GetArraySize(kvs);
	l->kvs = xcalloc((size_t)n + 1, sizeof *l->kvs);
	cJSON_ArrayForEach(j, kvs) {
		if (md_kv_parse(j, &kv) != 0)
			return (md_fail(h, MD_E_PROTOCOL, "metad sent an "
			    "invalid kv"));
		/* The copy keeps kv's block: its key is the block's start. */
		l->kvs[l->n] = *kv;
		l->kvs[l->n].key = xmemdup(kv->key, kv->key_len + 1 +
		    kv->value_len + 1);
		if (kv->value != NULL)
			l->kvs[l->n].value = l->kvs[l->n].key + kv->key_len + 1;
		free(kv);
		l->n++;
	}
	return (0);
}

/*
 * Ends the request in w (b its buffer) with o's read fields, sends it and
 * fills l from its answer, a list of kvs at a rev (md_list, md_get_many).
 */
static int
md_list_do(struct md_client *h, struct jw *w, struct buf *b,
    const struct md_read_opts *o, struct md_list *l)
{
	cJSON	*resp;
	int	 rc;

	md_read_fields(w, o);
	if (md_do(h, w, b, &resp) != 0)
		return (-1);
	if ((rc = md_list_fill(h, resp, l)) != 0)
		md_list_free(l);
	cJSON_Delete(resp);
	return (rc);
}

int
md_list(struct md_client *h, const struct md_list_opts *o, struct md_list *l)
{
	struct jw	 w;
	struct buf	 b;

	memset(l, 0, sizeof *l);
	md_clearerr(h);
	md_req_open(h, &w, &b, "list");
	if (o != NULL && o->prefix != NULL) {
		jw_name(&w, "prefix");
		jw_cstr(&w, o->prefix);
	}
	if (o != NULL && o->after != NULL) {
		jw_name(&w, "after");
		jw_cstr(&w, o->after);
	}
	if (o != NULL && o->limit != 0) {
		jw_name(&w, "limit");
		jw_u64(&w, o->limit);
	}
	if (o != NULL && o->keys_only) {
		jw_name(&w, "keys_only");
		jw_bool(&w, 1);
	}
	return (md_list_do(h, &w, &b, o != NULL ? &o->read : NULL, l));
}

int
md_get_many(struct md_client *h, const char *const *keys, size_t n,
    const struct md_read_opts *o, struct md_list *l)
{
	struct jw	 w;
	struct buf	 b;
	size_t		 i;

	memset(l, 0, sizeof *l);
	md_clearerr(h);
	if (n > 0 && keys == NULL)
		return (md_seterr(h, MD_E_INVALID, "no keys"));
	if (n > GET_KEYS_MAX)
		return (md_seterr(h, MD_E_INVALID, "%zu keys; a get takes at "
		    "most %d", n, GET_KEYS_MAX));
	for (i = 0; i < n; i++)
		if (md_check_key(h, keys[i]) != 0)
			return (-1);
	md_req_open(h, &w, &b, "get");
	jw_name(&w, "keys");
	jw_arr_open(&w);
	for (i = 0; i < n; i++)
		jw_cstr(&w, keys[i]);
	jw_arr_close(&w);
	return (md_list_do(h, &w, &b, o, l));
}

void
md_idem_field(struct md_client *h, struct jw *w)
{
	if (h->idem == NULL)
		return;
	jw_name(w, "idem");
	jw_cstr(w, h->idem);
	free(h->idem);
	h->idem = NULL;
}

static int
md_write_fields(struct md_client *h, struct jw *w,
    const struct md_write_opts *o)
{
	static const char	*names[] = { NULL, "if_absent", "if_version",
				    "if_mod_rev" };

	md_idem_field(h, w);
	if (o == NULL)
		return (0);
	if (o->pre > MD_PRE_MOD_REV)
		return (md_seterr(h, MD_E_INVALID, "unknown precondition"));
	if (o->pre == MD_PRE_ABSENT) {
		jw_name(w, names[o->pre]);
		jw_bool(w, 1);
	} else if (o->pre != MD_PRE_NONE) {
		jw_name(w, names[o->pre]);
		jw_u64(w, o->pre_arg);
	}
	if (o->fence_key != NULL) {
		jw_name(w, "fence");
		jw_obj_open(w);
		jw_name(w, "key");
		jw_cstr(w, o->fence_key);
		jw_name(w, "epoch");
		jw_u64(w, o->fence_epoch);
		jw_obj_close(w);
	}
	return (0);
}

int
md_put(struct md_client *h, const char *key, const void *value, size_t len,
    const struct md_write_opts *o, struct md_put_result *res)
{
	struct md_put_result	 ignored;
	struct jw		 w;
	struct buf		 b;
	cJSON			*resp, *kv;

	if (res == NULL)
		res = &ignored;
	memset(res, 0, sizeof *res);
	if (md_check_key(h, key) != 0)
		return (-1);
	md_req_open(h, &w, &b, "put");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	jw_value_req(&w, value, len);
	if (md_write_fields(h, &w, o) != 0) {
		buf_free(&b);
		return (-1);
	}
	if (o != NULL && o->lease != 0) {
		jw_name(&w, "lease");
		jw_u64(&w, o->lease);
	}
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	kv = cJSON_GetObjectItemCaseSensitive(resp, "kv");
	res->prev_version = md_u64(resp, "prev_version");
	res->create_rev = md_u64(kv, "create_rev");
	if (md_u64_req(h, kv, "version", &res->version) != 0 ||
	    md_u64_req(h, kv, "mod_rev", &res->mod_rev) != 0 ||
	    md_u64_req(h, resp, "rev", &res->rev) != 0) {
		cJSON_Delete(resp);
		return (-1);
	}
	cJSON_Delete(resp);
	return (0);
}

int
md_delete(struct md_client *h, const char *key, const struct md_write_opts *o,
    int *deleted, uint64_t *rev)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	uint64_t	 r;

	if (md_check_key(h, key) != 0)
		return (-1);
	if (o != NULL && o->lease != 0)
		return (md_seterr(h, MD_E_INVALID, "delete takes no lease"));
	md_req_open(h, &w, &b, "delete");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	if (md_write_fields(h, &w, o) != 0) {
		buf_free(&b);
		return (-1);
	}
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	if (deleted != NULL)
		*deleted = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
		    "deleted"));
	if (md_u64_req(h, resp, "rev", &r) != 0) {
		cJSON_Delete(resp);
		return (-1);
	}
	if (rev != NULL)
		*rev = r;
	cJSON_Delete(resp);
	return (0);
}

/* A delete of a range: "prefix":key (end NULL), or key and range_end. */
static int
md_delete_span(struct md_client *h, const char *key, const char *end,
    const struct md_write_opts *o, uint64_t *deleted, uint64_t *rev)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	uint64_t	 r, n;

	md_clearerr(h);
	if (key == NULL)
		return (md_seterr(h, MD_E_INVALID, "no key"));
	if (end != NULL && (md_check_key(h, key) != 0 ||
	    md_check_key(h, end) != 0))
		return (-1);
	if (o != NULL && (o->lease != 0 || o->pre != MD_PRE_NONE))
		return (md_seterr(h, MD_E_INVALID, "a range delete takes a "
		    "fence only"));
	md_req_open(h, &w, &b, "delete");
	jw_name(&w, end != NULL ? "key" : "prefix");
	jw_cstr(&w, key);
	if (end != NULL) {
		jw_name(&w, "range_end");
		jw_cstr(&w, end);
	}
	if (md_write_fields(h, &w, o) != 0) {
		buf_free(&b);
		return (-1);
	}
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	if (md_u64_req(h, resp, "deleted", &n) != 0 ||
	    md_u64_req(h, resp, "rev", &r) != 0) {
		cJSON_Delete(resp);
		return (-1);
	}
	if (deleted != NULL)
		*deleted = n;
	if (rev != NULL)
		*rev = r;
	cJSON_Delete(resp);
	return (0);
}

int
md_delete_prefix(struct md_client *h, const char *prefix,
    const struct md_write_opts *o, uint64_t *deleted, uint64_t *rev)
{
	return (md_delete_span(h, prefix, NULL, o, deleted, rev));
}

int
md_delete_range(struct md_client *h, const char *key, const char *end,
    const struct md_write_opts *o, uint64_t *deleted, uint64_t *rev)
{
	if (end == NULL) {
		md_clearerr(h);
		return (md_seterr(h, MD_E_INVALID, "no range end"));
	}
	return (md_delete_span(h, key, end, o, deleted, rev));
}

int
md_txn(struct md_client *h, const char *body, int *succeeded, uint64_t *rev,
    char **resp_json)
{
	struct proto_err	 e;
	struct buf		 b;
	cJSON			*req, *resp;
	int			 rc;

	md_clearerr(h);
	if (resp_json != NULL)
		*resp_json = NULL;
	if (body == NULL || (req = proto_parse(body, strlen(body), &e)) ==
	    NULL)
		return (md_seterr(h, MD_E_INVALID, "the txn body is not one "
		    "JSON object"));
	cJSON_DeleteItemFromObjectCaseSensitive(req, "op");
	cJSON_DeleteItemFromObjectCaseSensitive(req, "id");
	cJSON_AddStringToObject(req, "op", "txn");
	if (h->idem != NULL) {		/* md_set_idem()'s, over the body's */
		cJSON_DeleteItemFromObjectCaseSensitive(req, "idem");
		cJSON_AddStringToObject(req, "idem", h->idem);
		free(h->idem);
		h->idem = NULL;
	}
	buf_init(&b);
	proto_print(&b, req, NULL);
	cJSON_Delete(req);
	rc = md_call_ok(h, &b, &resp);
	buf_free(&b);
	if (rc != 0)
		return (-1);
	if (succeeded != NULL)
		*succeeded = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
		    "succeeded"));
	if (rev != NULL)
		*rev = md_u64(resp, "rev");
	if (resp_json != NULL) {
		buf_init(&b);
		proto_print(&b, resp, NULL);
		*resp_json = buf_cstr(&b);	/* the caller frees it */
	}
	cJSON_Delete(resp);
	return (0);
}

int
md_ping(struct md_client *h, uint64_t *rev)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	int		 rc = 0;

	md_clearerr(h);
	md_req_open(h, &w, &b, "ping");
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	if (rev != NULL)
		rc = md_u64_req(h, resp, "rev", rev);
	cJSON_Delete(resp);
	return (rc);
}

int
md_compact(struct md_client *h, uint64_t rev, uint64_t *compact_rev)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	int		 rc = 0;

	md_clearerr(h);
	md_req_open(h, &w, &b, "compact");
	jw_name(&w, "rev");
	jw_u64(&w, rev);
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	if (compact_rev != NULL)
		rc = md_u64_req(h, resp, "compact_rev", compact_rev);
	cJSON_Delete(resp);
	return (rc);
}
