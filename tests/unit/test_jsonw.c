/*
 * Unit tests of the streaming JSON writer (common/jsonw.c) and of the byte
 * buffer it writes into (struct buf, common/util.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "jsonw.h"
#include "proto.h"
#include "util.h"

#define JW_CHECK(b, want)	assert_string_equal(buf_cstr(b), (want))

static void
test_jw_empty(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_obj_close(&w);
	JW_CHECK(&b, "{}");
	buf_reset(&b);
	jw_init(&w, &b);
	jw_arr_open(&w);
	jw_arr_close(&w);
	JW_CHECK(&b, "[]");
	buf_free(&b);
}

static void
test_jw_nested(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "a");
	jw_u64(&w, 1);
	jw_name(&w, "b");
	jw_arr_open(&w);
	jw_u64(&w, 1);
	jw_u64(&w, 2);
	jw_obj_open(&w);
	jw_name(&w, "c");
	jw_bool(&w, 1);
	jw_name(&w, "c2");
	jw_bool(&w, 0);
	jw_obj_close(&w);
	jw_arr_close(&w);
	jw_name(&w, "d");
	jw_obj_open(&w);
	jw_obj_close(&w);
	jw_name(&w, "e");
	jw_arr_open(&w);
	jw_arr_close(&w);
	jw_name(&w, "f");
	jw_null(&w);
	jw_name(&w, "g");
	jw_cstr(&w, "s");
	jw_name(&w, "h");
	jw_obj_open(&w);
	jw_name(&w, "i");
	jw_arr_open(&w);
	jw_arr_open(&w);
	jw_arr_close(&w);
	jw_obj_open(&w);
	jw_obj_close(&w);
	jw_null(&w);
	jw_arr_close(&w);
	jw_obj_close(&w);
	jw_obj_close(&w);
	JW_CHECK(&b, "{\"a\":1,\"b\":[1,2,{\"c\":true,\"c2\":false}],\"d\":{},"
	    "\"e\":[],\"f\":null,\"g\":\"s\",\"h\":{\"i\":[[],{},null]}}");
	assert_int_equal(w.depth, 0);
	buf_free(&b);
}

static void
test_jw_top_array(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_arr_open(&w);
	jw_arr_open(&w);
	jw_arr_close(&w);
	jw_obj_open(&w);
	jw_obj_close(&w);
	jw_arr_open(&w);
	jw_arr_open(&w);
	jw_u64(&w, 1);
	jw_arr_close(&w);
	jw_arr_open(&w);
	jw_u64(&w, 2);
	jw_u64(&w, 3);
	jw_arr_close(&w);
	jw_arr_close(&w);
	jw_bool(&w, 0);
	jw_str(&w, "xyz", 1);
	jw_raw(&w, "{\"r\":[1]}", 9);
	jw_arr_close(&w);
	JW_CHECK(&b, "[[],{},[[1],[2,3]],false,\"x\",{\"r\":[1]}]");
	buf_free(&b);
}

static void
test_jw_deep(void **state)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*j;
	int		 i;

	(void)state;
	/* JW_MAX_DEPTH - 1 levels fit. */
	buf_init(&b);
	jw_init(&w, &b);
	for (i = 0; i < JW_MAX_DEPTH - 1; i++) {
		jw_arr_open(&w);
		jw_u64(&w, (uint64_t)i);
	}
	for (i = 0; i < JW_MAX_DEPTH - 1; i++)
		jw_arr_close(&w);
	JW_CHECK(&b, "[0,[1,[2,[3,[4,[5,[6,[7,[8,[9,[10,[11,[12,[13,[14"
	    "]]]]]]]]]]]]]]]");
	j = cJSON_Parse(b.data);
	assert_non_null(j);
	cJSON_Delete(j);
	buf_free(&b);
}

