/*
 * Unit tests of the direct decoder of get, put and delete
 * (daemon/ops/ops_fast.c): the lines it takes, those it leaves to the general
 * decoder, and, on lines built from members valid and not and then
 * mutated byte by byte, that every line it takes the general decoder takes
 * too, with the same op, id and arguments, "idem" tokens included
 * (ops_fast_cmp.h), on a stand-in store with records of tokens or without,
 * from a connection with a peer identity or without.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/conn.h"
#include "metad.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "ops_fast_cmp.h"
#include "ops_fast_store.h"
#include "util.h"

#define MAX_VALUE	16

/* Tokens of IDEM_TOKEN_MAX_BYTES (128) bytes and of one more. */
#define T16		"0123456789abcdef"
#define T128		T16 T16 T16 T16 T16 T16 T16 T16
#define T129		T128 "x"

static struct metad	 md;
static struct conn	 rw, ro, anon;	/* anon: read-write, no identity */

static int
setup(void **state)
{
	(void)state;
	md.cfg.max_value_bytes = MAX_VALUE;
	md.store = ops_fast_store(1);
	rw.md = ro.md = anon.md = &md;
	rw.access = anon.access = CONN_ACCESS_RW;
	ro.access = CONN_ACCESS_RO;
	rw.identity_len = (size_t)snprintf(rw.identity, sizeof rw.identity,
	    "uid:1000");
	ro.identity_len = (size_t)snprintf(ro.identity, sizeof ro.identity,
	    "uid:1001");
	return (0);
}

/* ops_fast_decode on a copy of exactly n bytes (no NUL after them). */
static int
decode_n(const char *s, size_t n, struct ops_fast *f, char *out)
{
	char	*copy;
	int	 rc;

	copy = xmalloc(n + 1);
	memcpy(copy, s, n);
	rc = ops_fast_decode(copy, n, MAX_VALUE, out, f);
	if (rc == 1) {
		/* its pointers into the line: check them before it goes */
		if (f->id != NULL)
			f->id = s + (f->id - copy);
		if (f->idem != NULL)
			f->idem = s + (f->idem - copy);
	}
	free(copy);
	return (rc);
}

#define DECODE(lit, f, out)	decode_n((lit), sizeof(lit) - 1, (f), (out))

static void
test_takes(void **state)
{
	struct ops_fast	 f;
	char		 out[256];

	(void)state;
	assert_int_equal(DECODE("{\"op\":\"put\",\"key\":\"bench/k/00000001\","
	    "\"value\":\"xxxx\"}", &f, out), 1);
	assert_string_equal(f.op, "put");
	assert_null(f.id);
	assert_int_equal(f.key_len, 16);
	assert_memory_equal(f.key, "bench/k/00000001", 16);
	assert_int_equal(f.value_len, 4);
	assert_string_equal(f.value, "xxxx");
	assert_int_equal(f.pc.kind, PRECOND_NONE);

	assert_int_equal(DECODE("{\"id\":42,\"op\":\"put\",\"key\":\"k\","
	    "\"value\":\"a\\\"b\\\\c\\/d\\n\",\"if_version\":7}\r", &f, out),
	    1);
	assert_int_equal(f.id_len, 2);
	assert_memory_equal(f.id, "42", 2);
	assert_string_equal(f.value, "a\"b\\c/d\n");
	assert_int_equal(f.value_len, 8);
	assert_int_equal(f.pc.kind, PRECOND_VERSION);
	assert_int_equal(f.pc.n, 7);

	assert_int_equal(DECODE(" { \"op\" : \"get\" ,\t\"key\":\"\xc3\xa9\","
	    "\"id\":\"r-1\" } ", &f, out), 1);
	assert_string_equal(f.op, "get");
	assert_int_equal(f.id_len, 5);
	assert_memory_equal(f.id, "\"r-1\"", 5);
	assert_int_equal(f.key_len, 2);

	assert_int_equal(DECODE("{\"op\":\"delete\",\"key\":\"k\","
	    "\"if_absent\":false,\"if_mod_rev\":0,\"id\":7}", &f, out), 1);
	assert_int_equal(f.pc.kind, PRECOND_MOD_REV);
	assert_int_equal(f.pc.n, 0);
	assert_memory_equal(f.id, "7", 1);

	assert_int_equal(DECODE("{\"op\":\"get\",\"key\":\"k\","
	    "\"consistency\":\"serializable\"}", &f, out), 1);
	assert_int_equal(f.serializable, 1);
	assert_int_equal(DECODE("{\"op\":\"get\",\"key\":\"k\","
	    "\"consistency\":\"linearizable\"}", &f, out), 1);
	assert_int_equal(f.serializable, 0);
	assert_int_equal(DECODE("{\"op\":\"put\",\"key\":\"k\",\"value\":\"\","
	    "\"lease\":9007199}", &f, out), 1);
	assert_int_equal(f.lease, 9007199);
	assert_int_equal(f.value_len, 0);
	assert_null(f.idem);

	assert_int_equal(DECODE("{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\","
	    "\"idem\":\"t-1\",\"id\":3}", &f, out), 1);
	assert_int_equal(f.idem_len, 3);
	assert_memory_equal(f.idem, "t-1", 3);
	assert_int_equal(DECODE("{\"idem\" : \"\xc3\xa9" T16 "\",\"op\":"
	    "\"delete\",\"key\":\"k\",\"if_version\":2}", &f, out), 1);
	assert_string_equal(f.op, "delete");
	assert_int_equal(f.idem_len, 18);
	assert_memory_equal(f.idem, "\xc3\xa9" T16, 18);
	assert_int_equal(DECODE("{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\","
	    "\"idem\":\"" T128 "\"}", &f, out), 1);
	assert_int_equal(f.idem_len, 128);
}

