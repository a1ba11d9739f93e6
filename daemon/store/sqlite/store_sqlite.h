/*
 * The SQLite backend's state and helpers, shared by store_sqlite.c (open,
 * reads), store_sqlite_schema.c (tables, migrations) and
 * store_sqlite_batch.c (batches: transactions, writes, marks, commit,
 * compaction) and the others.
 */
#ifndef METAD_STORE_SQLITE_H
#define METAD_STORE_SQLITE_H

#include <sys/queue.h>

#include <stdint.h>

#include <sqlite3.h>

#include "store/store_backend.h"

/*
 * history's rows are keyed by an id (a rowid: each append goes at the end
 * of the table's B-tree) that grows with (rev, seq): an event gets
 * max(the last id + 1, rev << SQ_ID_SHIFT) (store_sqlite_hist_add()).  So
 * every event of rev R or later has an id of at least R << SQ_ID_SHIFT,
 * and a rev range is an id range: from SQ_ID_FROM(R) (the events before R
 * found there, only after a rev of more than 2^SQ_ID_SHIFT events, are
 * left out by a test of rev), up to SQ_ID_FIRST(R), the first event at
 * R or later (INT64_MAX if none).  r: an SQL expression.  Exact for every
 * rev below 2^53 (metad-protocol(7), LIMITS), with no bound on a rev's
 * events.
 */
#define SQ_ID_SHIFT	8
#define SQ_STR(x)	SQ_STR_(x)
#define SQ_STR_(x)	#x
#define SQ_ID_FROM(r)	"((" r ") << " SQ_STR(SQ_ID_SHIFT) ")"
#define SQ_ID_FIRST(r) \
	"(SELECT IFNULL(MIN(id), 9223372036854775807) FROM history WHERE " \
	"id >= " SQ_ID_FROM(r) " AND rev >= (" r "))"

/* The store's rev: meta 'rev', 'ckpt_rev', or a newer event in history. */
#define SQ_REV_SQL \
	"SELECT MAX((SELECT value FROM meta WHERE name = 'rev'), " \
	"IFNULL((SELECT value FROM meta WHERE name = 'ckpt_rev'), 0), " \
	"IFNULL((SELECT rev FROM history ORDER BY id DESC LIMIT 1), 0))"

enum store_sqlite_stmt {
	SQ_GET,
	SQ_DELETE,
	SQ_HIST_ADD,
	SQ_HIST_GET,
	SQ_HIST_DROP,
	SQ_SET_META,
	SQ_RANGE,
	SQ_RANGE_OPEN,
	SQ_RANGE_KEYS,
	SQ_RANGE_KEYS_OPEN,
	SQ_BEGIN,
	SQ_COMMIT,
	SQ_ROLLBACK,
	SQ_SAVEPOINT,
	SQ_RELEASE,
	SQ_ROLLBACK_TO,
	SQ_GET_AT,
	SQ_RANGE_AT,
	SQ_RANGE_AT_OPEN,
	SQ_KEY_HIST,
	SQ_KEPT_DEL,
	SQ_KV_SET,
	SQ_KEPT_PUT,
	SQ_KEYS_FILL,
	SQ_KEYS_TRIM,
	SQ_TAIL_GET_AT,
	SQ_TAIL_KEY_HIST,
	SQ_GET_VER,
	SQ_KEPT_GET,
	SQ_HIST_BELOW,
	SQ_NSTMT
};

/*
 * A key's newest state not yet checkpointed into kv (store_sqlite_log.c):
 * one allocation with its key and value.
 */
struct sq_ent {
	char		*key;
	size_t		 klen;
	unsigned char	*val;		/* NULL for a delete */
	size_t		 vlen;
	uint64_t	 hash;
	uint64_t	 version, create_rev, mod_rev;
	int		 deleted;
};

/*
 * Key -> entry, open addressing (entries are only added or replaced).  A
 * probe reads tag (the key's sq_hash() | 1, 0 for an empty slot) and goes
 * to the entry only when its tag matches: a miss never leaves the array.
 */
struct sq_map {
	struct sq_ent	**slot;
	uint64_t	 *tag;
	size_t		  cap, n, bytes;
};

/* The open batch's writes, in order, and the newest of each key. */
struct sq_pend {
	struct sq_ent	**v;
	size_t		  n, cap;
	struct sq_map	  idx;
};

