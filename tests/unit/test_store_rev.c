/*
 * Unit tests of reads at a revision and of one key's history (store.h):
 * store_read_get_at(), a range with rev, store_read_key_history(), and
 * what compaction keeps for them (a key last written before the compact
 * rev keeps its value at every kept rev), on memory, SQLite and, with
 * METAD_TEST_ETCD, etcd (see test_store.c for how the fixture works).
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

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };
/* etcd with its view on: current reads come from it. */
static struct fx	 fx_etcdv = { .kind = "etcd", .view_max_bytes = 1 << 20 };

/*
 * 1 a=1, 2 b=1, 3 a=2, 4 del b, 5 c=1, 6 b=2 (created again), 7 a=3.
 */
static void
rev_fill(struct fx *f)
{
	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	fx_put1(f, "a", "2");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 4, 0, S("b")), 1);
	fx_commit(f, 4);
	fx_put1(f, "c", "1");
	fx_put1(f, "b", "2");
	fx_put1(f, "a", "3");
	assert_int_equal(fx_rev(f), 7);
}

static const char *
list_at(struct fx *f, uint64_t rev, const char *after, uint64_t limit,
    long n, int more)
{
	struct store_range	 rg;

	memset(&rg, 0, sizeof rg);
	rg.prefix = "";
	rg.after = after;
	rg.after_len = after != NULL ? strlen(after) : 0;
	rg.limit = limit;
	rg.rev = fx_abs(f, rev);
	return (fx_list(f, &rg, n, more));
}

static void
test_get_at(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	rev_fill(f);
	assert_string_equal(fx_get_at(f, S("a"), 1), "a@1/1/1=1");
	assert_string_equal(fx_get_at(f, S("a"), 2), "a@1/1/1=1");
	assert_string_equal(fx_get_at(f, S("a"), 3), "a@2/1/3=2");
	assert_string_equal(fx_get_at(f, S("a"), 6), "a@2/1/3=2");
	assert_string_equal(fx_get_at(f, S("a"), 7), "a@3/1/7=3");
	assert_string_equal(fx_get_at(f, S("b"), 1), "");
	assert_string_equal(fx_get_at(f, S("b"), 3), "b@1/2/2=1");
	assert_string_equal(fx_get_at(f, S("b"), 4), "");
	assert_string_equal(fx_get_at(f, S("b"), 5), "");
	assert_string_equal(fx_get_at(f, S("b"), 6), "b@1/6/6=2");
	assert_string_equal(fx_get_at(f, S("nope"), 5), "");
	/* Above the current rev: an error, not the current value. */
	assert_int_equal(fx_get_at_err(f, S("a"), 8, &err), -1);
	assert_int_equal(err.code, STORE_ERR_FUTURE);
	/* Reads at a rev leave the current state as it is. */
	assert_string_equal(fx_get(f, S("a")), "a@3/1/7=3");
}

static void
test_range_at(void **state)
{
	struct fx	*f = *state;

	rev_fill(f);
	assert_string_equal(list_at(f, 1, NULL, 10, 1, 0), "a@1/1/1=1");
	assert_string_equal(list_at(f, 2, NULL, 10, 2, 0),
	    "a@1/1/1=1 b@1/2/2=1");
	assert_string_equal(list_at(f, 4, NULL, 10, 1, 0), "a@2/1/3=2");
	assert_string_equal(list_at(f, 5, NULL, 10, 2, 0),
	    "a@2/1/3=2 c@1/5/5=1");
	/* Pages at one rev: one snapshot, whatever was written since. */
	assert_string_equal(list_at(f, 6, NULL, 1, 1, 1), "a@2/1/3=2");
	fx_put1(f, "a0", "x");
	fx_begin(f, "c");
	assert_int_equal(fx_del(f, 9, 0, S("c")), 1);
	fx_commit(f, 9);
	assert_string_equal(list_at(f, 6, "a", 1, 1, 1), "b@1/6/6=2");
	assert_string_equal(list_at(f, 6, "b", 1, 1, 0), "c@1/5/5=1");
	assert_string_equal(list_at(f, 9, NULL, 10, 3, 0),
	    "a@3/1/7=3 a0@1/8/8=x b@1/6/6=2");
}