static void
test_jw_raw(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "id");
	jw_raw(&w, "\"req-1\"", 7);
	jw_name(&w, "ok");
	jw_bool(&w, 1);
	jw_name(&w, "x");
	jw_raw(&w, "{\"y\":[1,2]}", 11);
	jw_obj_close(&w);
	JW_CHECK(&b, "{\"id\":\"req-1\",\"ok\":true,\"x\":{\"y\":[1,2]}}");
	buf_free(&b);
}

static void
test_jw_u64(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "zero");
	jw_u64(&w, 0);
	jw_name(&w, "max53");
	jw_u64(&w, 9007199254740991ULL);
	jw_name(&w, "odd");
	jw_u64(&w, 9007199254740993ULL);
	jw_name(&w, "big");
	jw_u64(&w, 12345678901234567891ULL);
	jw_name(&w, "max");
	jw_u64(&w, UINT64_MAX);
	jw_obj_close(&w);
	JW_CHECK(&b, "{\"zero\":0,\"max53\":9007199254740991,"
	    "\"odd\":9007199254740993,\"big\":12345678901234567891,"
	    "\"max\":18446744073709551615}");
	buf_free(&b);
}

static void
test_json_escape(void **state)
{
	static const char	 in[] =
	    "a\"b\\c\n\r\t\x01\x1f\x7f/\b\f\xc3\xa9\xf0\x9f\x98\x80 z";
	struct buf		 b;

	(void)state;
	buf_init(&b);
	buf_addstr(&b, "pre:");
	json_escape(&b, in, sizeof in - 1);
	JW_CHECK(&b, "pre:\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u001f\x7f/\\u0008"
	    "\\u000c\xc3\xa9\xf0\x9f\x98\x80 z\"");
	buf_reset(&b);
	json_escape(&b, "x\0y", 3);
	assert_int_equal(b.len, 10);
	JW_CHECK(&b, "\"x\\u0000y\"");
	buf_reset(&b);
	json_escape(&b, "", 0);
	JW_CHECK(&b, "\"\"");
	buf_reset(&b);
	/* Only n bytes are written. */
	json_escape(&b, "abc\"", 2);
	JW_CHECK(&b, "\"ab\"");
	buf_reset(&b);
	json_escape(&b, "\"\"\\", 3);
	JW_CHECK(&b, "\"\\\"\\\"\\\\\"");
	buf_free(&b);
}

static void
test_jw_name_escaped(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "we\"ird\\");
	jw_u64(&w, 1);
	jw_name(&w, "tab\t");
	jw_cstr(&w, "v\x02");
	jw_obj_close(&w);
	JW_CHECK(&b, "{\"we\\\"ird\\\\\":1,\"tab\\t\":\"v\\u0002\"}");
	buf_free(&b);
}

/* Every byte 1..255 that is valid alone, escaped and parsed back. */
static void
test_escape_parses_back(void **state)
{
	struct buf	 s, b;
	struct jw	 w;
	cJSON		*j, *f;
	int		 c;

	(void)state;
	buf_init(&s);
	for (c = 1; c < 0x80; c++)
		buf_addc(&s, (char)c);
	buf_addstr(&s, "\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf"
	    "\xf0\x90\x80\x80\xf4\x8f\xbf\xbf");
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, buf_cstr(&s));
	jw_str(&w, s.data, s.len);
	jw_obj_close(&w);
	j = cJSON_ParseWithLength(b.data, b.len);
	assert_non_null(j);
	f = cJSON_GetObjectItemCaseSensitive(j, buf_cstr(&s));
	assert_non_null(f);
	assert_true(cJSON_IsString(f));
	assert_int_equal(strlen(f->valuestring), s.len);
	assert_memory_equal(f->valuestring, s.data, s.len);
	/* A control character never appears raw in the output. */
	for (c = 0; c < (int)b.len; c++)
		assert_true((unsigned char)b.data[c] >= 0x20);
	cJSON_Delete(j);
	buf_free(&b);
	buf_free(&s);
}

