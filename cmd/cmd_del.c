/*
 * del KEY [--if-absent | --if-version N | --if-mod-rev R] [--fence KEY:EPOCH]
 * del --prefix P [--fence KEY:EPOCH]
 *
 * Text output, as etcdctl's "del": the number of keys deleted, "1" or "0"
 * (the key was already absent).  Both are success, exit status 0: the key
 * is gone either way.  Scripts that care test the output, or use
 * --if-version/--if-mod-rev to make absence an error (exit status 3).
 * --prefix deletes every key under P at one rev (one "delete" with
 * "prefix") and prints how many.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "enc.h"
#include "metad_limits.h"
#include "proto.h"

#include "metactl.h"

static enum cmd_status	cmd_del_exec(struct cmd_ctx *, char **);

static const struct option cmd_del_longopts[] = {
	CMD_COND_LONGOPTS,
	{ "prefix",	required_argument,	NULL, 0 },
	{ NULL,		0,		NULL, 0 }
};

const struct cmd_entry cmd_del_entry = {
	.name = "del",
	.alias = "delete",
	.optstring = "",
	.longopts = cmd_del_longopts,
	.args_min = 0,
	.args_max = 1,
	.usage = "KEY [--if-absent | --if-version N | --if-mod-rev R] "
	    "[--fence KEY:EPOCH] | --prefix P [--fence KEY:EPOCH]",
	.help = "delete a key, or every key under a prefix; prints how many "
	    "were deleted",
	.exec = cmd_del_exec
};

static enum cmd_status
cmd_del_exec(struct cmd_ctx *ctx, char **cause)
{
	const char	*key = ctx->args->argv[0];
	const char	*prefix = args_get(ctx->args, "prefix");
	struct cmd_cond	 cond;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	uint64_t	 n = 0;
	enum cmd_status	 s;

	if ((s = cmd_cond_parse(ctx->args, &cond, cause)) != CMD_OK)
		return (s);
	if (prefix != NULL && (ctx->args->argc > 0 || cond.if_absent ||
	    cond.has_version || cond.has_mod_rev)) {
		xasprintf(cause, "--prefix takes no KEY and no --if-* (a txn "
		    "compares keys one by one)");
		return (CMD_USAGE);
	}
	if (prefix != NULL && (strlen(prefix) > KEY_MAX_BYTES ||
	    !utf8_valid(prefix, strlen(prefix)))) {
		xasprintf(cause, "--prefix must be UTF-8 of at most %d bytes",
		    KEY_MAX_BYTES);
		return (CMD_USAGE);
	}
	if (prefix == NULL && ctx->args->argc == 0) {
		xasprintf(cause, "del: missing arguments");
		return (CMD_USAGE);
	}
	if (prefix == NULL && (s = cmd_check_key(key, "KEY", cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "delete");
	jw_name(&w, prefix != NULL ? "prefix" : "key");
	jw_cstr(&w, prefix != NULL ? prefix : key);
	cmd_cond_write(&cond, &w);
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else if (prefix != NULL) {
		if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp,
		    "deleted"), &n) != 0) {
			cJSON_Delete(resp);
			xasprintf(cause, "metad's answer has no count");
			return (CMD_ERROR);
		}
		printf("%" PRIu64 "\n", n);
	} else
		printf("%d\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		    resp, "deleted")) ? 1 : 0);
	cJSON_Delete(resp);
	return (CMD_OK);
}