static void
test_key_history(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 more;

	rev_fill(f);
	assert_int_equal(fx_key_history(f, S("a"), 1, 2, &more, &err), 2);
	assert_string_equal(buf_cstr(&f->out), "1.0:a@1/1/1=1 3.0:a@2/1/3=2");
	assert_int_equal(more, 1);
	assert_int_equal(fx_key_history(f, S("a"), 4, 2, &more, &err), 1);
	assert_string_equal(buf_cstr(&f->out), "7.0:a@3/1/7=3");
	assert_int_equal(more, 0);
	assert_int_equal(fx_key_history(f, S("b"), 1, 100, &more, &err), 3);
	assert_string_equal(buf_cstr(&f->out), "2.0:b@1/2/2=1 4.0:del:b "
	    "6.0:b@1/6/6=2");
	assert_int_equal(more, 0);
	assert_int_equal(fx_key_history(f, S("nope"), 1, 100, &more, &err),
	    0);
	assert_int_equal(more, 0);
	assert_int_equal(fx_key_history(f, S("a"), 8, 100, &more, &err), 0);
}

/* etcd's rule: compaction keeps what every kept revision needs. */
static void
test_compact_keeps(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 more;

	rev_fill(f);
	assert_int_equal(fx_compact(f, 5, &err), 0);
	assert_int_equal(fx_compact_rev(f), 5);
	assert_string_equal(fx_get_at(f, S("a"), 5), "a@2/1/3=2");
	assert_string_equal(fx_get_at(f, S("a"), 6), "a@2/1/3=2");
	assert_string_equal(fx_get_at(f, S("b"), 5), "");
	assert_string_equal(fx_get_at(f, S("b"), 6), "b@1/6/6=2");
	assert_string_equal(list_at(f, 5, NULL, 10, 2, 0),
	    "a@2/1/3=2 c@1/5/5=1");
	assert_int_equal(fx_get_at_err(f, S("a"), 4, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_int_equal(fx_list(f, &(struct store_range){ .prefix = "",
	    .limit = 10, .rev = fx_abs(f, 4) }, -1, 0)[0], '\0');
	assert_int_equal(fx_key_history(f, S("a"), 4, 10, &more, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_int_equal(fx_key_history(f, S("a"), 5, 10, &more, &err), 1);
	assert_string_equal(buf_cstr(&f->out), "7.0:a@3/1/7=3");
	/* The kept old puts are no history: a replay starts at 5. */
	assert_string_equal(fx_history(f, 5), "5.0:c@1/5/5=1 6.0:b@1/6/6=2 "
	    "7.0:a@3/1/7=3");
	/* Compacting again keeps the newer one, drops the one replaced. */
	fx_put1(f, "c", "2");
	fx_begin(f, "b");
	assert_int_equal(fx_del(f, 9, 0, S("b")), 1);
	fx_commit(f, 9);
	assert_int_equal(fx_compact(f, 9, &err), 0);
	assert_string_equal(list_at(f, 9, NULL, 10, 2, 0),
	    "a@3/1/7=3 c@2/5/8=2");
	assert_string_equal(fx_get_at(f, S("b"), 9), "");
	if (strcmp(f->kind, "memory") == 0)
		return;
	fx_reopen(f, NULL);	/* what compaction kept is durable */
	assert_string_equal(list_at(f, 9, NULL, 10, 2, 0),
	    "a@3/1/7=3 c@2/5/8=2");
}

/* Several events of one key at one rev (a local batch): whole revisions. */
static void
test_key_history_one_rev(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 more;

	fx_put1(f, "a", "1");
	fx_begin(f, "a");
	fx_put(f, 2, 0, S("a"), S("2"));
	assert_int_equal(fx_del(f, 2, 1, S("a")), 1);
	fx_put(f, 2, 2, S("a"), S("3"));
	fx_commit(f, 2);
	fx_put1(f, "a", "4");
	assert_int_equal(fx_key_history(f, S("a"), 2, 1, &more, &err), 3);
	assert_string_equal(buf_cstr(&f->out), "2.0:a@2/1/2=2 2.1:del:a "
	    "2.2:a@1/2/2=3");
	assert_int_equal(more, 1);
	assert_string_equal(fx_get_at(f, S("a"), 2), "a@1/2/2=3");
	assert_int_equal(fx_compact(f, 3, &err), 0);
	assert_string_equal(fx_get_at(f, S("a"), 3), "a@2/2/3=4");
	assert_int_equal(fx_compact(f, 4, &err), -1);
}

/*
 * Random writes with compactions as they go (and the local stores' own
 * trim): the state at every kept rev, as a range and key by key, is the
 * one recorded when that rev was current.
 */
#define MODEL_REVS	60
#define MODEL_KEYS	6

static void
test_model_at(void **state)
{
	struct fx		*f = *state;
	struct store_range	 rg;
	struct store_err	 err;
	char			*seen[MODEL_REVS + 1];
	char			 k[8], v[16], *got;
	uint64_t		 rev, r;
	unsigned		 seed = 7;
	int			 i;

	memset(&rg, 0, sizeof rg);
	rg.prefix = "";
	rg.limit = 100;
	seen[0] = NULL;
	for (rev = 1; rev <= MODEL_REVS; rev++) {
		seed = seed * 1103515245 + 12345;
		snprintf(k, sizeof k, "k%u", (seed >> 8) % MODEL_KEYS);
		snprintf(v, sizeof v, "v%" PRIu64, rev);
		fx_begin(f, k);
		if ((seed >> 16) % 4 == 0 && fx_get(f, k, strlen(k))[0] != '\0')
			assert_int_equal(fx_del(f, rev, 0, k, strlen(k)), 1);
		else
			fx_put(f, rev, 0, k, strlen(k), v, strlen(v));
		fx_commit(f, rev);
		rg.rev = 0;
		seen[rev] = xstrdup(fx_list(f, &rg, -2, 0));
		if (rev % 15 == 0)
			assert_int_equal(fx_compact(f, rev - 8, &err), 0);
	}
	for (r = fx_compact_rev(f); r <= MODEL_REVS; r++) {
		rg.rev = fx_abs(f, r);
		got = xstrdup(fx_list(f, &rg, -2, 0));
		assert_string_equal(got, seen[r]);
		buf_reset(&f->out);
		for (i = 0; i < MODEL_KEYS; i++) {
			snprintf(k, sizeof k, "k%d", i);
			fx_get_at(f, k, strlen(k), r);
			if (f->out.len > 0)
				assert_non_null(strstr(seen[r], buf_cstr(&f->out)));
		}
		free(got);
	}
	for (rev = 1; rev <= MODEL_REVS; rev++)
		free(seen[rev]);
}

/*
 * A database of schema 1 (its compaction dropped every event below the
 * compact rev): opened, it is migrated, and every rev it then keeps reads
 * exactly.  1 a, 2 b, 3 c, 4 a again; compacted at 3 by the old rule.
 */
static void
test_sqlite_migrate(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 more;

	fx_put1(f, "a", "1");
	fx_put1(f, "b", "1");
	fx_put1(f, "c", "1");
	fx_put1(f, "a", "2");
	assert_int_equal(fx_compact(f, 3, &err), 0);
	/* Schema 1's tables: no key index, no kept, nothing below 3. */
	fx_db_exec(f, "DROP TABLE history_by_key; DROP TABLE kept; "
	    "DELETE FROM history WHERE rev < 3; "
	    "UPDATE meta SET value = 1 WHERE name = 'schema';", 0);
	/* a's first kept event replaced one gone: kept from there on. */
	assert_int_equal(fx_compact_rev(f), 4);
	assert_string_equal(list_at(f, 4, NULL, 10, 3, 0),
	    "a@2/1/4=2 b@1/2/2=1 c@1/3/3=1");
	assert_int_equal(fx_get_at_err(f, S("a"), 3, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_string_equal(fx_history(f, 4), "4.0:a@2/1/4=2");
	assert_int_equal(fx_key_history(f, S("b"), 4, 10, &more, &err), 0);
	fx_put1(f, "b", "2");
	assert_string_equal(fx_get_at(f, S("b"), 4), "b@1/2/2=1");
	assert_string_equal(fx_get_at(f, S("b"), 5), "b@2/2/5=2");
	/* Opened again: nothing more to migrate. */
	fx_reopen(f, NULL);
	assert_int_equal(fx_compact_rev(f), 4);
	assert_string_equal(fx_get_at(f, S("c"), 5), "c@1/3/3=1");
}

/*
 * A database of schema 4, as a daemon killed after rev 6 left it:
 * history up to ckpt_rev 4 (compacted at 3: a's and b's last puts below 3
 * kept), its key index, and a log tail of revs 5-6.  1 a, 2 b, 3 a again,
 * 4 b deleted, 5 c, 6 a again.  Opened, it is schema 7 and every kept rev
 * reads as before.
 */
static const char sq_schema4_sql[] =
	FX_SQL_OLD_TABLES
	"CREATE INDEX history_key ON history (key, rev);"
	"CREATE TABLE log (rev INTEGER NOT NULL, seq INTEGER NOT NULL, "
	"type INTEGER NOT NULL, key BLOB NOT NULL, value BLOB, "
	"version INTEGER NOT NULL, create_rev INTEGER NOT NULL, "
	"PRIMARY KEY (rev, seq)) WITHOUT ROWID;"
	"INSERT INTO meta VALUES ('schema', 4), ('rev', 4), "
	"('compact_rev', 3), ('ckpt_rev', 4), ('nkeys', 2);"
	"INSERT INTO kv VALUES (CAST('a' AS BLOB), CAST('2' AS BLOB), 2, 1, 3);"
	"INSERT INTO history VALUES (1, 0, 0, CAST('a' AS BLOB), "
	"CAST('1' AS BLOB), 1, 1), (2, 0, 0, CAST('b' AS BLOB), "
	"CAST('1' AS BLOB), 1, 2), (3, 0, 0, CAST('a' AS BLOB), "
	"CAST('2' AS BLOB), 2, 1), (4, 0, 1, CAST('b' AS BLOB), NULL, 0, 0);"
	"INSERT INTO log VALUES (5, 0, 0, CAST('c' AS BLOB), "
	"CAST('1' AS BLOB), 1, 5), (6, 0, 0, CAST('a' AS BLOB), "
	"CAST('3' AS BLOB), 3, 1);";

static void
test_sqlite_migrate4(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 more;

	fx_db_exec(f, sq_schema4_sql, 1);
	assert_int_equal(fx_rev(f), 6);
	assert_int_equal(fx_compact_rev(f), 3);
	assert_int_equal(fx_nkeys(f), 2);
	assert_string_equal(fx_get(f, S("a")), "a@3/1/6=3");
	assert_string_equal(fx_get(f, S("b")), "");
	assert_string_equal(fx_get_at(f, S("b"), 3), "b@1/2/2=1");
	assert_string_equal(fx_get_at(f, S("b"), 4), "");
	assert_string_equal(fx_get_at(f, S("a"), 5), "a@2/1/3=2");
	assert_string_equal(fx_get_at(f, S("c"), 6), "c@1/5/5=1");
	assert_int_equal(fx_get_at_err(f, S("a"), 2, &err), -1);
	assert_int_equal(err.code, STORE_ERR_COMPACTED);
	assert_string_equal(list_at(f, 3, NULL, 10, 2, 0),
	    "a@2/1/3=2 b@1/2/2=1");
	assert_string_equal(list_at(f, 5, NULL, 10, 2, 0),
	    "a@2/1/3=2 c@1/5/5=1");
	assert_string_equal(fx_history(f, 3), "3.0:a@2/1/3=2 4.0:del:b "
	    "5.0:c@1/5/5=1 6.0:a@3/1/6=3");
	assert_int_equal(fx_key_history(f, S("a"), 3, 10, &more, &err), 2);
	assert_string_equal(buf_cstr(&f->out), "3.0:a@2/1/3=2 6.0:a@3/1/6=3");
	/* Compacted further: b's put stays kept until its delete is below. */
	fx_put1(f, "d", "1");
	assert_int_equal(fx_compact(f, 5, &err), 0);
	assert_string_equal(fx_get_at(f, S("a"), 5), "a@2/1/3=2");
	assert_string_equal(list_at(f, 5, NULL, 10, 2, 0),
	    "a@2/1/3=2 c@1/5/5=1");
	fx_reopen(f, NULL);
	assert_string_equal(fx_get_at(f, S("a"), 6), "a@3/1/6=3");
	assert_int_equal(fx_db_scalar(f, "SELECT value FROM meta WHERE "
	    "name = 'schema'"), 7);
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM sqlite_master "
	    "WHERE name IN ('log', 'history_key')"), 0);
	/* Kept below 5: a@3 (rev 3); b's delete at 4 took its put away. */
	assert_int_equal(fx_db_scalar(f, "SELECT COUNT(*) FROM kept"), 1);
	assert_int_equal(fx_db_scalar(f, "SELECT MIN(rev) FROM history"), 5);
}

/*
 * etcd's view: a store that reads from its view (f) sees at once what
 * another store on the same prefix (g, another daemon) committed, however
 * far its own event stream is behind (linearizable); a serializable read
 * answers from the view as it is; stats say the view is on.
 */
static void
test_etcd_view(void **state)
{
	struct fx		*f = *state;
	struct fx		 g;
	struct store_stats	 st;
	struct store_range	 rg;
	int			 i;
	char			 v[16];

	fx_put1(f, "a", "0");
	fx_twin(f, &g, f->prefix);
	for (i = 1; i <= 20; i++) {
		snprintf(v, sizeof v, "%d", i);
		fx_put1(&g, "a", v);
		fx_get(f, S("a"));
		assert_non_null(strstr(buf_cstr(&f->out), v));
		memset(&rg, 0, sizeof rg);
		rg.prefix = "";
		rg.limit = 10;
		fx_list(f, &rg, 1, 0);
		assert_non_null(strstr(buf_cstr(&f->out), v));
	}
	fx_twin_close(&g);
	rg.serializable = 1;
	assert_string_equal(fx_list(f, &rg, 1, 0), "a@21/1/21=20");
	fx_stats(f, &st);
	/*
	 * A node: key, value and its struct (lease and hash link included,
	 * 91), and the hash index's first 64 buckets (512).
	 */
	assert_string_equal(st.view, "on: 1 keys, 603 of 1048576 bytes");
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define ETCD(t)	{ #t "/etcd", t, fx_setup, fx_teardown, &fx_etcd }
#define LOCAL(t) MEM(t), SQL(t)
#define ETCDV(t) { #t "/etcd-view", t, fx_setup, fx_teardown, &fx_etcdv }
#define ALL(t)	MEM(t), SQL(t), ETCD(t), ETCDV(t)

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		ALL(test_get_at),
		ALL(test_range_at),
		ALL(test_key_history),
		ALL(test_compact_keeps),
		LOCAL(test_key_history_one_rev),
		ALL(test_model_at),
		SQL(test_sqlite_migrate),
		SQL(test_sqlite_migrate4),
		ETCDV(test_etcd_view),
	};
	struct CMUnitTest	 run[sizeof tests / sizeof tests[0]];
	size_t			 i, n = 0;

	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if ((tests[i].initial_state != &fx_etcd &&
		    tests[i].initial_state != &fx_etcdv) || fx_etcd_url() != NULL)
			run[n++] = tests[i];
	}
	return (_cmocka_run_group_tests("test_store_rev", run, n, NULL, NULL));
}
