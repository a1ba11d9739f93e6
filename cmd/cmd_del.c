/*
 * del KEY [--if-absent | --if-version N | --if-mod-rev R] [--fence KEY:EPOCH]
 *     [--idem TOKEN]
 *
 * Text output, as etcdctl's "del": the number of keys deleted, "1" or "0"
 * (the key was already absent).  Both are success, exit status 0: the key
 * is gone either way.  Scripts that care test the output, or use
 * --if-version/--if-mod-rev to make absence an error (exit status 3).
 */
#include <stdio.h>

#include "metactl.h"

static enum cmd_status	cmd_del_exec(struct cmd_ctx *, char **);

static const struct option cmd_del_longopts[] = {
	CMD_COND_LONGOPTS,
	{ NULL,		0,		NULL, 0 }
};

const struct cmd_entry cmd_del_entry = {
	.name = "del",
	.alias = "delete",
	.optstring = "",
	.longopts = cmd_del_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "KEY [--if-absent | --if-version N | --if-mod-rev R] "
	    "[--fence KEY:EPOCH] [--idem TOKEN]",
	.help = "delete a key; prints 1 if it was deleted, 0 if absent",
	.exec = cmd_del_exec
};

static enum cmd_status
cmd_del_exec(struct cmd_ctx *ctx, char **cause)
{
	const char	*key = ctx->args->argv[0];
	struct cmd_cond	 cond;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_check_key(key, "KEY", cause)) != CMD_OK ||
	    (s = cmd_cond_parse(ctx->args, &cond, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "delete");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	cmd_cond_write(&cond, &w);
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else
		printf("%d\n", cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
		    resp, "deleted")) ? 1 : 0);
	cJSON_Delete(resp);
	return (CMD_OK);
}
