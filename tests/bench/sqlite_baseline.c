/*
 * sqlite_baseline: what SQLite itself does with metad's durable puts, in
 * process, no socket and no JSON.  The same schema as daemon/store/sqlite/store_sqlite.c
 * (kv and history, WITHOUT ROWID), WAL, exclusive locking, the same 32 MiB
 * cache, and per put the same statements metad runs: one UPSERT ...
 * RETURNING, a history row; per batch, set meta.rev and COMMIT.
 *
 * --log: the floor of metad's log-structured commit (issue 18) instead:
 * per put only the append of its event to the log table, a rowid table
 * keyed by rev << 8 as schema 6's history (no kv, no key lookup), per
 * batch COMMIT.  Both modes also print the
 * process's CPU (user + system) per write.
 *
 * usage: sqlite_baseline --db PATH [--batch N] [--keys K] [--value-size B]
 *            [--duration SECONDS] [--sync full|normal|off] [--log]
 *            [-o text|json]
 */
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sys/resource.h>

#include <sqlite3.h>

#define BASE_DURATION_MAX	60.0
#define BASE_BATCH_MAX		100000
#define BASE_VALUE_MAX		(1024 * 1024)

static const char base_schema[] =
	"PRAGMA locking_mode = EXCLUSIVE; PRAGMA journal_mode = WAL; "
	"PRAGMA cache_size = -32768;"
	"CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, "
	"    value INTEGER NOT NULL);"
	"CREATE TABLE IF NOT EXISTS kv (key BLOB PRIMARY KEY, "
	"    value BLOB NOT NULL, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, mod_rev INTEGER NOT NULL) "
	"    WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS history (rev INTEGER NOT NULL, "
	"    seq INTEGER NOT NULL, type INTEGER NOT NULL, key BLOB NOT NULL, "
	"    value BLOB, version INTEGER NOT NULL, "
	"    create_rev INTEGER NOT NULL, PRIMARY KEY (rev, seq)) "
	"    WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS log (id INTEGER PRIMARY KEY, "
	"    rev INTEGER NOT NULL, seq INTEGER NOT NULL, "
	"    type INTEGER NOT NULL, key BLOB NOT NULL, value BLOB, "
	"    version INTEGER NOT NULL, create_rev INTEGER NOT NULL);"
	"INSERT OR IGNORE INTO meta (name, value) VALUES ('schema', 1), "
	"    ('rev', 0), ('compact_rev', 0);";

enum { B_UPSERT, B_HIST, B_META, B_BEGIN, B_COMMIT, B_LOG, B_NSTMT };

static const char *base_sql[B_NSTMT] = {
	"INSERT INTO kv (key, value, version, create_rev, mod_rev) "
	    "VALUES (?1, ?2, 1, ?3, ?3) ON CONFLICT (key) DO UPDATE SET "
	    "value = excluded.value, version = version + 1, "
	    "mod_rev = excluded.mod_rev RETURNING version, create_rev",
	"INSERT INTO history (rev, seq, type, key, value, version, create_rev) "
	    "VALUES (?1, 0, 0, ?2, ?3, ?4, ?5)",
	"UPDATE meta SET value = ?1 WHERE name = 'rev'",
	"BEGIN IMMEDIATE",
	"COMMIT",
	"INSERT INTO log (id, rev, seq, type, key, value, version, "
	    "create_rev) VALUES (?1 << 8, ?1, 0, 0, ?2, ?3, 1, ?1)"
};

struct base {
	const char	*db_path;
	const char	*sync;
	unsigned	 batch;
	unsigned long	 keys;
	size_t		 value_size;
	double		 duration;
	int		 json;
	int		 log;		/* --log: appends only */
	sqlite3		*db;
	sqlite3_stmt	*st[B_NSTMT];
	char		*value;
	uint64_t	 rev;
	uint64_t	 rng;
};

static double
base_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((double)ts.tv_sec + (double)ts.tv_nsec / 1e9);
}

