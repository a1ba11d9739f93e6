/*
 * A write forwarded whole (forward.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "metad.h"
#include "core/commit.h"
#include "core/forward.h"
#include "core/reply.h"
#include "core/req.h"
#include "store/store_forward.h"
#include "jsonw.h"
#include "proto.h"
#include "util.h"

/*
 * The line to send: r's members but "id" and "idem", in their order and
 * as proto_print() writes them back (a \u0000 kept), then the token.
 */
static void
forward_line(const struct req *r, struct buf *b)
{
	char		 tok[STORE_FORWARD_TOKEN_MAX];
	const cJSON	*c;

	store_forward_token(tok, r->idem != NULL ? r->idem_name : NULL,
	    r->idem != NULL ? r->idem_name_len : 0);
	buf_addc(b, '{');
	for (c = r->json->child; c != NULL; c = c->next) {
		if (strcmp(c->string, "id") == 0 ||
		    strcmp(c->string, "idem") == 0)
			continue;
		json_escape(b, c->string, strlen(c->string));
		buf_addc(b, ':');
		proto_print(b, c, NULL);
		buf_addc(b, ',');
	}
	buf_printf(b, "\"idem\":\"%s\"}", tok);
}

static void
forward_done(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct proto_err	 e;
	const cJSON		*err, *code;
	cJSON			*j;
	uint64_t		 rev;

	r->wrote_rev = 0;
	if (se != NULL)
		reply_store_error(r, se);
	else if (len < 2 || line[0] != '{' ||
	    (j = proto_parse(line, len, &e)) == NULL)
		reply_error(r, PROTO_INTERNAL, "the metad the store uses "
		    "answered a line that is not an answer");
	else {
		/* Its answer, with our id first (it was sent none). */
		if (r->id_len > 0) {
			buf_addstr(&r->resp, "{\"id\":");
			buf_add(&r->resp, r->id, r->id_len);
			buf_addc(&r->resp, len > 2 ? ',' : '}');
			if (len > 2)
				buf_add(&r->resp, line + 1, len - 1);
		} else
			buf_add(&r->resp, line, len);
		buf_addc(&r->resp, '\n');
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
			r->code = PROTO_OK;
			if (proto_get_u64(j, "rev", 0, &rev, NULL) == 1)
				r->wrote_rev = rev;
		} else {
			err = cJSON_GetObjectItemCaseSensitive(j, "error");
			code = cJSON_GetObjectItemCaseSensitive(err, "code");
			r->code = cJSON_IsString(code) ?
			    proto_code_parse(code->valuestring) :
			    PROTO_INTERNAL;
		}
		cJSON_Delete(j);
	}
	commit_forwarded(r->md->commit, r);
}

void
forward_start(struct req *r)
{
	struct buf	 b;

	buf_init(&b);
	forward_line(r, &b);
	commit_forwarding(r->md->commit);
	store_forward(r->md->store, b.data, b.len, forward_done, r);
	buf_free(&b);
}