/* jw_value */

struct value_case {
	const char	*in;
	size_t		 n;
	const char	*want;
};

#define VC(lit, want)	{ (lit), sizeof(lit) - 1, (want) }

static void
test_jw_value(void **state)
{
	static const struct value_case	 cases[] = {
		VC("hello", "{\"value\":\"hello\"}"),
		VC("", "{\"value\":\"\"}"),
		VC("h\xc3\xa9\xf4\x8f\xbf\xbf", "{\"value\":\"h\xc3\xa9\xf4\x8f"
		    "\xbf\xbf\"}"),
		VC("l\n\"q\"\x7f", "{\"value\":\"l\\n\\\"q\\\"\x7f\"}"),
		VC("\x01\x1f", "{\"value\":\"\\u0001\\u001f\"}"),
		/*
		 * NUL is valid UTF-8 (U+0000): "value", escaped
		 * (metad-protocol(7), KEYS, VALUES AND KV OBJECTS).
		 */
		VC("a\0b", "{\"value\":\"a\\u0000b\"}"),
		VC("\0", "{\"value\":\"\\u0000\"}"),
		VC("abc\0", "{\"value\":\"abc\\u0000\"}"),
		VC("\0\xc3\xa9\0", "{\"value\":\"\\u0000\xc3\xa9\\u0000\"}"),
		VC("\0\xff", "{\"value_b64\":\"AP8=\"}"),
		VC("\xff", "{\"value_b64\":\"/w==\"}"),
		VC("\xc0\x80", "{\"value_b64\":\"wIA=\"}"),
		VC("\xed\xa0\x80", "{\"value_b64\":\"7aCA\"}"),
		VC("\xf4\x90\x80\x80", "{\"value_b64\":\"9JCAgA==\"}"),
		VC("ok\xc3", "{\"value_b64\":\"b2vD\"}"),
	};
	struct buf	 b;
	struct jw	 w;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		buf_init(&b);
		jw_init(&w, &b);
		jw_obj_open(&w);
		jw_value(&w, cases[i].in, cases[i].n);
		jw_obj_close(&w);
		assert_string_equal(buf_cstr(&b), cases[i].want);
		buf_free(&b);
	}
}

static void
test_jw_value_null_empty(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	/* A store hands an empty value over as NULL, 0. */
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_value(&w, NULL, 0);
	jw_obj_close(&w);
	JW_CHECK(&b, "{\"value\":\"\"}");
	buf_free(&b);
}

static void
test_jw_value_in_kv(void **state)
{
	struct buf	 b;
	struct jw	 w;

	(void)state;
	buf_init(&b);
	jw_init(&w, &b);
	jw_arr_open(&w);
	jw_obj_open(&w);
	jw_name(&w, "key");
	jw_cstr(&w, "k");
	jw_value(&w, "\0\xff", 2);
	jw_name(&w, "version");
	jw_u64(&w, 1);
	jw_obj_close(&w);
	jw_obj_open(&w);
	jw_value(&w, "v", 1);
	jw_name(&w, "mod_rev");
	jw_u64(&w, 2);
	jw_obj_close(&w);
	jw_arr_close(&w);
	JW_CHECK(&b, "[{\"key\":\"k\",\"value_b64\":\"AP8=\",\"version\":1},"
	    "{\"value\":\"v\",\"mod_rev\":2}]");
	buf_free(&b);
}

static uint32_t
xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

/* Random bytes; in text mode, mostly valid UTF-8 with controls. */
static size_t
random_value(uint32_t *seed, unsigned char *p, int text)
{
	static const char	*pieces[] = {
		"a", "\"", "\\", "\n", "\x01", "\x7f", "\xc3\xa9", "/",
		"\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf", " ",
	};
	size_t		 n = 0, want, k;
	const char	*piece;

	want = xorshift(seed) % 65;
	if (!text) {
		for (n = 0; n < want; n++)
			p[n] = (unsigned char)xorshift(seed);
		return (n);
	}
	while (n < want) {
		piece = pieces[xorshift(seed) % (sizeof pieces /
		    sizeof pieces[0])];
		k = strlen(piece);
		memcpy(p + n, piece, k);
		n += k;
	}
	return (n);
}

