/*
 * Unit tests of a replica's load (store_forward.h, store_put_as(): the
 * metad backend's view, store/remote/): a memory store loaded with the
 * keys of another as of its compact rev C, compacted at C, then given the
 * other's history from C + 1 rev by rev, reads as the other at every rev
 * from C on, and its history from C + 1 is the other's.  And what
 * store_put_as() refuses.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fx.h"
#include "store/store_forward.h"

static struct fx	 fx_mem = { .kind = "memory" };

/* 1 a=1, 2 b=1, 3 a=2, 4 del b, 5 c=1 d=1, 6 b=2 (again), 7 a=3 del c. */
static void
replica_fill(struct fx *f)
{
	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	fx_put1(f, "a", "2");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 4, 0, S("b")), 1);
	fx_commit(f, 4);
	fx_begin(f, "c", "d");
	fx_put(f, 5, 0, S("c"), S("1"));
	fx_put(f, 5, 1, S("d"), S("1"));
	fx_commit(f, 5);
	fx_put1(f, "b", "2");
	fx_begin(f, "a", "c");
	fx_put(f, 7, 0, S("a"), S("3"));
	assert_int_equal(fx_del(f, 7, 1, S("c")), 1);
	fx_commit(f, 7);
}

static void
replica_read_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct store_kvbuf	*b = arg;
	long			 i;

	assert_null(se);
	assert_false(more);
	for (i = 0; i < n; i++)
		store_kvbuf_add(&kvs[i], b);
}

static void
replica_history_done(void *arg, long n, const struct store_event *evs,
    int more, const struct store_err *se)
{
	struct store_evbuf	*b = arg;
	long			 i;

	assert_null(se);
	assert_false(more);
	for (i = 0; i < n; i++)
		store_evbuf_add(b, &evs[i]);
}

static int
replica_cmp(const void *x, const void *y)
{
	const struct store_kv	*a = x, *b = y;

	return (a->mod_rev < b->mod_rev ? -1 : a->mod_rev > b->mod_rev);
}

/* g, made a replica of f as of rev c, then given f's history after c. */
static void
replica_make(struct fx *f, struct fx *g, uint64_t c)
{
	struct store_kvbuf	 kvs;
	struct store_evbuf	 evs;
	struct store_range	 rg;
	struct store_err	 err;
	size_t			 i, j;

	memset(&kvs, 0, sizeof kvs);
	memset(&evs, 0, sizeof evs);
	memset(&rg, 0, sizeof rg);
	rg.prefix = "";
	rg.limit = 100;
	rg.rev = c;
	store_read_range(f->s, &rg, replica_read_done, &kvs);
	qsort(kvs.v, kvs.n, sizeof *kvs.v, replica_cmp);
	fx_begin(g, NULL);
	for (i = 0; i < kvs.n; i++)
		assert_int_equal(store_put_as(g->s, c, &kvs.v[i], &err), 0);
	assert_int_equal(fx_compact(g, c, &err), 0);
	fx_commit(g, c);
	store_kvbuf_free(&kvs);

	store_read_history(f->s, c + 1, 100, replica_history_done, &evs);
	for (i = 0; i < evs.n; i = j) {
		fx_begin(g, NULL);
		for (j = i; j < evs.n && evs.v[j].rev == evs.v[i].rev; j++) {
			if (evs.v[j].type == STORE_EVENT_PUT)
				fx_put(g, evs.v[j].rev, evs.v[j].seq,
				    evs.v[j].kv.key, evs.v[j].kv.key_len,
				    (const char *)evs.v[j].kv.value,
				    evs.v[j].kv.value_len);
			else
				assert_int_equal(fx_del(g, evs.v[j].rev,
				    evs.v[j].seq, evs.v[j].kv.key,
				    evs.v[j].kv.key_len), 1);
		}
		fx_commit(g, evs.v[i].rev);
	}
	store_evbuf_free(&evs);
}