struct event;
struct event_base;
struct sq_sync;
struct sq_lread;

/*
 * Batches out at once (store.h): committed, their fsync to come
 * (store_sqlite_sync.c), each with the writes it made.
 */
#define SQ_BATCHES_OUT	64
struct sq_out {
	STAILQ_ENTRY(sq_out) entry;
	struct sq_pend	 pend;
	uint64_t	 seq, nkeys;
};

struct store_sqlite {
	sqlite3		*db;
	sqlite3_stmt	*st[SQ_NSTMT];
	char		*wal_path;
	uint64_t	 nkeys;

	int			 in_txn;
	int			 broken;
	enum store_errcode	 broken_code;
	uint64_t		 nkeys_begin;
	uint64_t		 compact_begin;

	/* Leases (store_sqlite_lease.c): its statements; any key leased. */
	sqlite3_stmt	*lst[9];
	int		 leased;
	/* Idempotent writes' records (store_sqlite_idem.c). */
	sqlite3_stmt	*ist[4];
	void		*idem_answer;	/* the last one read, a copy */
	uint64_t	 idem_oldest;	/* no record expires before */

	int		 marked;
	int		 broken_mark;
	uint64_t	 nkeys_mark;
	uint64_t	 compact_mark;

	/* The log-structured commit (store_sqlite_log.c). */
	int		 sync_full;
	struct sq_map	 dirty;		/* committed, not in kv yet */
	struct sq_pend	 pend;		/* the open batch's writes */
	size_t		 pend_mark;
	uint64_t	 ckpt_rev;	/* kv holds every event up to it */
	uint64_t	 keys_rev;	/* history_by_key: from compact_rev */
	uint64_t	 keys_floor;	/* history_by_key has no row below it */
	int		 hist_left;	/* history may hold rows < compact_rev */
	uint64_t	 hist_id;	/* history's last id, or above it */
	struct sq_ent	**sorted;	/* a checkpoint's order, reused */
	size_t		 sorted_cap;
	struct sq_clean	*clean;		/* kv's version of keys, a cache */
	/* A checkpoint in slices (store_sqlite_ckpt.c). */
	int		 ck_phase;	/* SQ_CK_* */
	int64_t		 ck_us;		/* its slices' time so far */
	struct sq_map	 frozen;	/* the dirty map it writes into kv */
	struct sq_ent	**fsorted;	/* frozen's entries, in key order */
	size_t		 fsorted_cap, fn, fdone;
	uint64_t	 frozen_rev;	/* the newest event in frozen */
	struct event	*ckpt_ev;
	int64_t		 first_us, last_us;	/* the dirty map's writes */
	uint64_t	 batches, events;	/* and their batches */
	int		 wal_pages;	/* the WAL's frames (its hook) */
	uint64_t	 ckpts, replayed;
	/* Commits out, fsynced by a thread (store_sqlite_sync.c). */
	struct sq_sync	*sync;
	STAILQ_HEAD(, sq_out) out, out_free;
	uint64_t	 nkeys_landed;
	STAILQ_HEAD(, sq_lread) lreads;		/* waiting for them */
};

/* -1 with err filled from SQLite's rc (full, I/O, or internal). */
int	store_sqlite_fail(struct store_sqlite *, int, const char *,
	    struct store_err *);
void	store_sqlite_done(sqlite3_stmt *);
int	store_sqlite_run_stmt(struct store_sqlite *, sqlite3_stmt *,
	    const char *, struct store_err *);
/* Run statement idx to its end; -1 on error. */
int	store_sqlite_run(struct store_sqlite *, enum store_sqlite_stmt,
	    const char *, struct store_err *);
int	store_sqlite_bind_blob(sqlite3_stmt *, int, const void *, size_t);
/*
 * The VFS that writes a commit's WAL frames at once, and grows the WAL
 * ahead of them SQ_WAL_GROW bytes of zeros at a time (store_sqlite_vfs.c).
 */
