/*
 * Unit tests of revisions with many events (a local batch, a lease's
 * revoke): more than 2^SQ_ID_SHIFT of them at one rev, where the SQLite
 * backend's history ids (store_sqlite.h) run past the next revs' own
 * (rev << SQ_ID_SHIFT).  Random writes on memory and SQLite, compacted
 * and (SQLite) reopened as they go: every kept rev reads as it was, as a
 * range, key by key, as history from it and as each key's history; then
 * a schema 5 file with such a rev, migrated to 6.
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

#define BIG_REVS	24
#define BIG_KEYS	5
/* A big rev's events: past the id space of the rev after it. */
#define BIG_EVENTS	((1 << SQ_ID_SHIFT) + 44)

/* Every second rev from 2 on, every fourth: big. */
static uint32_t
big_events(uint64_t rev)
{
	return (rev % 4 == 2 ? BIG_EVENTS : 1);
}

/* rev's writes; nev[k]: the events of key k at it. */
static void
big_rev(struct fx *f, uint64_t rev, unsigned *seed, unsigned *nev)
{
	char		 k[8], v[24];
	uint32_t	 seq;
	unsigned	 i;

	fx_begin(f, "k0", "k1", "k2", "k3", "k4");
	for (seq = 0; seq < big_events(rev); seq++) {
		*seed = *seed * 1103515245 + 12345;
		i = (*seed >> 8) % BIG_KEYS;
		snprintf(k, sizeof k, "k%u", i);
		snprintf(v, sizeof v, "v%" PRIu64 ".%" PRIu32, rev, seq);
		if ((*seed >> 16) % 4 == 0 &&
		    fx_get(f, k, strlen(k))[0] != '\0')
			assert_int_equal(fx_del(f, rev, seq, k, strlen(k)), 1);
		else
			fx_put(f, rev, seq, k, strlen(k), v, strlen(v));
		nev[i]++;
	}
	fx_commit(f, rev);
}

/*
 * The current state, key by key (a get reads the dirty map: a range
 * would checkpoint, and leave no tail to read).
 */
static char *
big_state(struct fx *f)
{
	struct buf	 b;
	char		 k[8];
	int		 i;

	buf_init(&b);
	for (i = 0; i < BIG_KEYS; i++) {
		snprintf(k, sizeof k, "k%d", i);
		fx_get(f, k, strlen(k));
		if (f->out.len == 0)
			continue;
		if (b.len > 0)
			buf_add(&b, " ", 1);
		buf_add(&b, f->out.data, f->out.len);
	}
	return (buf_cstr(&b));	/* b's data, now the caller's */
}

/* The events in fx_history()'s or fx_key_history()'s output. */
static unsigned
count_events(const char *s)
{
	unsigned	 n = *s != '\0';

	for (; *s != '\0'; s++)
		n += *s == ' ';
	return (n);
}

/*
 * Every kept rev up to upto as it was.  in_batch: with a batch open,
 * where a read past the key index cannot fill it first and scans
 * history's tail instead (as when the disk is full); a range at a rev is
 * refused there.
 */
static void
big_check(struct fx *f, char **seen, unsigned (*nev)[BIG_KEYS],
    uint64_t upto, int in_batch)
{
	struct store_range	 rg;
	struct store_err	 err;
	char			 k[8], first[16];
	unsigned		 all, one;
	uint64_t		 r, t;
	int			 i, more;

	memset(&rg, 0, sizeof rg);
	rg.prefix = "";
	rg.limit = 100;
	for (r = fx_compact_rev(f); r <= upto; r++) {
		rg.rev = fx_abs(f, r);
		if (!in_batch)
			assert_string_equal(fx_list(f, &rg, -2, 0), seen[r]);
		for (all = 0, t = r; t <= upto; t++)
			all += big_events(t);
		/* History from r: r's first event on, every one after. */
		snprintf(first, sizeof first, "%" PRIu64 ".0:", r);
		assert_true(strncmp(fx_history(f, r), first,
		    strlen(first)) == 0);
		assert_int_equal(count_events(buf_cstr(&f->out)), all);
		for (i = 0; i < BIG_KEYS; i++) {
			snprintf(k, sizeof k, "k%d", i);
			fx_get_at(f, k, strlen(k), r);
			if (f->out.len > 0)
				assert_non_null(strstr(seen[r],
				    buf_cstr(&f->out)));
			else {
				strcat(k, "@");
				assert_null(strstr(seen[r], k));
				k[strlen(k) - 1] = '\0';
			}
			for (one = 0, t = r; t <= upto; t++)
				one += nev[t][i];
			fx_key_history(f, k, strlen(k), r,
			    BIG_EVENTS * BIG_REVS, &more, &err);
			assert_int_equal(count_events(buf_cstr(&f->out)), one);
		}
	}
}

