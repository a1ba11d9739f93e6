#include <stdio.h>
#include <string.h>

#include "core/reply.h"
#include "metad.h"
#include "core/req.h"

static void
reply_open(struct jw *w, struct buf *b, const char *id, size_t id_len)
{
	jw_init(w, b);
	jw_obj_open(w);
	if (id_len > 0) {
		JW_NAME(w, "id");
		jw_raw(w, id, id_len);
	}
}

void
reply_begin(struct req *r, struct jw *w)
{
	buf_reset(&r->resp);
	r->code = PROTO_OK;
	reply_open(w, &r->resp, r->id, r->id_len);
	JW_NAME(w, "ok");
	jw_bool(w, 1);
}

void
reply_end(struct req *r, struct jw *w)
{
	jw_obj_close(w);
	buf_addc(&r->resp, '\n');
}

static void
reply_error_open(struct jw *w, struct buf *b, const char *id, size_t id_len,
    enum proto_code code, const char *msg)
{
	reply_open(w, b, id, id_len);
	JW_NAME(w, "ok");
	jw_bool(w, 0);
	JW_NAME(w, "error");
	jw_obj_open(w);
	JW_NAME(w, "code");
	jw_cstr(w, proto_code_name(code));
	JW_NAME(w, "message");
	jw_cstr(w, msg);
}

void
reply_error_begin(struct req *r, struct jw *w, enum proto_code code,
    const char *msg)
{
	buf_reset(&r->resp);
	r->code = code;
	reply_error_open(w, &r->resp, r->id, r->id_len, code, msg);
}

void
reply_error_end(struct req *r, struct jw *w)
{
	jw_obj_close(w);
	jw_obj_close(w);
	buf_addc(&r->resp, '\n');
}

void
reply_error(struct req *r, enum proto_code code, const char *msg)
{
	struct jw	 w;

	reply_error_begin(r, &w, code, msg);
	reply_error_end(r, &w);
}

void
reply_raw_error(struct buf *b, const char *id, size_t id_len,
    enum proto_code code, const char *msg)
{
	struct jw	 w;

	reply_error_open(&w, b, id, id_len, code, msg);
	jw_obj_close(&w);
	jw_obj_close(&w);
	buf_addc(b, '\n');
}

enum proto_code
reply_store_code(const struct store_err *e)
{
	switch (e->code) {
	case STORE_ERR_FULL:
		return (PROTO_STORAGE_FULL);
	case STORE_ERR_UNAVAILABLE:
	case STORE_ERR_CONFLICT:
	case STORE_ERR_UNKNOWN:
		return (PROTO_UNAVAILABLE);
	case STORE_ERR_COMPACTED:
		return (PROTO_COMPACTED);
	case STORE_ERR_FUTURE:
		return (PROTO_BAD_REQUEST);
	case STORE_ERR_NO_LEASE:
		return (PROTO_NOT_FOUND);
	case STORE_ERR_TOO_LARGE:
		return (PROTO_VALUE_TOO_LARGE);
	default:
		return (PROTO_INTERNAL);
	}
}

void
reply_store_error(struct req *r, const struct store_err *e)
{
	reply_error(r, reply_store_code(e), e->msg);
}

/* Each of a kv's numbers and names, at most: 20 digits a number. */
#define REPLY_KV_FIXED	(sizeof "{\"key\":,\"version\":,\"create_rev\":," \
			    "\"mod_rev\":,\"lease\":}," - 1 + 4 * 20)

size_t
reply_kv_len(const struct store_kv *kv, int with_value)
{
	size_t	 n = REPLY_KV_FIXED + json_escaped_len(kv->key, kv->key_len);

	if (with_value && kv->value != NULL)
		n += 1 + jw_value_len(kv->value, kv->value_len);
	return (n);
}

int
reply_too_large(struct req *r, size_t n, const char *how)
{
	char	 msg[PROTO_MSG_MAX];

	if (n <= r->md->cfg.max_answer_bytes)
		return (0);
	snprintf(msg, sizeof msg, "the answer would be %zu bytes, past "
	    "--max-answer-bytes (%zu): %s", n, r->md->cfg.max_answer_bytes,
	    how);
	reply_error(r, PROTO_ANSWER_TOO_LARGE, msg);
	return (1);
}

void
reply_kv(struct jw *w, const char *name, const struct store_kv *kv,
    int with_value)
{
	if (name != NULL)
		jw_name(w, name);
	if (kv == NULL) {
		jw_null(w);
		return;
	}
	jw_obj_open(w);
	JW_NAME(w, "key");
	jw_str(w, kv->key, kv->key_len);
	if (with_value && kv->value != NULL)
		jw_value(w, kv->value, kv->value_len);
	JW_NAME(w, "version");
	jw_u64(w, kv->version);
	JW_NAME(w, "create_rev");
	jw_u64(w, kv->create_rev);
	JW_NAME(w, "mod_rev");
	jw_u64(w, kv->mod_rev);
	if (kv->lease != 0) {
		JW_NAME(w, "lease");
		jw_u64(w, kv->lease);
	}
	jw_obj_close(w);
}
