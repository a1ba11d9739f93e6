/*
 * Unit tests of snapshots (store_snapshot(), store.h): on memory, SQLite
 * and, with METAD_TEST_ETCD, etcd, a snapshot is a metad SQLite database
 * that the sqlite backend opens as it is, holding exactly the store's keys
 * as of the snapshot's rev, binary values included, also when writes are
 * committed while it is taken (SQLite's online backup copies them as they
 * land; the other backends read every page at the rev the snapshot
 * started at).  See test_store.c for how the fixture works.
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
#include <unistd.h>

#include <event2/event.h>

#include "store_fx.h"

static struct fx	 fx_mem = { .kind = "memory" };
static struct fx	 fx_sql = { .kind = "sqlite" };
static struct fx	 fx_etcd = { .kind = "etcd" };

struct snap_wait {
	int			 calls;
	uint64_t		 rev;
	int			 failed;
	struct store_err	 err;
};

static void
snap_done(void *arg, uint64_t rev, const struct store_err *err)
{
	struct snap_wait	*w = arg;

	w->calls++;
	w->rev = rev;
	if (err != NULL) {
		w->failed = 1;
		w->err = *err;
	}
}

/* The loop snapshots step on: the fixture's (etcd) or one of our own. */
static struct event_base *
snap_base(struct fx *f)
{
	if (f->base != NULL)
		return (f->base);
	f->s->opts.base = event_base_new();
	assert_non_null(f->s->opts.base);
	return (f->s->opts.base);
}

static void
snap_base_free(struct fx *f)
{
	if (f->base == NULL && f->s->opts.base != NULL) {
		event_base_free(f->s->opts.base);
		f->s->opts.base = NULL;
	}
}

/*
 * Every key of store g, rendered relative to f's r0 (g's revs are f's),
 * at rev (absolute; 0: now).
 */
static char *
snap_keys(struct fx *f, struct store *s, uint64_t rev)
{
	struct store_range	 rg;
	struct store		*saved = f->s;
	char			*out;

	memset(&rg, 0, sizeof rg);
	rg.prefix = "";
	rg.limit = 100000;
	rg.rev = rev;
	f->s = s;
	out = xstrdup(fx_list(f, &rg, -2, 0));
	f->s = saved;
	return (out);
}

/* The snapshot at path, opened by the sqlite backend. */
static struct store *
snap_open(const char *path)
{
	struct store		*s;
	struct store_err	 err;
	char			 spec[128];

	snprintf(spec, sizeof spec, "sqlite:%s", path);
	if ((s = store_open(spec, NULL, &err)) == NULL)
		fail_msg("opening the snapshot: %s", err.msg);
	return (s);
}

/*
 * Takes a snapshot to path, running the loop a turn at a time, and, if
 * during is set, committing a put to key during/N once it started and
 * after each turn.
 * Returns the snapshot's rev; *turns, how many turns it took.
 */
static uint64_t
snap_take(struct fx *f, const char *path, const char *during, int *turns)
{
	struct event_base	*base = snap_base(f);
	struct snap_wait	 w;
	struct store_err	 err;
	char			 key[64];

	memset(&w, 0, sizeof w);
	*turns = 0;
	if (store_snapshot(f->s, path, snap_done, &w, &err) == NULL)
		fail_msg("store_snapshot: %s", err.msg);
	if (during != NULL) {
		snprintf(key, sizeof key, "%s/0", during);
		fx_put1(f, key, "during");
	}
	while (w.calls == 0 && *turns < 100000) {
		event_base_loop(base, EVLOOP_ONCE);
		(*turns)++;
		if (during != NULL && w.calls == 0) {
			snprintf(key, sizeof key, "%s/%d", during, *turns);
			fx_put1(f, key, "during");
		}
	}
	assert_int_equal(w.calls, 1);
	if (w.failed)
		fail_msg("snapshot: %s", w.err.msg);
	return (w.rev);
}

static void
snap_path(struct fx *f, char *path, size_t len)
{
	int	 fd;

	snprintf(path, len, "/tmp/test_store_snap.XXXXXX");
	assert_true((fd = mkstemp(path)) != -1);
	close(fd);
}

/* One committed put of len bytes at the next rev. */
static void
snap_put(struct fx *f, const char *key, const char *value, size_t len)
{
	uint64_t	 rev = fx_rev(f) + 1;

	fx_begin(f, key);
	fx_put(f, rev, 0, key, strlen(key), value, len);
	fx_commit(f, rev);
}