static void
test_model_big(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	char			*seen[BIG_REVS + 1];
	unsigned		 nev[BIG_REVS + 1][BIG_KEYS];
	unsigned		 seed = 11;
	uint64_t		 rev;
	int			 sql = strcmp(f->kind, "sqlite") == 0;

	memset(nev, 0, sizeof nev);
	seen[0] = NULL;
	for (rev = 1; rev <= BIG_REVS; rev++) {
		big_rev(f, rev, &seed, nev[rev]);
		seen[rev] = big_state(f);
		/* Compacted to just past a big rev (3, 11, 19), and to one. */
		if (rev % 8 == 7 || rev == 18)
			assert_int_equal(fx_compact(f, rev - 4, &err), 0);
		/* Just past a big rev: history's last id, from the file. */
		if (sql && rev == 10)
			fx_reopen(f, NULL);
		/* The key index filled up to a big rev by a read at it. */
		if (sql && rev == 11)
			fx_get_at(f, S("k0"), 10);
		/* Reads of history past the index, from inside 10's ids. */
		if (sql && rev == 12) {
			fx_begin(f, "k0");
			big_check(f, seen, nev, rev, 1);
			store_rollback(f->s);
		}
		/* Then the reads fill it on from inside 10's ids. */
		if (sql && rev == 13)
			big_check(f, seen, nev, rev, 0);
	}
	if (sql) {
		/* Past compact_rev - 1, 18 (a big rev), before any fill. */
		fx_begin(f, "k0");
		big_check(f, seen, nev, BIG_REVS, 1);
		store_rollback(f->s);
	}
	big_check(f, seen, nev, BIG_REVS, 0);
	if (sql) {
		fx_reopen(f, NULL);
		big_check(f, seen, nev, BIG_REVS, 0);
		/* Ids grow with (rev, seq), never below rev << SQ_ID_SHIFT. */
		assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM history "
		    "WHERE id < " SQ_ID_FROM("rev")), 0);
		assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM (SELECT "
		    "id, LAG(id) OVER (ORDER BY rev, seq) AS p FROM history) "
		    "WHERE p >= id"), 0);
		/* The key index names each event by its id. */
		assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM "
		    "history_by_key AS k LEFT JOIN history AS h ON h.id = k.id "
		    "WHERE k.rev >= (SELECT value FROM meta WHERE name = "
		    "'compact_rev') AND (h.rev IS NOT k.rev OR h.seq IS NOT "
		    "k.seq)"), 0);
	}
	for (rev = 1; rev <= BIG_REVS; rev++)
		free(seen[rev]);
}

/*
 * A database of schema 5 as a daemon killed after rev 4 left it: 1 a=1,
 * 2 three hundred puts over k0-k3 (k<i % 4> = v<i>), 3 a=2, 4 k1
 * deleted; kv and the key index up to ckpt_rev 3, rev 4 the tail.
 */