static int
has(const cJSON *j, const char *name)
{
	return (cJSON_GetObjectItemCaseSensitive(j, name) != NULL);
}

static void
test_jw_value_round_trip(void **state)
{
	unsigned char		 in[80];
	struct proto_err	 e;
	struct proto_bytes	 v;
	struct buf		 b;
	struct jw		 w;
	cJSON			*j;
	uint32_t		 seed = 12345;
	uint64_t		 version;
	size_t			 n;
	int			 i, is_text, text_seen = 0, b64_seen = 0;

	(void)state;
	for (i = 0; i < 2000; i++) {
		n = random_value(&seed, in, i % 2);
		buf_init(&b);
		jw_init(&w, &b);
		jw_obj_open(&w);
		jw_name(&w, "key");
		jw_cstr(&w, "k");
		jw_value(&w, in, n);
		jw_name(&w, "version");
		jw_u64(&w, (uint64_t)i);
		jw_obj_close(&w);

		j = proto_parse(b.data, b.len, &e);
		if (j == NULL)
			fail_msg("%s: %s", buf_cstr(&b), e.msg);
		is_text = utf8_valid(in, n);
		assert_int_equal(has(j, "value"), is_text);
		assert_int_equal(has(j, "value_b64"), !is_text);
		text_seen += is_text;
		b64_seen += !is_text;
		assert_int_equal(proto_get_value(j, 1, sizeof in, &v, &e), 1);
		assert_int_equal(v.len, n);
		assert_memory_equal(v.data, in, n);
		assert_int_equal(proto_get_u64(j, "version", 1, &version, &e),
		    1);
		assert_int_equal(version, i);
		proto_bytes_free(&v);
		cJSON_Delete(j);
		buf_free(&b);
	}
	/* Both encodings were exercised. */
	assert_true(text_seen > 500);
	assert_true(b64_seen > 500);
}

/*
 * A request's value: "value" unless base64 is shorter than the escapes
 * (6 bytes a control character), so that it fits the request limit.
 */
static void
test_jw_value_req(void **state)
{
	static const struct value_case	 cases[] = {
		VC("hello, world of text\0",
		    "{\"value\":\"hello, world of text\\u0000\"}"),
		VC("a\0b", "{\"value_b64\":\"YQBi\"}"),
		VC("", "{\"value\":\"\"}"),
		VC("\0\0\0", "{\"value_b64\":\"AAAA\"}"),
		VC("ab\ncd\n", "{\"value\":\"ab\\ncd\\n\"}"),
		VC("\x01\x01\x01", "{\"value_b64\":\"AQEB\"}"),
		VC("\xff", "{\"value_b64\":\"/w==\"}"),
	};
	struct proto_err	 e;
	struct proto_bytes	 v;
	struct buf		 b;
	struct jw		 w;
	cJSON			*j;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		buf_init(&b);
		jw_init(&w, &b);
		jw_obj_open(&w);
		jw_value_req(&w, cases[i].in, cases[i].n);
		jw_obj_close(&w);
		assert_string_equal(buf_cstr(&b), cases[i].want);
		/* proto_kv_value reads the bytes back, length and all. */
		j = proto_parse(b.data, b.len, &e);
		assert_non_null(j);
		assert_int_equal(proto_kv_value(j, &v), 1);
		assert_int_equal(v.len, cases[i].n);
		assert_memory_equal(v.data, cases[i].in, cases[i].n + 1);
		proto_bytes_free(&v);
		cJSON_Delete(j);
		buf_free(&b);
	}
}

