/*
 * The intrusive id table (common/u64map.h): every element added is found
 * through every doubling, removed ones are not, iteration sees each element
 * once (also when it frees them as it goes), and a hash that sends every id
 * to one bucket still gives right answers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "u64map.h"
#include "util.h"

struct elem {
	int		 seen;
	uint64_t	 id;
	struct elem	*next;
};

static uint64_t
mix(uint64_t id)
{
	return (id * UINT64_C(0x9e3779b97f4a7c15));
}

static uint64_t
one_bucket(uint64_t id)
{
	(void)id;
	return (7);
}

static void
fill(struct u64map *m, struct elem *v, size_t n, uint64_t (*hash)(uint64_t))
{
	size_t	 i;

	u64map_init(m, offsetof(struct elem, id), offsetof(struct elem, next),
	    hash);
	for (i = 0; i < n; i++) {
		v[i].id = (i + 1) * 1000003;
		v[i].seen = 0;
		u64map_add(m, &v[i]);
	}
}

static void
check_table(uint64_t (*hash)(uint64_t), size_t n)
{
	struct u64map	 m;
	struct elem	*v = xcalloc(n, sizeof *v), *e = NULL;
	size_t		 i, b = 0, count = 0;

	fill(&m, v, n, hash);
	assert_int_equal(m.n, n);
	assert_true(m.nbuckets >= n);
	for (i = 0; i < n; i++)
		assert_ptr_equal(u64map_find(&m, v[i].id), &v[i]);
	assert_null(u64map_find(&m, 5));
	for (i = 0; i < n; i += 2)
		assert_int_equal(u64map_del(&m, &v[i]), 0);
	assert_int_equal(u64map_del(&m, &v[0]), -1);
	assert_int_equal(m.n, n / 2);
	for (i = 0; i < n; i++)
		assert_ptr_equal(u64map_find(&m, v[i].id),
		    i % 2 == 0 ? NULL : &v[i]);
	while ((e = u64map_next(&m, &b, e)) != NULL) {
		e->seen++;
		count++;
	}
	assert_int_equal(count, n / 2);
	for (i = 0; i < n; i++)
		assert_int_equal(v[i].seen, i % 2);
	u64map_free(&m);
	free(v);
}

static void
test_spread(void **state)
{
	(void)state;
	check_table(mix, 5000);
}

static void
test_one_bucket(void **state)
{
	(void)state;
	check_table(one_bucket, 300);
}

/* Freeing each element after the call that passed it, as the owners do. */
static void
test_free_while_walking(void **state)
{
	struct u64map	 m;
	struct elem	*e, *next;
	size_t		 i, b = 0, freed = 0;

	(void)state;
	u64map_init(&m, offsetof(struct elem, id), offsetof(struct elem, next),
	    mix);
	for (i = 0; i < 1000; i++) {
		e = xcalloc(1, sizeof *e);
		e->id = i;
		u64map_add(&m, e);
	}
	for (e = u64map_next(&m, &b, NULL); e != NULL; e = next) {
		next = u64map_next(&m, &b, e);
		free(e);
		freed++;
	}
	assert_int_equal(freed, 1000);
	u64map_free(&m);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spread),
		cmocka_unit_test(test_one_bucket),
		cmocka_unit_test(test_free_while_walking),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
