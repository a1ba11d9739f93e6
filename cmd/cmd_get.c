/*
 * get KEY [--raw] [--rev R]: print a key's value (--rev: as it was at
 * revision R).  Text: the value's bytes and a newline (--raw: the bytes
 * alone, so binary values come out exactly).  A missing key is exit
 * status 1 with "metactl: KEY: not found" on stderr (and, with -o json,
 * the response, "kv":null, on stdout).
 *
 * get KEY KEY... (at most 128, one "get" with "keys": all at one rev) and
 * get --prefix P (every key under P, "list" page by page, as ls does):
 * one line a present key, "KEY VALUE", each a token as watch prints them
 * (output.h), in key order.  A named key that is missing is left out, and
 * named on stderr, exit status 1.  -o json prints the answer: {"kvs":...}.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

/* Values come with the keys: smaller pages than ls's. */
#define CMD_GET_PAGE	100

static enum cmd_status	cmd_get_exec(struct cmd_ctx *, char **);

static const struct option cmd_get_longopts[] = {
	{ "raw",	no_argument,		NULL, 'r' },
	{ "rev",	required_argument,	NULL, 0 },
	{ "prefix",	required_argument,	NULL, 0 },
	{ "limit",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_get_entry = {
	.name = "get",
	.optstring = "r",
	.longopts = cmd_get_longopts,
	.args_min = 0,
	.args_max = GET_KEYS_MAX,
	.usage = "KEY [--raw] [--rev R] | KEY KEY... [--rev R] | "
	    "--prefix P [--limit N] [--rev R]",
	.help = "print a key's value (--raw: exact bytes, no newline added; "
	    "--rev: as of revision R); several keys, or every key under a "
	    "prefix: KEY VALUE lines",
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

/* One kv as "KEY VALUE", tokens as watch prints them. */
static enum cmd_status
cmd_get_line(const cJSON *kv, char **cause)
{
	const cJSON	*key = cJSON_GetObjectItemCaseSensitive(kv, "key");
	struct buf	 b;

	if (!cJSON_IsString(key)) {
		xasprintf(cause, "metad sent a kv without key");
		return (CMD_ERROR);
	}
	buf_init(&b);
	output_token(&b, key->valuestring, strlen(key->valuestring));
	buf_addc(&b, ' ');
	if (output_token_value(&b, kv) != 0) {
		buf_free(&b);
		xasprintf(cause, "metad sent a kv without a value");
		return (CMD_ERROR);
	}
	buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
	return (CMD_OK);
}

/* --prefix: a listing with values (pages.c). */
struct cmd_get_pfx {
	struct cmd_pages	 pg;
	struct cmd_ctx		*ctx;
	const char		*prefix;
	int			 at;
	uint64_t		 at_rev;
	char			*after;
};

static void
cmd_get_pfx_request(void *arg, struct buf *b, uint64_t n)
{
	struct cmd_get_pfx	*gp = arg;
	struct jw		 w;

	cmd_request_open(gp->ctx, &w, b, "list");
	jw_name(&w, "prefix");
	jw_cstr(&w, gp->prefix);
	if (gp->after != NULL) {
		jw_name(&w, "after");
		jw_cstr(&w, gp->after);
	}
	jw_name(&w, "limit");
	jw_u64(&w, n);
	if (gp->at) {
		jw_name(&w, "rev");
		jw_u64(&w, gp->at_rev);
	}
	jw_obj_close(&w);
}

static enum cmd_status
cmd_get_pfx_item(void *arg, const cJSON *kv, char **cause)
{
	struct cmd_get_pfx	*gp = arg;
	const cJSON		*key;
	enum cmd_status		 s = CMD_OK;

	key = cJSON_GetObjectItemCaseSensitive(kv, "key");
	if (!cJSON_IsString(key)) {
		xasprintf(cause, "metad listed an entry without key");
		return (CMD_ERROR);
	}
	if (gp->ctx->mode == OUTPUT_JSON)
		cmd_pages_json(&gp->pg, kv);
	else
		s = cmd_get_line(kv, cause);
	free(gp->after);
	gp->after = xstrdup(key->valuestring);
	return (s);
}

static enum cmd_status
cmd_get_prefix(struct cmd_ctx *ctx, const char *prefix, int at,
    uint64_t rev, char **cause)
{
	struct cmd_get_pfx	 gp;
	const char		*v;
	enum cmd_status		 s;

	if (ctx->args->argc > 0 || args_has(ctx->args, "raw")) {
		xasprintf(cause, "--prefix takes no KEY, nor --raw");
		return (CMD_USAGE);
	}
	if (strlen(prefix) > KEY_MAX_BYTES ||
	    !utf8_valid(prefix, strlen(prefix))) {
		xasprintf(cause, "--prefix must be UTF-8 of at most %d bytes",
		    KEY_MAX_BYTES);
		return (CMD_USAGE);
	}
	memset(&gp, 0, sizeof gp);
	gp.ctx = ctx;
	gp.prefix = prefix;
	gp.at = at;
	gp.at_rev = rev;
	cmd_pages_init(&gp.pg, ctx, "kvs", CMD_GET_PAGE, 1, 0);
	gp.pg.request = cmd_get_pfx_request;
	gp.pg.item = cmd_get_pfx_item;
	gp.pg.arg = &gp;
	if ((v = args_get(ctx->args, "limit")) == NULL ||
	    (s = args_u64(v, "--limit", &gp.pg.limit, cause)) == CMD_OK)
		s = cmd_pages_run(&gp.pg, cause);
	if (s == CMD_OK && ctx->mode == OUTPUT_TEXT && cmd_pages_cut(&gp.pg)) {
		fflush(stdout);
		fprintf(stderr, "(more keys: --limit %" PRIu64 " cut the "
		    "listing)\n", gp.pg.limit);
	}
	cmd_pages_free(&gp.pg);
	free(gp.after);
	return (s);
}

/* The named keys missing from kvs, on stderr: CMD_FALSE if any. */
static enum cmd_status
cmd_get_missing(struct cmd_ctx *ctx, const cJSON *kvs)
{
	const cJSON	*kv, *key;
	enum cmd_status	 s = CMD_OK;
	int		 i, found;

	for (i = 0; i < ctx->args->argc; i++) {
		found = 0;
		cJSON_ArrayForEach(kv, kvs) {
			key = cJSON_GetObjectItemCaseSensitive(kv, "key");
			found |= cJSON_IsString(key) &&
			    strcmp(key->valuestring, ctx->args->argv[i]) == 0;
		}
		if (!found) {
			fflush(stdout);
			fprintf(stderr, "metactl: %s: not found\n",
			    ctx->args->argv[i]);
			s = CMD_FALSE;
		}
	}
	return (s);
}

static enum cmd_status
cmd_get_keys(struct cmd_ctx *ctx, int at, uint64_t rev, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	const cJSON	*kvs, *kv;
	enum cmd_status	 s;
	int		 i;

	if (args_has(ctx->args, "raw") || args_get(ctx->args,
	    "limit") != NULL) {
		xasprintf(cause, "--raw and --limit take one KEY, or none");
		return (CMD_USAGE);
	}
	for (i = 0; i < ctx->args->argc; i++)
		if ((s = cmd_check_key(ctx->args->argv[i], "KEY",
		    cause)) != CMD_OK)
			return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "get");
	jw_name(&w, "keys");
	jw_arr_open(&w);
	for (i = 0; i < ctx->args->argc; i++)
		jw_cstr(&w, ctx->args->argv[i]);
	jw_arr_close(&w);
	if (at) {
		jw_name(&w, "rev");
		jw_u64(&w, rev);
	}
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	kvs = cJSON_GetObjectItemCaseSensitive(resp, "kvs");
	if (!cJSON_IsArray(kvs)) {
		cJSON_Delete(resp);
		xasprintf(cause, "metad's answer has no kvs array");
		return (CMD_ERROR);
	}
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else
		cJSON_ArrayForEach(kv, kvs)
			if ((s = cmd_get_line(kv, cause)) != CMD_OK)
				break;
	if (s == CMD_OK)
		s = cmd_get_missing(ctx, kvs);
	cJSON_Delete(resp);
	return (s);
}

static enum cmd_status
cmd_get_exec(struct cmd_ctx *ctx, char **cause)
{
	const char	*key, *v, *prefix = args_get(ctx->args, "prefix");
	uint64_t	 rev = 0;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp, *kv;
	enum cmd_status	 s;

	if ((v = args_get(ctx->args, "rev")) != NULL &&
	    (s = args_u64(v, "--rev", &rev, cause)) != CMD_OK)
		return (s);
	if (prefix != NULL)
		return (cmd_get_prefix(ctx, prefix, v != NULL, rev, cause));
	if (ctx->args->argc == 0) {
		xasprintf(cause, "get: missing arguments");
		return (CMD_USAGE);
	}
	if (ctx->args->argc > 1)
		return (cmd_get_keys(ctx, v != NULL, rev, cause));
	if (args_get(ctx->args, "limit") != NULL) {
		xasprintf(cause, "--limit goes with --prefix");
		return (CMD_USAGE);
	}
	key = ctx->args->argv[0];
	if ((s = cmd_check_key(key, "KEY", cause)) != CMD_OK)
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
