/*
 * Unit tests of the skip list the memory store and the etcd view share
 * (daemon/store/skiplist.h, skiplist.c): the key order, the level draw,
 * seek/find/insert/unlink, and a randomized run checked against a sorted
 * array.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/skiplist.h"

struct tnode {
	int		 val;
	char		*key;
	size_t		 key_len;
	int		 level;
	struct tnode	*next[];
};

SL_HEAD(tlist, tnode);
SL_GENERATE(tlist, tnode)

static int	 nfreed;

static void
tnode_free(struct tnode *n)
{
	nfreed++;
	free(n);
}

static struct tnode *
tput(struct tlist *l, const char *k, size_t len, int val)
{
	struct tnode	*update[SL_LEVEL_MAX], *n;

	if ((n = tlist_find(l, k, len, update)) == NULL) {
		n = tlist_node_new(l, k, len);
		tlist_insert(l, n, update);
	}
	n->val = val;
	return (n);
}

static void
test_cmp(void **state)
{
	(void)state;
	assert_int_equal(sl_cmp("", 0, "", 0), 0);
	assert_true(sl_cmp("", 0, "a", 1) < 0);
	assert_true(sl_cmp("a", 1, "", 0) > 0);
	assert_true(sl_cmp("ab", 2, "abc", 3) < 0);	/* prefix first */
	assert_true(sl_cmp("abc", 3, "ab", 2) > 0);
	assert_true(sl_cmp("abc", 3, "abd", 3) < 0);
	assert_int_equal(sl_cmp("abc", 3, "abc", 3), 0);
	/* Bytewise, unsigned: 0xff after 0x01; NUL is a byte like others. */
	assert_true(sl_cmp("\xff", 1, "\x01", 1) > 0);
	assert_true(sl_cmp("a", 1, "a\0", 2) < 0);
	assert_true(sl_cmp("a\0b", 3, "a\0c", 3) < 0);
	assert_true(sl_cmp("b", 1, "a\xff\xff", 3) > 0);
}

static void
test_random_level(void **state)
{
	uint64_t	 a = SL_RNG_SEED, b = SL_RNG_SEED;
	int		 count[SL_LEVEL_MAX + 1] = { 0 };
	int		 i, lv;

	(void)state;
	for (i = 0; i < 100000; i++) {
		lv = sl_random_level(&a);
		assert_true(lv >= 1 && lv <= SL_LEVEL_MAX);
		assert_int_equal(lv, sl_random_level(&b));	/* per state */
		count[lv]++;
	}
	/* p = 1/4: about 75000, 18750, 4690 (wide bounds). */
	assert_true(count[1] > 73000 && count[1] < 77000);
	assert_true(count[2] > 17000 && count[2] < 20500);
	assert_true(count[3] > 4000 && count[3] < 5400);
	assert_true(count[1] + count[2] + count[3] < 100000);
}

static void
test_basic(void **state)
{
	struct tlist	 l;
	struct tnode	*n;

	(void)state;
	tlist_init(&l);
	assert_null(tlist_first(&l));
	assert_null(tlist_find(&l, "a", 1, NULL));
	assert_null(tlist_seek(&l, "", 0, 0, NULL));
	tput(&l, "b", 1, 2);
	tput(&l, "a", 1, 1);
	tput(&l, "ab", 2, 3);
	tput(&l, "", 0, 0);
	tput(&l, "a", 1, 10);				/* replaced */
	n = tlist_first(&l);
	assert_int_equal(n->key_len, 0);
	n = n->next[0];
	assert_string_equal(n->key, "a");
	assert_int_equal(n->val, 10);
	assert_string_equal(n->next[0]->key, "ab");
	assert_string_equal(n->next[0]->next[0]->key, "b");
	assert_null(n->next[0]->next[0]->next[0]);
	/* seek: >= and > */
	assert_string_equal(tlist_seek(&l, "a", 1, 0, NULL)->key, "a");
	assert_string_equal(tlist_seek(&l, "a", 1, 1, NULL)->key, "ab");
	assert_string_equal(tlist_seek(&l, "aa", 2, 0, NULL)->key, "ab");
	assert_null(tlist_seek(&l, "b", 1, 1, NULL));
	assert_null(tlist_find(&l, "aa", 2, NULL));
	/* unlink */
	n = tlist_find(&l, "ab", 2, NULL);
	tlist_unlink(&l, n);
	assert_null(tlist_find(&l, "ab", 2, NULL));
	assert_string_equal(tlist_seek(&l, "a", 1, 1, NULL)->key, "b");
	tlist_link(&l, n);				/* back */
	assert_ptr_equal(tlist_find(&l, "ab", 2, NULL), n);
	nfreed = 0;
	tlist_clear(&l, tnode_free);
	assert_int_equal(nfreed, 4);
	assert_null(tlist_first(&l));
	assert_int_equal(l.level, 1);
	tput(&l, "z", 1, 0);
	nfreed = 0;
	tlist_free(&l, tnode_free);
	assert_int_equal(nfreed, 1);
	assert_null(l.head);
}

