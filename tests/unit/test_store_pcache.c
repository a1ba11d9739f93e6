/*
 * Unit tests of the page cache that skips empty truncates
 * (store_sqlite_pcache.c), on SQLite directly: a table appended to in
 * key order and trimmed at its head, as history is, splits its last leaf
 * onto pages of the free list, which swaps pages; the truncates at the
 * end of those transactions have nothing to drop and are skipped, and
 * the table stays what was written.  A transaction that grew the file
 * and rolled back has pages to drop: its truncate is passed on, with a
 * few pages (the keys it noted) and with many (past SQ_PC_KEYS).
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

#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"

#define TXNS		3000
#define ROWS		30	/* a transaction's appends */
#define KEEP		600	/* transactions kept: the head goes */

static char	 dir[] = "/tmp/metad-pcache.XXXXXX";
static char	 path[64];

static void
exec(sqlite3 *db, const char *sql)
{
	char	*msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg != NULL ? msg : "?");
}

static long long
scalar(sqlite3 *db, const char *sql)
{
	sqlite3_stmt	*st;
	long long	 v;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
	    SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (v);
}

static void
check_intact(sqlite3 *db)
{
	sqlite3_stmt	*st;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check",
	    -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
	sqlite3_finalize(st);
}

static sqlite3 *
open_db(void)
{
	sqlite3	*db;

	store_sqlite_pcache_install();
	snprintf(path, sizeof path, "%s/t.db", dir);
	unlink(path);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec(db, "PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL;"
	    "PRAGMA cache_size = -16384;"
	    "CREATE TABLE h (rev INTEGER, seq INTEGER, v BLOB, "
	    "PRIMARY KEY (rev, seq)) WITHOUT ROWID");
	return (db);
}

static void
append(sqlite3 *db, sqlite3_stmt *ins, long long rev)
{
	int	 i;

	for (i = 0; i < ROWS; i++) {
		sqlite3_bind_int64(ins, 1, rev);
		sqlite3_bind_int64(ins, 2, i);
		sqlite3_bind_zeroblob(ins, 3, 100);
		assert_int_equal(sqlite3_step(ins), SQLITE_DONE);
		sqlite3_reset(ins);
	}
}

static void
test_appends_skip(void **state)
{
	sqlite3		*db = open_db();
	sqlite3_stmt	*ins;
	unsigned long	 passed, skipped, p0, s0;
	long long	 rev;
	char		 sql[96];

	(void)state;
	assert_int_equal(store_sqlite_pcache_counts(&p0, &s0), 0);
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO h VALUES "
	    "(?1, ?2, ?3)", -1, &ins, NULL), SQLITE_OK);
	for (rev = 1; rev <= TXNS; rev++) {
		exec(db, "BEGIN IMMEDIATE");
		append(db, ins, rev);
		if (rev > KEEP && rev % 50 == 0) {
			snprintf(sql, sizeof sql, "DELETE FROM h WHERE rev <= "
			    "%lld", rev - KEEP);
			exec(db, sql);
		}
		exec(db, "COMMIT");
	}
	sqlite3_finalize(ins);
	assert_int_equal(store_sqlite_pcache_counts(&passed, &skipped), 0);
	passed -= p0;
	skipped -= s0;
	print_message("truncates: %lu passed on, %lu skipped\n", passed,
	    skipped);
	/* One truncate a transaction; nearly all of them had nothing. */
	assert_true(passed + skipped >= TXNS);
	assert_true(passed * 20 < skipped);
	assert_int_equal(scalar(db, "SELECT count(*) FROM h"),
	    (long long)(TXNS - (TXNS - KEEP) / 50 * 50) * ROWS);
	assert_int_equal(scalar(db, "SELECT min(rev) FROM h"),
	    (TXNS - KEEP) / 50 * 50 + 1);
	check_intact(db);
	sqlite3_close(db);
}

/* A rollback of ntx appends: its truncate is passed on, the file as before. */
static void
rollback_grown(sqlite3 *db, sqlite3_stmt *ins, long long from, int ntx)
{
	unsigned long	 passed, skipped, p0, s0;
	long long	 pages = scalar(db, "PRAGMA page_count"), rev;
	char		 sql[64];

	exec(db, "BEGIN IMMEDIATE");
	assert_int_equal(store_sqlite_pcache_counts(&p0, &s0), 0);
	for (rev = from; rev < from + ntx; rev++)
		append(db, ins, rev);
	assert_true(scalar(db, "PRAGMA page_count") > pages);
	exec(db, "ROLLBACK");
	assert_int_equal(store_sqlite_pcache_counts(&passed, &skipped), 0);
	assert_int_equal(passed, p0 + 1);
	assert_int_equal(scalar(db, "PRAGMA page_count"), pages);
	snprintf(sql, sizeof sql, "SELECT count(*) FROM h WHERE rev >= %lld",
	    from);
	assert_int_equal(scalar(db, sql), 0);
}

static void
test_rollback_passes(void **state)
{
	sqlite3		*db = open_db();
	sqlite3_stmt	*ins;

	(void)state;
	assert_int_equal(sqlite3_prepare_v2(db, "INSERT INTO h VALUES "
	    "(?1, ?2, ?3)", -1, &ins, NULL), SQLITE_OK);
	exec(db, "BEGIN IMMEDIATE");
	append(db, ins, 1);
	exec(db, "COMMIT");
	rollback_grown(db, ins, 2, 2);		/* a few pages */
	rollback_grown(db, ins, 2, 200);	/* more than SQ_PC_KEYS */
	/* Written again, and read back whole. */
	exec(db, "BEGIN IMMEDIATE");
	append(db, ins, 2);
	append(db, ins, 3);
	exec(db, "COMMIT");
	sqlite3_finalize(ins);
	assert_int_equal(scalar(db, "SELECT count(*) FROM h"), 3 * ROWS);
	assert_int_equal(scalar(db, "SELECT sum(length(v)) FROM h"),
	    3 * ROWS * 100);
	check_intact(db);
	sqlite3_close(db);
}

static int
setup(void **state)
{
	(void)state;
	return (mkdtemp(dir) == NULL ? -1 : 0);
}

static int
teardown(void **state)
{
	char	 cmd[96];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return (system(cmd) == 0 ? 0 : -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_appends_skip),
		cmocka_unit_test(test_rollback_passes),
	};

	return (cmocka_run_group_tests(tests, setup, teardown));
}
