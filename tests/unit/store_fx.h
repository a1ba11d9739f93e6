/*
 * The fixture of the store tests (test_store*.c): a fresh store of one
 * backend for each test (memory; SQLite in a new temporary directory; etcd
 * at $METAD_TEST_ETCD under a key prefix no other test uses), and helpers
 * that make one store call each, fail the test when it fails, and render
 * what it gave as text: "key@version/create_rev/mod_rev=value" for a kv,
 * "rev.seq:kv" or "rev.seq:del:key" for an event, bytes outside printable
 * ASCII as \xHH.  The text is in f->out, valid until the next helper.
 *
 * Revisions: a test counts them from its store's first rev, f->r0: 0 for
 * memory and SQLite, and for etcd the cluster's revision when the store
 * opened (etcd's revisions are the whole cluster's; a fresh prefix does
 * not start at 0).  Every rev a helper takes, returns or renders is
 * counted from r0, so one expectation holds on every backend.
 *
 * The store calls that answer through a callback (reads outside a batch,
 * store_begin(), store_commit()): a helper makes the call, and for a local
 * store (f->base NULL) asserts that the callback ran before the call
 * returned; for etcd it runs f->base until the callback comes (FX_WAIT_S
 * at most).  Either way it asserts the callback ran exactly once.  Inside
 * a batch fx_get() is store_get(); outside, store_read_get().  fx_history()
 * reads the history in chunks of f->hist_max events, checking each chunk
 * (whole revisions, in order, max_events kept but to finish a revision).
 *
 * The store tests look inside the store they test (its batch state, its
 * options): they see it as its backends do (store_backend.h).
 *
 * Every store has f as its opts.notify: each call is checked (it follows
 * the last one, and the store's rev is its "to"; a local store's history
 * holds the events it announces) and noted as "from-to" (from r0) for
 * fx_notes().
 *
 * etcd: a batch reads only the keys it named at store_begin(), so
 * fx_begin() takes the keys its writes and gets will name.  After a
 * commit, fx_try_commit() also waits until the batch's events are back
 * through the watch stream (the store rev reaches commit_rev), as the
 * daemon answers a write only then.  Each batch lands at one etcd
 * revision, the one after its base: fx_begin() fails the test when etcd
 * moved meanwhile, since a writer outside the test would shift every rev
 * it expects.  The etcd tests write under "metad-test/" and compact the
 * cluster's history up to their revs: METAD_TEST_ETCD is for an etcd of
 * the tests' own (tests/run-etcd starts one).
 */
#ifndef METAD_TEST_STORE_FX_H
#define METAD_TEST_STORE_FX_H

#include <stddef.h>
#include <stdint.h>

#include "store/store_backend.h"
#include "util.h"

/* How long a helper waits for etcd before it fails the test. */
#define FX_WAIT_S		10
/* fx_history()'s chunk: small, so that every test reads in chunks. */
#define FX_HISTORY_CHUNK	2

struct event_base;

struct fx {
	const char		*kind;		/* memory, sqlite, etcd */
	size_t			 view_max_bytes;	/* etcd: its view */
	char			 dir[64];	/* sqlite */
	char			 spec[192];
	char			 prefix[96];	/* etcd */
	struct store_options	 opts;
	struct event_base	*base;		/* etcd; NULL: a local store */
	uint64_t		 r0;
	struct store		*s;
	struct buf		 out;
	size_t			 hist_max;	/* fx_history()'s chunk */
	struct buf		 notes;		/* "from-to" of each notify */
	uint64_t		 notified;	/* the last "to" */
};

#define S(lit)	(lit), (sizeof(lit) - 1)

/* The etcd URL of $METAD_TEST_ETCD, or NULL: no etcd tests then. */
const char	*fx_etcd_url(void);

/* cmocka fixtures: *state is a struct fx with its kind set. */
int		 fx_setup(void **);
int		 fx_teardown(void **);
/*
 * Close f's store and open it again (its data stay), with opts (NULL:
 * f's); the fixture's prefix, loop and notify are kept.
 */
void		 fx_reopen(struct fx *, const struct store_options *);
/*
 * One integer an SQL query reads from a sqlite store's file (the store
 * closed meanwhile).
 */
long long	 fx_db_scalar(struct fx *, const char *sql);
/*
 * A sqlite store's file changed by sql with the store closed (a new file
 * first if fresh: a database an older metad left), then opened again.
 */
void		 fx_db_exec(struct fx *, const char *sql, int fresh);
/*
 * fn on f's store in a child killed with SIGKILL once fn is done (no
 * close: as after kill -9, the file is all that is left), then the store
 * opened again in the test's process.
 */
void		 fx_crash_after(struct fx *, void (*fn)(struct fx *));
/*
 * SQLite without a loop (the test drives the checkpoint): its slices,
 * until it ends, fewer than max of them.
 */
