/*
 * Reporting a command's failure (see metactl.h): the message on stderr
 * and, under -o json, one error object on stdout.
 */
#include <stdio.h>
#include <stdlib.h>

#include "metactl.h"

/*
 * An error metactl finds itself that a daemon would answer with code (a
 * value over metad's limit), rendered as if metad had: "metactl: CODE:
 * MESSAGE", and the error object under -o json.
 */
enum cmd_status
report_error(struct cmd_ctx *ctx, const char *code, const char *msg)
{
	enum cmd_status	 s;
	cJSON		*resp, *err;

	resp = cJSON_CreateObject();
	cJSON_AddFalseToObject(resp, "ok");
	err = cJSON_AddObjectToObject(resp, "error");
	cJSON_AddStringToObject(err, "code", code);
	cJSON_AddStringToObject(err, "message", msg);
	s = cmd_response_error(ctx, resp);
	cJSON_Delete(resp);
	return (s);
}

/* After setting *cause: the input (a file, stdin) is bad; exit 5. */
enum cmd_status
report_input(struct cmd_ctx *ctx)
{
	ctx->fail_code = "input";
	return (CMD_ERROR);
}

/* The code of a local failure: the command's, else the exit status's. */
static const char *
report_code(const struct cmd_ctx *ctx, enum cmd_status s)
{
	if (ctx->fail_code != NULL)
		return (ctx->fail_code);
	if (s == CMD_USAGE)
		return ("usage");
	if (s == CMD_UNREACHABLE)
		return ("unreachable");
	return ("internal");
}

/*
 * Reports what a command left to say: cause on stderr after "metactl: ",
 * and under -o json, unless an error object is already out, a failure's
 * {"ok":false,"error":{"code":C,"message":M}} on stdout first.  The one
 * place main() and the REPL report a command's failure.
 */
void
report_failure(struct cmd_ctx *ctx, enum cmd_status s, const char *cause)
{
	struct buf	 b;
	struct jw	 w;

	if (cause != NULL && ctx->mode == OUTPUT_JSON && !ctx->json_reported &&
	    s != CMD_OK && s != CMD_FALSE && s != CMD_INTERRUPTED) {
		buf_init(&b);
		jw_init(&w, &b);
		jw_obj_open(&w);
		JW_NAME(&w, "ok");
		jw_bool(&w, 0);
		JW_NAME(&w, "error");
		jw_obj_open(&w);
		JW_NAME(&w, "code");
		jw_cstr(&w, report_code(ctx, s));
		JW_NAME(&w, "message");
		jw_cstr(&w, cause);
		jw_obj_close(&w);
		jw_obj_close(&w);
		buf_addc(&b, '\n');
		fwrite(b.data, 1, b.len, stdout);
		fflush(stdout);
		buf_free(&b);
	}
	if (cause != NULL)
		fprintf(stderr, "metactl: %s\n", cause);
	ctx->fail_code = NULL;
	ctx->json_reported = 0;
}
