/*
 * libFuzzer target: metactl load's reading of a dump line (cmd/cmd_load.c:
 * cmd_load_parse, the line to a kv and its put op; cmd_load_header, the
 * first line), from arbitrary bytes in a buffer of exactly their size.
 * Both are static, so this file includes cmd_load.c.  Abort unless a line
 * is either refused with a reason or read into a put op that metad's
 * parser reads as {"op":"put","key":K,...} with K the kv's key, and that,
 * turned back into a kv line (its "op" left out), reads into the same put
 * op again.
 */
#include "cmd_load.c"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_fail(const char *what, const struct buf *b)
{
	fprintf(stderr, "dump line: %s: %.*s\n", what, (int)b->len, b->data);
	abort();
}

/* The put op l->one for key as a kv line again, read again: the same. */
static void
fuzz_again(struct load *l, const char *key)
{
	struct proto_err	 e;
	struct load_put		 p;
	struct buf		 line, first;
	const cJSON		*op, *k;
	cJSON			*j;
	char			*why = NULL;

	if ((j = proto_parse(l->one.data, l->one.len, &e)) == NULL)
		fuzz_fail("metad would not read the put op", &l->one);
	op = cJSON_GetObjectItemCaseSensitive(j, "op");
	k = cJSON_GetObjectItemCaseSensitive(j, "key");
	if (!cJSON_IsString(op) || strcmp(op->valuestring, "put") != 0 ||
	    !cJSON_IsString(k) || strcmp(k->valuestring, key) != 0)
		fuzz_fail("not a put of the kv's key", &l->one);
	buf_init(&line);
	proto_print(&line, j, "op");
	cJSON_Delete(j);
	buf_init(&first);
	buf_add(&first, l->one.data, l->one.len);
	if (cmd_load_parse(l, line.data, line.len, &p, &why) != 0)
		fuzz_fail(why, &line);
	if (first.len != l->one.len || memcmp(first.data, l->one.data,
	    first.len) != 0 || strcmp(p.key, key) != 0)
		fuzz_fail("read again otherwise", &line);
	free(p.key);
	buf_free(&first);
	buf_free(&line);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct load	 l;
	struct load_put	 p;
	char		*line, *why = NULL;

	memset(&l, 0, sizeof l);
	buf_init(&l.ops);
	buf_init(&l.one);
	l.line = 2;
	line = xmalloc(size > 0 ? size : 1);
	memcpy(line, data, size);
	if (cmd_load_header(line, size, &why) != 0) {
		if (why == NULL)
			abort();
		free(why);
		why = NULL;
	}
	if (cmd_load_parse(&l, line, size, &p, &why) == 0) {
		fuzz_again(&l, p.key);
		free(p.key);
	} else if (why == NULL)
		abort();
	free(why);
	free(line);
	buf_free(&l.one);
	buf_free(&l.ops);
	return (0);
}
