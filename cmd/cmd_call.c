/*
 * The request helpers every command uses (metactl.h): checking a key,
 * reading stdin, opening a request, connecting, one round trip and its
 * answer checked, a daemon's error as the command's status, and a value
 * checked against the daemon's limit before it is sent.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"
#include "sockpath.h"

/* A key given on the command line (metad-protocol(7), KEYS, VALUES AND
 * KV OBJECTS). */
enum cmd_status
cmd_check_key(const char *key, const char *what, char **cause)
{
	size_t	 len = strlen(key);

	if (len == 0)
		xasprintf(cause, "%s may not be empty", what);
	else if (len > KEY_MAX_BYTES)
		xasprintf(cause, "%s is %zu bytes, the limit is %d", what, len,
		    KEY_MAX_BYTES);
	else if (!utf8_valid(key, len))
		xasprintf(cause, "%s is not valid UTF-8", what);
	else
		return (CMD_OK);
	return (CMD_USAGE);
}

/* All of stdin (put -, txn), unless the REPL reads its script there. */
enum cmd_status
cmd_read_stdin(struct cmd_ctx *ctx, struct buf *b, char **cause)
{
	if (ctx->stdin_script) {
		xasprintf(cause, "%s: stdin is the REPL's script here, it "
		    "cannot also hold the input", ctx->entry->name);
		return (CMD_USAGE);
	}
	if (cmd_put_read_fd(STDIN_FILENO, "stdin", b, cause) != CMD_OK)
		return (report_input(ctx));
	return (CMD_OK);
}

/* Starts a request object in b: {"id":N,"op":OP ... (caller closes it). */
void
cmd_request_open(struct cmd_ctx *ctx, struct jw *w, struct buf *b,
    const char *op)
{
	buf_reset(b);
	jw_init(w, b);
	jw_obj_open(w);
	jw_name(w, "id");
	jw_u64(w, ++ctx->next_id);
	jw_name(w, "op");
	jw_cstr(w, op);
}

/* Connects unless connected; requests do it themselves. */
enum cmd_status
cmd_connect(struct cmd_ctx *ctx, char **cause)
{
	char	 path[1024];

	if (client_connected(&ctx->client))
		return (CMD_OK);
	if (ctx->socket != NULL)
		snprintf(path, sizeof path, "%s", ctx->socket);
	else if (sockpath_default("METACTL_SOCKET", path, sizeof path,
	    cause) != 0)
		return (CMD_UNREACHABLE);
	ctx->client.tls_cacert = ctx->tls_cacert;
	ctx->client.tls_cert = ctx->tls_cert;
	ctx->client.tls_key = ctx->tls_key;
	if (client_connect(&ctx->client, path, ctx->timeout_ms, cause) != 0)
		return (CMD_UNREACHABLE);
	return (CMD_OK);
}

/* The response is ours if it echoes our id (or none) and has "ok". */
static int
cmd_check_response(struct cmd_ctx *ctx, const cJSON *resp, char **cause)
{
	const cJSON	*id;
	uint64_t	 v;

	id = cJSON_GetObjectItemCaseSensitive(resp, "id");
	if (id != NULL && (proto_number_u64(id, &v) != 0 ||
	    v != ctx->next_id)) {
		xasprintf(cause, "metad answered another request than ours "
		    "(id %" PRIu64 ")", ctx->next_id);
		return (-1);
	}
	if (!cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		xasprintf(cause, "metad sent a response without \"ok\"");
		return (-1);
	}
	return (0);
}

/* The exit status for a failed client call. */
enum cmd_status
cmd_client_status(const struct client *c)
{
	switch (c->fail) {
	case CLIENT_FAIL_PROTOCOL:
		return (CMD_ERROR);
	case CLIENT_FAIL_INTERRUPTED:
		return (CMD_INTERRUPTED);
	default:
		return (CMD_UNREACHABLE);
	}
}

/*
 * Sends the request in req (closed by the caller), connecting first if
 * need be, and returns the response whatever its "ok".  A connection that
 * failed or timed out is closed: its answers would no longer match.
 */
enum cmd_status
cmd_roundtrip(struct cmd_ctx *ctx, struct buf *req, cJSON **resp,
    char **cause)
{
	enum cmd_status	 s;

	*resp = NULL;
	if ((s = cmd_connect(ctx, cause)) != CMD_OK)
		return (s);
	if (client_request(&ctx->client, req, resp, cause) != 0) {
		s = cmd_client_status(&ctx->client);
		client_close(&ctx->client);
		return (s);
	}
	if (cmd_check_response(ctx, *resp, cause) != 0) {
		cJSON_Delete(*resp);
		*resp = NULL;
		client_close(&ctx->client);
		return (CMD_ERROR);
	}
	return (CMD_OK);
}

/*
 * Like cmd_roundtrip(), but an error response is rendered here and turned
 * into its exit status; *resp is set only when the daemon said ok.
 */
enum cmd_status
cmd_call(struct cmd_ctx *ctx, struct buf *req, cJSON **resp, char **cause)
{
	enum cmd_status	 s;

	if ((s = cmd_roundtrip(ctx, req, resp, cause)) != CMD_OK)
		return (s);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*resp, "ok")))
		return (CMD_OK);
	s = cmd_response_error(ctx, *resp);
	cJSON_Delete(*resp);
	*resp = NULL;
	return (s);
}

/* Renders an error response; returns its exit status. */
enum cmd_status
cmd_response_error(struct cmd_ctx *ctx, const cJSON *resp)
{
	enum proto_code	 code;

	code = proto_code_parse(output_error(ctx->mode, resp));
	ctx->json_reported = ctx->mode == OUTPUT_JSON;
	if (code == PROTO_FAILED_PRECONDITION || code == PROTO_FENCED)
		return (CMD_CONFLICT);
	return (CMD_ERROR);
}

/*
 * Before sending a value of len bytes: refused here with value_too_large,
 * as metad would, when it is over metad's --max-value-bytes (asked once a
 * connection with hello), rather than sent and answered request_too_large.
 */
enum cmd_status
cmd_value_fits(struct cmd_ctx *ctx, size_t len, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;
	uint64_t	 max;
	char		*msg;

	if (len == 0)
		return (CMD_OK);
	if ((s = cmd_connect(ctx, cause)) != CMD_OK)
		return (s);
	if (!ctx->client.limits_known) {
		buf_init(&b);
		cmd_request_open(ctx, &w, &b, "hello");
		jw_obj_close(&w);
		s = cmd_call(ctx, &b, &resp, cause);
		buf_free(&b);
		if (s != CMD_OK)
			return (s);
		if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp,
		    "max_value_bytes"), &max) != 0)
			max = UINT64_MAX;	/* an older metad */
		cJSON_Delete(resp);
		ctx->client.limits_known = 1;
		ctx->client.max_value_bytes = max;
	}
	if (len <= ctx->client.max_value_bytes)
		return (CMD_OK);
	xasprintf(&msg, "value is %zu bytes, the limit is %" PRIu64
	    " (--max-value-bytes)", len, ctx->client.max_value_bytes);
	s = report_error(ctx, "value_too_large", msg);
	free(msg);
	return (s);
}
