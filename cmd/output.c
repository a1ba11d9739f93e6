#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "metad_limits.h"
#include "output.h"
#include "proto.h"

int
output_mode_parse(const char *s, enum output_mode *out)
{
	if (strcmp(s, "text") == 0)
		*out = OUTPUT_TEXT;
	else if (strcmp(s, "json") == 0)
		*out = OUTPUT_JSON;
	else
		return (-1);
	return (0);
}

void
output_json_append(struct buf *b, const cJSON *j)
{
	proto_print(b, j, NULL);
}

void
output_json(const cJSON *resp)
{
	output_json_without(resp, "id");
}

void
output_json_without(const cJSON *obj, const char *skip)
{
	struct buf	 b;

	buf_init(&b);
	proto_print(&b, obj, skip);
	buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
}

/* 1 if s can stand bare as a token (see output.h). */
static int
output_token_bare(const char *s, size_t len)
{
	size_t	 i;

	if (len == 0 || *s == '"' || *s == '(' ||
	    (len >= OUTPUT_B64_PREFIX_LEN &&
	    memcmp(s, OUTPUT_B64_PREFIX, OUTPUT_B64_PREFIX_LEN) == 0))
		return (0);
	for (i = 0; i < len; i++) {
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return (0);
	}
	return (1);
}

void
output_token(struct buf *b, const char *s, size_t len)
{
	if (output_token_bare(s, len))
		buf_add(b, s, len);
	else
		json_escape(b, s, len);
}

int
output_token_value(struct buf *b, const cJSON *obj)
{
	struct proto_bytes	 v;
	const cJSON		*b64;

	if (proto_kv_value(obj, &v) != 1)
		return (-1);
	b64 = cJSON_GetObjectItemCaseSensitive(obj, "value_b64");
	if (cJSON_IsString(b64)) {
		buf_addstr(b, OUTPUT_B64_PREFIX);
		buf_addstr(b, b64->valuestring);
	} else
		output_token(b, (const char *)v.data, v.len);
	proto_bytes_free(&v);
	return (0);
}

static void
output_detail_u64(struct buf *b, const char *label, const cJSON *obj,
    const char *name)
{
	uint64_t	 v;

	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(obj, name),
	    &v) != 0)
		return;
	if (b->len > 0)
		buf_addstr(b, ", ");
	buf_printf(b, "%s %" PRIu64, label, v);
}

static void
output_detail_owner(struct buf *b, const cJSON *cur)
{
	const cJSON	*owner;

	owner = cJSON_GetObjectItemCaseSensitive(cur, "owner");
	if (!cJSON_IsString(owner))
		return;
	if (b->len > 0)
		buf_addstr(b, ", ");
	buf_addstr(b, "owner ");
	output_token(b, owner->valuestring, strlen(owner->valuestring));
}

/* What an error says beyond its message: the current version, epoch... */
static void
output_error_details(const char *code, const cJSON *err, struct buf *b)
{
	const cJSON	*cur;

	cur = cJSON_GetObjectItemCaseSensitive(err, "current");
	if (cJSON_IsNull(cur)) {
		buf_addstr(b, strcmp(code, "fenced") == 0 ?
		    "no epoch at the fence key" : "the key does not exist");
	} else if (cJSON_IsObject(cur)) {
		output_detail_u64(b, "current version", cur, "version");
		output_detail_u64(b, "mod_rev", cur, "mod_rev");
		output_detail_u64(b, "current epoch", cur, "epoch");
		output_detail_owner(b, cur);
	}
	output_detail_u64(b, "current epoch", err, "epoch");
	output_detail_u64(b, "compact_rev", err, "compact_rev");
}

unsigned long	 output_error_lineno;

const char *
output_error(enum output_mode mode, const cJSON *resp)
{
	const cJSON	*err, *c, *m;
	const char	*code = "internal", *msg = "(no message)";
	struct buf	 details;

	err = cJSON_GetObjectItemCaseSensitive(resp, "error");
	c = cJSON_GetObjectItemCaseSensitive(err, "code");
	m = cJSON_GetObjectItemCaseSensitive(err, "message");
	if (cJSON_IsString(c))
		code = c->valuestring;
	if (cJSON_IsString(m))
		msg = m->valuestring;
	buf_init(&details);
	output_error_details(code, err, &details);
	if (mode == OUTPUT_JSON)
		output_json(resp);
	fflush(stdout);
	fprintf(stderr, "metactl: ");
	if (output_error_lineno > 0)
		fprintf(stderr, "line %lu: ", output_error_lineno);
	fprintf(stderr, "%s: %s%s%s%s\n", code, msg,
	    details.len > 0 ? " (" : "", details.len > 0 ?
	    buf_cstr(&details) : "", details.len > 0 ? ")" : "");
	buf_free(&details);
	return (code);
}

void
output_fields(const cJSON *obj, const char *skip)
{
	const cJSON	*c;
	struct buf	 b;

	buf_init(&b);
	for (c = obj->child; c != NULL; c = c->next) {
		if (strcmp(c->string, "ok") == 0 ||
		    strcmp(c->string, "id") == 0 ||
		    (skip != NULL && strcmp(c->string, skip) == 0))
			continue;
		buf_printf(&b, "%s: ", c->string);
		if (cJSON_IsString(c))
			buf_addstr(&b, c->valuestring);
		else
			output_json_append(&b, c);
		buf_addc(&b, '\n');
	}
	if (b.len > 0)
		fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
}

void
output_table_init(struct output_table *t, size_t ncols, unsigned int right)
{
	memset(t, 0, sizeof *t);
	if (ncols == 0 || ncols > OUTPUT_TABLE_MAX_COLS)
		ncols = OUTPUT_TABLE_MAX_COLS;
	t->ncols = ncols;
	t->right = right;
}

/* Display width: UTF-8 code points (wide characters count as one). */
static size_t
output_width(const char *s)
{
	size_t	 n = 0;

	for (; *s != '\0'; s++) {
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	}
	return (n);
}

void
output_table_add(struct output_table *t, const char **row)
{
	size_t	 i, w;

	if (t->nrows * t->ncols + t->ncols > t->cap) {
		t->cap = t->cap == 0 ? 64 * t->ncols : t->cap * 2;
		t->cells = xrealloc(t->cells, t->cap * sizeof *t->cells);
	}
	for (i = 0; i < t->ncols; i++) {
		t->cells[t->nrows * t->ncols + i] = xstrdup(row[i]);
		if ((w = output_width(row[i])) > t->width[i])
			t->width[i] = w;
	}
	t->nrows++;
}

void
output_table_print(struct output_table *t)
{
	size_t		 r, i, pad, n;
	const char	*cell;

	for (r = 0; r < t->nrows; r++) {
		/* Empty cells at the end of a row: no trailing blanks. */
		for (n = t->ncols; n > 1 && *t->cells[r * t->ncols + n - 1] ==
		    '\0'; n--)
			;
		for (i = 0; i < n; i++) {
			cell = t->cells[r * t->ncols + i];
			pad = t->width[i] - output_width(cell);
			if (i > 0)
				fputs("  ", stdout);
			if (t->right & (1U << i))
				printf("%*s", (int)pad, "");
			fputs(cell, stdout);
			if (!(t->right & (1U << i)) && i + 1 < n)
				printf("%*s", (int)pad, "");
		}
		putchar('\n');
	}
}

void
output_table_free(struct output_table *t)
{
	size_t	 i;

	for (i = 0; i < t->nrows * t->ncols; i++)
		free(t->cells[i]);
	free(t->cells);
	memset(t, 0, sizeof *t);
}
