/*
 * Unit tests of what compaction keeps (store.h): many writes to a few hot
 * keys, one or a few to many cold ones (more than a thousand, so that what
 * the memory backend keeps of them outgrows its first table), deletes and
 * re-creations, txns of several keys at one rev, and a compaction every few
 * revs.  After each, every kept rev's reads of the hot keys and some cold
 * ones, and each hot key's history, are compared with a model; now and then
 * a whole list at the compact rev and at the current one.  On memory and
 * SQLite (see test_store.c for how the fixture works); on SQLite the test
 * checkpoints as it goes (the fixture has no loop to), in slices that
 * compactions and reads come in between, so that reads at a rev find
 * keys in kv, in the maps and half way between.
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
#include "store/sqlite/store_sqlite.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };

#define TRIM_COLD	1100	/* keys c0000..., written first */
#define TRIM_HOT	6	/* keys h0..., sorted after them */
#define TRIM_KEYS	(TRIM_COLD + TRIM_HOT)
#define TRIM_REVS	(TRIM_COLD + 1200)
#define TRIM_WINDOW	5	/* kept revs behind the current one */

struct mev {
	uint64_t	 rev;
	uint32_t	 seq;
	int		 del;
	uint64_t	 version, create_rev;
};

struct mkey {
	char		 name[8];
	struct mev	*ev;
	size_t		 n, cap;
};

static struct mkey	 keys[TRIM_KEYS];
static unsigned		 seed;

static unsigned
rnd(void)
{
	seed = seed * 1103515245 + 12345;
	return (seed >> 8);
}

/* The model's last event of k at or before rev, or NULL. */
static const struct mev *
model_at(const struct mkey *k, uint64_t rev)
{
	size_t	 i;

	for (i = k->n; i > 0; i--) {
		if (k->ev[i - 1].rev <= rev)
			return (&k->ev[i - 1]);
	}
	return (NULL);
}

/* The fixture's rendering of k at rev ("" when absent), appended to b. */
static void
model_kv(struct buf *b, const struct mkey *k, uint64_t rev)
{
	const struct mev	*e = model_at(k, rev);

	if (e == NULL || e->del)
		return;
	if (b->len > 0)
		buf_addc(b, ' ');
	buf_printf(b, "%s@%" PRIu64 "/%" PRIu64 "/%" PRIu64 "=v%" PRIu64 ".%u",
	    k->name, e->version, e->create_rev, e->rev, e->rev, e->seq);
}

static void
model_history(struct buf *b, const struct mkey *k, uint64_t from)
{
	const struct mev	*e;
	size_t			 i;

	for (i = 0; i < k->n; i++) {
		e = &k->ev[i];
		if (e->rev < from)
			continue;
		if (b->len > 0)
			buf_addc(b, ' ');
		buf_printf(b, "%" PRIu64 ".%u:", e->rev, e->seq);
		if (e->del)
			buf_printf(b, "del:%s", k->name);
		else
			buf_printf(b, "%s@%" PRIu64 "/%" PRIu64 "/%" PRIu64
			    "=v%" PRIu64 ".%u", k->name, e->version,
			    e->create_rev, e->rev, e->rev, e->seq);
	}
}

static void
model_write(struct fx *f, struct mkey *k, uint64_t rev, uint32_t seq,
    int del)
{
	const struct mev	*last = k->n > 0 ? &k->ev[k->n - 1] : NULL;
	struct mev		*e;
	char			 v[32];
	int			 live = last != NULL && !last->del;
	uint64_t		 version = live ? last->version : 0;
	uint64_t		 create_rev = live ? last->create_rev : rev;

	if (k->n == k->cap) {
		k->cap = k->cap == 0 ? 8 : k->cap * 2;
		k->ev = xrealloc(k->ev, k->cap * sizeof *k->ev);
	}
	e = &k->ev[k->n++];
	memset(e, 0, sizeof *e);
	e->rev = rev;
	e->seq = seq;
	e->del = del;
	if (del) {
		assert_int_equal(fx_del(f, rev, seq, k->name, strlen(k->name)),
		    1);
		return;
	}
	e->version = version + 1;
	e->create_rev = create_rev;
	snprintf(v, sizeof v, "v%" PRIu64 ".%u", rev, seq);
	assert_int_equal(fx_put(f, rev, seq, k->name, strlen(k->name), v,
	    strlen(v)), version);
}

static void
check_key(struct fx *f, struct buf *want, const struct mkey *k, uint64_t r)
{
	buf_reset(want);
	model_kv(want, k, r);
	assert_string_equal(fx_get_at(f, k->name, strlen(k->name), r),
	    buf_cstr(want));
}