static void
test_snapshot_whole(void **state)
{
	struct fx	*f = *state;
	struct store	*g;
	char		 path[64], *want, *got;
	uint64_t	 rev;
	int		 turns;

	fx_put1(f, "a", "1");
	snap_put(f, "b", S("\x01\x00\xff"));
	fx_put1(f, "a", "2");
	snap_put(f, "c", S("bin\x00\x80"));
	fx_put1(f, "d", "");
	fx_begin(f, "d");
	assert_int_equal(fx_del(f, fx_rev(f) + 1, 0, S("d")), 1);
	fx_commit(f, fx_rev(f) + 1);

	snap_path(f, path, sizeof path);
	rev = snap_take(f, path, NULL, &turns);
	assert_int_equal(rev, fx_abs(f, fx_rev(f)));
	want = snap_keys(f, f->s, 0);
	assert_string_equal(want,
	    "a@2/1/3=2 b@1/2/2=\\x01\\x00\\xff c@1/4/4=bin\\x00\\x80");
	g = snap_open(path);
	assert_int_equal(store_rev(g), rev);
	assert_true(store_compact_rev(g) <= rev);
	got = snap_keys(f, g, 0);
	assert_string_equal(got, want);
	free(got);
	free(want);
	store_close(g);
	unlink(path);
	snap_base_free(f);
}

static void
test_snapshot_empty(void **state)
{
	struct fx	*f = *state;
	struct store	*g;
	char		 path[64], *got;
	uint64_t	 rev;
	int		 turns;

	snap_path(f, path, sizeof path);
	rev = snap_take(f, path, NULL, &turns);
	assert_int_equal(rev, f->r0);
	g = snap_open(path);
	assert_int_equal(store_rev(g), rev);
	got = snap_keys(f, g, 0);
	assert_string_equal(got, "");
	free(got);
	store_close(g);
	unlink(path);
	snap_base_free(f);
}

/*
 * Local stores: 3000 keys of 1 KiB (several steps of SQLite's backup),
 * then a put committed after every turn of the loop while the snapshot
 * is taken: the snapshot is the store as of its rev, whatever the puts.
 */
static void
test_snapshot_while_writing(void **state)
{
	struct fx	*f = *state;
	struct store	*g;
	char		 path[64], key[32], value[1024], *want, *got;
	uint64_t	 rev, r;
	int		 i, turns;

	memset(value, 'v', sizeof value);
	r = fx_rev(f) + 1;
	fx_begin(f);
	for (i = 0; i < 3000; i++) {
		snprintf(key, sizeof key, "k/%05d", i);
		fx_put(f, r, (uint32_t)i, key, strlen(key), value,
		    sizeof value);
	}
	fx_commit(f, r);
	snap_path(f, path, sizeof path);
	rev = snap_take(f, path, "during", &turns);
	print_message("# %s: %d turns, snapshot at rev %" PRIu64 " of %"
	    PRIu64 "\n", f->kind, turns, rev - f->r0, fx_rev(f));
	assert_true(rev >= fx_abs(f, r));
	assert_true(rev <= fx_abs(f, fx_rev(f)));
	/* One more: the snapshot's rev is in the past, read at it. */
	fx_put1(f, "after", "x");
	want = snap_keys(f, f->s, rev);
	assert_non_null(strstr(want, "k/02999@1/"));
	assert_null(strstr(want, "after@"));
	g = snap_open(path);
	assert_int_equal(store_rev(g), rev);
	got = snap_keys(f, g, 0);
	assert_string_equal(got, want);
	free(got);
	free(want);
	store_close(g);
	unlink(path);
	snap_base_free(f);
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define ETCD(t)	{ #t "/etcd", t, fx_setup, fx_teardown, &fx_etcd }
#define LOCAL(t) MEM(t), SQL(t)
#define ALL(t)	MEM(t), SQL(t), ETCD(t)

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		ALL(test_snapshot_whole),
		ALL(test_snapshot_empty),
		LOCAL(test_snapshot_while_writing),
	};
	struct CMUnitTest	 run[sizeof tests / sizeof tests[0]];
	size_t			 i, n = 0;

	for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
		if (tests[i].initial_state != &fx_etcd || fx_etcd_url() != NULL)
			run[n++] = tests[i];
	}
	return (_cmocka_run_group_tests("test_store_snap", run, n, NULL, NULL));
}
