/*
 * ls [PREFIX] [-l] [--limit N] [--rev R]: the keys under PREFIX, one a
 * line, in key order (--rev: as they were at revision R), each as a token
 * (output.h: a key with a space, a tab or a newline is a JSON string, so
 * it stays on its line and in its column).  -l adds each key's version and
 * mod_rev in aligned columns (key first, no header; the rows are buffered
 * to align them).  --limit N stops after N keys (0: no limit, the
 * default); when it cut the listing, a note on stderr says so.
 *
 * ls pages through everything: each "list" request asks for
 * min(1000, what --limit still allows) keys after the last key of the
 * previous page.  Without -l it asks for keys_only.  Pages are not one
 * snapshot: each key is as it was at some rev between the first page and
 * the last; with --rev every page asks for that rev, and they are.
 *
 * -o json prints one object merged across pages:
 * {"ok":true,"kvs":[...],"more":M,"rev":R}, where more is true only when
 * --limit cut the listing short and rev is the first page's (so a watch
 * from rev+1 misses nothing).  Keys come with values only with -l.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

#define CMD_LS_PAGE	LIST_LIMIT_DEFAULT

static enum cmd_status	cmd_ls_exec(struct cmd_ctx *, char **);

static const struct option cmd_ls_longopts[] = {
	{ "long",	no_argument,		NULL, 'l' },
	{ "limit",	required_argument,	NULL, 0 },
	{ "rev",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_ls_entry = {
	.name = "ls",
	.alias = "list",
	.optstring = "l",
	.longopts = cmd_ls_longopts,
	.args_min = 0,
	.args_max = 1,
	.usage = "[PREFIX] [-l] [--limit N] [--rev R]",
	.help = "list keys (-l: with version and mod_rev; --rev: as of "
	    "revision R)",
	.exec = cmd_ls_exec
};

struct cmd_ls {
	struct cmd_pages	 pg;		/* the listing (pages.c) */
	struct cmd_ctx		*ctx;
	const char		*prefix;
	int			 long_format;
	int			 at;		/* --rev */
	uint64_t		 at_rev;
	char			*after;		/* last key seen */
};

static void
cmd_ls_request(void *arg, struct buf *b, uint64_t n)
{
	struct cmd_ls	*ls = arg;
	struct jw	 w;

	cmd_request_open(ls->ctx, &w, b, "list");
	jw_name(&w, "prefix");
	jw_cstr(&w, ls->prefix);
	if (ls->after != NULL) {
		jw_name(&w, "after");
		jw_cstr(&w, ls->after);
	}
	jw_name(&w, "limit");
	jw_u64(&w, n);
	if (!ls->long_format) {
		jw_name(&w, "keys_only");
		jw_bool(&w, 1);
	}
	if (ls->at) {
		jw_name(&w, "rev");
		jw_u64(&w, ls->at_rev);
	}
	jw_obj_close(&w);
}

static void
cmd_ls_number(const cJSON *kv, const char *name, char *out, size_t len)
{
	uint64_t	 v;

	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(kv, name),
	    &v) == 0)
		snprintf(out, len, "%" PRIu64, v);
	else
		snprintf(out, len, "-");
}

/* One kv: printed, or kept for the table or the JSON answer. */
static enum cmd_status
cmd_ls_item(void *arg, const cJSON *kv, char **cause)
{
	struct cmd_ls	*ls = arg;
	const cJSON	*key;
	char		 version[24], mod_rev[24];
	const char	*row[3];
	struct buf	 tok;

	key = cJSON_GetObjectItemCaseSensitive(kv, "key");
	if (!cJSON_IsString(key)) {
		xasprintf(cause, "metad listed an entry without key");
		return (CMD_ERROR);
	}
	buf_init(&tok);
	if (ls->ctx->mode == OUTPUT_JSON)
		cmd_pages_json(&ls->pg, kv);
	else
		output_token(&tok, key->valuestring, strlen(key->valuestring));
	if (ls->ctx->mode == OUTPUT_TEXT && ls->long_format) {
		cmd_ls_number(kv, "version", version, sizeof version);
		cmd_ls_number(kv, "mod_rev", mod_rev, sizeof mod_rev);
		row[0] = buf_cstr(&tok);
		row[1] = version;
		row[2] = mod_rev;
		output_table_add(&ls->pg.table, row);
	} else if (ls->ctx->mode == OUTPUT_TEXT)
		printf("%s\n", buf_cstr(&tok));
	buf_free(&tok);
	free(ls->after);
	ls->after = xstrdup(key->valuestring);
	return (CMD_OK);
}

static enum cmd_status
cmd_ls_exec(struct cmd_ctx *ctx, char **cause)
{
	struct cmd_ls	 ls;
	const char	*v;
	enum cmd_status	 s;

	memset(&ls, 0, sizeof ls);
	ls.ctx = ctx;
	cmd_pages_init(&ls.pg, ctx, "kvs", CMD_LS_PAGE, 3, 0x6);
	ls.pg.request = cmd_ls_request;
	ls.pg.item = cmd_ls_item;
	ls.pg.arg = &ls;
	ls.prefix = ctx->args->argc > 0 ? ctx->args->argv[0] : "";
	ls.long_format = args_has(ctx->args, "long");
	if ((v = args_get(ctx->args, "limit")) != NULL &&
	    (s = args_u64(v, "--limit", &ls.pg.limit, cause)) != CMD_OK)
		goto out;
	if ((v = args_get(ctx->args, "rev")) != NULL) {
		if ((s = args_u64(v, "--rev", &ls.at_rev, cause)) != CMD_OK)
			goto out;
		ls.at = 1;
	}
	if (strlen(ls.prefix) > KEY_MAX_BYTES ||
	    !utf8_valid(ls.prefix, strlen(ls.prefix))) {
		xasprintf(cause, "PREFIX must be UTF-8 of at most %d bytes",
		    KEY_MAX_BYTES);
		s = CMD_USAGE;
		goto out;
	}
	s = cmd_pages_run(&ls.pg, cause);
	if (s == CMD_OK && ctx->mode == OUTPUT_TEXT && cmd_pages_cut(&ls.pg)) {
		fflush(stdout);
		fprintf(stderr, "(more keys: --limit %" PRIu64 " cut the "
		    "listing; without --limit ls lists them all)\n",
		    ls.pg.limit);
	}
out:
	cmd_pages_free(&ls.pg);
	free(ls.after);
	return (s);
}