/* A put with a token as a connection decodes it: in its strs, named. */
static void
test_takes_idem(void **state)
{
	const char	 line[] = "{\"id\":\"r\",\"op\":\"put\",\"key\":\"k\","
			    "\"value\":\"v\",\"idem\":\"tok\"}";
	char		 why[256];
	struct req	*r;

	(void)state;
	r = ops_fast_cmp_req(&md, &rw, OPS_FAST_ROOM(sizeof line - 1));
	assert_int_equal(ops_fast(r, line, sizeof line - 1), 1);
	assert_int_equal(r->idem_len, 3);
	assert_string_equal(r->idem, "tok");
	assert_true(r->idem >= r->strs && r->idem + 4 <= r->strs +
	    OPS_FAST_ROOM(sizeof line - 1));
	assert_int_equal(r->idem_name_len, sizeof "uid:1000" + 3);
	assert_memory_equal(r->idem_name, "uid:1000\0tok",
	    sizeof "uid:1000" + 3);
	assert_int_equal(r->id_len, 3);
	assert_memory_equal(r->id, "\"r\"", 3);
	req_free(r);
	assert_int_equal(ops_fast_cmp(&md, &rw, line, sizeof line - 1, why,
	    sizeof why), 1);
	/* No records on the store, no identity: the general way's errors. */
	md.store = ops_fast_store(0);
	assert_int_equal(ops_fast_cmp(&md, &rw, line, sizeof line - 1, why,
	    sizeof why), 0);
	md.store = ops_fast_store(1);
	assert_int_equal(ops_fast_cmp(&md, &anon, line, sizeof line - 1, why,
	    sizeof why), 0);
	assert_int_equal(ops_fast_cmp(&md, &ro, line, sizeof line - 1, why,
	    sizeof why), 0);
}

/* A put's start, for lines that vary its other members. */
#define PUT_KV		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\","