static const char sq_schema5_sql[] =
	FX_SQL_OLD_TABLES
	"CREATE TABLE history_by_key (key BLOB NOT NULL, "
	"rev INTEGER NOT NULL, seq INTEGER NOT NULL, "
	"PRIMARY KEY (key, rev, seq)) WITHOUT ROWID;"
	"CREATE TABLE kept (key BLOB PRIMARY KEY, value BLOB NOT NULL, "
	"version INTEGER NOT NULL, create_rev INTEGER NOT NULL, "
	"rev INTEGER NOT NULL, seq INTEGER NOT NULL) WITHOUT ROWID;"
	"INSERT INTO meta VALUES ('schema', 5), ('rev', 0), "
	"('compact_rev', 0), ('ckpt_rev', 3), ('nkeys', 4);"
	"INSERT INTO history VALUES (1, 0, 0, CAST('a' AS BLOB), "
	"CAST('1' AS BLOB), 1, 1), (3, 0, 0, CAST('a' AS BLOB), "
	"CAST('2' AS BLOB), 2, 1), (4, 0, 1, CAST('k1' AS BLOB), NULL, 0, 0);"
	"WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n "
	"WHERE i < 299) INSERT INTO history SELECT 2, i, 0, "
	"CAST('k' || (i % 4) AS BLOB), CAST('v' || i AS BLOB), i / 4 + 1, 2 "
	"FROM n;"
	"INSERT INTO kv SELECT key, value, version, create_rev, rev FROM "
	"history AS h WHERE rev <= 3 AND NOT EXISTS (SELECT 1 FROM history "
	"AS n WHERE n.key = h.key AND n.rev <= 3 AND (n.rev > h.rev OR "
	"(n.rev = h.rev AND n.seq > h.seq)));"
	"INSERT INTO history_by_key SELECT key, rev, seq FROM history "
	"WHERE rev <= 3;";

static void
test_sqlite_migrate5(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 more;

	fx_db_exec(f, sq_schema5_sql, 1);
	assert_int_equal(fx_rev(f), 4);
	assert_int_equal(fx_nkeys(f), 4);
	assert_string_equal(fx_get(f, S("a")), "a@2/1/3=2");
	assert_string_equal(fx_get(f, S("k1")), "");
	assert_string_equal(fx_get_at(f, S("k1"), 3), "k1@75/2/2=v297");
	assert_string_equal(fx_get_at(f, S("k0"), 2), "k0@75/2/2=v296");
	assert_string_equal(fx_history(f, 3), "3.0:a@2/1/3=2 4.0:del:k1");
	assert_int_equal(fx_key_history(f, S("k2"), 2, 100, &more, &err), 75);
	assert_true(strncmp(buf_cstr(&f->out), "2.2:k2@1/2/2=v2 ", 16) == 0);
	/* Each rev's first id: 1 << 8, 2 << 8, past rev 2's 300, 4 << 8. */
	assert_int_equal(fx_db_scalar(f, "SELECT value FROM meta WHERE "
	    "name = 'schema'"), 7);
	assert_int_equal(fx_db_scalar(f, "SELECT SUM(id) FROM history "
	    "WHERE seq = 0"), 256 + 512 + 812 + 1024);
	assert_int_equal(fx_db_scalar(f, "SELECT MAX(id) - MIN(id) FROM "
	    "history WHERE rev = 2"), 299);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM history_by_key "
	    "AS k JOIN history AS h ON h.id = k.id AND h.rev = k.rev AND "
	    "h.seq = k.seq"), 303);
	/* Writes go on from history's last id. */
	fx_put1(f, "a", "3");
	assert_int_equal(fx_db_scalar(f, "SELECT MAX(id) FROM history"),
	    5 << SQ_ID_SHIFT);
	/* Compacted to 3: rev 2's last puts kept, its 300 events gone. */
	assert_int_equal(fx_compact(f, 3, &err), 0);
	assert_string_equal(fx_get_at(f, S("k2"), 3), "k2@75/2/2=v298");
	assert_string_equal(fx_get_at(f, S("k1"), 3), "k1@75/2/2=v297");
	assert_int_equal(fx_db_scalar(f, "SELECT MIN(id) FROM history"), 812);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kept"), 5);
	assert_string_equal(fx_get_at(f, S("k3"), 4), "k3@75/2/2=v299");
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		MEM(test_model_big),
		SQL(test_model_big),
		SQL(test_sqlite_migrate5),
	};

	return (_cmocka_run_group_tests("test_store_bigrev", tests,
	    sizeof tests / sizeof tests[0], NULL, NULL));
}