static void
check_list(struct fx *f, struct buf *want, uint64_t r)
{
	struct store_range	 rg;
	size_t			 i;

	buf_reset(want);
	for (i = 0; i < TRIM_KEYS; i++)
		model_kv(want, &keys[i], r);
	memset(&rg, 0, sizeof rg);
	rg.prefix = "";
	rg.limit = 10000;
	rg.rev = fx_abs(f, r);
	assert_string_equal(fx_list(f, &rg, -2, 0), buf_cstr(want));
}

static void
check_kept(struct fx *f, struct buf *want, uint64_t rev, int all)
{
	struct store_err	 err;
	uint64_t		 c = fx_compact_rev(f), r;
	size_t			 i;
	int			 more;

	if (c > 1) {
		assert_int_equal(fx_get_at_err(f, S("h0"), c - 1, &err), -1);
		assert_int_equal(err.code, STORE_ERR_COMPACTED);
	}
	for (r = c; r <= rev; r++) {
		for (i = TRIM_COLD; i < TRIM_KEYS; i++)
			check_key(f, want, &keys[i], r);
		for (i = 0; i < 8; i++)
			check_key(f, want, &keys[rnd() % TRIM_COLD], r);
	}
	for (i = TRIM_COLD; i < TRIM_KEYS; i++) {
		buf_reset(want);
		model_history(want, &keys[i], c);
		assert_true(fx_key_history(f, keys[i].name,
		    strlen(keys[i].name), c, 10000, &more, &err) >= 0);
		assert_string_equal(buf_cstr(&f->out), buf_cstr(want));
		assert_int_equal(more, 0);
	}
	if (all) {
		check_list(f, want, c);
		check_list(f, want, rev);
	}
}

/*
 * SQLite: a checkpoint in slices starts every 4 revs, its first slice
 * (kv written, ckpt_rev not yet) now and the rest two revs later; one
 * in a piece every 50.
 */
static void
trim_ckpt(struct fx *f, uint64_t rev)
{
	struct store_err	 err;

	if (strcmp(f->kind, "sqlite") != 0)
		return;
	if (rev % 4 == 1)
		assert_int_equal(store_sqlite_ckpt_slice(f->s), 1);
	else if (rev % 4 == 3)
		fx_ckpt_slices(f, 100);
	else if (rev % 50 == 0)
		assert_int_equal(store_sqlite_checkpoint(f->s, &err), 0);
}

static void
test_trim_model(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	struct buf		 want;
	struct mkey		*k, *used[4];
	uint64_t		 rev;
	uint32_t		 seq, nops, j;
	size_t			 i;
	int			 del;

	memset(keys, 0, sizeof keys);
	memset(&want, 0, sizeof want);
	seed = 11;
	for (i = 0; i < TRIM_COLD; i++)
		snprintf(keys[i].name, sizeof keys[i].name, "c%04zu", i);
	for (i = TRIM_COLD; i < TRIM_KEYS; i++)
		snprintf(keys[i].name, sizeof keys[i].name, "h%zu",
		    i - TRIM_COLD);
	for (rev = 1; rev <= TRIM_REVS; rev++) {
		fx_begin(f);
		seq = 0;
		if (rev <= TRIM_COLD) {
			used[seq] = &keys[rev - 1];
			model_write(f, used[seq], rev, seq, 0);
			seq++;
		}
		nops = 1 + rnd() % 3;
		for (j = 0; j < nops; j++) {
			k = rnd() % 5 < 3 ? &keys[TRIM_COLD + rnd() % TRIM_HOT] :
			    &keys[rnd() % TRIM_COLD];
			for (i = 0; i < seq && used[i] != k; i++)
				;
			if (i < seq || seq == 4)
				continue;
			del = k->n > 0 && !k->ev[k->n - 1].del &&
			    rnd() % 4 == 0;
			model_write(f, k, rev, seq, del);
			used[seq++] = k;
		}
		fx_commit(f, rev);
		trim_ckpt(f, rev);
		if (rev > TRIM_WINDOW && rev % 3 == 0) {
			assert_int_equal(fx_compact(f, rev - TRIM_WINDOW,
			    &err), 0);
			assert_int_equal(fx_compact_rev(f), rev - TRIM_WINDOW);
			check_kept(f, &want, rev, rev % 150 == 0 ||
			    rev == TRIM_COLD + 3);
		}
	}
	check_kept(f, &want, TRIM_REVS, 1);
	for (i = 0; i < TRIM_KEYS; i++)
		free(keys[i].ev);
	buf_free(&want);
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		MEM(test_trim_model),
		SQL(test_trim_model),
	};

	return (cmocka_run_group_tests_name("test_store_trim", tests, NULL,
	    NULL));
}
