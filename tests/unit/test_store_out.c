/*
 * Batches out at once (store.h: backend->batches_out), on a store that
 * takes more than one (etcd; METAD_TEST_ETCD, as test_store.c): begun
 * together, each opens alone in its callback, is committed there, and
 * lands at a revision of its own; a blind key is not read at begin, and
 * its commit has the batch answered again with what the key held.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "store_fx.h"

static struct fx	 fx_etcd = { .kind = "etcd" };

/* One batch of one put, begun and committed through callbacks. */
struct out_batch {
	struct fx		*f;
	const char		*key;
	int			 blind;
	int			 open_alone;	/* no other was open */
	int			 failed;
	uint64_t		 landed;	/* commit_rev, absolute */
	uint64_t		 put_version;	/* as the first apply saw it */
	int			*ended;		/* counts the ends */
	int			*all;		/* set at the last */
	int			 of;
	int			 compact;	/* up to its own write */
};

static void
out_end(struct out_batch *b)
{
	if (++*b->ended == b->of)
		*b->all = 1;
}

static void
out_committed(void *arg, const struct store_err *err)
{
	struct out_batch	*b = arg;

	if (err != NULL)
		b->failed = 1;
	else
		b->landed = store_commit_rev(b->f->s);
	out_end(b);
}

static void
out_begun(void *arg, const struct store_err *err)
{
	struct out_batch	*b = arg;
	struct store		*s = b->f->s;
	struct store_err	 e2;
	struct store_kv		 meta;
	uint64_t		 prev;

	if (err != NULL) {
		b->failed = 1;
		out_end(b);
		return;
	}
	b->open_alone = s->in_batch;
	if (store_put(s, store_base_rev(s) + 1, 0, b->key, strlen(b->key), "v",
	    1, &meta, &prev, &e2) != 0) {
		b->failed = 1;
		store_rollback(s);
		out_end(b);
		return;
	}
	b->put_version = meta.version;
	if (b->compact && store_compact(s, store_base_rev(s) + 1, &e2) != 0) {
		b->failed = 1;
		store_rollback(s);
		out_end(b);
		return;
	}
	store_commit(s, store_base_rev(s) + 1, out_committed, b);
}

static void
out_begin(struct out_batch *b)
{
	struct store_keys	 ks;

	ks.n = 0;
	ks.rkey = NULL;
	store_keys_add_as(&ks, b->key, strlen(b->key), b->blind);
	store_begin(b->f->s, &ks, out_begun, b);
}

static void
test_out_together(void **state)
{
	struct fx		*f = *state;
	static const char	*keys[] = { "a", "b", "c", "d" };
	struct out_batch	 b[4];
	int			 ended = 0, all = 0, i, j;

	assert_true(store_batches_out(f->s) >= 4);
	memset(b, 0, sizeof b);
	for (i = 0; i < 4; i++) {
		b[i].f = f;
		b[i].key = keys[i];
		b[i].ended = &ended;
		b[i].all = &all;
		b[i].of = 4;
		out_begin(&b[i]);
	}
	/* All four were begun before any opened. */
	assert_int_equal(ended, 0);
	assert_int_equal(f->s->out, 4);
	fx_wait(f, &all);
	for (i = 0; i < 4; i++) {
		assert_false(b[i].failed);
		assert_true(b[i].open_alone);
		assert_int_equal(b[i].put_version, 1);
		for (j = 0; j < i; j++)
			assert_true(b[i].landed != b[j].landed);
	}
	assert_int_equal(f->s->out, 0);
	for (i = 0; i < 4; i++) {
		if (b[i].landed > store_rev(f->s))
			fx_wait_rev(f, b[i].landed - f->r0);
	}
	/* Each key at version 1, at the revision its batch landed at. */
	for (i = 0; i < 4; i++) {
		char	 want[64];

		snprintf(want, sizeof want, "%s@1/%" PRIu64 "/%" PRIu64 "=v",
		    keys[i], b[i].landed - f->r0, b[i].landed - f->r0);
		assert_string_equal(fx_get(f, keys[i], 1), want);
	}
}

static void
test_out_blind(void **state)
{
	struct fx		*f = *state;
	struct out_batch	 b;
	struct store_err	 err;
	struct store_kv		 kv;
	int			 ended = 0, all = 0;

	memset(&b, 0, sizeof b);
	b.f = f;
	b.key = "k";
	b.ended = &ended;
	b.all = &all;
	b.of = 1;
	out_begin(&b);
	fx_wait(f, &all);
	assert_false(b.failed);
	/* Again, blind: the first apply guesses absent, etcd knows better. */
	memset(&b, 0, sizeof b);
	b.f = f;
	b.key = "k";
	b.blind = 1;
	ended = all = 0;
	b.ended = &ended;
	b.all = &all;
	b.of = 1;
	out_begin(&b);
	fx_wait(f, &all);
	assert_false(b.failed);
	assert_int_equal(b.put_version, 1);
	assert_true(store_answer_again(f->s));
	/* Applied again on the batch reopened: k held version 1. */
	assert_int_equal(store_reopen(f->s, b.landed - 1, &err), 0);
	assert_int_equal(store_put(f->s, b.landed, 0, S("k"), "v", 1, &kv,
	    NULL, &err), 0);
	assert_int_equal(kv.version, 2);
	store_rollback(f->s);
}

/*
 * A batch that compacts up to its own write, out with another that lands
 * first (begun first, on the same base): its write lands a revision later
 * than planned, and so does the compaction (store_etcd_commit.c).
 */
static void
test_out_compact_follows(void **state)
{
	struct fx		*f = *state;
	struct out_batch	 b[2];
	int			 ended = 0, all = 0, i;

	memset(b, 0, sizeof b);
	for (i = 0; i < 2; i++) {
		b[i].f = f;
		b[i].key = i == 0 ? "first" : "compacts";
		b[i].compact = i == 1;
		b[i].ended = &ended;
		b[i].all = &all;
		b[i].of = 2;
		out_begin(&b[i]);
	}
	fx_wait(f, &all);
	assert_false(b[0].failed);
	assert_false(b[1].failed);
	/* Whichever landed first, the compaction is at its own write. */
	assert_int_equal(store_compact_rev(f->s), b[1].landed);
	fx_wait_rev(f, (b[0].landed > b[1].landed ? b[0].landed :
	    b[1].landed) - f->r0);
	assert_int_equal(store_compact_rev(f->s), b[1].landed);
}

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		{ "test_out_together/etcd", test_out_together, fx_setup,
		    fx_teardown, &fx_etcd },
		{ "test_out_blind/etcd", test_out_blind, fx_setup,
		    fx_teardown, &fx_etcd },
		{ "test_out_compact_follows/etcd", test_out_compact_follows,
		    fx_setup, fx_teardown, &fx_etcd },
	};

	/*
	 * Only etcd takes batches out together; with no etcd its tests are
	 * not there at all (nor counted skipped), as in test_store.c.
	 */
	return (_cmocka_run_group_tests("test_store_out", tests,
	    fx_etcd_url() != NULL ? sizeof tests / sizeof tests[0] : 0, NULL,
	    NULL));
}