/* The model: a sorted array of keys (short, over a 3-letter alphabet). */
struct mkey {
	char	 k[4];
	size_t	 len;
};

static int
mkey_cmp(const void *a, const void *b)
{
	const struct mkey	*x = a, *y = b;

	return (sl_cmp(x->k, x->len, y->k, y->len));
}

static void
rand_key(struct mkey *k, unsigned *seed)
{
	static const char	 abc[] = { 'a', '\0', '\xff' };
	size_t			 i;

	k->len = (size_t)rand_r(seed) % 4;		/* 0..3 */
	for (i = 0; i < k->len; i++)
		k->k[i] = abc[rand_r(seed) % 3];
}

/* Every level is sorted and a sublist of the one below; level 0 = model. */
static void
check_list(struct tlist *l, const struct mkey *m, size_t nm)
{
	struct tnode	*n, *lo;
	size_t		 i = 0;
	int		 lv;

	for (n = tlist_first(l); n != NULL; n = n->next[0], i++) {
		assert_true(i < nm);
		assert_int_equal(sl_cmp(n->key, n->key_len, m[i].k, m[i].len),
		    0);
		assert_int_equal(n->key[n->key_len], '\0');
	}
	assert_int_equal(i, nm);
	for (lv = 1; lv < l->level; lv++) {
		lo = l->head->next[lv - 1];
		for (n = l->head->next[lv]; n != NULL; n = n->next[lv]) {
			assert_true(n->level > lv);
			while (lo != n) {
				assert_non_null(lo);
				lo = lo->next[lv - 1];
			}
			if (n->next[lv] != NULL)
				assert_true(sl_cmp(n->key, n->key_len,
				    n->next[lv]->key, n->next[lv]->key_len) <
				    0);
		}
	}
}

static void
test_random_vs_array(void **state)
{
	struct tlist	 l;
	struct mkey	 m[64], k;
	struct tnode	*n, *update[SL_LEVEL_MAX];
	size_t		 nm = 0, i, j;
	unsigned	 seed = 12345;
	int		 op, c;

	(void)state;
	tlist_init(&l);
	for (op = 0; op < 20000; op++) {
		rand_key(&k, &seed);
		for (j = 0; j < nm && mkey_cmp(&m[j], &k) < 0; j++)
			;				/* lower bound */
		c = j < nm && mkey_cmp(&m[j], &k) == 0;
		switch (rand_r(&seed) % 4) {
		case 0:
		case 1:					/* put */
			n = tput(&l, k.k, k.len, op);
			assert_int_equal(n->val, op);
			if (!c) {
				memmove(&m[j + 1], &m[j], (nm - j) * sizeof m[0]);
				m[j] = k;
				nm++;
			}
			break;
		case 2:					/* delete */
			n = tlist_find(&l, k.k, k.len, update);
			assert_int_equal(n != NULL, c);
			if (n != NULL) {
				if (rand_r(&seed) % 2)
					tlist_remove(n, update);
				else
					tlist_unlink(&l, n);
				free(n);
				memmove(&m[j], &m[j + 1],
				    (nm - j - 1) * sizeof m[0]);
				nm--;
			}
			break;
		default:				/* seek */
			n = tlist_seek(&l, k.k, k.len, 0, NULL);
			if (j == nm)
				assert_null(n);
			else
				assert_int_equal(sl_cmp(n->key, n->key_len,
				    m[j].k, m[j].len), 0);
			i = j + (size_t)c;		/* strict */
			n = tlist_seek(&l, k.k, k.len, 1, NULL);
			if (i == nm)
				assert_null(n);
			else
				assert_int_equal(sl_cmp(n->key, n->key_len,
				    m[i].k, m[i].len), 0);
			break;
		}
		if (op % 97 == 0)
			check_list(&l, m, nm);
	}
	check_list(&l, m, nm);
	/* The model stayed sorted: qsort by sl_cmp changes nothing. */
	qsort(m, nm, sizeof m[0], mkey_cmp);
	check_list(&l, m, nm);
	assert_true(nm > 10);
	tlist_free(&l, tnode_free);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		cmocka_unit_test(test_cmp),
		cmocka_unit_test(test_random_level),
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_random_vs_array),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
