/*
 * history KEY [--from-rev R] [--limit N]: a key's puts and deletes, oldest
 * first, from revision R (default: the oldest the daemon keeps).  Text: one
 * event a line in aligned columns, mod_rev, "put" or "delete", version
 * ("-" for a delete) and value (printed as it is when it is one line of
 * text, else "b64:" and its base64).  --limit N stops after N events (0:
 * no limit, the default); when it cut the history, a note on stderr names
 * the --from-rev that goes on.
 *
 * It pages like ls: each "history" request asks from the rev after the
 * last event of the previous page until more is false.
 *
 * -o json prints one object merged across pages:
 * {"ok":true,"events":[...],"more":M,"rev":R}, more true only when
 * --limit cut it short, rev the first page's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

#define CMD_HISTORY_PAGE	1000

static enum cmd_status	cmd_history_exec(struct cmd_ctx *, char **);

static const struct option cmd_history_longopts[] = {
	{ "from-rev",	required_argument,	NULL, 0 },
	{ "limit",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_history_entry = {
	.name = "history",
	.longopts = cmd_history_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "KEY [--from-rev R] [--limit N]",
	.help = "list a key's puts and deletes, oldest first",
	.exec = cmd_history_exec
};

struct cmd_history {
	struct cmd_pages	 pg;		/* the listing (pages.c) */
	struct cmd_ctx		*ctx;
	const char		*key;
	int			 has_from;
	uint64_t		 from;
};

static void
cmd_history_request(void *arg, struct buf *b, uint64_t n)
{
	struct cmd_history	*h = arg;
	struct jw		 w;

	cmd_request_open(h->ctx, &w, b, "history");
	jw_name(&w, "key");
	jw_cstr(&w, h->key);
	if (h->has_from) {
		jw_name(&w, "from_rev");
		jw_u64(&w, h->from);
	}
	jw_name(&w, "limit");
	jw_u64(&w, n);
	jw_obj_close(&w);
}

/*
 * One line of text as it is; anything else (a control character, a NUL
 * byte: proto_kv_value's bytes) as b64:BASE64.
 */
static char *
cmd_history_value(const cJSON *ev)
{
	struct proto_bytes	 v;
	size_t			 i;
	char			*out;

	if (proto_kv_value(ev, &v) != 1)
		return (xstrdup(""));
	for (i = 0; i < v.len; i++) {
		if (v.data[i] < 0x20 || v.data[i] == 0x7f)
			break;
	}
	if (i == v.len && utf8_valid(v.data, v.len))
		out = xstrdup((const char *)v.data);
	else {
		out = xmalloc(4 + b64_encoded_len(v.len) + 1);
		memcpy(out, "b64:", 4);
		b64_encode(v.data, v.len, out + 4);
	}
	proto_bytes_free(&v);
	return (out);
}

static enum cmd_status
cmd_history_item(void *arg, const cJSON *ev, char **cause)
{
	struct cmd_history	*h = arg;
	const cJSON	*type;
	uint64_t	 rev, version;
	char		 srev[24], sver[24], *value;
	const char	*row[4];

	type = cJSON_GetObjectItemCaseSensitive(ev, "event");
	if (!cJSON_IsString(type) || proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(ev, "mod_rev"), &rev) != 0) {
		xasprintf(cause, "metad sent a history event without event "
		    "or mod_rev");
		return (CMD_ERROR);
	}
	h->from = rev + 1;
	h->has_from = 1;
	if (h->ctx->mode == OUTPUT_JSON) {
		cmd_pages_json(&h->pg, ev);
		return (CMD_OK);
	}
	snprintf(srev, sizeof srev, "%" PRIu64, rev);
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(ev, "version"),
	    &version) == 0)
		snprintf(sver, sizeof sver, "%" PRIu64, version);
	else
		snprintf(sver, sizeof sver, "-");
	value = strcmp(type->valuestring, "put") == 0 ?
	    cmd_history_value(ev) : xstrdup("");
	row[0] = srev;
	row[1] = type->valuestring;
	row[2] = sver;
	row[3] = value;
	output_table_add(&h->pg.table, row);
	free(value);
	return (CMD_OK);
}

static enum cmd_status
cmd_history_exec(struct cmd_ctx *ctx, char **cause)
{
	struct cmd_history	 h;
	const char		*v;
	enum cmd_status		 s;

	memset(&h, 0, sizeof h);
	h.ctx = ctx;
	cmd_pages_init(&h.pg, ctx, "events", CMD_HISTORY_PAGE, 4, 0x5);
	h.pg.request = cmd_history_request;
	h.pg.item = cmd_history_item;
	h.pg.arg = &h;
	h.key = ctx->args->argv[0];
	if ((s = cmd_check_key(h.key, "KEY", cause)) != CMD_OK)
		goto out;
	if ((v = args_get(ctx->args, "limit")) != NULL &&
	    (s = args_u64(v, "--limit", &h.pg.limit, cause)) != CMD_OK)
		goto out;
	if ((v = args_get(ctx->args, "from-rev")) != NULL) {
		if ((s = args_u64(v, "--from-rev", &h.from, cause)) != CMD_OK)
			goto out;
		h.has_from = 1;
	}
	s = cmd_pages_run(&h.pg, cause);
	if (s == CMD_OK && ctx->mode == OUTPUT_TEXT && cmd_pages_cut(&h.pg)) {
		fflush(stdout);
		fprintf(stderr, "(more events: --limit %" PRIu64 " cut the "
		    "history; --from-rev %" PRIu64 " goes on)\n", h.pg.limit,
		    h.from);
	}
out:
	cmd_pages_free(&h.pg);
	return (s);
}
