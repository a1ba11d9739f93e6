/*
 * The check of the fields each op knows (its row's, struct op): a request
 * naming any other field answers bad_request naming it, so that a client
 * using a newer protocol feature against an older daemon is never misled
 * (metad-protocol(7), REQUESTS AND RESPONSES).  "op" and "id" go with
 * every op, "idem" with every op whose row has OP_IDEM.  A txn checks the fields of its compares and ops
 * (ops_fields_check_txn), a fence those of its object
 * (ops_fields_check_obj); with the helpers for a txn's lists and their
 * messages ("then[3]: ...").
 */
#include <stdio.h>
#include <string.h>

#include "enc.h"
#include "ops/ops.h"

static int
ops_fields_known(const char *const *fields, const char *name)
{
	size_t	 i;

	for (i = 0; fields[i] != NULL; i++) {
		if (strcmp(fields[i], name) == 0)
			return (1);
	}
	return (0);
}

/*
 * bad_request naming the first field of obj that is not in fields (a NULL
 * terminated list); "what" says whose field it is ("op \"get\"").
 */
int
ops_fields_check_obj(const char *const *fields, const cJSON *obj,
    const char *what, struct proto_err *e)
{
	const cJSON	*c;
	size_t		 n;

	for (c = obj->child; c != NULL; c = c->next) {
		if (ops_fields_known(fields, c->string))
			continue;
		/* Quote 64 bytes of it at most, not splitting a character. */
		n = strlen(c->string);
		n = n < 64 ? n : 64;
		while (n > 0 && c->string[n] != '\0' &&
		    ((unsigned char)c->string[n] & 0xc0) == 0x80)
			n--;
		if (!utf8_valid(c->string, n))
			return (proto_fail(e, PROTO_BAD_REQUEST, "unknown "
			    "field (its name is not valid UTF-8) for %s",
			    what));
		return (proto_fail(e, PROTO_BAD_REQUEST, "unknown field "
		    "\"%.*s\" for %s", (int)n, c->string, what));
	}
	return (0);
}

/* bad_request naming the first field of req that op's row does not list. */
int
ops_fields_check(const struct op *op, const cJSON *req, struct proto_err *e)
{
	const char	*fields[OP_FIELDS_MAX + 4];
	char		 what[64];
	size_t		 j;

	fields[0] = "op";
	fields[1] = "id";
	for (j = 0; j < OP_FIELDS_MAX && op->fields[j] != NULL; j++)
		fields[j + 2] = op->fields[j];
	if (op->flags & OP_IDEM)
		fields[2 + j++] = "idem";
	fields[j + 2] = NULL;
	snprintf(what, sizeof what, "op \"%s\"", op->name);
	return (ops_fields_check_obj(fields, req, what, e));
}

/* The fields of a txn's compares and ops (metad-protocol(7),
 * TRANSACTIONS); kind: "compare", "put", "delete" or "get".  "lease" is
 * let through on a delete or get for ops_txn.c's own message (a lease goes
 * with a put only). */
int
ops_fields_check_txn(const char *kind, const cJSON *o, struct proto_err *e)
{
	static const char *const cmp[] = { "key", "version", "create_rev",
	    "mod_rev", "value", "value_b64", "result", NULL };
	static const char *const put[] = { "op", "key", "value", "value_b64",
	    "lease", NULL };
	static const char *const other[] = { "op", "key", "lease", NULL };
	char	 what[32];

	if (strcmp(kind, "compare") == 0)
		return (ops_fields_check_obj(cmp, o, "a compare", e));
	snprintf(what, sizeof what, "a txn %s", kind);
	return (ops_fields_check_obj(strcmp(kind, "put") == 0 ? put : other, o,
	    what, e));
}

/* Prefix e's message with the place it applies to: "then[3]: ...". */
int
ops_fail_at(struct proto_err *e, const char *list, size_t i)
{
	struct buf	 b;

	buf_init(&b);
	buf_printf(&b, "%s[%zu]: %s", list, i, e->msg);
	if (b.len >= sizeof e->msg)
		b.len = sizeof e->msg - 1;
	memcpy(e->msg, b.data, b.len);
	e->msg[b.len] = '\0';
	buf_free(&b);
	return (-1);
}

/* A field that is a list (a txn's "if", "then", "else"), absent (or null)
 * when empty. */
int
ops_field_list(const cJSON *json, const char *name, const cJSON **out,
    size_t *n, struct proto_err *e)
{
	const cJSON	*f;

	*out = NULL;
	*n = 0;
	f = cJSON_GetObjectItemCaseSensitive(json, name);
	if (f == NULL || cJSON_IsNull(f))
		return (0);
	if (!cJSON_IsArray(f))
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"%s\" must be "
		    "a list", name));
	*out = f;
	*n = (size_t)cJSON_GetArraySize(f);
	return (0);
}