/* proto_print writes back what proto_parse read, \u0000 included. */
static void
test_proto_print(void **state)
{
	static const char	*lines[] = {
		"{\"a\":\"x\\u0000y\",\"n\":[9007199254740991,-3,1.5,true,"
		    "null],\"o\":{\"k\\u0001\":\"\\u0000\"}}",
		"{\"value\":\"\\u0000\\u001f\\n\\\"\\\\\xc3\xa9\"}",
	};
	struct proto_err	 e;
	struct buf		 b;
	cJSON			*j;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		j = proto_parse(lines[i], strlen(lines[i]), &e);
		assert_non_null(j);
		buf_init(&b);
		proto_print(&b, j, NULL);
		assert_string_equal(buf_cstr(&b), lines[i]);
		buf_free(&b);
		cJSON_Delete(j);
	}
	j = proto_parse(lines[0], strlen(lines[0]), &e);
	buf_init(&b);
	proto_print(&b, j, "n");
	assert_string_equal(buf_cstr(&b),
	    "{\"a\":\"x\\u0000y\",\"o\":{\"k\\u0001\":\"\\u0000\"}}");
	buf_free(&b);
	cJSON_Delete(j);
}

/* struct buf */

static void
test_buf(void **state)
{
	struct buf	 b;
	char		 big[700];
	int		 i;

	(void)state;
	buf_init(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	buf_add(&b, "", 0);
	assert_string_equal(buf_cstr(&b), "");
	for (i = 0; i < 1000; i++)
		buf_addc(&b, (char)('a' + i % 26));
	assert_int_equal(b.len, 1000);
	assert_true(b.cap > 1000);
	for (i = 0; i < 1000; i++)
		assert_int_equal(b.data[i], 'a' + i % 26);
	buf_reset(&b);
	assert_int_equal(b.len, 0);
	assert_string_equal(buf_cstr(&b), "");

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	buf_addstr(&b, "<");
	buf_printf(&b, "%s|%d|%s", big, -42, "end");
	assert_int_equal(b.len, 1 + 699 + 8);
	assert_memory_equal(b.data, "<xxx", 4);
	assert_string_equal(buf_cstr(&b) + 700, "|-42|end");
	buf_add(&b, "a\0b", 3);
	assert_int_equal(b.len, 711);
	assert_memory_equal(b.data + 708, "a\0b", 3);
	buf_free(&b);
	assert_null(b.data);
	assert_int_equal(b.len, 0);
	assert_int_equal(b.cap, 0);
}

/* json_escape byte by byte, as it was before it went a word at a time. */
static void
escape_ref(struct buf *b, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i;
	unsigned char		 c;

	buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		c = (unsigned char)s[i];
		if (c == 0xc0 && i + 1 < n && (unsigned char)s[i + 1] == 0x80) {
			buf_add(b, "\\u0000", 6);
			i++;
		} else if (c == '"' || c == '\\') {
			buf_addc(b, '\\');
			buf_addc(b, (char)c);
		} else if (c == '\n')
			buf_add(b, "\\n", 2);
		else if (c == '\r')
			buf_add(b, "\\r", 2);
		else if (c == '\t')
			buf_add(b, "\\t", 2);
		else if (c < 0x20) {
			buf_add(b, "\\u00", 4);
			buf_addc(b, hex[c >> 4]);
			buf_addc(b, hex[c & 15]);
		} else
			buf_addc(b, (char)c);
	}
	buf_addc(b, '"');
}

