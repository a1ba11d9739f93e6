/*
 * Unit tests of the protocol codec (common/proto.c): request decoding, the
 * typed field getters, keys, values and error codes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonw.h"
#include "metad_limits.h"
#include "proto.h"
#include "util.h"

/*
 * Parse n bytes copied into a buffer of exactly n bytes (no NUL after it), so
 * that the sanitizers catch any read past the end.
 */
static cJSON *
parse_n(const char *s, size_t n, struct proto_err *e)
{
	char	*copy;
	cJSON	*j;

	copy = xmalloc(n);
	memcpy(copy, s, n);
	memset(e, 0, sizeof *e);
	j = proto_parse(copy, n, e);
	free(copy);
	return (j);
}

#define PARSE(lit, e)	parse_n((lit), sizeof(lit) - 1, (e))

/* A request that must parse. */
static cJSON *
obj_n(const char *s, size_t n)
{
	struct proto_err	 e;
	cJSON			*j;

	j = parse_n(s, n, &e);
	if (j == NULL)
		fail_msg("proto_parse(%.*s): %s", (int)n, s, e.msg);
	return (j);
}

#define OBJ(lit)	obj_n((lit), sizeof(lit) - 1)

static void
assert_err(const struct proto_err *e, enum proto_code code, const char *sub)
{
	assert_string_equal(proto_code_name(e->code), proto_code_name(code));
	if (sub != NULL && strstr(e->msg, sub) == NULL)
		fail_msg("message \"%s\" lacks \"%s\"", e->msg, sub);
}

/* A request {"<name>":"<body>"} with body repeated to total len bytes. */
static char *
json_with_str(const char *name, const char *unit, size_t count,
    const char *tail, size_t *len)
{
	struct buf	 b;
	size_t		 i;

	buf_init(&b);
	buf_printf(&b, "{\"%s\":\"", name);
	for (i = 0; i < count; i++)
		buf_addstr(&b, unit);
	buf_addstr(&b, tail);
	buf_addstr(&b, "\"}");
	*len = b.len;
	return (buf_cstr(&b));
}

/* proto_parse */

static void
test_parse_object(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	const char		*op;
	size_t			 len;

	(void)state;
	j = PARSE("{\"op\":\"get\",\"id\":7}", &e);
	assert_non_null(j);
	assert_int_equal(proto_get_str(j, "op", 1, &op, &len, &e), 1);
	assert_string_equal(op, "get");
	assert_int_equal(len, 3);
	cJSON_Delete(j);
}

static void
test_parse_whitespace_after(void **state)
{
	static const char	*ok[] = {
		"{}\n", "{}\r\n", "{} \t\r\n", "{}   ", "  {}",
		"\t{ \"a\" : 1 }\r",
	};
	struct proto_err	 e;
	cJSON			*j;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		j = parse_n(ok[i], strlen(ok[i]), &e);
		if (j == NULL)
			fail_msg("rejected \"%s\": %s", ok[i], e.msg);
		assert_true(cJSON_IsObject(j));
		cJSON_Delete(j);
	}
}

static void
test_parse_not_null_terminated(void **state)
{
	static const char	 text[] = "{\"a\":1}garbage";
	struct proto_err	 e;
	cJSON			*j;
	uint64_t		 a = 0;

	(void)state;
	/* Only the first 7 bytes are the request. */
	j = parse_n(text, 7, &e);
	assert_non_null(j);
	assert_int_equal(proto_get_u64(j, "a", 1, &a, &e), 1);
	assert_int_equal(a, 1);
	cJSON_Delete(j);
}

static void
test_parse_not_json(void **state)
{
	static const char	*bad[] = {
		"", " ", "nope", "{", "}", "{\"a\":}", "{\"a\" 1}", "{'a':1}",
		"{\"a\":1,}", "{\"a\":tru}", "{\"a\":\"unterminated}",
		"{\"a\":\"\\ud800\"}", "{\"a\":\"\\x41\"}", "{a:1}",
	};
	struct proto_err	 e;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse_n(bad[i], strlen(bad[i]), &e) != NULL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_err(&e, PROTO_BAD_REQUEST, "not valid JSON");
	}
}

static void
test_parse_too_deep(void **state)
{
	struct proto_err	 e;
	struct buf		 b;
	int			 i;

	(void)state;
	buf_init(&b);
	buf_addstr(&b, "{\"a\":");
	for (i = 0; i < 5000; i++)
		buf_addc(&b, '[');
	for (i = 0; i < 5000; i++)
		buf_addc(&b, ']');
	buf_addc(&b, '}');
	assert_null(parse_n(b.data, b.len, &e));
	assert_err(&e, PROTO_BAD_REQUEST, NULL);
	buf_free(&b);
}

