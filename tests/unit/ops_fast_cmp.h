/*
 * The check that the direct decoder (daemon/ops/ops_fast.c) agrees with the
 * general one (ops_decode) on a line: included by tests/unit/test_ops_fast.c,
 * tests/fuzz/fuzz_request.c and tests/fuzz/fuzz_fast.c, all linked with the
 * daemon's objects.
 *
 * ops_fast_cmp(): 0 if ops_fast leaves the line to ops_decode (and the
 * request untouched), 1 if it takes it and ops_decode takes it too with
 * the same op, id and arguments (a get: the same key and consistency, no
 * other field; a put or delete: the same key, value, precondition, lease
 * and token with its record's name, no fence), -1 otherwise with why.
 * The requests have their connection's identity (none if its
 * identity_len is 0).  md->store is asked whether it keeps records of
 * tokens (store_has_idem) and its name: without a store, ops_fast_store.h.
 */
#ifndef OPS_FAST_CMP_H
#define OPS_FAST_CMP_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "net/conn.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/req.h"

static struct req *
ops_fast_cmp_req(struct metad *md, struct conn *c, size_t room)
{
	struct req	*r;

	r = xcalloc(1, sizeof *r + room);
	r->md = md;
	r->conn = c;
	r->access = c->access;
	r->conn_dead = &c->dead;
	if (c->identity_len > 0) {
		r->identity = c->identity;
		r->identity_len = c->identity_len;
	}
	buf_init(&r->resp);
	return (r);
}

static int
ops_fast_cmp_get(const struct req *a, const struct req *b, char *why,
    size_t whylen)
{
	const cJSON		*m;
	const char		*key;
	size_t			 klen;
	struct proto_err	 e;

	if (proto_get_key(b->json, "key", 1, &key, &klen, &e) != 1) {
		snprintf(why, whylen, "get: the general key: %s", e.msg);
		return (-1);
	}
	if (klen != a->wa.key_len || memcmp(key, a->wa.key, klen) != 0) {
		snprintf(why, whylen, "get: keys differ");
		return (-1);
	}
	/* ops_read_args: serializable, or linearizable (the default) */
	if (proto_get_str(b->json, "consistency", 0, &key, &klen, &e) == -1 ||
	    a->serializable != (proto_get_str(b->json, "consistency", 0, &key,
	    &klen, &e) == 1 && strcmp(key, "serializable") == 0)) {
		snprintf(why, whylen, "get: consistencies differ");
		return (-1);
	}
	for (m = b->json->child; m != NULL; m = m->next) {
		if (strcmp(m->string, "op") != 0 &&
		    strcmp(m->string, "id") != 0 &&
		    strcmp(m->string, "key") != 0 &&
		    strcmp(m->string, "consistency") != 0) {
			snprintf(why, whylen, "get: a field \"%s\"",
			    m->string);
			return (-1);
		}
	}
	return (1);
}

static int
ops_fast_cmp_write(const struct req *a, const struct req *b, char *why,
    size_t whylen)
{
	const struct write_args	*x = &a->wa, *y = &b->wa;

	if (x->key_len != y->key_len || memcmp(x->key, y->key,
	    x->key_len) != 0) {
		snprintf(why, whylen, "write: keys differ");
		return (-1);
	}
	if (x->value.len != y->value.len || (x->value.len > 0 &&
	    memcmp(x->value.data, y->value.data, x->value.len) != 0) ||
	    (x->value.data == NULL) != (y->value.data == NULL) ||
	    (x->value.data != NULL && x->value.data[x->value.len] != '\0')) {
		snprintf(why, whylen, "write: values differ");
		return (-1);
	}
	if (x->pc.kind != y->pc.kind || x->pc.n != y->pc.n) {
		snprintf(why, whylen, "write: preconditions differ (%d %llu, "
		    "%d %llu)", (int)x->pc.kind, (unsigned long long)x->pc.n,
		    (int)y->pc.kind, (unsigned long long)y->pc.n);
		return (-1);
	}
	if (x->fence.set || y->fence.set || x->lease != y->lease) {
		snprintf(why, whylen, "write: a fence, or leases differ");
		return (-1);
	}
	if ((a->idem == NULL) != (b->idem == NULL) ||
	    a->idem_len != b->idem_len || (a->idem != NULL &&
	    (memcmp(a->idem, b->idem, a->idem_len) != 0 ||
	    a->idem[a->idem_len] != '\0'))) {
		snprintf(why, whylen, "write: tokens differ: %.*s, %.*s",
		    (int)a->idem_len, a->idem != NULL ? a->idem : "",
		    (int)b->idem_len, b->idem != NULL ? b->idem : "");
		return (-1);
	}
	if ((a->idem_name == NULL) != (b->idem_name == NULL) ||
	    a->idem_name_len != b->idem_name_len || (a->idem_name != NULL &&
	    memcmp(a->idem_name, b->idem_name, a->idem_name_len) != 0)) {
		snprintf(why, whylen, "write: the tokens' records' names "
		    "differ");
		return (-1);
	}
	return (1);
}

static int
ops_fast_cmp(struct metad *md, struct conn *c, const char *line, size_t len,
    char *why, size_t whylen)
{
	struct req		*a, *b;
	struct proto_err	 e;
	int			 rc;

	a = ops_fast_cmp_req(md, c, OPS_FAST_ROOM(len));
	if (!ops_fast(a, line, len)) {
		rc = a->op != NULL || a->id_len != 0 || a->idem != NULL ||
		    a->idem_name != NULL ? -1 : 0;
		snprintf(why, whylen, "ops_fast left the request changed");
		req_free(a);
		return (rc);
	}
	b = ops_fast_cmp_req(md, c, 0);
	if (ops_decode(b, line, len, &e) != 0) {
		snprintf(why, whylen, "taken, but the general decoder "
		    "answers %s: %s", proto_code_name(e.code), e.msg);
		rc = -1;
	} else if (a->op != b->op) {
		snprintf(why, whylen, "ops differ: %s, %s", a->op->name,
		    b->op->name);
		rc = -1;
	} else if (a->id_len != b->id_len || (a->id_len > 0 &&
	    memcmp(a->id, b->id, a->id_len) != 0)) {
		snprintf(why, whylen, "ids differ: %.*s, %.*s",
		    (int)a->id_len, a->id, (int)b->id_len, b->id);
		rc = -1;
	} else if (a->json != NULL) {
		snprintf(why, whylen, "ops_fast made a tree");
		rc = -1;
	} else if (strcmp(a->op->name, "get") == 0)
		rc = ops_fast_cmp_get(a, b, why, whylen);
	else
		rc = ops_fast_cmp_write(a, b, why, whylen);
	req_free(a);
	req_free(b);
	return (rc);
}

#endif