#define SQ_WAL_GROW	(1024 * 1024)
const char *store_sqlite_vfs(void);
/* The page cache that skips empty truncates (store_sqlite_pcache.c). */
void	store_sqlite_pcache_install(void);
/* Its truncates passed on and skipped; -1 if it is not installed. */
int	store_sqlite_pcache_counts(unsigned long *, unsigned long *);
/* Creates the tables a metad database has, if they are missing. */
int	store_sqlite_schema(struct store_sqlite *, struct store_err *);
int	store_sqlite_scalar(struct store_sqlite *, const char *, uint64_t *,
	    struct store_err *);
int	store_sqlite_load(struct store *, struct store_sqlite *,
	    struct store_err *);
/* A kv or history row (the same first five columns) into kv. */
void	store_sqlite_row(sqlite3_stmt *, int, struct store_kv *);

/* The range as bounds on key: lo <= key < hi (no hi: open). */
struct store_sqlite_span {
	char	*lo;
	size_t	 lo_len;
	char	*hi;
	size_t	 hi_len;
};

void	store_sqlite_bounds(const struct store_range *,
	    struct store_sqlite_span *);
/* Steps st (bound, with LIMIT n + 1) through a range's rows. */
long	store_sqlite_walk(struct store_sqlite *, sqlite3_stmt *,
	    const struct store_range *, store_kv_cb, void *, int *,
	    struct store_err *);

/* Reads at a revision, one key's history (store_sqlite_rev.c). */
int	store_sqlite_get_at(struct store *, const char *, size_t, uint64_t,
	    store_kv_cb, void *, struct store_err *);
long	store_sqlite_range_at(struct store *, const struct store_range *,
	    store_kv_cb, void *, int *, struct store_err *);
int	store_sqlite_key_history(struct store *, const char *, size_t,
	    uint64_t, store_event_cb, void *, struct store_err *);
/* A history row (key, value, version, create_rev, rev, seq, type). */
void	store_sqlite_event(sqlite3_stmt *, struct store_event *);
/* Schema 1 to 2 (what reads at a revision need), in one transaction. */
int	store_sqlite_migrate(struct store_sqlite *, struct store_err *);

/* A write may go on only in a live, unbroken transaction. */
int	store_sqlite_alive(struct store_sqlite *, const char *,
	    struct store_err *);

/* Leases (store_sqlite_lease.c): the tables lease and lease_key. */
extern const char store_sqlite_lease_schema[];
int	store_sqlite_lease_prepare(struct store_sqlite *, struct store_err *);
extern const char store_sqlite_idem_schema[];
int	store_sqlite_idem_prepare(struct store_sqlite *, struct store_err *);
void	store_sqlite_idem_finalize(struct store_sqlite *);
int	store_sqlite_idem_get(struct store *, const void *, size_t,
	    struct store_idem *, struct store_err *);
int	store_sqlite_idem_put(struct store *, const void *, size_t,
	    const struct store_idem *, uint64_t, struct store_err *);
void	store_sqlite_lease_finalize(struct store_sqlite *);
/* A key's lease from lease_key (keys served from memory lack it). */
uint64_t store_sqlite_lease_of(struct store_sqlite *, const char *, size_t);
int	store_sqlite_lease_detach(struct store_sqlite *, const char *, size_t,
	    struct store_err *);
void	store_sqlite_read_leases(struct store *, store_leases_done, void *);
void	store_sqlite_read_lease_keys(struct store *, uint64_t, const char *,
	    size_t, uint64_t, store_read_done, void *);
/* The batches out landed: the lease reads that waited for them. */
void	store_sqlite_lreads_run(struct store *);
int	store_sqlite_lease_put(struct store *, const struct store_lease *,
	    struct store_err *);
int	store_sqlite_lease_attach(struct store *, const char *, size_t,
	    uint64_t, struct store_err *);
int	store_sqlite_lease_revoke(struct store *, uint64_t, uint64_t,
	    uint64_t *, struct store_err *);

/* Batches (store_sqlite_batch.c). */
int	store_sqlite_begin(struct store *, struct store_err *);
int	store_sqlite_put(struct store *, uint64_t, uint32_t, const char *,
	    size_t, const void *, size_t, uint64_t, struct store_kv *,
	    uint64_t *, struct store_err *);
int	store_sqlite_del(struct store *, uint64_t, uint32_t, const char *,
	    size_t, int *, struct store_err *);
/*
 * A range statement (its SQL ends "ORDER BY ... LIMIT ?3") descending: a
 * statement of its own, that the caller finalizes; NULL and err if not.
 */
