#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/commit.h"
#include "net/conn.h"
#include "enc.h"
#include "log.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"
#include "ops/snapshot.h"

static const struct op ops_table[] = {
	{ "hello",	0,		ops_hello,	NULL,	NULL,	NULL },
	{ "ping",	0,		ops_ping,	NULL,	NULL,	NULL },
	{ "get",	0,		ops_get,	NULL,	NULL,	NULL },
	{ "list",	0,		ops_list,	NULL,	NULL,	NULL },
	{ "history",	0,		ops_history,	NULL,	NULL,	NULL },
	{ "status",	0,		ops_status,	NULL,	NULL,	NULL },
	{ "watch",	0,		watch_op_watch,	NULL,	NULL,	NULL },
	{ "unwatch",	0,		watch_op_unwatch, NULL,	NULL,	NULL },
	{ "wait",	0,		wait_op_wait,	NULL,	NULL,	NULL },
	{ "snapshot",	0,		snapshot_op_snapshot, NULL, NULL, NULL },
	{ "snapshot_read", 0,		snapshot_op_read, NULL,	NULL,	NULL },
	{ "compact",	OP_WRITE | OP_ONE_WRITE, NULL, ops_compact_prepare,
	    ops_compact_apply, NULL },
	{ "put",	OP_WRITE | OP_ONE_WRITE, NULL, ops_put_prepare,
	    ops_put_apply, ops_write_keys },
	{ "delete",	OP_WRITE | OP_ONE_WRITE, NULL, ops_delete_prepare,
	    ops_delete_apply, ops_write_keys },
	{ "txn",	OP_WRITE | OP_RO_READS, NULL,	ops_txn_prepare, ops_txn_apply,
	    ops_txn_keys },
	{ "epoch_get",	0,		ops_epoch_get,	NULL,	NULL,	NULL },
	{ "epoch_bump",	OP_WRITE | OP_ONE_WRITE, NULL, ops_epoch_bump_prepare,
	    ops_epoch_bump_apply, ops_epoch_bump_keys },
	{ "lease_grant", OP_WRITE | OP_ONE_WRITE | OP_LEASE, NULL,
	    ops_lease_grant_prepare, ops_lease_grant_apply, NULL },
	{ "lease_revoke", OP_WRITE | OP_LEASE, NULL, ops_lease_revoke_prepare,
	    ops_lease_revoke_apply, NULL },
	{ "lease_keepalive", OP_RW | OP_LEASE, ops_lease_keepalive, NULL, NULL,
	    NULL },
	{ "lease_info",	OP_LEASE,	ops_lease_info,	NULL,	NULL,	NULL },
	{ "lease_list",	OP_LEASE,	ops_lease_list,	NULL,	NULL,	NULL },
};

const struct op *
ops_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof ops_table / sizeof ops_table[0]; i++) {
		if (strcmp(ops_table[i].name, name) == 0)
			return (&ops_table[i]);
	}
	return (NULL);
}

/* i past the JSON string that starts at s[i] (a '"'), in valid JSON. */
static size_t
ops_skip_str(const char *s, size_t len, size_t i)
{
	for (i++; i < len && s[i] != '"'; i++) {
		if (s[i] == '\\')
			i++;
	}
	return (i + 1);
}

static size_t
ops_skip_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
	    s[i] == '\n'))
		i++;
	return (i);
}

static size_t
ops_skip_digits(const char *s, size_t len, size_t i)
{
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++;
	return (i);
}

/* The length of the JSON number (RFC 8259's grammar) at s[i], or 0. */
static size_t
ops_number_len(const char *s, size_t len, size_t i)
{
	size_t	 k = i + (i < len && s[i] == '-'), d;

	if (k < len && s[k] == '0')
		k++;
	else if ((d = ops_skip_digits(s, len, k)) > k)
		k = d;
	else
		return (0);
	if (k < len && s[k] == '.') {
		if ((d = ops_skip_digits(s, len, k + 1)) == k + 1)
			return (0);
		k = d;
	}
	if (k < len && (s[k] == 'e' || s[k] == 'E')) {
		k++;
		if (k < len && (s[k] == '+' || s[k] == '-'))
			k++;
		if ((d = ops_skip_digits(s, len, k)) == k)
			return (0);
		k = d;
	}
	k = ops_skip_ws(s, len, k) ;
	return (k < len && (s[k] == ',' || s[k] == '}') ? k - i : 0);
}

/*
 * The text of the number that the first top-level member "id" holds in
 * the line (valid JSON: cJSON parsed it), to echo it as sent: an id
 * beyond 2^53, or 0.1, comes back unchanged.  0 if there is none such.
 */
static size_t
ops_id_text(const char *s, size_t len, const char **tok)
{
	size_t	 i, k, depth;
	int	 is_id;

	i = ops_skip_ws(s, len, 0);
	if (i >= len || s[i] != '{')
		return (0);
	for (i++;;) {
		i = ops_skip_ws(s, len, i);
		if (i >= len || s[i] != '"')
			return (0);
		k = i;
		i = ops_skip_str(s, len, i);
		is_id = i - k == 4 && memcmp(s + k, "\"id\"", 4) == 0;
		i = ops_skip_ws(s, len, i);
		if (i >= len || s[i] != ':')
			return (0);
		i = ops_skip_ws(s, len, i + 1);
		if (is_id) {
			*tok = s + i;
			k = ops_number_len(s, len, i);
			/* trailing blanks are not the number's */
			while (k > 0 && (s[i + k - 1] == ' ' ||
			    s[i + k - 1] == '\t' || s[i + k - 1] == '\r' ||
			    s[i + k - 1] == '\n'))
				k--;
			return (k);
		}
		for (depth = 0; i < len; i++) {
			if (s[i] == '"')
				i = ops_skip_str(s, len, i) - 1;
			else if (s[i] == '{' || s[i] == '[')
				depth++;
			else if ((s[i] == '}' || s[i] == ']') && depth-- == 0)
				return (0);
			else if (s[i] == ',' && depth == 0)
				break;
		}
		i++;
	}
}

