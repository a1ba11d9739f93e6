/*
 * Unit tests of the store's records of idempotent writes (store.h,
 * store_idem_*): found in the batch that put them and after its commit,
 * gone with an undo or a rollback, absent once expired, dropped a few at
 * a time by later puts, and kept across a reopen and a crash (SQLite), on
 * memory and SQLite (see test_store.c for the fixture).  etcd's records
 * are tested through the daemon (tests/bats/idem.bats).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "store_fx.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };

#define NOW	1000000

static void
put_rec(struct fx *f, const char *tok, const char *answer, uint64_t rev,
    uint64_t expires, uint64_t now)
{
	struct store_idem	 rec = { .answer = answer, .answer_len = strlen(answer),
	    .rev = rev, .expires_ms = expires };
	struct store_err	 err;

	assert_int_equal(store_idem_put(f->s, tok, strlen(tok), &rec, now,
	    &err), 0);
}

/* The answer recorded for tok as of now ("" when absent). */
static const char *
get_rec(struct fx *f, const char *tok, uint64_t now)
{
	struct store_idem	 rec;
	struct store_err	 err;
	int			 rc;

	rc = store_idem_get(f->s, tok, strlen(tok), now, &rec, &err);
	assert_int_not_equal(rc, -1);
	buf_reset(&f->out);
	if (rc == 1)
		buf_printf(&f->out, "%.*s@%llu", (int)rec.answer_len,
		    (const char *)rec.answer, (unsigned long long)rec.rev);
	return (buf_cstr(&f->out));
}

static void
test_idem_batch(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	assert_true(store_has_idem(f->s));
	fx_begin(f, "k");
	assert_string_equal(get_rec(f, "u\0t1", NOW), "");
	fx_put(f, 1, 0, S("k"), S("v"));
	put_rec(f, "t1", "{\"ok\":true}", 1, NOW + 10, NOW);
	assert_string_equal(get_rec(f, "t1", NOW), "{\"ok\":true}@1");
	/* An undo to a mark before a record takes it away. */
	assert_int_equal(store_mark(f->s, &err), 0);
	put_rec(f, "t2", "{\"ok\":false}", 0, NOW + 10, NOW);
	assert_string_equal(get_rec(f, "t2", NOW), "{\"ok\":false}@0");
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_string_equal(get_rec(f, "t2", NOW), "");
	fx_commit(f, 1);
	fx_begin(f, "k");
	assert_string_equal(get_rec(f, "t1", NOW), "{\"ok\":true}@1");
	/* Expired: absent, whatever is kept. */
	assert_string_equal(get_rec(f, "t1", NOW + 10), "");
	/* A rollback takes the batch's records away. */
	put_rec(f, "t3", "{}", 0, NOW + 10, NOW);
	store_rollback(f->s);
	fx_begin(f, "k");
	assert_string_equal(get_rec(f, "t3", NOW), "");
	/* A record that writes nothing still commits. */
	put_rec(f, "t4", "{\"no\":1}", 0, NOW + 10, NOW);
	fx_commit(f, 1);
	fx_begin(f, "k");
	assert_string_equal(get_rec(f, "t4", NOW), "{\"no\":1}@0");
	store_rollback(f->s);
	/* Outside a batch: an error. */
	assert_int_equal(store_idem_get(f->s, "t4", 2, NOW, NULL, &err), -1);
}

/* Each put drops STORE_IDEM_PURGE expired records at most, oldest first. */
static void
test_idem_purge(void **state)
{
	struct fx	*f = *state;
	char		 tok[8];
	int		 i, left;

	fx_begin(f, "k");
	for (i = 0; i < 10; i++) {
		snprintf(tok, sizeof tok, "t%d", i);
		put_rec(f, tok, "{}", 0, NOW + 1 + i, NOW);
	}
	fx_commit(f, 0);
	fx_begin(f, "k");
	put_rec(f, "n", "{}", 0, NOW + 100, NOW + 50);	/* all 10 expired */
	for (i = 0, left = 0; i < 10; i++) {
		snprintf(tok, sizeof tok, "t%d", i);
		left += *get_rec(f, tok, 0) != '\0';	/* now 0: all alive */
		if (i < STORE_IDEM_PURGE)
			assert_string_equal(get_rec(f, tok, 0), "");
	}
	assert_int_equal(left, 10 - STORE_IDEM_PURGE);
	fx_commit(f, 0);
}

static void
crash_fn(struct fx *f)
{
	fx_begin(f, "k");
	fx_put(f, 1, 0, S("k"), S("v"));
	put_rec(f, "c", "{\"ok\":true,\"rev\":1}", 1, NOW + 10, NOW);
	fx_commit(f, 1);
}

static void
test_idem_crash(void **state)
{
	struct fx	*f = *state;

	fx_crash_after(f, crash_fn);
	fx_begin(f, "k");
	assert_string_equal(get_rec(f, "c", NOW), "{\"ok\":true,\"rev\":1}@1");
	store_rollback(f->s);
	fx_reopen(f, NULL);
	fx_begin(f, "k");
	assert_string_equal(get_rec(f, "c", NOW), "{\"ok\":true,\"rev\":1}@1");
	store_rollback(f->s);
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		MEM(test_idem_batch),
		SQL(test_idem_batch),
		MEM(test_idem_purge),
		SQL(test_idem_purge),
		SQL(test_idem_crash),
	};

	return (cmocka_run_group_tests_name("test_store_idem", tests, NULL,
	    NULL));
}