static void
test_leaves(void **state)
{
	static const char *const lines[] = {
		/* not its shapes: the general decoder decides */
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"a\\u0000b\"}",
		"{\"op\":\"get\",\"key\":\"k\",\"key\":\"j\"}",
		"{\"op\":\"get\",\"key\":\"k\",\"rev\":3}",
		"{\"op\":\"get\",\"key\":\"k\",\"nope\":1}",
		"{\"op\":\"put\",\"key\":\"k\",\"value_b64\":\"eA==\"}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\",\"fence\":{}}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\",\"lease\":0}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\",\"lease\":null}",
		"{\"op\":\"delete\",\"key\":\"k\",\"lease\":1}",
		"{\"op\":\"get\",\"key\":\"k\",\"consistency\":\"Serializable\"}",
		"{\"op\":\"get\",\"key\":\"k\",\"consistency\":null}",
		"{\"op\":\"get\",\"key\":\"k\",\"consistency\":\"serial\\izable\"}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\","
		    "\"consistency\":\"serializable\"}",
		"{\"op\":\"list\",\"prefix\":\"k\"}",
		"{\"o\\u0070\":\"get\",\"key\":\"k\"}",
		"\xef\xbb\xbf{\"op\":\"get\",\"key\":\"k\"}",
		"{\"op\":\"get\",\"key\":\"k\",}",
		"{\"op\":\"get\",\"key\":\"k\"}x",
		"{\"op\":\"get\",\"key\":\"k\"}\n",
		"{\"op\":\"get\",\"key\":\"k\",\"id\":01}",
		/* an id that is neither a string nor an integer: refused */
		"{\"op\":\"get\",\"key\":\"k\",\"id\":null}",
		"{\"op\":\"get\",\"key\":\"k\",\"id\":true}",
		"{\"op\":\"get\",\"key\":\"k\",\"id\":1.0}",
		"{\"op\":\"get\",\"key\":\"k\",\"id\":123456789012345678901}",
		"{\"op\":\"get\",\"key\":\"k\",\"id\":\"a\\nb\"}",
		"{\"op\":\"get\",\"key\":\"k\",\"id\":[1]}",
		/* errors: the general decoder answers them */
		"{\"op\":\"get\",\"key\":\"\"}",
		"{\"op\":\"get\",\"key\":\"\xc3\"}",
		"{\"op\":\"get\",\"key\":\"\xc0\x80\"}",
		"{\"op\":\"get\",\"key\":5}",
		"{\"op\":\"get\"}",
		"{\"op\":\"put\",\"key\":\"k\"}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"01234567890123456\"}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\",\"if_absent\":true,"
		    "\"if_version\":1}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\",\"if_version\":-1}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\","
		    "\"if_version\":1000000000000000}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"v\",\"if_absent\":1}",
		"{\"op\":\"put\",\"key\":\"k\",\"value\":\"a\tb\"}",
		"{\"op\":\"get\",\"key\":\"k\"",
		"{\"op\":\"get\",\"key\":\"k\\",
		/* tokens: the general way, which takes some and refuses most */
		"{\"op\":\"get\",\"key\":\"k\",\"idem\":\"t\"}",
		PUT_KV "\"idem\":\"\"}",
		PUT_KV "\"idem\":\"" T129 "\"}",
		PUT_KV "\"idem\":5}",
		PUT_KV "\"idem\":null}",
		PUT_KV "\"idem\":true}",
		PUT_KV "\"idem\":[\"t\"]}",
		PUT_KV "\"idem\":\"a\\nb\"}",
		PUT_KV "\"idem\":\"\\u0074\"}",
		PUT_KV "\"idem\":\"\\u0000\"}",
		PUT_KV "\"idem\":\"\xc3\"}",
		PUT_KV "\"idem\":\"\xc0\x80\"}",
		PUT_KV "\"idem\":\"a\tb\"}",
		"{\"op\":\"delete\",\"key\":\"k\",\"idem\":\"t\","
		    "\"idem\":\"t\"}",
		"{\"op\":\"delete\",\"key\":\"k\",\"id\\u0065m\":\"t\"}",
		"{\"op\":\"delete\",\"key\":\"k\",\"idem\":\"t\",\"fence\":{}}",
	};
	struct ops_fast	 f;
	char		 out[256];
	size_t		 i;

	(void)state;
	for (i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		if (decode_n(lines[i], strlen(lines[i]), &f, out) != 0)
			fail_msg("ops_fast took %s", lines[i]);
	}
	/* A write on a read-only connection: read_only, by ops_decode. */
	{
		const char	 put[] = "{\"op\":\"put\",\"key\":\"k\","
			    "\"value\":\"v\"}";
		const char	 get[] = "{\"op\":\"get\",\"key\":\"k\"}";
		char		 why[256];

		assert_int_equal(ops_fast_cmp(&md, &ro, put, sizeof put - 1,
		    why, sizeof why), 0);
		assert_int_equal(ops_fast_cmp(&md, &ro, get, sizeof get - 1,
		    why, sizeof why), 1);
	}
}

/* A small PRNG, seeded: the same lines every run. */
static uint64_t	 rng = 0x9e3779b97f4a7c15ULL;

static size_t
pick(size_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((size_t)(rng % n));
}

#define PICK(a)	((a)[pick(sizeof (a) / sizeof (a)[0])])