sqlite3_stmt	*store_sqlite_desc(struct store_sqlite *, sqlite3_stmt *,
		    struct store_err *);
/* store.h: store_delete_range() (store_sqlite_range.c). */
int	store_sqlite_del_range(struct store *, uint64_t, const char *, size_t,
	    const char *, size_t, uint64_t *, struct store_err *);
int	store_sqlite_mark(struct store *, struct store_err *);
int	store_sqlite_undo(struct store *, struct store_err *);
void	store_sqlite_rollback(struct store *);
int	store_sqlite_commit(struct store *, uint64_t, struct store_err *);
int	store_sqlite_compact(struct store *, uint64_t, struct store_err *);
int	store_sqlite_set_meta(struct store_sqlite *, const char *, uint64_t,
	    struct store_err *);

/* The phases of a checkpoint in slices. */
enum {
	SQ_CK_IDLE,
	SQ_CK_KV,	/* frozen's entries into kv, a slice a turn */
	SQ_CK_LOG,	/* ckpt_rev to frozen_rev */
	SQ_CK_KEYS,	/* the key index towards frozen_rev, if wanted */
	SQ_CK_WAL	/* SQLite's WAL into the database file */
};

/*
 * The clean cache: the version and create_rev kv holds for a key (0: no
 * row), as a checkpoint that committed left it; two-way set-associative,
 * short keys only.  Filled only from the maps' entries once kv has them,
 * before the maps are emptied; a key in a map is looked up there first,
 * so an entry is never older than kv.
 */
#define SQ_CLEAN_SLOTS	65536
#define SQ_CLEAN_KEY	36
struct sq_clean {
	uint64_t	 hash;
	uint64_t	 version, create_rev;
	uint32_t	 klen;			/* 0: an empty slot */
	char		 key[SQ_CLEAN_KEY];
};
/* 1 (a row, cur filled), 0 (none) or -1 (not in the cache). */
int		 sq_clean_find(struct store_sqlite *, const char *, size_t,
		    struct store_kv *);
/* The entries of m (or n of v), in kv now, fill the cache. */
void		 sq_clean_fill(struct store_sqlite *, const struct sq_map *,
		    struct sq_ent **, size_t);

/* The log-structured commit (store_sqlite_log.c). */
struct sq_ent	*sq_ent_new(const char *, size_t, const void *, size_t, int);
int		 sq_ent_cmp(const void *, const void *);
uint64_t	 sq_hash(const char *, size_t);
struct sq_ent	*sq_map_find(const struct sq_map *, const char *, size_t);
struct sq_ent	*sq_map_find_h(const struct sq_map *, const char *, size_t,
		    uint64_t);
void		 sq_map_free(struct sq_map *, int);
void		 sq_map_clear(struct sq_map *, int);
/* e replaces the entry of its key; owned: the replaced one is freed. */
void		 sq_map_set(struct sq_map *, struct sq_ent *, int);
int		 sq_apply(struct store_sqlite *, const struct sq_ent *,
		    struct store_err *);
/*
 * A checkpoint in slices starts once the dirty map holds half of HARD's
 * entries or bytes, the tail SOFT_REVS events, or the WAL SOFT_WAL pages
 * (a bound on the file: SQLite writes it again from its start after a
 * checkpoint, and never shrinks it); one runs at once (in a single
 * transaction) past HARD, HARD_BYTES or HARD_REVS, the bounds of memory
 * and of the replay at open.  The larger a checkpoint, the fewer times
 * each page of kv and of history's key index is written per key, and the
 * fewer pages SQLite's WAL copy writes (measured: BENCHMARKS.md), so
 * below those it waits for the writes to pause for IDLE_MS, or for its
 * oldest write to be BUSY_MS old.  That saves the loop's time when the
 * loop is busy, which its batches show: with more than BUSY_BATCH events
 * a batch on average (many clients).  With fewer (one or two clients: the
 * loop mostly waits for their fsyncs) the oldest write waits IDLE_MS
 * only, and the WAL stays small: every such commit adds its own pages.
 */