static void
test_replica_reads_as_its_source(void **state)
{
	static const char *const keys[] = { "a", "b", "c", "d" };
	struct fx		*f = *state;
	static struct fx	 gx = { .kind = "memory" };
	void			*gs = &gx;
	struct fx		*g = &gx;
	struct store_err	 err;
	char			*want;
	uint64_t		 r;
	size_t			 k;

	replica_fill(f);
	assert_int_equal(fx_compact(f, 3, &err), 0);
	assert_int_equal(fx_setup(&gs), 0);
	/* The replica's load announces nothing: its owner keeps quiet
	 * (store_remote_load.c), and so the fixture's checker. */
	g->s->opts.notify = NULL;
	replica_make(f, g, 3);
	assert_int_equal(fx_rev(g), 7);
	for (r = 3; r <= 7; r++) {
		for (k = 0; k < 4; k++) {
			want = xstrdup(fx_get_at(f, keys[k], 1, r));
			assert_string_equal(fx_get_at(g, keys[k], 1, r), want);
			free(want);
		}
	}
	/* a's version, create_rev and mod_rev came over as they were. */
	assert_string_equal(fx_get_at(g, S("a"), 3), "a@2/1/3=2");
	assert_string_equal(fx_get_at(g, S("a"), 7), "a@3/1/7=3");
	assert_string_equal(fx_get_at(g, S("b"), 6), "b@1/6/6=2");
	want = xstrdup(fx_history(f, 4));
	assert_string_equal(fx_history(g, 4), want);
	free(want);
	/* Below the load: compacted, as on the source. */
	assert_int_equal(fx_get_at_err(g, S("a"), 2, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	fx_teardown(&gs);
}

static void
test_replica_put_as_refuses(void **state)
{
	struct fx		*f = *state;
	struct store_kv		 kv;
	struct store_err	 err;

	memset(&kv, 0, sizeof kv);
	kv.key = "k";
	kv.key_len = 1;
	kv.value = (const unsigned char *)"v";
	kv.value_len = 1;
	kv.version = 2;
	kv.create_rev = 1;
	kv.mod_rev = 4;
	/* Outside a batch. */
	assert_int_equal(store_put_as(f->s, 5, &kv, &err), -1);
	fx_begin(f, NULL);
	/* A mod_rev above the load's rev; a version 0. */
	assert_int_equal(store_put_as(f->s, 3, &kv, &err), -1);
	kv.version = 0;
	assert_int_equal(store_put_as(f->s, 5, &kv, &err), -1);
	kv.version = 2;
	assert_int_equal(store_put_as(f->s, 5, &kv, &err), 0);
	/* The same key twice. */
	assert_int_equal(store_put_as(f->s, 5, &kv, &err), -1);
	fx_commit(f, 5);
	assert_string_equal(fx_get(f, S("k")), "k@2/1/4=v");
}

/*
 * The tokens a forwarding store sends: this process's each sort after the
 * last (the records of the daemon used take them at their end) and are
 * never repeated; a client's is the same for the same name, another's
 * for another.
 */
static void
test_forward_tokens(void **state)
{
	char	 a[STORE_FORWARD_TOKEN_MAX], b[STORE_FORWARD_TOKEN_MAX];
	char	 c[STORE_FORWARD_TOKEN_MAX];
	int	 i;

	(void)state;
	store_forward_token(a, NULL, 0);
	assert_int_equal(a[0], 'p');
	assert_int_equal(strlen(a), 50);
	for (i = 0; i < 300; i++) {	/* past a digit's carry, twice */
		store_forward_token(b, NULL, 0);
		assert_int_equal(strlen(b), strlen(a));
		assert_true(strcmp(a, b) < 0);
		assert_memory_equal(a, b, 34);	/* one process's */
		memcpy(a, b, sizeof a);
	}
	store_forward_token(b, "uid\0t", 5);
	store_forward_token(c, "uid\0t", 5);
	assert_int_equal(b[0], 'c');
	assert_int_equal(strlen(b), 65);
	assert_string_equal(b, c);
	store_forward_token(c, "uid\0u", 5);
	assert_string_not_equal(b, c);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_prestate_setup_teardown(
		    test_replica_reads_as_its_source, fx_setup, fx_teardown,
		    &fx_mem),
		cmocka_unit_test_prestate_setup_teardown(
		    test_replica_put_as_refuses, fx_setup, fx_teardown,
		    &fx_mem),
		cmocka_unit_test(test_forward_tokens),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