static const char *const names[] = {
	"op", "id", "key", "value", "if_absent", "if_version", "if_mod_rev",
	"lease", "consistency", "idem", "fence", "rev", "value_b64", "ID",
	"key ", "k\\u0065y", "o\\u0070", "\xc3\xa9", "id\\u0065m", "idem "
};
#define NAMES_OURS	10	/* the first, ops_fast's */
static const char *const opv[] = {
	"\"get\"", "\"put\"", "\"delete\"", "\"get\"", "\"put\"",
	"\"list\"", "\"ge\\u0074\"", "\"GET\"", "1", "null", "\"put \"",
	"\"txn\""
};
static const char *const strv[] = {
	"\"a\"", "\"bench/k/00000001\"", "\"\"", "\"\\u0000a\"", "\"a\\nb\"",
	"\"\\\"q\\\\\"", "\"\xc3\xa9\"", "\"\xc3\"", "\"\xc0\x80\"",
	"\"x/y\\/z\"", "5", "null", "true", "\"a\tb\"",
	"\"\\ud83d\\ude00\"", "\"0123456789abcdef\"", "\"0123456789abcdefg\"",
	"\"0123456789abcde\\n\"", "\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"",
	"\"\xe2\x82\xac\"", "\"\xff\"", "\"\\x\"", "\"\x7f\"", "{}", "[]"
};
static const char *const consv[] = {
	"\"serializable\"", "\"linearizable\"", "\"Serializable\"", "\"\"",
	"\"serializable \"", "null", "1", "\"s\\u0065rializable\""
};
static const char *const boolv[] = {
	"true", "false", "null", "1", "\"true\"", "tru", "falsey"
};
static const char *const intv[] = {
	"0", "1", "3", "007", "-1", "-0", "1.0", "1e3", "999999999999999",
	"1000000000000000", "9007199254740991", "9007199254740993",
	"12345678901234567890", "123456789012345678901", "0x1", "+1",
	"Infinity", "nan", "-", "2", "null", "\"2\"",
	"1234567890123456789012345678901234567890123456789012345678901234",
	"123456789012345678901234567890123456789012345678901234567890123"
};
static const char *const idv[] = {
	"1", "42", "-7", "\"r\"", "\"\"", "\"a\\\"b\"", "\"\xc3\xa9\"",
	"\"\xc3\"", "true", "false", "null", "[1]", "{}", "1.5", "1e2",
	"18446744073709551616", "\"\\u0041\""
};
static const char *const idemv[] = {
	"\"t\"", "\"t-1\"", "\"" T16 "\"", "\"" T128 "\"", "\"" T129 "\"",
	"\"\"", "\"\xc3\xa9\"", "\"\xc3\"", "\"\xc0\x80\"", "\"\\u0000\"",
	"\"a\\nb\"", "\"\\u0074\"", "\"\\\"\"", "\"a\tb\"", "\"\x7f\"", "5",
	"null", "true", "false", "[]", "{}", "\"" T16 "\\/\""
};
static const char *const blank[] = {
	"", "", "", " ", "\t", "\r", "\n", "\x01", "  "
};
static const char *const tail[] = {
	"", "", "", " ", "\r", "\t\r", "\r\n", "x", ",", "}", "\x01"
};

/* Mostly no blank. */
static const char *
blanks(void)
{
	return (pick(4) == 0 ? PICK(blank) : "");
}

static void
add_member(struct buf *b, const char *name, const char *value)
{
	buf_addstr(b, blanks());
	buf_printf(b, "\"%s\"", name);
	buf_addstr(b, blanks());
	buf_addc(b, ':');
	buf_addstr(b, blanks());
	buf_addstr(b, value);
	buf_addstr(b, blanks());
}

static const char *
value_for(const char *name)
{
	if (strcmp(name, "op") == 0)
		return (PICK(opv));
	if (strcmp(name, "id") == 0)
		return (PICK(idv));
	if (strcmp(name, "if_absent") == 0)
		return (PICK(boolv));
	if (strcmp(name, "consistency") == 0)
		return (PICK(consv));
	if (strcmp(name, "idem") == 0)
		return (PICK(idemv));
	if (strncmp(name, "if_", 3) == 0 || strcmp(name, "lease") == 0 ||
	    strcmp(name, "rev") == 0)
		return (PICK(intv));
	return (PICK(strv));
}

/* Half the lines of our shapes (an op, its members), the rest any. */
static const char *
member_name(size_t i, int shaped)
{
	static const char *const get[] = { "op", "key", "id",
	    "consistency" };
	static const char *const put[] = { "op", "key", "value", "id",
	    "if_absent", "if_version", "if_mod_rev", "lease" };
	static const char *const del[] = { "op", "key", "id", "if_absent",
	    "if_version", "if_mod_rev" };

	if (shaped == 1 && i < 4 && pick(16) != 0)
		return (get[i]);
	if (shaped == 2 && i < 8 && pick(16) != 0)
		return (put[i]);
	if (shaped == 3 && i < 6 && pick(16) != 0)
		return (del[i]);
	if (i == 0 && pick(8) != 0)
		return ("op");
	if (i == 1 && pick(8) != 0)
		return ("key");
	return (pick(3) != 0 ? names[pick(NAMES_OURS)] : PICK(names));
}