static void
test_parse_not_object(void **state)
{
	static const char	*bad[] = {
		"[]", "[1,2]", "[{}]", "42", "-1.5", "\"s\"", "null", "true",
		"false",
	};
	struct proto_err	 e;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse_n(bad[i], strlen(bad[i]), &e) != NULL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_err(&e, PROTO_BAD_REQUEST, "not a JSON object");
	}
}

static void
test_parse_trailing(void **state)
{
	static const char	*bad[] = {
		"{}x", "{}{}", "{} 1", "{}\r\nx", "{} {\"a\":1}", "{},",
		"{}]", "[] x",
	};
	/* JSON's blanks are four: a control byte is refused as such. */
	static const char	*ctl[] = { "{}\x01", "{}\v", "{}\f", "{\v}" };
	struct proto_err	 e;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (parse_n(bad[i], strlen(bad[i]), &e) != NULL)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_err(&e, PROTO_BAD_REQUEST, "trailing data");
	}
	for (i = 0; i < sizeof ctl / sizeof ctl[0]; i++) {
		if (parse_n(ctl[i], strlen(ctl[i]), &e) != NULL)
			fail_msg("accepted \"%s\"", ctl[i]);
		assert_err(&e, PROTO_BAD_REQUEST, "a control character "
		    "between tokens");
	}
}

static void
test_parse_nul_byte(void **state)
{
	struct proto_err	 e;

	(void)state;
	assert_null(PARSE("{}\0", &e));
	assert_err(&e, PROTO_BAD_REQUEST, "NUL byte");
	assert_null(PARSE("{\"a\":\"b\0c\"}", &e));
	assert_err(&e, PROTO_BAD_REQUEST, "NUL byte");
	assert_null(PARSE("\0{}", &e));
	assert_err(&e, PROTO_BAD_REQUEST, "NUL byte");
}

static void
test_parse_nul_escape(void **state)
{
	/* A \u0000 in a string that is no value: refused when read. */
	static const char	*bad[] = {
		"{\"a\":\"\\u0000\"}",
		"{\"a\":\"x\\u0000y\"}",
		/* An escaped backslash, then a real \u0000. */
		"{\"a\":\"\\\\\\u0000\"}",
		/* An escaped quote does not end the string. */
		"{\"a\":\"\\\"\\u0000\"}",
	};
	struct proto_err	 e;
	cJSON			*j;
	const char		*s;
	size_t			 i, len;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if ((j = parse_n(bad[i], strlen(bad[i]), &e)) == NULL)
			fail_msg("refused %s: %s", bad[i], e.msg);
		assert_int_equal(proto_get_str(j, "a", 1, &s, &len, &e), -1);
		assert_err(&e, PROTO_BAD_REQUEST, "\\u0000");
		cJSON_Delete(j);
	}
	/* The bytes C0 80 that stand for it inside are refused as such. */
	assert_null(parse_n("{\"a\":\"\xc0\x80\"}", 10, &e));
	assert_err(&e, PROTO_BAD_REQUEST, "C0 80");
}

/*
 * A \u0000 in a value is a NUL byte of the value (metad-protocol(7), KEYS,
 * VALUES AND KV OBJECTS: any bytes).
 */