static void
base_die(struct base *bs, const char *what)
{
	fprintf(stderr, "sqlite_baseline: %s: %s\n", what,
	    bs->db != NULL ? sqlite3_errmsg(bs->db) : "failed");
	exit(1);
}

static void
base_step(struct base *bs, int i)
{
	int	 rc = sqlite3_step(bs->st[i]);

	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		base_die(bs, base_sql[i]);
	sqlite3_reset(bs->st[i]);
}

static void
base_open(struct base *bs)
{
	char	 sql[64];
	int	 i;

	if (sqlite3_open(bs->db_path, &bs->db) != SQLITE_OK)
		base_die(bs, bs->db_path);
	snprintf(sql, sizeof sql, "PRAGMA synchronous = %s;", bs->sync);
	if (sqlite3_exec(bs->db, base_schema, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_exec(bs->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		base_die(bs, "schema");
	for (i = 0; i < B_NSTMT; i++) {
		if (sqlite3_prepare_v3(bs->db, base_sql[i], -1,
		    SQLITE_PREPARE_PERSISTENT, &bs->st[i], NULL) != SQLITE_OK)
			base_die(bs, base_sql[i]);
	}
}

static double
base_cpu(void)
{
	struct rusage	 ru;

	getrusage(RUSAGE_SELF, &ru);
	return ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6);
}

/*
 * One put at rev: the statements metad's store_sqlite_put() ran before
 * issue 18, or with --log only the append its commit path does now.
 */
static void
base_put(struct base *bs, uint64_t rev)
{
	sqlite3_stmt	*up = bs->st[B_UPSERT], *h = bs->st[B_HIST];
	int64_t		 version, create_rev;
	char		 key[32];
	int		 n;

	bs->rng = bs->rng * 6364136223846793005ULL + 1442695040888963407ULL;
	n = snprintf(key, sizeof key, "bench/k/%08lu",
	    (unsigned long)((bs->rng >> 33) % bs->keys));
	if (bs->log) {
		h = bs->st[B_LOG];
		sqlite3_bind_int64(h, 1, (int64_t)rev);
		sqlite3_bind_blob(h, 2, key, n, SQLITE_STATIC);
		sqlite3_bind_blob(h, 3, bs->value, (int)bs->value_size,
		    SQLITE_STATIC);
		base_step(bs, B_LOG);
		return;
	}
	sqlite3_bind_blob(up, 1, key, n, SQLITE_STATIC);
	sqlite3_bind_blob(up, 2, bs->value, (int)bs->value_size,
	    SQLITE_STATIC);
	sqlite3_bind_int64(up, 3, (int64_t)rev);
	if (sqlite3_step(up) != SQLITE_ROW)
		base_die(bs, base_sql[B_UPSERT]);
	version = sqlite3_column_int64(up, 0);
	create_rev = sqlite3_column_int64(up, 1);
	sqlite3_reset(up);
	sqlite3_bind_int64(h, 1, (int64_t)rev);
	sqlite3_bind_blob(h, 2, key, n, SQLITE_STATIC);
	sqlite3_bind_blob(h, 3, bs->value, (int)bs->value_size,
	    SQLITE_STATIC);
	sqlite3_bind_int64(h, 4, version);
	sqlite3_bind_int64(h, 5, create_rev);
	base_step(bs, B_HIST);
}

static void
base_run(struct base *bs)
{
	double		 start, end, t, cpu, commit_max = 0;
	uint64_t	 writes = 0, batches = 0;
	unsigned	 i;

	cpu = base_cpu();
	start = base_now();
	end = start + bs->duration;
	do {
		t = base_now();
		base_step(bs, B_BEGIN);
		for (i = 0; i < bs->batch; i++)
			base_put(bs, ++bs->rev);
		if (!bs->log) {
			sqlite3_bind_int64(bs->st[B_META], 1,
			    (int64_t)bs->rev);
			base_step(bs, B_META);
		}
		base_step(bs, B_COMMIT);
		writes += bs->batch;
		batches++;
		t = base_now() - t;
		if (t > commit_max)
			commit_max = t;
	} while (base_now() < end);
	t = base_now() - start;
	cpu = (base_cpu() - cpu) * 1e6 / (double)writes;
	if (bs->json)
		printf("{\"workload\":\"%s\",\"batch\":%u,\"keys\":%lu,"
		    "\"value_size\":%zu,\"sync\":\"%s\",\"elapsed_s\":%.3f,"
		    "\"writes\":%llu,\"batches\":%llu,\"writes_per_s\":%.3f,"
		    "\"batch_max_us\":%.1f,\"cpu_us_per_write\":%.2f}\n",
		    bs->log ? "sqlite_log" : "sqlite_put", bs->batch, bs->keys,
		    bs->value_size, bs->sync, t, (unsigned long long)writes,
		    (unsigned long long)batches, (double)writes / t,
		    commit_max * 1e6, cpu);
	else
		printf("sqlite_baseline: %llu writes in %llu batches of %u, "
		    "%.3f s: %.0f writes/s (slowest batch %.0f us), "
		    "%.2f us CPU a write\n",
		    (unsigned long long)writes, (unsigned long long)batches,
		    bs->batch, t, (double)writes / t, commit_max * 1e6, cpu);
}

static void
base_usage(void)
{
	fprintf(stderr, "usage: sqlite_baseline --db PATH [--batch N] "
	    "[--keys K] [--value-size B]\n"
	    "           [--duration SECONDS] [--sync full|normal|off] "
	    "[--log] [-o text|json]\n");
	exit(2);
}

static void
base_args(struct base *bs, int argc, char **argv)
{
	static const struct option	 lo[] = {
		{ "db", required_argument, NULL, 'f' },
		{ "batch", required_argument, NULL, 'b' },
		{ "keys", required_argument, NULL, 'k' },
		{ "value-size", required_argument, NULL, 'v' },
		{ "duration", required_argument, NULL, 'd' },
		{ "sync", required_argument, NULL, 'S' },
		{ "log", no_argument, NULL, 'l' },
		{ NULL, 0, NULL, 0 }
	};
	int				 ch;

	while ((ch = getopt_long(argc, argv, "o:", lo, NULL)) != -1) {
		switch (ch) {
		case 'f': bs->db_path = optarg; break;
		case 'b': bs->batch = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': bs->keys = strtoul(optarg, NULL, 10); break;
		case 'v': bs->value_size = strtoul(optarg, NULL, 10); break;
		case 'd': bs->duration = strtod(optarg, NULL); break;
		case 'S': bs->sync = optarg; break;
		case 'l': bs->log = 1; break;
		case 'o': bs->json = strcmp(optarg, "json") == 0; break;
		default: base_usage();
		}
	}
	if (bs->db_path == NULL || optind != argc || bs->batch == 0 ||
	    bs->batch > BASE_BATCH_MAX || bs->keys == 0 ||
	    bs->value_size > BASE_VALUE_MAX || !(bs->duration > 0) ||
	    bs->duration > BASE_DURATION_MAX || (strcmp(bs->sync, "full") &&
	    strcmp(bs->sync, "normal") && strcmp(bs->sync, "off")))
		base_usage();
}

int
main(int argc, char **argv)
{
	struct base	 bs;
	int		 i;

	memset(&bs, 0, sizeof bs);
	bs.batch = 64;
	bs.keys = 20000;
	bs.value_size = 100;
	bs.duration = 3;
	bs.sync = "full";
	bs.rng = 42;
	base_args(&bs, argc, argv);
	if ((bs.value = malloc(bs.value_size + 1)) == NULL)
		base_die(&bs, "malloc");
	memset(bs.value, 'x', bs.value_size);
	base_open(&bs);
	base_run(&bs);
	for (i = 0; i < B_NSTMT; i++)
		sqlite3_finalize(bs.st[i]);
	sqlite3_close(bs.db);
	free(bs.value);
	return (0);
}
