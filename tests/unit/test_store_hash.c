/*
 * The keyed hash of the tables a client fills (daemon/store/store_hash.h):
 * keys crafted to collide under FNV-1a (bench/crafted.c), which all fall in
 * one slot of an unkeyed table, spread over a keyed one like random keys;
 * and the hash depends on the key drawn at start.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "crafted.h"
#include "store/store_hash.h"

#define SLOTS		4096
#define NKEYS		4096

/* The most keys of k in one of SLOTS slots by the hash's low bits. */
static unsigned
busiest_slot(char **k, int keyed)
{
	static unsigned	 n[SLOTS];
	unsigned	 most = 0;
	uint64_t	 h;
	size_t		 i;

	memset(n, 0, sizeof n);
	for (i = 0; k[i] != NULL; i++) {
		h = keyed ? store_hash_bytes(k[i], strlen(k[i])) :
		    crafted_fnv1a(k[i], strlen(k[i]));
		if (++n[h % SLOTS] > most)
			most = n[h % SLOTS];
	}
	return (most);
}

static void
test_crafted_spread(void **state)
{
	char	**k = crafted_keys("bench/k/", NKEYS);

	(void)state;
	/* The attack works on FNV-1a: every key in one slot. */
	assert_int_equal(busiest_slot(k, 0), NKEYS);
	/* Not on the keyed hash, before or after a key is drawn: one key a
	 * slot on average, and never a dozen (Poisson: p < 1e-8 a slot). */
	assert_true(busiest_slot(k, 1) < 12);
	assert_int_equal(store_hash_init(), 0);
	assert_true(busiest_slot(k, 1) < 12);
	crafted_free(k);
}

static void
test_keyed(void **state)
{
	uint64_t	 a, b;

	(void)state;
	a = store_hash_bytes("k", 1);
	assert_true(store_hash_bytes("k", 1) == a);
	assert_true(store_hash_bytes("j", 1) != a);
	assert_int_equal(store_hash_init(), 0);
	b = store_hash_bytes("k", 1);
	/* Another key, another hash (equal with probability 2^-64). */
	assert_true(b != a);
	assert_true(store_hash_u64(7) != store_hash_u64(8));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_crafted_spread),
		cmocka_unit_test(test_keyed),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
