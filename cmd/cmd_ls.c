/*
 * ls [PREFIX] [-l] [--limit N] [--rev R]: the keys under PREFIX, one a
 * line, in key order (--rev: as they were at revision R).  -l adds each key's version and mod_rev in aligned columns (key
 * first, no header; the rows are buffered to align them).  --limit N stops
 * after N keys (0: no limit, the default).
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
	struct cmd_ctx		*ctx;
	const char		*prefix;
	int			 long_format;
	uint64_t		 limit;		/* 0: none */
	int			 at;		/* --rev */
	uint64_t		 at_rev;
	uint64_t		 seen;
	char			*after;		/* last key seen */
	int			 more;		/* as the last page */
	int			 have_rev;
	uint64_t		 rev;		/* of the first page */
	struct output_table	 table;		/* -l */
	struct buf		 json;		/* -o json: the kvs */
	size_t			 njson;
};

static void
cmd_ls_request(struct cmd_ls *ls, struct buf *b)
{
	struct jw	 w;
	uint64_t	 n = CMD_LS_PAGE;

	if (ls->limit != 0 && ls->limit - ls->seen < n)
		n = ls->limit - ls->seen;
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

static void
cmd_ls_add(struct cmd_ls *ls, const cJSON *kv, const char *key)
{
	char		 version[24], mod_rev[24];
	const char	*row[3];

	if (ls->ctx->mode == OUTPUT_JSON) {
		if (ls->njson++ > 0)
			buf_addc(&ls->json, ',');
		output_json_append(&ls->json, kv);
	} else if (ls->long_format) {
		cmd_ls_number(kv, "version", version, sizeof version);
		cmd_ls_number(kv, "mod_rev", mod_rev, sizeof mod_rev);
		row[0] = key;
		row[1] = version;
		row[2] = mod_rev;
		output_table_add(&ls->table, row);
	} else
		printf("%s\n", key);
}

/* One page: its keys, the next "after", whether there is more. */
static enum cmd_status
cmd_ls_page(struct cmd_ls *ls, const cJSON *resp, size_t *n, char **cause)
{
	const cJSON	*kvs, *kv, *key;
	uint64_t	 rev;

	kvs = cJSON_GetObjectItemCaseSensitive(resp, "kvs");
	if (!cJSON_IsArray(kvs)) {
		xasprintf(cause, "metad's list answer has no kvs array");
		return (CMD_ERROR);
	}
	if (!ls->have_rev && proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(resp, "rev"), &rev) == 0) {
		ls->rev = rev;
		ls->have_rev = 1;
	}
	ls->more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
	    "more"));
	*n = 0;
	cJSON_ArrayForEach(kv, kvs) {
		key = cJSON_GetObjectItemCaseSensitive(kv, "key");
		if (!cJSON_IsString(key)) {
			xasprintf(cause, "metad listed an entry without key");
			return (CMD_ERROR);
		}
		if (ls->limit != 0 && ls->seen >= ls->limit)
			break;
		cmd_ls_add(ls, kv, key->valuestring);
		free(ls->after);
		ls->after = xstrdup(key->valuestring);
		ls->seen++;
		(*n)++;
	}
	return (CMD_OK);
}

static void
cmd_ls_finish(struct cmd_ls *ls)
{
	struct buf	 b;
	struct jw	 w;

	if (ls->ctx->mode == OUTPUT_TEXT) {
		output_table_print(&ls->table);
		return;
	}
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "ok");
	jw_bool(&w, 1);
	jw_name(&w, "kvs");
	jw_arr_open(&w);
	if (ls->json.len > 0)
		jw_raw(&w, ls->json.data, ls->json.len);
	jw_arr_close(&w);
	jw_name(&w, "more");
	jw_bool(&w, ls->more && ls->limit != 0 && ls->seen >= ls->limit);
	jw_name(&w, "rev");
	jw_u64(&w, ls->rev);
	jw_obj_close(&w);
	buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
}

static enum cmd_status
cmd_ls_run(struct cmd_ls *ls, char **cause)
{
	struct buf	 b;
	cJSON		*resp;
	enum cmd_status	 s;
	size_t		 n;

	buf_init(&b);
	do {
		cmd_ls_request(ls, &b);
		if ((s = cmd_call(ls->ctx, &b, &resp, cause)) != CMD_OK)
			break;
		s = cmd_ls_page(ls, resp, &n, cause);
		cJSON_Delete(resp);
		if (s != CMD_OK)
			break;
	} while (ls->more && n > 0 && (ls->limit == 0 ||
	    ls->seen < ls->limit));
	buf_free(&b);
	if (s == CMD_OK)
		cmd_ls_finish(ls);
	return (s);
}

static enum cmd_status
cmd_ls_exec(struct cmd_ctx *ctx, char **cause)
{
	struct cmd_ls	 ls;
	const char	*v;
	enum cmd_status	 s;

	memset(&ls, 0, sizeof ls);
	ls.ctx = ctx;
	ls.prefix = ctx->args->argc > 0 ? ctx->args->argv[0] : "";
	ls.long_format = args_has(ctx->args, "long");
	if ((v = args_get(ctx->args, "limit")) != NULL &&
	    (s = args_u64(v, "--limit", &ls.limit, cause)) != CMD_OK)
		return (s);
	if ((v = args_get(ctx->args, "rev")) != NULL) {
		if ((s = args_u64(v, "--rev", &ls.at_rev, cause)) != CMD_OK)
			return (s);
		ls.at = 1;
	}
	if (strlen(ls.prefix) > KEY_MAX_BYTES ||
	    !utf8_valid(ls.prefix, strlen(ls.prefix))) {
		xasprintf(cause, "PREFIX must be UTF-8 of at most %d bytes",
		    KEY_MAX_BYTES);
		return (CMD_USAGE);
	}
	output_table_init(&ls.table, 3, 0x6);
	buf_init(&ls.json);
	s = cmd_ls_run(&ls, cause);
	output_table_free(&ls.table);
	buf_free(&ls.json);
	free(ls.after);
	return (s);
}
