/*
 * Unit tests of the wire encodings (common/enc.c: UTF-8 validation, base64)
 * and of parse_u64 (common/util.c).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "util.h"

/* A copy in a buffer of exactly n bytes, so the sanitizers see over-reads. */
static int
utf8_valid_exact(const char *s, size_t n)
{
	char	*copy;
	int	 r;

	copy = xmalloc(n);
	memcpy(copy, s, n);
	r = utf8_valid(copy, n);
	free(copy);
	return (r);
}

struct bytes {
	const char	*s;
	size_t		 n;
};

#define B(lit)	{ (lit), sizeof(lit) - 1 }

static void
test_utf8_valid(void **state)
{
	static const struct bytes	 ok[] = {
		B(""),
		B("plain ascii /a/b"),
		B("\x7f"),
		B("a\0b"),		/* NUL is well-formed UTF-8 */
		B("\xc2\x80"),		/* U+0080 */
		B("\xdf\xbf"),		/* U+07FF */
		B("\xe0\xa0\x80"),	/* U+0800 */
		B("\xed\x9f\xbf"),	/* U+D7FF */
		B("\xee\x80\x80"),	/* U+E000 */
		B("\xef\xbf\xbf"),	/* U+FFFF */
		B("\xf0\x90\x80\x80"),	/* U+10000 */
		B("\xf4\x8f\xbf\xbf"),	/* U+10FFFF */
		B("h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80!"),
	};
	static const struct bytes	 bad[] = {
		B("\x80"),
		B("\xbf"),
		B("a\x80z"),
		B("\xc0\x80"),		/* overlong U+0000 */
		B("\xc0\xaf"),
		B("\xc1\xbf"),
		B("\xe0\x80\x80"),
		B("\xe0\x9f\xbf"),	/* overlong U+07FF */
		B("\xf0\x80\x80\x80"),
		B("\xf0\x8f\xbf\xbf"),	/* overlong U+FFFF */
		B("\xed\xa0\x80"),	/* U+D800 */
		B("\xed\xaf\xbf"),
		B("\xed\xb0\x80"),
		B("\xed\xbf\xbf"),	/* U+DFFF */
		B("\xed\xa0\xbd\xed\xb8\x80"),	/* CESU-8 pair */
		B("\xf4\x90\x80\x80"),	/* U+110000 */
		B("\xf4\xbf\xbf\xbf"),
		B("\xf5\x80\x80\x80"),
		B("\xf7\xbf\xbf\xbf"),
		B("\xf8\x88\x80\x80\x80"),
		B("\xfc\x84\x80\x80\x80\x80"),
		B("\xfe"),
		B("\xff"),
		B("\xc2"),		/* truncated */
		B("\xe0\xa0"),
		B("\xf0\x90\x80"),
		B("abc\xe2\x82"),
		B("\xc3\x28"),		/* bad continuation */
		B("\xe2\x28\xa1"),
		B("\xe2\x82\x28"),
		B("\xf0\x28\x8c\xbc"),
		B("\xf0\x90\x28\xbc"),
		B("\xf0\x90\x8c\x28"),
		B("\xc3\xa9\xc3"),
	};
	size_t	 i;

	(void)state;
	for (i = 0; i < sizeof ok / sizeof ok[0]; i++)
		if (utf8_valid_exact(ok[i].s, ok[i].n) != 1)
			fail_msg("valid case %zu rejected", i);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (utf8_valid_exact(bad[i].s, bad[i].n) != 0)
			fail_msg("invalid case %zu accepted", i);
	/* Only n bytes are looked at. */
	assert_int_equal(utf8_valid_exact("\xc3\xa9", 1), 0);
	assert_int_equal(utf8_valid_exact("\xf0\x9f\x98\x80", 3), 0);
	assert_int_equal(utf8_valid_exact("ab\xff", 2), 1);
}

static void
test_utf8_all_two_byte_leads(void **state)
{
	unsigned char	 s[2];
	unsigned int	 c, d;

	(void)state;
	/* Every lead byte with every second byte; only C2..DF + 80..BF. */
	for (c = 0x80; c <= 0xff; c++) {
		for (d = 0; d <= 0xff; d++) {
			s[0] = (unsigned char)c;
			s[1] = (unsigned char)d;
			assert_int_equal(utf8_valid(s, 2),
			    c >= 0xc2 && c <= 0xdf && d >= 0x80 && d <= 0xbf);
		}
	}
}

