/*
 * Administration: compact, status, metrics and ping.
 *
 * compact REV drops the history below REV (watches can no longer replay
 * it) and prints the compacted rev the daemon reports.
 *
 * status prints the daemon's status fields as "name: value" lines, in the
 * daemon's order (rev, compact_rev, keys, db_bytes, connections, watches,
 * uptime_s, backend), fields the daemon adds later included; then, from a
 * remote store, "endpoints:" and one line per endpoint, indented: its URL
 * and "healthy" or "unhealthy", aligned.
 *
 * metrics prints the daemon's metrics as it answers them, Prometheus'
 * text exposition (metad(8), METRICS), byte for byte.
 *
 * ping prints "ok rev N time T" with T the request's round trip in
 * milliseconds (connecting excluded), e.g. "ok rev 12 time 0.083ms".  Its
 * exit status alone tells whether metad answers.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metactl.h"
#include "proto.h"

static enum cmd_status	cmd_admin_compact(struct cmd_ctx *, char **);
static enum cmd_status	cmd_admin_status(struct cmd_ctx *, char **);
static enum cmd_status	cmd_admin_ping(struct cmd_ctx *, char **);
static enum cmd_status	cmd_admin_metrics(struct cmd_ctx *, char **);

const struct cmd_entry cmd_compact_entry = {
	.name = "compact",
	.optstring = "",
	.args_min = 1,
	.args_max = 1,
	.usage = "REV",
	.help = "drop the watch history below REV; prints the compacted rev",
	.details =
	    "Watches can then replay changes from REV on only (--from-rev "
	    "below it is\nexit status 5, error compacted).  REV may not be "
	    "above the current rev.\n",
	.exec = cmd_admin_compact
};

const struct cmd_entry cmd_status_entry = {
	.name = "status",
	.optstring = "",
	.args_min = 0,
	.args_max = 0,
	.usage = "",
	.help = "show the daemon's revision, key count, connections...",
	.exec = cmd_admin_status
};

const struct cmd_entry cmd_metrics_entry = {
	.name = "metrics",
	.optstring = "",
	.args_min = 0,
	.args_max = 0,
	.usage = "",
	.help = "print the daemon's metrics (Prometheus' text format)",
	.details =
	    "The text as metad answers it, for node-exporter's textfile "
	    "collector or a look;\n-o json prints the answer, the text in "
	    "\"text\".  metad --metrics-listen serves\nthe same over HTTP.\n",
	.exec = cmd_admin_metrics
};

const struct cmd_entry cmd_ping_entry = {
	.name = "ping",
	.optstring = "",
	.args_min = 0,
	.args_max = 0,
	.usage = "",
	.help = "check that metad answers; prints its rev and the round trip",
	.exec = cmd_admin_ping
};

/* Sends a request with no argument; the response is the caller's. */
static enum cmd_status
cmd_admin_call(struct cmd_ctx *ctx, const char *op, cJSON **resp,
    char **cause)
{
	struct buf	 b;
	struct jw	 w;
	enum cmd_status	 s;

	buf_init(&b);
	cmd_request_open(ctx, &w, &b, op);
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, resp, cause);
	buf_free(&b);
	return (s);
}

static enum cmd_status
cmd_admin_compact(struct cmd_ctx *ctx, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	uint64_t	 rev;
	enum cmd_status	 s;

	if ((s = args_u64(ctx->args->argv[0], "REV", &rev, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "compact");
	jw_name(&w, "rev");
	jw_u64(&w, rev);
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp,
	    "compact_rev"), &rev) == 0)
		printf("%" PRIu64 "\n", rev);
	else {
		xasprintf(cause, "metad's answer has no compact_rev");
		s = CMD_ERROR;
	}
	cJSON_Delete(resp);
	return (s);
}

/* The endpoints of a remote store: a line each, URL and health. */
static void
cmd_admin_endpoints(const cJSON *eps)
{
	struct output_table	 t;
	const cJSON		*ep, *url;
	struct buf		 cell;
	const char		*row[2];

	puts("endpoints:");
	output_table_init(&t, 2, 0);
	buf_init(&cell);
	cJSON_ArrayForEach(ep, eps) {
		url = cJSON_GetObjectItemCaseSensitive(ep, "url");
		buf_reset(&cell);
		buf_addstr(&cell, "  ");
		if (cJSON_IsString(url))
			output_token(&cell, url->valuestring,
			    strlen(url->valuestring));
		else
			buf_addstr(&cell, "-");
		row[0] = buf_cstr(&cell);
		row[1] = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ep,
		    "healthy")) ? "healthy" : "unhealthy";
		output_table_add(&t, row);
	}
	output_table_print(&t);
	output_table_free(&t);
	buf_free(&cell);
}

static enum cmd_status
cmd_admin_status(struct cmd_ctx *ctx, char **cause)
{
	const cJSON	*eps;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_admin_call(ctx, "status", &resp, cause)) != CMD_OK)
		return (s);
	eps = cJSON_GetObjectItemCaseSensitive(resp, "endpoints");
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else if (cJSON_IsArray(eps)) {
		output_fields(resp, "endpoints");
		cmd_admin_endpoints(eps);
	} else
		output_fields(resp, NULL);
	cJSON_Delete(resp);
	return (CMD_OK);
}


static enum cmd_status
cmd_admin_ping(struct cmd_ctx *ctx, char **cause)
{
	cJSON		*resp;
	enum cmd_status	 s;
	double		 start, rtt;
	uint64_t	 rev;

	if ((s = cmd_connect(ctx, cause)) != CMD_OK)
		return (s);
	start = ((double)mono_ns() / 1e6);
	if ((s = cmd_admin_call(ctx, "ping", &resp, cause)) != CMD_OK)
		return (s);
	rtt = ((double)mono_ns() / 1e6) - start;
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp,
	    "rev"), &rev) == 0)
		printf("ok rev %" PRIu64 " time %.3fms\n", rev, rtt);
	else
		printf("ok time %.3fms\n", rtt);
	cJSON_Delete(resp);
	return (CMD_OK);
}

static enum cmd_status
cmd_admin_metrics(struct cmd_ctx *ctx, char **cause)
{
	const cJSON	*text;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_admin_call(ctx, "metrics", &resp, cause)) != CMD_OK)
		return (s);
	text = cJSON_GetObjectItemCaseSensitive(resp, "text");
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else if (cJSON_IsString(text))
		fputs(text->valuestring, stdout);
	else {
		xasprintf(cause, "metad's answer has no text");
		s = CMD_ERROR;
	}
	cJSON_Delete(resp);
	return (s);
}
