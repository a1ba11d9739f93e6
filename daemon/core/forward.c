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
#include "jscan.h"
#include "jsonw.h"
#include "proto.h"
#include "util.h"

/*
 * The line to send, spliced from the line that came (one JSON object, its
 * names unique: the decoders took it): its members but "id" and "idem",
 * each's bytes as they came, then the token.  0, or -1 (b as it was) if a
 * name holds an escape (it may spell "id": the tree's names decide then,
 * forward_reprint) or the line is not as expected.
 */
static int
forward_splice(const char *s, size_t len, const char *tok, struct buf *b)
{
	size_t	 i, name, name_end, end, n, was = b->len;

	if ((i = jscan_skip_blanks(s, len, 0)) == len || s[i] != '{')
		return (-1);
	buf_addc(b, '{');
	i = jscan_skip_blanks(s, len, i + 1);
	while (i < len && s[i] == '"') {
		name = i;
		if ((name_end = jscan_skip_str(s, len, i)) > len)
			goto fail;
		n = name_end - name - 2;
		if (memchr(s + name + 1, '\\', n) != NULL)
			goto fail;
		if ((i = jscan_skip_blanks(s, len, name_end)) == len ||
		    s[i] != ':')
			goto fail;
		if ((end = jscan_skip_value(s, len, i + 1)) == len)
			goto fail;
		if (!((n == 2 && memcmp(s + name + 1, "id", 2) == 0) ||
		    (n == 4 && memcmp(s + name + 1, "idem", 4) == 0))) {
			buf_add(b, s + name, end - name);
			buf_addc(b, ',');
		}
		i = end;
		if (s[i] != ',')
			break;
		i = jscan_skip_blanks(s, len, i + 1);
	}
	if (i == len || s[i] != '}')
		goto fail;
	buf_printf(b, "\"idem\":\"%s\"}", tok);
	return (0);
fail:
	b->len = was;
	return (-1);
}

/*
 * The line to send from r's tree: its members but "id" and "idem", in
 * their order and as proto_print() writes them back (a \u0000 kept),
 * then the token.
 */
static void
forward_reprint(const struct req *r, const char *tok, struct buf *b)
{
	const cJSON	*c;

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

/*
 * The top-level "rev" of an answer: its last "rev": (the byte sequence
 * cannot be inside a string, where a quote is escaped, and nested objects
 * name theirs create_rev and mod_rev), and the answers write it last.
 * 1, or 0 if there is none.
 */
static int
forward_rev(const char *line, size_t len, uint64_t *rev)
{
	static const char	 key[] = "\"rev\":";
	const char		*p;
	size_t			 i;

	for (i = len; i >= sizeof key - 1; i--) {
		p = line + i - (sizeof key - 1);
		if (memcmp(p, key, sizeof key - 1) != 0)
			continue;
		*rev = 0;
		for (p += sizeof key - 1; p < line + len && *p >= '0' &&
		    *p <= '9'; p++)
			*rev = *rev * 10 + (uint64_t)(*p - '0');
		return (1);
	}
	return (0);
}

/* An error answer's code, from its tree. */
static enum proto_code
forward_code(const char *line, size_t len)
{
	struct proto_err	 e;
	const cJSON		*err, *code;
	enum proto_code		 c = PROTO_INTERNAL;
	cJSON			*j;

	if ((j = proto_parse(line, len, &e)) == NULL)
		return (c);
	err = cJSON_GetObjectItemCaseSensitive(j, "error");
	code = cJSON_GetObjectItemCaseSensitive(err, "code");
	if (cJSON_IsString(code))
		c = proto_code_parse(code->valuestring);
	cJSON_Delete(j);
	return (c);
}

static void
forward_done(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	static const char	 ok[] = "{\"ok\":true";
	struct req		*r = arg;
	uint64_t		 rev;

	r->wrote_rev = 0;
	if (se != NULL)
		reply_store_error(r, se);
	else if (len < 2 || line[0] != '{' || line[len - 1] != '}')
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
		if (len >= sizeof ok - 1 && memcmp(line, ok, sizeof ok - 1) == 0) {
			r->code = PROTO_OK;
			if (forward_rev(line, len, &rev))
				r->wrote_rev = rev;
		} else
			r->code = forward_code(line, len);
	}
	commit_forwarded(r->md->commit, r);
}

void
forward_start(struct req *r, const char *line, size_t len)
{
	struct proto_err	 e;
	struct buf		 b;
	char			 tok[STORE_FORWARD_TOKEN_MAX];

	store_forward_token(tok, r->idem != NULL ? r->idem_name : NULL,
	    r->idem != NULL ? r->idem_name_len : 0);
	buf_init(&b);
	buf_reserve(&b, len + sizeof tok + 16);
	if (forward_splice(line, len, tok, &b) != 0) {
		/* The direct decoder's lines always splice. */
		if (r->json == NULL &&
		    (r->json = proto_parse(line, len, &e)) == NULL) {
			buf_free(&b);
			reply_error(r, PROTO_INTERNAL, "a write's line could "
			    "not be sent on");
			req_done(r);
			return;
		}
		forward_reprint(r, tok, &b);
	}
	commit_forwarding(r->md->commit);
	store_forward(r->md->store, b.data, b.len, forward_done, r);
	buf_free(&b);
}