/* A byte needing care at every offset, in text of every length to 40. */
static void
test_json_escape_offsets(void **state)
{
	static const char *const special[] = { "\"", "\\", "\n", "\x01",
	    "\xc0\x80", "\xc3\xa9", "\x7f", "\xc0" };
	struct buf	 got, want;
	char		 s[48];
	size_t		 n, at, k, sl;

	(void)state;
	buf_init(&got);
	buf_init(&want);
	for (n = 0; n <= 40; n++) {
		for (k = 0; k < sizeof special / sizeof special[0]; k++) {
			sl = strlen(special[k]);
			for (at = 0; at + sl <= n; at++) {
				memset(s, 'x', n);
				memcpy(s + at, special[k], sl);
				buf_reset(&got);
				buf_reset(&want);
				json_escape(&got, s, n);
				escape_ref(&want, s, n);
				assert_int_equal(got.len, want.len);
				assert_memory_equal(got.data, want.data,
				    want.len);
			}
		}
	}
	buf_free(&got);
	buf_free(&want);
}

/* JW_NAME writes what jw_name writes, commas and all. */
static void
test_jw_name_lit(void **state)
{
	struct buf	 a, b;
	struct jw	 w, v;

	(void)state;
	buf_init(&a);
	buf_init(&b);
	jw_init(&w, &a);
	jw_init(&v, &b);
	jw_obj_open(&w);
	jw_obj_open(&v);
	jw_name(&w, "id");
	JW_NAME(&v, "id");
	jw_u64(&w, 7);
	jw_u64(&v, 7);
	jw_name(&w, "create_rev");
	JW_NAME(&v, "create_rev");
	jw_obj_open(&w);
	jw_obj_open(&v);
	jw_name(&w, "value");
	JW_NAME(&v, "value");
	jw_null(&w);
	jw_null(&v);
	jw_obj_close(&w);
	jw_obj_close(&v);
	jw_obj_close(&w);
	jw_obj_close(&v);
	JW_CHECK(&a, "{\"id\":7,\"create_rev\":{\"value\":null}}");
	JW_CHECK(&b, "{\"id\":7,\"create_rev\":{\"value\":null}}");
	buf_free(&a);
	buf_free(&b);
}

/*
 * json_escaped_len() and jw_value_len() say exactly what json_escape() and
 * jw_value() write (the answer-size bound rests on it), for random bytes
 * of every kind: plain, escapes, controls, C0 80, bad UTF-8.
 */
static void
test_escaped_len(void **state)
{
	static const char	 alphabet[] = "ab\"\\\n\r\t\x01\x1f\xc0\x80\xc3"
				     "\xa9\xff ";
	struct buf		 b;
	struct jw		 w;
	char			 s[64];
	size_t			 i, n, k;

	(void)state;
	srandom(7);
	for (k = 0; k < 20000; k++) {
		n = (size_t)random() % sizeof s;
		for (i = 0; i < n; i++)
			s[i] = alphabet[random() % (sizeof alphabet - 1)];
		buf_init(&b);
		json_escape(&b, s, n);
		assert_int_equal(json_escaped_len(s, n), b.len);
		buf_free(&b);
		buf_init(&b);
		jw_init(&w, &b);
		jw_obj_open(&w);
		jw_value(&w, s, n);
		assert_int_equal(jw_value_len(s, n), b.len - 1);	/* "{" */
		buf_free(&b);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jw_empty),
		cmocka_unit_test(test_jw_nested),
		cmocka_unit_test(test_jw_top_array),
		cmocka_unit_test(test_jw_deep),
		cmocka_unit_test(test_jw_raw),
		cmocka_unit_test(test_jw_u64),
		cmocka_unit_test(test_json_escape),
		cmocka_unit_test(test_json_escape_offsets),
		cmocka_unit_test(test_jw_name_escaped),
		cmocka_unit_test(test_jw_name_lit),
		cmocka_unit_test(test_escape_parses_back),
		cmocka_unit_test(test_jw_value),
		cmocka_unit_test(test_jw_value_null_empty),
		cmocka_unit_test(test_jw_value_in_kv),
		cmocka_unit_test(test_jw_value_req),
		cmocka_unit_test(test_proto_print),
		cmocka_unit_test(test_jw_value_round_trip),
		cmocka_unit_test(test_buf),
		cmocka_unit_test(test_escaped_len),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