/* base64 */

static const struct {
	const char	*plain;
	const char	*enc;
} b64_vectors[] = {
	/* RFC 4648 section 10 */
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
	{ "\xff\xff\xff", "////" },
	{ "\xfb\xef\xbe", "++++" },
	{ "\xff\xfe", "//4=" },
	{ "\xfe", "/g==" },
};

static void
test_b64_encode_vectors(void **state)
{
	char	 out[32];
	size_t	 i, n;

	(void)state;
	for (i = 0; i < sizeof b64_vectors / sizeof b64_vectors[0]; i++) {
		n = strlen(b64_vectors[i].plain);
		memset(out, '#', sizeof out);
		b64_encode(b64_vectors[i].plain, n, out);
		assert_string_equal(out, b64_vectors[i].enc);
		assert_int_equal(b64_encoded_len(n), strlen(out));
		assert_int_equal(out[strlen(out) + 1], '#');
	}
	b64_encode("\0\0\0\0", 4, out);
	assert_string_equal(out, "AAAAAA==");
}

static void
test_b64_encoded_len(void **state)
{
	(void)state;
	assert_int_equal(b64_encoded_len(0), 0);
	assert_int_equal(b64_encoded_len(1), 4);
	assert_int_equal(b64_encoded_len(2), 4);
	assert_int_equal(b64_encoded_len(3), 4);
	assert_int_equal(b64_encoded_len(4), 8);
	assert_int_equal(b64_encoded_len(6), 8);
	assert_int_equal(b64_encoded_len(7), 12);
	assert_int_equal(b64_encoded_len(1024 * 1024), 1398104);
}

/* Decode into a buffer of exactly len / 4 * 3 bytes. */
static long
b64_decode_exact(const char *s, unsigned char **out)
{
	size_t	 n = strlen(s);
	char	*copy;
	long	 r;

	copy = xmalloc(n);
	memcpy(copy, s, n);
	*out = xmalloc(n / 4 * 3);
	r = b64_decode(copy, n, *out);
	free(copy);
	return (r);
}

static void
test_b64_decode_vectors(void **state)
{
	unsigned char	*out;
	size_t		 i, n;
	long		 r;

	(void)state;
	for (i = 0; i < sizeof b64_vectors / sizeof b64_vectors[0]; i++) {
		n = strlen(b64_vectors[i].plain);
		r = b64_decode_exact(b64_vectors[i].enc, &out);
		assert_int_equal(r, n);
		assert_memory_equal(out, b64_vectors[i].plain, n);
		free(out);
	}
	r = b64_decode_exact("AAEA", &out);
	assert_int_equal(r, 3);
	assert_memory_equal(out, "\0\1\0", 3);
	free(out);
	r = b64_decode_exact("AA==", &out);
	assert_int_equal(r, 1);
	assert_int_equal(out[0], 0);
	free(out);
	/* "QQ==" is canonical ("A"). */
	r = b64_decode_exact("QQ==", &out);
	assert_int_equal(r, 1);
	assert_int_equal(out[0], 'A');
	free(out);
}

static void
test_b64_decode_invalid(void **state)
{
	static const char	*bad[] = {
		/* wrong length */
		"Z", "Zg", "Zg=", "Zm9vY", "Zm9vYg=", "Zm9vYg===",
		/* bad characters */
		"Zm9!", "Zm9v YQ==", " Zm9", "Zm9\n", "Zm-_", "Zm.v",
		"Zm9v\x80\x80\x80\x80", "Zm9v\xc3\xa9==",
		/* padding in the middle or in the wrong place */
		"Zg==Zg==", "Zm8=Zm9v", "====", "Z===", "=Zm9", "Zm=v",
		"Zm9vYmFy====", "Z=g=",
		/* non-canonical trailing bits */
		"QR==", "Zh==", "Zv==", "Zm9=", "Zm+=", "QUJ=",
	};
	unsigned char	 out[16];
	size_t		 i, n;

	(void)state;
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		n = strlen(bad[i]);
		if (b64_decode(bad[i], n, out) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
	}
	/* A NUL inside the length is a bad character, not an end. */
	assert_int_equal(b64_decode("Zm\0v", 4, out), -1);
	assert_int_equal(b64_decode("Zm9v\0\0\0\0", 8, out), -1);
}

#define B64_CHARS \
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/="

static uint32_t
xorshift(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return (*s);
}

