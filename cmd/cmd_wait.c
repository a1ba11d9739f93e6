/*
 * wait KEY [--version N] [--raw]
 *
 * Blocks until KEY exists with a version >= N (default 1: until it
 * exists), then prints its value as get does (--raw: the exact bytes).
 * The global --timeout (default 10s) is how long the daemon waits; metactl
 * itself gives up WAIT_GRACE_MS later.  --timeout 0 waits forever (the
 * daemon's wait is limited to 24 hours, so metactl asks again).  A wait
 * that timed out is exit status 1 ("the condition does not hold":
 * metactl(1), EXIT STATUS),
 * with the daemon's message on stderr (and, -o json, its error response on
 * stdout); Ctrl-C is exit status 130.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metactl.h"
#include "proto.h"

/* How much longer than the daemon's timeout metactl waits for it. */
#define WAIT_GRACE_MS	2000

static enum cmd_status	cmd_wait_exec(struct cmd_ctx *, char **);

static const struct option cmd_wait_longopts[] = {
	{ "version",	required_argument,	NULL, 0 },
	{ "raw",	no_argument,		NULL, 'r' },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_wait_entry = {
	.name = "wait",
	.optstring = "r",
	.longopts = cmd_wait_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "KEY [--version N] [--raw]",
	.help = "block until the key has version >= N (default 1), for at "
	    "most --timeout (default 10s)",
	.details =
	    "--timeout (default 10s, 0: forever) is how long to wait; a wait "
	    "that times\nout is exit status 1.  The value is printed as get "
	    "prints it (--raw: the\nexact bytes, no newline added).  Ctrl-C "
	    "is exit status 130.\n",
	.exec = cmd_wait_exec
};

/* One wait request; *resp is the response, ok or not. */
static enum cmd_status
cmd_wait_once(struct cmd_ctx *ctx, const char *key, uint64_t version,
    cJSON **resp, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	enum cmd_status	 s;

	if ((s = cmd_connect(ctx, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "wait");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	jw_name(&w, "version");
	jw_u64(&w, version);
	if (ctx->timeout_ms != 0) {
		jw_name(&w, "timeout_ms");
		jw_u64(&w, ctx->timeout_ms);
	}
	jw_obj_close(&w);
	/* Connected with --timeout; the answer may take that much longer. */
	ctx->client.timeout_ms = ctx->timeout_ms == 0 ? 0 :
	    ctx->timeout_ms + WAIT_GRACE_MS;
	s = cmd_roundtrip(ctx, &b, resp, cause);
	ctx->client.timeout_ms = ctx->timeout_ms;
	buf_free(&b);
	return (s);
}

static int
cmd_wait_timed_out(const cJSON *resp)
{
	const cJSON	*code;

	code = cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(resp, "error"), "code");
	return (cJSON_IsString(code) && strcmp(code->valuestring,
	    "timeout") == 0);
}

static enum cmd_status
cmd_wait_print(struct cmd_ctx *ctx, const cJSON *resp, char **cause)
{
	if (ctx->mode == OUTPUT_JSON) {
		output_json(resp);
		return (CMD_OK);
	}
	return (cmd_get_print(cJSON_GetObjectItemCaseSensitive(resp, "kv"),
	    args_has(ctx->args, "raw"), cause));
}

static enum cmd_status
cmd_wait_exec(struct cmd_ctx *ctx, char **cause)
{
	const char	*key = ctx->args->argv[0], *v;
	uint64_t	 version = 1;
	struct intr	 in;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_check_key(key, "KEY", cause)) != CMD_OK)
		return (s);
	if ((v = args_get(ctx->args, "version")) != NULL &&
	    (s = args_u64(v, "--version", &version, cause)) != CMD_OK)
		return (s);
	intr_catch(&in, &ctx->client);
	for (;;) {
		if ((s = cmd_wait_once(ctx, key, version, &resp,
		    cause)) != CMD_OK)
			break;
		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok")))
			s = cmd_wait_print(ctx, resp, cause);
		else if (!cmd_wait_timed_out(resp))
			s = cmd_response_error(ctx, resp);
		else if (ctx->timeout_ms == 0) {
			cJSON_Delete(resp);
			continue;	/* the daemon's 24 hours are over */
		} else {
			output_error(ctx->mode, resp);
			s = CMD_FALSE;
		}
		cJSON_Delete(resp);
		break;
	}
	intr_restore(&in, &ctx->client);
	if (s == CMD_INTERRUPTED) {
		free(*cause);
		*cause = NULL;
	}
	return (s);
}
