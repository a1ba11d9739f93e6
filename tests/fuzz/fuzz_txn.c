/*
 * libFuzzer target: the text form of a txn that "metactl txn" reads
 * (cmd/txn_text.c, txn_text_parse), from arbitrary bytes in a buffer of
 * exactly their size.  Abort unless it gives either a cause or a request
 * object with "if", "then" and "else" arrays that metad's own parser
 * reads back, as metactl sends it (proto_print), into the same tree, and
 * whose every op names a key of valid UTF-8.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "enc.h"
#include "metactl.h"
#include "proto.h"
#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_fail(const char *what, const struct buf *b)
{
	fprintf(stderr, "txn text: %s: %.*s\n", what, b != NULL ?
	    (int)b->len : 0, b != NULL ? b->data : "");
	abort();
}

static void
fuzz_check_ops(const cJSON *list, const struct buf *b)
{
	const cJSON	*op, *key;

	if (!cJSON_IsArray(list))
		fuzz_fail("a section is not an array", b);
	cJSON_ArrayForEach(op, list) {
		key = cJSON_GetObjectItemCaseSensitive(op, "key");
		if (!cJSON_IsString(key) || !utf8_valid(key->valuestring,
		    strlen(key->valuestring)))
			fuzz_fail("an op without a key in UTF-8", b);
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct proto_err	 e;
	struct buf		 b;
	cJSON			*req, *again;
	char			*text, *cause = NULL;

	text = xmalloc(size > 0 ? size : 1);
	memcpy(text, data, size);
	req = txn_text_parse(text, size, &cause);
	free(text);
	if (req == NULL) {
		if (cause == NULL)
			fuzz_fail("refused without a cause", NULL);
		free(cause);
		return (0);
	}
	buf_init(&b);
	proto_print(&b, req, NULL);
	if ((again = proto_parse(b.data, b.len, &e)) == NULL)
		fuzz_fail("metad would not read it", &b);
	if (!cJSON_Compare(req, again, 1))
		fuzz_fail("read back otherwise", &b);
	fuzz_check_ops(cJSON_GetObjectItemCaseSensitive(req, "if"), &b);
	fuzz_check_ops(cJSON_GetObjectItemCaseSensitive(req, "then"), &b);
	fuzz_check_ops(cJSON_GetObjectItemCaseSensitive(req, "else"), &b);
	cJSON_Delete(again);
	cJSON_Delete(req);
	buf_free(&b);
	return (0);
}