/* Keep the request's "id" (a JSON scalar) as JSON text to echo. */
static int
ops_take_id(struct req *r, const char *line, size_t len,
    struct proto_err *e)
{
	const cJSON	*f;
	struct buf	 b;
	const char	*tok;
	size_t		 n;
	double		 d;

	f = cJSON_GetObjectItemCaseSensitive(r->json, "id");
	if (f == NULL)
		return (0);
	buf_init(&b);
	if (cJSON_IsString(f)) {
		if (strlen(f->valuestring) > ID_MAX_BYTES) {
			buf_free(&b);
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is longer than %d bytes", ID_MAX_BYTES));
		}
		if (!utf8_valid(f->valuestring, strlen(f->valuestring))) {
			buf_free(&b);
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is not valid UTF-8"));
		}
		json_escape(&b, f->valuestring, strlen(f->valuestring));
	} else if (cJSON_IsNumber(f)) {
		d = f->valuedouble;
		if (!isfinite(d)) {
			buf_free(&b);
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is a number out of range"));
		}
		if ((n = ops_id_text(line, len, &tok)) > 0 && n <= 64)
			buf_add(&b, tok, n);
		else if (floor(d) == d && fabs(d) < 9.2e18)
			buf_printf(&b, "%lld", (long long)d);
		else
			buf_printf(&b, "%.17g", d);
	} else if (cJSON_IsBool(f))
		buf_addstr(&b, cJSON_IsTrue(f) ? "true" : "false");
	else if (cJSON_IsNull(f))
		buf_addstr(&b, "null");
	else {
		buf_free(&b);
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"id\" must be a string, number, boolean or null"));
	}
	r->id = r->id_owned = b.data;	/* the buffer is the request's now */
	r->id_len = b.len;
	return (0);
}

int
ops_decode(struct req *r, const char *line, size_t len, struct proto_err *e)
{
	const char	*name;
	size_t		 name_len, n;

	if ((r->json = proto_parse(line, len, e)) == NULL)
		return (-1);
	if (ops_take_id(r, line, len, e) != 0)
		return (-1);
	if (proto_get_str(r->json, "op", 1, &name, &name_len, e) != 1)
		return (-1);
	if ((r->op = ops_find(name)) == NULL) {
		/* Quote 64 bytes of it at most, not splitting a character. */
		n = name_len < 64 ? name_len : 64;
		while (n > 0 && n < name_len &&
		    ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
		return (proto_fail(e, PROTO_UNKNOWN_OP, "unknown op \"%.*s\"",
		    (int)n, name));
	}
	/* As a daemon without leases would answer: clients can tell. */
	if ((r->op->flags & OP_LEASE) && !store_has_leases(r->md->store))
		return (proto_fail(e, PROTO_UNKNOWN_OP, "op \"%s\" is not "
		    "available on the %s backend (no leases there yet)",
		    r->op->name, r->md->store->backend->name));
	/* A backend that keeps leases itself answers them (etcd). */
	if ((r->op->flags & OP_LEASE) && store_leases_remote(r->md->store))
		r->op = ops_lease_remote_find(r->op->name);
	if (ops_fields_check(r->op->name, r->json, e) != 0)
		return (-1);
	if ((r->op->flags & (OP_WRITE | OP_RW)) &&
	    !(r->op->flags & OP_RO_READS) &&
	    r->conn->access != CONN_ACCESS_RW)
		return (proto_fail(e, PROTO_READ_ONLY, "op \"%s\" writes, and "
		    "this connection is read-only", r->op->name));
	if (r->op->prepare != NULL && r->op->prepare(r, e) != 0)
		return (-1);
	if ((r->op->flags & OP_RO_READS) &&
	    r->conn->access != CONN_ACCESS_RW && ops_txn_writes(r))
		return (proto_fail(e, PROTO_READ_ONLY, "op \"%s\" writes, and "
		    "this connection is read-only (a txn of gets only may "
		    "run)", r->op->name));
	return (0);
}

static int
ops_blank(const char *line, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return (0);
	}
	return (1);
}

/*
 * A write may start behind writes of its connection (the group commit
 * keeps their order); anything else only once everything before it is
 * answered.  1: the line must wait.
 */
int
ops_handle(struct conn *c, const char *line, size_t len)
{
	struct req		*r;
	struct proto_err	 e;
	int			 rc;

	if (ops_blank(line, len))
		return (0);
	if (c->nother > 0)
		return (1);
	/* malloc, not calloc: glibc's calloc skips its per-thread cache */
	r = xmalloc(sizeof *r + OPS_FAST_ROOM(len));
	memset(r, 0, sizeof *r);
	r->md = c->md;
	r->conn = c;
	r->on_done = conn_req_done;
	buf_init(&r->resp);
	rc = ops_fast(r, line, len) ? 0 : ops_decode(r, line, len, &e);
	if (rc == 0 && req_writes(r)) {
		conn_enqueue(c, r);
		commit_enqueue(c->md->commit, r);
		return (0);
	}
	if (c->nreqs > 0) {
		req_free(r);
		c->blocked = 1;		/* not parsed again until then */
		return (1);
	}
	r->op = rc == 0 ? r->op : NULL;
	conn_enqueue(c, r);
	if (rc != 0) {
		reply_error(r, e.code, e.msg);
		req_done(r);
	} else
		r->op->run(r);
	return (0);
}