static void
test_b64_round_trip(void **state)
{
	unsigned char	 in[64], *out;
	char		*enc;
	uint32_t	 seed = 0x9e3779b9;
	size_t		 n, i;
	int		 round;
	long		 r;

	(void)state;
	for (round = 0; round < 8; round++) {
		for (n = 0; n <= 64; n++) {
			for (i = 0; i < n; i++)
				in[i] = (unsigned char)xorshift(&seed);
			if (round == 1)
				memset(in, 0, n);
			if (round == 2)
				memset(in, 0xff, n);
			enc = xmalloc(b64_encoded_len(n) + 1);
			b64_encode(in, n, enc);
			assert_int_equal(strlen(enc), b64_encoded_len(n));
			assert_int_equal(strlen(enc) % 4, 0);
			assert_int_equal(strspn(enc, B64_CHARS), strlen(enc));
			r = b64_decode_exact(enc, &out);
			assert_int_equal(r, n);
			assert_memory_equal(out, in, n);
			free(out);
			free(enc);
		}
	}
}

/* parse_u64 */

static void
test_parse_u64(void **state)
{
	static const char	*bad[] = {
		"", "+1", "-1", " 1", "1 ", "1\n", "0x10", "1a", "a1", "1.0",
		"1e3", "18446744073709551616", "18446744073709551620",
		"99999999999999999999", "184467440737095516150",
		"100000000000000000000000000000",
	};
	uint64_t	 v;
	size_t		 i;

	(void)state;
	assert_int_equal(parse_u64("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_u64("1", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(parse_u64("007", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(parse_u64("9007199254740993", &v), 0);
	assert_int_equal(v, 9007199254740993ULL);
	assert_int_equal(parse_u64("18446744073709551615", &v), 0);
	assert_int_equal(v, UINT64_MAX);
	assert_int_equal(parse_u64("18446744073709551609", &v), 0);
	assert_int_equal(v, UINT64_MAX - 6);
	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		v = 42;
		if (parse_u64(bad[i], &v) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(v, 42);
	}
	assert_int_equal(parse_u64(NULL, &v), -1);
}

/* The word-at-a-time check against the byte-at-a-time one. */
static int
plain_byte(unsigned char c)
{
	return (c >= 0x20 && c < 0x80 && c != '"' && c != '\\');
}

static void
test_json_plain8(void **state)
{
	unsigned char	 w[8];
	uint64_t	 x = 88172645463325252ULL;
	int		 b, pos, i, want;

	(void)state;
	for (b = 0; b < 256; b++) {
		for (pos = 0; pos < 8; pos++) {
			memcpy(w, "abcdefgh", 8);
			w[pos] = (unsigned char)b;
			assert_int_equal(enc_json_plain8(w), plain_byte(b));
		}
	}
	for (i = 0; i < 100000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(w, &x, 8);
		/* mostly plain bytes, so that both answers come */
		for (pos = 0; pos < 8; pos++) {
			if (i % 3 != 0)
				w[pos] = (unsigned char)(0x20 + w[pos] % 0x60);
		}
		want = 1;
		for (pos = 0; pos < 8; pos++)
			want = want && plain_byte(w[pos]);
		assert_int_equal(enc_json_plain8(w), want);
	}
}

/* A character at every offset of ASCII text: the words before it skip. */
static void
test_utf8_offsets(void **state)
{
	char	 s[48];
	size_t	 at;

	(void)state;
	for (at = 0; at + 2 <= 40; at++) {
		memset(s, 'a', 40);
		memcpy(s + at, "\xc3\xa9", 2);
		assert_true(utf8_valid(s, 40));
		s[at + 1] = 'a';
		assert_false(utf8_valid(s, 40));
		s[at] = (char)0x80;
		assert_false(utf8_valid(s, 40));
		assert_true(utf8_valid(s, at));
	}
	memset(s, 'a', 40);
	s[39] = (char)0xc3;
	assert_false(utf8_valid(s, 40));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_valid),
		cmocka_unit_test(test_utf8_all_two_byte_leads),
		cmocka_unit_test(test_json_plain8),
		cmocka_unit_test(test_utf8_offsets),
		cmocka_unit_test(test_b64_encode_vectors),
		cmocka_unit_test(test_b64_encoded_len),
		cmocka_unit_test(test_b64_decode_vectors),
		cmocka_unit_test(test_b64_decode_invalid),
		cmocka_unit_test(test_b64_round_trip),
		cmocka_unit_test(test_parse_u64),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