void		 fx_ckpt_slices(struct fx *, int max);
/* The tables schemas 4 and 5 (an older metad's files) both have. */
#define FX_SQL_OLD_TABLES \
	"CREATE TABLE meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL);" \
	"CREATE TABLE kv (key BLOB PRIMARY KEY, value BLOB NOT NULL, " \
	"version INTEGER NOT NULL, create_rev INTEGER NOT NULL, " \
	"mod_rev INTEGER NOT NULL) WITHOUT ROWID;" \
	"CREATE TABLE history (rev INTEGER NOT NULL, seq INTEGER NOT NULL, " \
	"type INTEGER NOT NULL, key BLOB NOT NULL, value BLOB, " \
	"version INTEGER NOT NULL, create_rev INTEGER NOT NULL, " \
	"PRIMARY KEY (rev, seq)) WITHOUT ROWID;"

/*
 * cmocka fixtures: fx_setup(), then the store opened again on a loop of
 * its own (opts.base, as in the daemon) with sync; f->base stays NULL, so
 * the fixture's reads are local, at once.  The teardown closes the store
 * while the loop is there, then frees the loop.
 */
int		 fx_loop_setup(void **, enum store_sync);
int		 fx_loop_teardown(void **);
/* A remote store (etcd): callbacks come on f->base. */
int		 fx_remote(const struct fx *);
/*
 * etcd: g, a second store on f's etcd and loop, under prefix (another
 * daemon on f's prefix, or a writer outside it); fx_twin_close() ends it.
 */
void		 fx_twin(struct fx *f, struct fx *g, const char *prefix);
void		 fx_twin_close(struct fx *);
/*
 * Wait for a callback: local, assert *flag is set already; etcd, run f's
 * loop until it is.  fx_wait_rev(): etcd, until the store's rev reaches
 * rev.
 */
void		 fx_wait(struct fx *, int *flag);
void		 fx_wait_rev(struct fx *, uint64_t rev);

/* The store's rev, its compact rev (0: nothing of this test's), from r0. */
uint64_t	 fx_rev(const struct fx *);
uint64_t	 fx_compact_rev(const struct fx *);
/* r0 + rev: the store's own number for the test's rev. */
uint64_t	 fx_abs(const struct fx *, uint64_t);
/* The notifications since the last call ("0-1 1-3"), then forgets them. */
const char	*fx_notes(struct fx *);

/* Reads: the kv at key ("" when absent), a range, the history. */
const char	*fx_get(struct fx *, const char *, size_t);
/*
 * A range that must give n kvs and more (n == -1: must fail; n == -2:
 * any number of kvs, more unchecked).
 */
const char	*fx_list(struct fx *, const struct store_range *, long n,
		    int more);
/* The whole history from rev from, read in chunks of f->hist_max. */
const char	*fx_history(struct fx *, uint64_t from);
/* One store_read_history(): its events (appended to f->out), *more. */
long		 fx_history_chunk(struct fx *, uint64_t from, size_t max,
		    int *more);
/* A history read that may fail: 0, or -1 and *err. */
int		 fx_history_err(struct fx *, uint64_t from,
		    struct store_err *);
/* The kv at key as of rev (from r0; "" when absent); _err may fail. */
const char	*fx_get_at(struct fx *, const char *, size_t, uint64_t);
int		 fx_get_at_err(struct fx *, const char *, size_t, uint64_t,
		    struct store_err *);
/*
 * store_read_key_history() from rev from: n events (in f->out) and *more,
 * or -1 and *err.
 */
long		 fx_key_history(struct fx *, const char *, size_t, uint64_t,
		    size_t, int *, struct store_err *);
uint64_t	 fx_nkeys(struct fx *);
void		 fx_stats(struct fx *, struct store_stats *);

/*
 * A batch: begin (with the keys it reads, a NULL-terminated list of
 * strings), writes at a rev (the previous version), commit.
 */
#define fx_begin(...)	fx_begin_list(__VA_ARGS__, (const char *)NULL)
void		 fx_begin_list(struct fx *, ...);
void		 fx_begin_keys(struct fx *, const struct store_keys *);
/* store_begin(): 0 once the batch is open, or -1 and *err. */
int		 fx_try_begin(struct fx *, const struct store_keys *,
		    struct store_err *);
uint64_t	 fx_put(struct fx *, uint64_t rev, uint32_t seq,
		    const char *, size_t, const char *, size_t);
int		 fx_del(struct fx *, uint64_t rev, uint32_t seq,
		    const char *, size_t);
void		 fx_commit(struct fx *, uint64_t rev);
/* The commit: 0 once it landed (etcd: and its events came), or -1. */
int		 fx_try_commit(struct fx *, uint64_t rev,
		    struct store_err *);
/* One committed put of a string key and value at the next rev. */
void		 fx_put1(struct fx *, const char *, const char *);
/*
 * store_compact() at the test's rev: in the open batch, or else in a
 * batch of its own committed at the current rev.
 */
int		 fx_compact(struct fx *, uint64_t, struct store_err *);

/* Callbacks that append to f->out (arg is f). */
int		 fx_kv_cb(const struct store_kv *, void *);
int		 fx_ev_cb(const struct store_event *, void *);

#endif
