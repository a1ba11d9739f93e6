/*
 * get KEY [--raw] [--rev R]: print a key's value (--rev: as it was at
 * revision R).  Text: the value's bytes and a newline (--raw: the bytes
 * alone, so binary values come out exactly).  A missing key is exit
 * status 1 with "metactl: KEY: not found" on stderr (and, with -o json,
 * the response, "kv":null, on stdout).
 */
#include <stdint.h>
#include <stdio.h>

#include "metactl.h"
#include "proto.h"

static enum cmd_status	cmd_get_exec(struct cmd_ctx *, char **);

static const struct option cmd_get_longopts[] = {
	{ "raw",	no_argument,		NULL, 'r' },
	{ "rev",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_get_entry = {
	.name = "get",
	.optstring = "r",
	.longopts = cmd_get_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "KEY [--raw] [--rev R]",
	.help = "print a key's value (--raw: exact bytes, no newline added; "
	    "--rev: as of revision R)",
	.exec = cmd_get_exec
};

enum cmd_status
cmd_get_print(const cJSON *kv, int raw, char **cause)
{
	struct proto_bytes	 v;
	struct proto_err	 e;

	if (!cJSON_IsObject(kv) || proto_get_value(kv, 1,
	    CLIENT_LINE_MAX_BYTES, &v, &e) != 1) {
		xasprintf(cause, "metad sent an invalid kv: %s",
		    cJSON_IsObject(kv) ? e.msg : "not an object");
		return (CMD_ERROR);
	}
	fwrite(v.data, 1, v.len, stdout);
	if (!raw)
		putchar('\n');
	proto_bytes_free(&v);
	return (CMD_OK);
}

static enum cmd_status
cmd_get_exec(struct cmd_ctx *ctx, char **cause)
{
	const char	*key = ctx->args->argv[0], *v;
	uint64_t	 rev = 0;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp, *kv;
	enum cmd_status	 s;

	if ((s = cmd_check_key(key, "KEY", cause)) != CMD_OK)
		return (s);
	if ((v = args_get(ctx->args, "rev")) != NULL &&
	    (s = args_u64(v, "--rev", &rev, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "get");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	if (v != NULL) {
		jw_name(&w, "rev");
		jw_u64(&w, rev);
	}
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	kv = cJSON_GetObjectItemCaseSensitive(resp, "kv");
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	if (kv == NULL || cJSON_IsNull(kv)) {
		xasprintf(cause, "%s: not found", key);
		s = CMD_FALSE;
	} else if (ctx->mode == OUTPUT_TEXT)
		s = cmd_get_print(kv, args_has(ctx->args, "raw"), cause);
	cJSON_Delete(resp);
	return (s);
}