static const char *
shaped_value(const char *name, int shaped)
{
	static const char *const ops[] = { "\"get\"", "\"put\"",
	    "\"delete\"" };
	static const char *const strs[] = { "\"a\"", "\"bench/k/0001\"",
	    "\"\xc3\xa9\\n\"", "\"x\\\"y\"", "\"\\/\"" };
	static const char *const toks[] = { "\"t\"", "\"b1946ac9-2f\"",
	    "\"\xc3\xa9\"", "\"" T128 "\"" };

	if (pick(8) == 0)
		return (value_for(name));
	if (strcmp(name, "op") == 0)
		return (ops[shaped - 1]);
	if (strcmp(name, "key") == 0 || strcmp(name, "value") == 0)
		return (PICK(strs));
	if (strcmp(name, "if_absent") == 0)
		return (pick(2) ? "true" : "false");
	if (strncmp(name, "if_", 3) == 0 || strcmp(name, "lease") == 0)
		return (pick(2) ? "5" : "0");
	if (strcmp(name, "consistency") == 0)
		return (pick(2) ? "\"serializable\"" : "\"linearizable\"");
	if (strcmp(name, "idem") == 0)
		return (PICK(toks));
	return (value_for(name));
}

static void
make_line(struct buf *b)
{
	static const char	 bytes[] = "{}[]\":,\\ /bfnrtu0123456789-+.eE"
				    "\t\r\n\x01\xc0\x80\xc3\xa9\xff" "aqkv";
	const char		*name;
	size_t			 i, j, n, at, idem_at;
	int			 shaped = pick(2) ? 1 + (int)pick(3) : 0;

	buf_reset(b);
	buf_addstr(b, PICK(blank));
	buf_addc(b, '{');
	n = shaped == 1 ? 2 + pick(3) : shaped ? 2 + pick(5) : 1 + pick(5);
	/* half the puts and deletes with a token, anywhere among them */
	idem_at = shaped >= 2 && pick(2) ? pick(n + 1) : SIZE_MAX;
	for (i = j = 0; i < n + (idem_at <= n); i++) {
		if (i > 0)
			buf_addc(b, ',');
		name = i == idem_at ? "idem" : member_name(j++, shaped);
		add_member(b, name, shaped ? shaped_value(name, shaped) :
		    value_for(name));
	}
	buf_addc(b, '}');
	buf_addstr(b, pick(4) == 0 ? PICK(tail) : "");
	for (n = pick(4) == 0 ? 1 + pick(3) : 0; n > 0 && b->len > 0; n--) {
		at = pick(b->len);
		switch (pick(3)) {
		case 0:
			b->data[at] = bytes[pick(sizeof bytes - 1)];
			break;
		case 1:
			memmove(b->data + at, b->data + at + 1,
			    b->len - at - 1);
			b->len--;
			break;
		default:
			buf_addc(b, ' ');
			memmove(b->data + at + 1, b->data + at,
			    b->len - at - 1);
			b->data[at] = bytes[pick(sizeof bytes - 1)];
			break;
		}
	}
}

static void
test_agrees(void **state)
{
	struct buf	 b;
	char		 why[512], *copy;
	size_t		 i, taken = 0, gets = 0, ro_taken = 0, idems = 0;
	int		 rc;

	(void)state;
	buf_init(&b);
	for (i = 0; i < 500000; i++) {
		make_line(&b);
		copy = xmalloc(b.len + 1);
		memcpy(copy, b.data, b.len);
		/* an eighth without records of tokens, one without identity */
		md.store = ops_fast_store(i % 8 != 5);
		rc = ops_fast_cmp(&md, i % 4 == 3 ? &ro : i % 8 == 1 ? &anon :
		    &rw, copy, b.len, why, sizeof why);
		if (rc == -1)
			fail_msg("%s: %.*s", why, (int)b.len, b.data);
		if (rc == 1 && i % 4 == 3)
			ro_taken++;
		else if (rc == 1)
			taken++;
		if (rc == 1 && strstr(buf_cstr(&b), "\"get\"") != NULL)
			gets++;
		if (rc == 1 && strstr(buf_cstr(&b), "\"idem\"") != NULL)
			idems++;
		free(copy);
	}
	md.store = ops_fast_store(1);
	buf_free(&b);
	/* The comparison means something only if many lines were taken. */
	print_message("taken %zu of %d (gets %zu, read-only %zu, with a "
	    "token %zu)\n", taken + ro_taken, 500000, gets, ro_taken, idems);
	assert_true(taken > 5000);
	assert_true(gets > 1000);
	assert_true(ro_taken > 100);
	assert_true(idems > 1000);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_takes),
		cmocka_unit_test(test_takes_idem),
		cmocka_unit_test(test_leaves),
		cmocka_unit_test(test_agrees),
	};

	return (cmocka_run_group_tests(tests, setup, NULL));
}
