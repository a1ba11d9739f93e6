/*
 * Unit tests of the etcd backend (daemon/store_etcd.c) against a live etcd:
 * the one at $METAD_TEST_ETCD (tests/bats/etcd_values.bats runs this binary
 * in the etcd pass); without it the plan is "1..0 # SKIP".  Nothing is
 * committed: each test works inside a batch it rolls back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "util.h"

struct got {
	size_t		 len;
	unsigned char	*value;
};

static int
got_cb(const struct store_kv *kv, void *arg)
{
	struct got	*g = arg;

	g->len = kv->value_len;
	g->value = xmemdup(kv->value, kv->value_len);
	return (0);
}

static void
fill(unsigned char *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		v[i] = (unsigned char)(0xff - i);
}

/*
 * A put copies exactly the value's bytes: each value is a heap block of its
 * own length, freed right after the put, so reading past its end (or
 * keeping it) is an AddressSanitizer report.
 */
static void
test_put_value_lengths(void **state)
{
	const char		*url = getenv("METAD_TEST_ETCD");
	struct store_options	 o;
	struct store_err	 err;
	struct store		*s;
	struct got		 g;
	char			 spec[256], prefix[64], key[16];
	unsigned char		*v, want[64];
	size_t			 n;

	(void)state;
	memset(&o, 0, sizeof o);
	snprintf(prefix, sizeof prefix, "metad-unit/%ld/", (long)getpid());
	o.prefix = prefix;
	snprintf(spec, sizeof spec, "etcd:%s", url);
	if ((s = store_open(spec, &o, &err)) == NULL)
		fail_msg("store_open %s: %s", spec, err.msg);
	assert_int_equal(store_begin(s, &err), 0);
	for (n = 1; n <= sizeof want; n++) {
		snprintf(key, sizeof key, "v/%zu", n);
		v = xmalloc(n);
		fill(v, n);
		if (store_put(s, s->base_rev + 1, (uint32_t)n, key, strlen(key),
		    v, n, NULL, NULL, &err) != 0)
			fail_msg("put %s: %s", key, err.msg);
		free(v);
		memset(&g, 0, sizeof g);
		assert_int_equal(store_get(s, key, strlen(key), got_cb, &g,
		    &err), 1);
		fill(want, n);
		assert_int_equal(g.len, n);
		assert_memory_equal(g.value, want, n);
		free(g.value);
	}
	store_rollback(s);
	store_close(s);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_value_lengths),
	};

	if (getenv("METAD_TEST_ETCD") == NULL) {
		printf("1..0 # SKIP METAD_TEST_ETCD is not set (the etcd pass "
		    "sets it: tests/bats/etcd_values.bats)\n");
		return (0);
	}
	return (cmocka_run_group_tests(tests, NULL, NULL));
}