#define SQ_CKPT_HARD		65536
#define SQ_CKPT_HARD_BYTES	(8 * 1024 * 1024)
#define SQ_CKPT_HARD_REVS	262144
#define SQ_CKPT_SOFT		(SQ_CKPT_HARD / 2)
#define SQ_CKPT_SOFT_BYTES	(SQ_CKPT_HARD_BYTES / 2)
#define SQ_CKPT_SOFT_REVS	(SQ_CKPT_HARD_REVS / 2)
#define SQ_CKPT_SOFT_WAL	32768
#define SQ_CKPT_IDLE_MS		250
#define SQ_CKPT_BUSY_MS		1000
#define SQ_CKPT_BUSY_BATCH	2
/*
 * SQLite's WAL copy on its own (the WAL into the database file, not a
 * checkpoint of the maps) once the WAL holds this many frames, on a turn
 * of the loop of its own: it bounds the file, and a copy's time goes with
 * the frames it sorts and copies (issue 39: 90 MB of WAL and copies of
 * 28-52 ms under churn at 62k puts/s, when only the maps' checkpoint,
 * about once a second, copied it).  SOFT_WAL stays for a WAL whose copy
 * could not complete.
 */
#define SQ_WAL_COPY		8192
/* One slice of a checkpoint (a turn of the loop); 1: more to do. */
int		 store_sqlite_ckpt_slice(struct store *);
/* What a checkpoint is due on: the dirty map, the tail, the WAL, time. */
struct sq_ckpt_load {
	size_t		 keys, bytes;	/* the dirty map's */
	uint64_t	 revs;		/* the tail's events */
	int		 wal_pages;
	int64_t		 first_ms, last_ms;	/* since its writes */
	int		 busy;		/* its batches are large */
};
/* ms until a checkpoint is due (0: now). */
int64_t		 store_sqlite_ckpt_due(const struct sq_ckpt_load *);
void		 sq_pend_add(struct store_sqlite *, struct sq_ent *);
void		 sq_pend_truncate(struct store_sqlite *, size_t);
/* The newest state not in kv: the batch's, the dirty map's, frozen's. */
struct sq_ent	*sq_find(struct store_sqlite *, const char *, size_t);
int	store_sqlite_checkpoint(struct store *, struct store_err *);
/* A batch's writes, durable now, join the dirty map (p emptied). */
void	store_sqlite_landed(struct store *, struct sq_pend *);
/* The fsync thread (store_sqlite_sync.c). */
void	store_sqlite_sync_start(struct store *, struct event_base *);
int	store_sqlite_sync_commit(struct store *);
void	store_sqlite_sync_now(struct store_sqlite *);
void	store_sqlite_sync_stop(struct store *);
/* The directories leading to a path made, and a name in a directory,
 * durable: the directories' fsyncs. */
int	store_sqlite_mkdirs(const char *, struct store_err *);
int	store_sqlite_sync_parent(const char *, struct store_err *);
/* The newest entry of the key in the batches out (h: its sq_hash()). */
struct sq_ent *store_sqlite_out_find(struct store_sqlite *, const char *,
	    size_t, uint64_t);
void	store_sqlite_log_init(struct store *, struct event_base *);
void	store_sqlite_log_free(struct store_sqlite *);
int	store_sqlite_recover(struct store *, uint64_t, struct store_err *);
long	store_sqlite_range_merged(struct store *, const struct store_range *,
	    store_kv_cb, void *, int *, struct store_err *);
/* Before a read of kv up to rev: the log up to rev checkpointed. */
int	store_sqlite_ckpt_for_read(struct store *, uint64_t,
	    struct store_err *);
/*
 * The key index (history_by_key) holds every event from compact_rev to
 * keys_rev.  It is filled when a read wants it (a read at a rev, a key's
 * history: store_sqlite_keys_for_read()), and by a checkpoint only when
 * the writes paused since its freeze or the index lags SQ_KEYS_LAG revs:
 * under steady writes the --history trim compacts most events before any
 * read wants them indexed, and they never are.  Its next fill starts
 * past store_sqlite_keys_from(), where a read that could not fill it
 * scans history's tail instead.
 */
#define SQ_KEYS_LAG	SQ_CKPT_SOFT_REVS
int		 store_sqlite_keys_for_read(struct store *, uint64_t,
		    struct store_err *);
uint64_t	 store_sqlite_keys_from(const struct store *);

#endif