static void
test_parse_nul_escape_value(void **state)
{
	struct proto_bytes	 v;
	struct proto_err	 e;
	cJSON			*j;

	(void)state;
	j = OBJ("{\"value\":\"x\\u0000y\\u0000\\\\u0000\"}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), 1);
	assert_int_equal(v.len, 10);
	assert_memory_equal(v.data, "x\0y\0\\u0000", 10);
	proto_bytes_free(&v);
	cJSON_Delete(j);
	j = OBJ("{\"value\":\"\\u0000\\u0000\\u0000\"}");
	assert_int_equal(proto_get_value(j, 1, 2, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE, "3 bytes");
	cJSON_Delete(j);
}

static void
test_parse_escaped_backslash_u0000(void **state)
{
	cJSON		*j;
	const char	*s;
	size_t		 len;
	struct proto_err e;

	(void)state;
	/* The JSON text "\\u0000" is a backslash followed by "u0000". */
	j = OBJ("{\"a\":\"\\\\u0000\",\"b\":\"\\\\\\\\u0000\","
	    "\"c\":\"\\u0001\",\"d\":\"u0000\"}");
	assert_int_equal(proto_get_str(j, "a", 1, &s, &len, &e), 1);
	assert_string_equal(s, "\\u0000");
	assert_int_equal(len, 6);
	assert_int_equal(proto_get_str(j, "b", 1, &s, &len, &e), 1);
	assert_string_equal(s, "\\\\u0000");
	assert_int_equal(proto_get_str(j, "c", 1, &s, &len, &e), 1);
	assert_string_equal(s, "\x01");
	assert_int_equal(proto_get_str(j, "d", 1, &s, &len, &e), 1);
	assert_string_equal(s, "u0000");
	cJSON_Delete(j);
}

/* proto_get_u64 */

struct u64_case {
	const char	*json;
	int		 ret;
	uint64_t	 val;
};

static void
test_get_u64_values(void **state)
{
	static const struct u64_case	 cases[] = {
		{ "{\"n\":0}", 1, 0 },
		{ "{\"n\":1}", 1, 1 },
		{ "{\"n\":-0}", 1, 0 },
		{ "{\"n\":1000000}", 1, 1000000 },
		{ "{\"n\":9007199254740991}", 1, 9007199254740991ULL },
		{ "{\"n\":9007199254740992}", -1, 0 },
		{ "{\"n\":9007199254740993}", -1, 0 },
		{ "{\"n\":18446744073709551615}", -1, 0 },
		{ "{\"n\":1e300}", -1, 0 },
		{ "{\"n\":1e400}", -1, 0 },
		{ "{\"n\":-1e400}", -1, 0 },
		{ "{\"n\":-1}", -1, 0 },
		{ "{\"n\":-9007199254740991}", -1, 0 },
		{ "{\"n\":1.5}", -1, 0 },
		{ "{\"n\":0.5}", -1, 0 },
		{ "{\"n\":1e-3}", -1, 0 },
		{ "{\"n\":1e3}", 1, 1000 },
		{ "{\"n\":1E3}", 1, 1000 },
		{ "{\"n\":2.5e1}", 1, 25 },
		{ "{\"n\":1.0}", 1, 1 },
		{ "{\"n\":\"5\"}", -1, 0 },
		{ "{\"n\":true}", -1, 0 },
		{ "{\"n\":false}", -1, 0 },
		{ "{\"n\":[1]}", -1, 0 },
		{ "{\"n\":{}}", -1, 0 },
		{ "{\"n\":null}", 0, 0 },
		{ "{}", 0, 0 },
		{ "{\"N\":5}", 0, 0 },
	};
	struct proto_err	 e;
	cJSON			*j;
	uint64_t		 v;
	size_t			 i;
	int			 r;

	(void)state;
	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		j = obj_n(cases[i].json, strlen(cases[i].json));
		v = 777;
		memset(&e, 0, sizeof e);
		r = proto_get_u64(j, "n", 0, &v, &e);
		if (r != cases[i].ret)
			fail_msg("%s: returned %d, want %d", cases[i].json, r,
			    cases[i].ret);
		if (r == 1 && v != cases[i].val)
			fail_msg("%s: got %llu", cases[i].json,
			    (unsigned long long)v);
		if (r != 1)
			assert_int_equal(v, 777);	/* untouched */
		if (r == -1) {
			assert_err(&e, PROTO_BAD_REQUEST, "\"n\"");
			assert_non_null(strstr(e.msg, "9007199254740991"));
		}
		cJSON_Delete(j);
	}
}

static void
test_get_u64_required(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	uint64_t		 v = 5;

	(void)state;
	j = OBJ("{\"rev\":null,\"other\":1}");
	assert_int_equal(proto_get_u64(j, "rev", 1, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, NULL);
	assert_string_equal(e.msg, "missing field \"rev\"");
	assert_int_equal(proto_get_u64(j, "from_rev", 1, &v, &e), -1);
	assert_string_equal(e.msg, "missing field \"from_rev\"");
	assert_int_equal(v, 5);
	assert_int_equal(proto_get_u64(j, "other", 1, &v, &e), 1);
	assert_int_equal(v, 1);
	cJSON_Delete(j);
}

static void
test_number_u64(void **state)
{
	static const double	 bad[] = {
		-1, -0.5, 0.5, 9007199254740992.0, 1e20,
	};
	cJSON		*n;
	uint64_t	 v;
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		n = cJSON_CreateNumber(bad[i]);
		assert_int_equal(proto_number_u64(n, &v), -1);
		cJSON_Delete(n);
	}
	n = cJSON_CreateNumber(NAN);
	assert_int_equal(proto_number_u64(n, &v), -1);
	cJSON_Delete(n);
	n = cJSON_CreateNumber(INFINITY);
	assert_int_equal(proto_number_u64(n, &v), -1);
	cJSON_Delete(n);
	n = cJSON_CreateNumber(9007199254740991.0);
	assert_int_equal(proto_number_u64(n, &v), 0);
	assert_int_equal(v, 9007199254740991ULL);
	cJSON_Delete(n);
	n = cJSON_CreateString("1");
	assert_int_equal(proto_number_u64(n, &v), -1);
	cJSON_Delete(n);
	assert_int_equal(proto_number_u64(NULL, &v), -1);
}

/* proto_get_bool, proto_get_str */

static void
test_get_bool(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	int			 v;

	(void)state;
	j = OBJ("{\"t\":true,\"f\":false,\"n\":null,\"one\":1,"
	    "\"s\":\"true\"}");
	v = -1;
	assert_int_equal(proto_get_bool(j, "t", 1, &v, &e), 1);
	assert_int_equal(v, 1);
	assert_int_equal(proto_get_bool(j, "f", 1, &v, &e), 1);
	assert_int_equal(v, 0);
	v = -1;
	assert_int_equal(proto_get_bool(j, "n", 0, &v, &e), 0);
	assert_int_equal(proto_get_bool(j, "absent", 0, &v, &e), 0);
	assert_int_equal(v, -1);
	assert_int_equal(proto_get_bool(j, "n", 1, &v, &e), -1);
	assert_string_equal(e.msg, "missing field \"n\"");
	assert_int_equal(proto_get_bool(j, "one", 0, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"one\"");
	assert_int_equal(proto_get_bool(j, "s", 0, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"s\"");
	cJSON_Delete(j);
}

static void
test_get_str(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	const char		*s = NULL;
	size_t			 len = 99;

	(void)state;
	j = OBJ("{\"s\":\"h\\u00e9\\n\",\"e\":\"\",\"num\":5,\"arr\":[],"
	    "\"bad\":\"\xff\"}");
	assert_int_equal(proto_get_str(j, "s", 1, &s, &len, &e), 1);
	assert_string_equal(s, "h\xc3\xa9\n");
	assert_int_equal(len, 4);
	assert_int_equal(proto_get_str(j, "e", 1, &s, &len, &e), 1);
	assert_string_equal(s, "");
	assert_int_equal(len, 0);
	assert_int_equal(proto_get_str(j, "num", 1, &s, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"num\" must be a string");
	assert_int_equal(proto_get_str(j, "arr", 1, &s, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"arr\"");
	assert_int_equal(proto_get_str(j, "bad", 1, &s, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "UTF-8");
	assert_int_equal(proto_get_str(j, "missing", 0, &s, &len, &e), 0);
	assert_int_equal(proto_get_str(j, "missing", 1, &s, &len, &e), -1);
	assert_string_equal(e.msg, "missing field \"missing\"");
	cJSON_Delete(j);
}

/* proto_get_key, proto_check_key, proto_get_prefix */

static void
test_get_key_ok(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	const char		*k;
	size_t			 len;

	(void)state;
	j = OBJ("{\"key\":\"/a/b\",\"u\":\"\xe2\x82\xac\xf4\x8f\xbf\xbf\","
	    "\"esc\":\"\\ud83d\\ude00\"}");
	assert_int_equal(proto_get_key(j, "key", 1, &k, &len, &e), 1);
	assert_string_equal(k, "/a/b");
	assert_int_equal(len, 4);
	/* U+20AC and U+10FFFF, the largest code point. */
	assert_int_equal(proto_get_key(j, "u", 1, &k, &len, &e), 1);
	assert_int_equal(len, 7);
	assert_memory_equal(k, "\xe2\x82\xac\xf4\x8f\xbf\xbf", 7);
	/* A surrogate pair escape decodes to 4 bytes of UTF-8. */
	assert_int_equal(proto_get_key(j, "esc", 1, &k, &len, &e), 1);
	assert_int_equal(len, 4);
	assert_memory_equal(k, "\xf0\x9f\x98\x80", 4);
	assert_int_equal(proto_get_key(j, "absent", 0, &k, &len, &e), 0);
	assert_int_equal(proto_get_key(j, "absent", 1, &k, &len, &e), -1);
	assert_string_equal(e.msg, "missing field \"absent\"");
	cJSON_Delete(j);
}

static void
test_get_key_empty(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	const char		*k;
	size_t			 len;

	(void)state;
	j = OBJ("{\"key\":\"\",\"n\":1}");
	assert_int_equal(proto_get_key(j, "key", 1, &k, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "empty");
	assert_non_null(strstr(e.msg, "\"key\""));
	assert_int_equal(proto_get_key(j, "n", 1, &k, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "must be a string");
	cJSON_Delete(j);
}

static void
test_get_key_length(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	const char		*k;
	char			*text;
	size_t			 len, tlen;

	(void)state;
	text = json_with_str("key", "a", KEY_MAX_BYTES, "", &tlen);
	j = obj_n(text, tlen);
	assert_int_equal(proto_get_key(j, "key", 1, &k, &len, &e), 1);
	assert_int_equal(len, 4096);
	cJSON_Delete(j);
	free(text);

	text = json_with_str("key", "a", KEY_MAX_BYTES + 1, "", &tlen);
	j = obj_n(text, tlen);
	assert_int_equal(proto_get_key(j, "key", 1, &k, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "the limit is 4096");
	assert_non_null(strstr(e.msg, "4097 bytes"));
	assert_non_null(strstr(e.msg, "\"key\""));
	cJSON_Delete(j);
	free(text);

	/* The limit counts bytes, not characters: 2048 x U+00E9 is 4096. */
	text = json_with_str("key", "\xc3\xa9", 2048, "", &tlen);
	j = obj_n(text, tlen);
	assert_int_equal(proto_get_key(j, "key", 1, &k, &len, &e), 1);
	assert_int_equal(len, 4096);
	cJSON_Delete(j);
	free(text);

	text = json_with_str("key", "\xc3\xa9", 2048, "a", &tlen);
	j = obj_n(text, tlen);
	assert_int_equal(proto_get_key(j, "key", 1, &k, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "4097");
	cJSON_Delete(j);
	free(text);
}

static void
test_get_key_invalid_utf8(void **state)
{
	static const char	*bad[] = {
		"\xc0\xaf",		/* overlong '/' (C0 80: test_parse_nul_escape) */
		"\xc1\xbf",		/* overlong */
		"\xe0\x80\xaf",		/* overlong '/' */
		"\xf0\x80\x80\xaf",	/* overlong '/' */
		"\xed\xa0\x80",		/* U+D800 */
		"\xed\xbf\xbf",		/* U+DFFF */
		"\xf4\x90\x80\x80",	/* U+110000 */
		"\xf5\x80\x80\x80",
		"\xf8\x88\x80\x80\x80",
		"\xfe",
		"\xff",
		"\x80",			/* lone continuation */
		"a\xbf" "b",
		"\xc3",			/* truncated sequences */
		"\xe2\x82",
		"\xf0\x9f\x98",
		"\xc3" "a",
		"\xe2\x82" "a",
		"\xf0\x9f\x98" "a",
		"ok\xc3",
	};
	struct proto_err	 e;
	cJSON			*j;
	const char		*k;
	size_t			 i, len, tlen;
	char			*text;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		text = json_with_str("key", bad[i], 1, "", &tlen);
		j = obj_n(text, tlen);
		if (proto_get_key(j, "key", 1, &k, &len, &e) != -1)
			fail_msg("case %zu accepted", i);
		assert_err(&e, PROTO_BAD_REQUEST, "UTF-8");
		assert_non_null(strstr(e.msg, "\"key\""));
		cJSON_Delete(j);
		free(text);
	}
}

static void
test_check_key(void **state)
{
	struct proto_err	 e;
	char			*big;

	(void)state;
	assert_int_equal(proto_check_key("a", 1, "key", &e), 0);
	assert_int_equal(proto_check_key("\xf4\x8f\xbf\xbf", 4, "key", &e), 0);
	assert_int_equal(proto_check_key("", 0, "key", &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "empty");
	assert_int_equal(proto_check_key("a\0b", 3, "fence.key", &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "NUL");
	assert_non_null(strstr(e.msg, "\"fence.key\""));
	assert_int_equal(proto_check_key("\0", 1, "key", &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "NUL");
	assert_int_equal(proto_check_key("\xf4\x90\x80\x80", 4, "k", &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "UTF-8");
	/* The length is what counts, not a NUL terminator. */
	assert_int_equal(proto_check_key("\xc3\xa9", 1, "k", &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "UTF-8");

	big = xmalloc(KEY_MAX_BYTES + 1);
	memset(big, 'k', KEY_MAX_BYTES + 1);
	assert_int_equal(proto_check_key(big, KEY_MAX_BYTES, "key", &e), 0);
	assert_int_equal(proto_check_key(big, KEY_MAX_BYTES + 1, "key", &e),
	    -1);
	assert_err(&e, PROTO_BAD_REQUEST,
	    "key is 4097 bytes, the limit is 4096");
	free(big);
}

static void
test_get_prefix(void **state)
{
	struct proto_err	 e;
	cJSON			*j;
	const char		*p;
	char			*text;
	size_t			 len, tlen;

	(void)state;
	j = OBJ("{\"prefix\":\"\",\"p\":\"a/\",\"n\":null,\"num\":1,"
	    "\"bad\":\"\xed\xa0\x80\"}");
	p = NULL;
	len = 99;
	assert_int_equal(proto_get_prefix(j, "absent", &p, &len, &e), 0);
	assert_non_null(p);
	assert_string_equal(p, "");
	assert_int_equal(len, 0);
	p = NULL;
	assert_int_equal(proto_get_prefix(j, "n", &p, &len, &e), 0);
	assert_string_equal(p, "");
	assert_int_equal(proto_get_prefix(j, "prefix", &p, &len, &e), 1);
	assert_string_equal(p, "");
	assert_int_equal(len, 0);
	assert_int_equal(proto_get_prefix(j, "p", &p, &len, &e), 1);
	assert_string_equal(p, "a/");
	assert_int_equal(len, 2);
	assert_int_equal(proto_get_prefix(j, "num", &p, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"num\"");
	assert_int_equal(proto_get_prefix(j, "bad", &p, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "UTF-8");
	cJSON_Delete(j);

	text = json_with_str("prefix", "p", KEY_MAX_BYTES, "", &tlen);
	j = obj_n(text, tlen);
	assert_int_equal(proto_get_prefix(j, "prefix", &p, &len, &e), 1);
	assert_int_equal(len, 4096);
	cJSON_Delete(j);
	free(text);
	text = json_with_str("prefix", "p", KEY_MAX_BYTES + 1, "", &tlen);
	j = obj_n(text, tlen);
	assert_int_equal(proto_get_prefix(j, "prefix", &p, &len, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "4097 bytes, the limit is 4096");
	cJSON_Delete(j);
	free(text);
}

/* proto_get_value */

static void
test_get_value_string(void **state)
{
	struct proto_err	 e;
	struct proto_bytes	 v;
	cJSON			*j;

	(void)state;
	j = OBJ("{\"value\":\"h\xc3\xa9llo\"}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), 1);
	assert_int_equal(v.len, 6);
	assert_memory_equal(v.data, "h\xc3\xa9llo", 6);
	assert_null(v.owned);
	proto_bytes_free(&v);
	assert_null(v.data);
	assert_int_equal(v.len, 0);
	/* Exactly the limit, in bytes. */
	assert_int_equal(proto_get_value(j, 1, 6, &v, &e), 1);
	assert_int_equal(v.len, 6);
	proto_bytes_free(&v);
	assert_int_equal(proto_get_value(j, 1, 5, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE, "6 bytes, the limit is 5");
	cJSON_Delete(j);

	j = OBJ("{\"value\":\"\"}");
	assert_int_equal(proto_get_value(j, 1, 0, &v, &e), 1);
	assert_int_equal(v.len, 0);
	proto_bytes_free(&v);
	cJSON_Delete(j);

	/* Escapes are decoded before the length is counted. */
	j = OBJ("{\"value\":\"\\n\\\"\\u00e9\"}");
	assert_int_equal(proto_get_value(j, 1, 4, &v, &e), 1);
	assert_int_equal(v.len, 4);
	assert_memory_equal(v.data, "\n\"\xc3\xa9", 4);
	proto_bytes_free(&v);
	cJSON_Delete(j);
}

static void
test_get_value_b64(void **state)
{
	struct proto_err	 e;
	struct proto_bytes	 v;
	cJSON			*j;

	(void)state;
	/* Binary with NUL bytes comes back exactly. */
	j = OBJ("{\"value_b64\":\"AAEA/w==\"}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), 1);
	assert_int_equal(v.len, 4);
	assert_memory_equal(v.data, "\x00\x01\x00\xff", 4);
	assert_non_null(v.owned);
	assert_ptr_equal(v.data, v.owned);
	proto_bytes_free(&v);
	assert_null(v.owned);
	assert_int_equal(proto_get_value(j, 1, 4, &v, &e), 1);
	proto_bytes_free(&v);
	assert_int_equal(proto_get_value(j, 1, 3, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE, "the limit is 3");
	assert_null(v.owned);
	cJSON_Delete(j);

	j = OBJ("{\"value_b64\":\"\"}");
	assert_int_equal(proto_get_value(j, 1, 0, &v, &e), 1);
	assert_int_equal(v.len, 0);
	proto_bytes_free(&v);
	cJSON_Delete(j);

	j = OBJ("{\"value_b64\":\"QUJD\"}");
	assert_int_equal(proto_get_value(j, 1, 3, &v, &e), 1);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.data, "ABC", 3);
	proto_bytes_free(&v);
	assert_int_equal(proto_get_value(j, 1, 2, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE,
	    "value is 3 bytes, the limit is 2");
	/* No limit at all. */
	assert_int_equal(proto_get_value(j, 1, SIZE_MAX, &v, &e), 1);
	assert_int_equal(v.len, 3);
	assert_memory_equal(v.data, "ABC", 3);
	proto_bytes_free(&v);
	assert_int_equal(proto_get_value(j, 1, SIZE_MAX - 1, &v, &e), 1);
	assert_int_equal(v.len, 3);
	proto_bytes_free(&v);
	cJSON_Delete(j);

	/* Padding makes the decoded length smaller than the text suggests. */
	j = OBJ("{\"value_b64\":\"QUJDRA==\"}");
	assert_int_equal(proto_get_value(j, 1, 4, &v, &e), 1);
	assert_int_equal(v.len, 4);
	assert_memory_equal(v.data, "ABCD", 4);
	proto_bytes_free(&v);
	assert_int_equal(proto_get_value(j, 1, 3, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE, "the limit is 3");
	assert_int_equal(proto_get_value(j, 1, 0, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE, "the limit is 0");
	cJSON_Delete(j);

	j = OBJ("{\"value_b64\":\"QUI=\"}");
	assert_int_equal(proto_get_value(j, 1, 2, &v, &e), 1);
	assert_int_equal(v.len, 2);
	assert_memory_equal(v.data, "AB", 2);
	proto_bytes_free(&v);
	assert_int_equal(proto_get_value(j, 1, 1, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE,
	    "value is 2 bytes, the limit is 1");
	assert_null(v.owned);
	cJSON_Delete(j);

	/* Far over the limit: refused before decoding. */
	j = OBJ("{\"value_b64\":\"QUJDREVGR0hJSktM\"}");
	assert_int_equal(proto_get_value(j, 1, 3, &v, &e), -1);
	assert_err(&e, PROTO_VALUE_TOO_LARGE, "the limit is 3");
	assert_null(v.owned);
	cJSON_Delete(j);
}

static void
test_get_value_bad_b64(void **state)
{
	static const char	*bad[] = {
		"A", "QQ", "QQ=", "QUJDR", "QUJD\n", " QUJD", "QUJ D",
		"QR==", "QUI=QUI=", "QQ==QQ==", "====", "Q===", "QQ=A",
		"QUJ=", "Zh==", "Zm9=", "QU!D", "QU-_", "QUJD====", "=QUJ",
		"QUJD\xc3\xa9", "QU D", "QUJ\t", "QU\"D",
	};
	struct proto_err	 e;
	struct proto_bytes	 v;
	struct buf		 b;
	cJSON			*j;
	size_t			 i;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		buf_init(&b);
		buf_addstr(&b, "{\"value_b64\":");
		json_escape(&b, bad[i], strlen(bad[i]));
		buf_addc(&b, '}');
		j = obj_n(b.data, b.len);
		if (proto_get_value(j, 1, 1000, &v, &e) != -1)
			fail_msg("accepted value_b64 \"%s\"", bad[i]);
		assert_err(&e, PROTO_BAD_REQUEST, "value_b64");
		assert_null(v.owned);
		cJSON_Delete(j);
		buf_free(&b);
	}
}

static void
test_get_value_choice(void **state)
{
	struct proto_err	 e;
	struct proto_bytes	 v;
	cJSON			*j;

	(void)state;
	j = OBJ("{\"value\":\"a\",\"value_b64\":\"YQ==\"}");
	assert_int_equal(proto_get_value(j, 0, 100, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "not both");
	cJSON_Delete(j);

	j = OBJ("{\"key\":\"k\"}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "missing field \"value\"");
	assert_int_equal(proto_get_value(j, 0, 100, &v, &e), 0);
	assert_null(v.data);
	assert_int_equal(v.len, 0);
	cJSON_Delete(j);

	/* null is absent, so the other one is used. */
	j = OBJ("{\"value\":null,\"value_b64\":\"YQ==\"}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), 1);
	assert_int_equal(v.len, 1);
	assert_memory_equal(v.data, "a", 1);
	proto_bytes_free(&v);
	cJSON_Delete(j);
	j = OBJ("{\"value\":\"b\",\"value_b64\":null}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), 1);
	assert_int_equal(v.len, 1);
	assert_memory_equal(v.data, "b", 1);
	proto_bytes_free(&v);
	cJSON_Delete(j);
	j = OBJ("{\"value\":null,\"value_b64\":null}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "missing field");
	cJSON_Delete(j);

	/* Wrong types, and a "value" that is not UTF-8. */
	j = OBJ("{\"value\":5}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"value\" must be a string");
	cJSON_Delete(j);
	j = OBJ("{\"value_b64\":[]}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "\"value_b64\" must be");
	cJSON_Delete(j);
	j = OBJ("{\"value\":\"\xc0\xaf\"}");
	assert_int_equal(proto_get_value(j, 1, 100, &v, &e), -1);
	assert_err(&e, PROTO_BAD_REQUEST, "UTF-8");
	cJSON_Delete(j);
}

/* Error codes */

static void
test_code_names(void **state)
{
	static const char	*names[] = {
		"ok", "bad_request", "unknown_op", "request_too_large",
		"value_too_large", "failed_precondition", "fenced",
		"compacted", "timeout", "not_found", "read_only",
		"permission_denied", "unavailable", "storage_full", "internal",
		"resource_exhausted", "answer_too_large",
	};
	size_t	 i;

	(void)state;
	assert_int_equal(sizeof names / sizeof names[0],
	    PROTO_ANSWER_TOO_LARGE + 1);
	for (i = 0; i <= PROTO_ANSWER_TOO_LARGE; i++) {
		assert_string_equal(proto_code_name((enum proto_code)i),
		    names[i]);
		if (i != PROTO_OK)
			assert_int_equal(proto_code_parse(names[i]), i);
	}
	assert_int_equal(proto_code_parse("nope"), PROTO_INTERNAL);
	assert_int_equal(proto_code_parse(""), PROTO_INTERNAL);
	assert_int_equal(proto_code_parse("Bad_Request"), PROTO_INTERNAL);
	assert_int_equal(proto_code_parse("bad_request "), PROTO_INTERNAL);
	assert_string_equal(proto_code_name((enum proto_code)
	    (PROTO_ANSWER_TOO_LARGE + 1)), "internal");
	assert_string_equal(proto_code_name((enum proto_code)1000),
	    "internal");
}

static void
test_fail(void **state)
{
	struct proto_err	 e;
	char			 longstr[600];

	(void)state;
	memset(&e, 0, sizeof e);
	assert_int_equal(proto_fail(&e, PROTO_FENCED, "epoch %d at %s", 3,
	    "k"), -1);
	assert_int_equal(e.code, PROTO_FENCED);
	assert_string_equal(e.msg, "epoch 3 at k");

	memset(longstr, 'x', sizeof longstr - 1);
	longstr[sizeof longstr - 1] = '\0';
	assert_int_equal(proto_fail(&e, PROTO_INTERNAL, "%s", longstr), -1);
	assert_int_equal(strlen(e.msg), PROTO_MSG_MAX - 1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_object),
		cmocka_unit_test(test_parse_whitespace_after),
		cmocka_unit_test(test_parse_not_null_terminated),
		cmocka_unit_test(test_parse_not_json),
		cmocka_unit_test(test_parse_too_deep),
		cmocka_unit_test(test_parse_not_object),
		cmocka_unit_test(test_parse_trailing),
		cmocka_unit_test(test_parse_nul_byte),
		cmocka_unit_test(test_parse_nul_escape),
		cmocka_unit_test(test_parse_nul_escape_value),
		cmocka_unit_test(test_parse_escaped_backslash_u0000),
		cmocka_unit_test(test_get_u64_values),
		cmocka_unit_test(test_get_u64_required),
		cmocka_unit_test(test_number_u64),
		cmocka_unit_test(test_get_bool),
		cmocka_unit_test(test_get_str),
		cmocka_unit_test(test_get_key_ok),
		cmocka_unit_test(test_get_key_empty),
		cmocka_unit_test(test_get_key_length),
		cmocka_unit_test(test_get_key_invalid_utf8),
		cmocka_unit_test(test_check_key),
		cmocka_unit_test(test_get_prefix),
		cmocka_unit_test(test_get_value_string),
		cmocka_unit_test(test_get_value_b64),
		cmocka_unit_test(test_get_value_bad_b64),
		cmocka_unit_test(test_get_value_choice),
		cmocka_unit_test(test_code_names),
		cmocka_unit_test(test_fail),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
