/*
 * Paged listings (ls, history): ask for pages until the daemon says there
 * is no more or --limit is reached, hand each item to the command, and end
 * with the text table, or with one JSON object merged across pages:
 * {"ok":true,ARRAY:[...],"more":M,"rev":R}, where more is true only when
 * --limit cut the listing short and rev is the first page's (so a watch
 * from rev+1 misses nothing).
 */
#include <stdio.h>
#include <stdlib.h>

#include "metactl.h"
#include "proto.h"

void
cmd_pages_init(struct cmd_pages *p, struct cmd_ctx *ctx, const char *array,
    uint64_t page, size_t ncols, unsigned align)
{
	p->ctx = ctx;
	p->array = array;
	p->page = page;
	p->seen = 0;
	p->more = 0;
	p->have_rev = 0;
	p->rev = 0;
	p->njson = 0;
	output_table_init(&p->table, ncols, align);
	buf_init(&p->json);
}

void
cmd_pages_free(struct cmd_pages *p)
{
	output_table_free(&p->table);
	buf_free(&p->json);
}

/* -o json: keep an item for the merged answer. */
void
cmd_pages_json(struct cmd_pages *p, const cJSON *item)
{
	if (p->njson++ > 0)
		buf_addc(&p->json, ',');
	output_json_append(&p->json, item);
}

/* One page: its items, whether there is more; *n items taken. */
static enum cmd_status
cmd_pages_page(struct cmd_pages *p, const cJSON *resp, size_t *n,
    char **cause)
{
	const cJSON	*items, *item;
	uint64_t	 rev;
	enum cmd_status	 s;

	items = cJSON_GetObjectItemCaseSensitive(resp, p->array);
	if (!cJSON_IsArray(items)) {
		xasprintf(cause, "metad's answer has no %s array", p->array);
		return (CMD_ERROR);
	}
	if (!p->have_rev && proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(resp, "rev"), &rev) == 0) {
		p->rev = rev;
		p->have_rev = 1;
	}
	p->more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
	    "more"));
	*n = 0;
	cJSON_ArrayForEach(item, items) {
		if (p->limit != 0 && p->seen >= p->limit) {
			p->more = 1;
			break;
		}
		if ((s = p->item(p->arg, item, cause)) != CMD_OK)
			return (s);
		p->seen++;
		(*n)++;
	}
	return (CMD_OK);
}

/* 1 when --limit cut the listing short: the daemon had more. */
int
cmd_pages_cut(const struct cmd_pages *p)
{
	return (p->more && p->limit != 0 && p->seen >= p->limit);
}

static void
cmd_pages_finish(struct cmd_pages *p)
{
	struct buf	 b;
	struct jw	 w;

	if (p->ctx->mode == OUTPUT_TEXT) {
		output_table_print(&p->table);
		return;
	}
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "ok");
	jw_bool(&w, 1);
	jw_name(&w, p->array);
	jw_arr_open(&w);
	if (p->json.len > 0)
		jw_raw(&w, p->json.data, p->json.len);
	jw_arr_close(&w);
	jw_name(&w, "more");
	jw_bool(&w, cmd_pages_cut(p));
	jw_name(&w, "rev");
	jw_u64(&w, p->rev);
	jw_obj_close(&w);
	buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
}

enum cmd_status
cmd_pages_run(struct cmd_pages *p, char **cause)
{
	struct buf	 b;
	cJSON		*resp;
	enum cmd_status	 s;
	uint64_t	 want;
	size_t		 n;

	buf_init(&b);
	do {
		want = p->page;
		if (p->limit != 0 && p->limit - p->seen < want)
			want = p->limit - p->seen;
		p->request(p->arg, &b, want);
		if ((s = cmd_call(p->ctx, &b, &resp, cause)) != CMD_OK)
			break;
		s = cmd_pages_page(p, resp, &n, cause);
		cJSON_Delete(resp);
		if (s != CMD_OK)
			break;
	} while (p->more && n > 0 && (p->limit == 0 || p->seen < p->limit));
	buf_free(&b);
	if (s == CMD_OK)
		cmd_pages_finish(p);
	return (s);
}
