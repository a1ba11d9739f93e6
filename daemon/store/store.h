/*
 * The versioned store: the one interface between metad's request handling
 * and its backends (SQLite, memory).  A backend knows nothing of connections
 * or of the wire protocol; it knows keys, values, revisions and batches.
 *
 * What every backend guarantees:
 *
 * - Keys are byte strings of 1..KEY_MAX_BYTES bytes (no NUL), ordered
 *   bytewise (memcmp; a proper prefix sorts first).  Values are any bytes.
 * - Each key carries version (1 on create, +1 on every put), create_rev and
 *   mod_rev.  A deleted key is gone: re-creating it starts at version 1 with
 *   a new create_rev.
 * - The store revision (store_rev) is the rev of the last committed write;
 *   an empty store is at rev 0.  It survives close and reopen.
 * - Writes happen only inside a batch: store_begin(), then any number of
 *   store_put()/store_delete() calls, then store_commit() or
 *   store_rollback().  The caller hands each write its rev; revs within a
 *   batch never go down, and the caller passes the highest one to
 *   store_commit(), which records it as the store revision.  Writes of one
 *   rev are numbered by seq (0, 1, ...) in the order they were made.
 * - Reads (store_get, store_range, store_history) made inside a batch see the
 *   batch's own writes; outside a batch they see committed state only.
 * - store_commit() returns 0 only once the batch is durable as the sync mode
 *   promises (STORE_SYNC_FULL: fsync'd).  If it fails, the whole batch is
 *   undone: data, history and rev are as they were before store_begin().
 *   store_mark()/store_undo() undo the writes since the mark, inside a batch,
 *   so one request's failure need not spoil the others of its batch.
 * - Every put and delete records an event in the history, in the same
 *   transaction.  store_history() replays events with rev >= from_rev in
 *   (rev, seq) order.  store_compact(rev) drops events below rev and raises
 *   the compact rev, which also survives reopen.
 *
 * Memory: pointers handed to a callback (struct store_kv, struct
 * store_event) are valid only during that callback; copy what you keep.
 * Callbacks return 0 to go on, non-zero to stop the scan.
 *
 * Errors: functions that can fail return -1 and fill a struct store_err.
 *
 * A backend with STORE_CAP_PER_REQUEST (etcd) differs in three ways:
 * - every write request is a batch of its own, opened and committed
 *   without blocking, one at a time: store_begin_async() reads the current
 *   revision into base_rev, with the keys the request will read, and the
 *   request's writes go at base_rev + 1 (the revision the remote store will
 *   give them); store_commit_async() may fail with STORE_ERR_CONFLICT:
 *   another writer moved the store since; nothing was written and the
 *   caller may run the request again (store_begin() and store_commit()
 *   serve only batches that write nothing, such as a compaction's);
 * - rev is the last revision whose events were handed to
 *   store_options.notify (events arrive from the remote store, whoever
 *   wrote them), not the last revision this process committed; seen_rev is
 *   the newest revision any answer of the remote store showed (reads may
 *   see writes whose events have not arrived yet), and commit_rev the
 *   revision the last commit landed at (above base_rev + 1 when a
 *   writer outside metad moved the remote store in between).
 */
#ifndef METAD_STORE_H
#define METAD_STORE_H

#include <stddef.h>
#include <stdint.h>

enum store_errcode {
	STORE_ERR_NONE = 0,
	STORE_ERR_FULL,		/* disk or quota full */
	STORE_ERR_IO,		/* I/O error, corruption */
	STORE_ERR_UNAVAILABLE,	/* backend unreachable */
	STORE_ERR_CONFLICT,	/* per-request commit lost a race: retry */
	STORE_ERR_COMPACTED,	/* history below the compact rev asked */
	STORE_ERR_INTERNAL	/* anything else */
};

#define STORE_ERR_MSG_MAX	256

struct store_err {
	enum store_errcode	 code;
	char			 msg[STORE_ERR_MSG_MAX];
};

enum store_sync {
	STORE_SYNC_FULL,
	STORE_SYNC_NORMAL,
	STORE_SYNC_OFF
};

struct event_base;

struct store_options {
	enum store_sync		 sync;
	size_t			 cache_bytes;	/* 0: backend default */
	/* Remote backends (etcd): */
	const char		*prefix;	/* key namespace, or NULL */
	struct event_base	*base;		/* for their async streams */
	/* Events of revs (from, to] arrived and are in the history. */
	void			 (*notify)(void *, uint64_t from, uint64_t to);
	void			*notify_arg;
};

struct store_kv {
	const char		*key;
	size_t			 key_len;
	const unsigned char	*value;		/* NULL when keys_only */
	size_t			 value_len;
	uint64_t		 version;
	uint64_t		 create_rev;
	uint64_t		 mod_rev;
};

enum store_event_type {
	STORE_EVENT_PUT,
	STORE_EVENT_DELETE
};

struct store_event {
	uint64_t		 rev;
	uint32_t		 seq;
	enum store_event_type	 type;
	struct store_kv		 kv;	/* delete: version 0, value NULL */
};

/*
 * The keys a write request will read (store_begin_async() fetches them
 * with the batch's base); one read past STORE_PREFETCH_MAX is made when
 * asked, as any other.
 */
#define STORE_PREFETCH_MAX	64

struct store_keys {
	struct {
		const char	*key;
		size_t		 len;
	}			 k[STORE_PREFETCH_MAX];
	size_t			 n;
};

static inline void
store_keys_add(struct store_keys *ks, const char *key, size_t len)
{
	if (ks->n < STORE_PREFETCH_MAX) {
		ks->k[ks->n].key = key;
		ks->k[ks->n].len = len;
		ks->n++;
	}
}

struct store_range {
	const char		*prefix;	/* "" for all keys */
	size_t			 prefix_len;
	const char		*after;		/* exclusive start, or NULL */
	size_t			 after_len;
	uint64_t		 limit;		/* at most this many, > 0 */
	int			 keys_only;
};

#define STORE_ENDPOINTS_MAX	8

struct store_endpoint {
	char			 url[128];
	int			 healthy;
};

struct store_stats {
	uint64_t		 keys;
	uint64_t		 db_bytes;
	/* Remote backends: their endpoints and whether each answered. */
	unsigned		 nendpoints;
	struct store_endpoint	 endpoint[STORE_ENDPOINTS_MAX];
};

typedef int (*store_kv_cb)(const struct store_kv *, void *);
typedef int (*store_event_cb)(const struct store_event *, void *);
/*
 * The answer of an asynchronous read: n kvs (a get: 1 found, 0 absent),
 * valid during the call only, and *more for a range; or n == -1 and err.
 */
typedef void (*store_read_done)(void *, long n, const struct store_kv *,
		    int more, const struct store_err *);
/* The end of an asynchronous commit: err NULL when it landed. */
typedef void (*store_commit_done)(void *, const struct store_err *);

struct store;

struct store_backend {
	const char	*name;
	/* arg: what follows "name:" in the store spec (may be ""). */
	int	 (*open)(struct store *, const char *arg,
		    const struct store_options *, struct store_err *);
	void	 (*close)(struct store *);
	/* 1 found (cb called once), 0 absent, -1 error. */
	int	 (*get)(struct store *, const char *, size_t, store_kv_cb,
		    void *, struct store_err *);
	/* Number of kvs passed to cb, or -1; *more if more keys follow. */
	long	 (*range)(struct store *, const struct store_range *,
		    store_kv_cb, void *, int *more, struct store_err *);
	int	 (*begin)(struct store *, struct store_err *);
	/* Fills *meta (value NULL) and *prev_version (0 if it was absent). */
	int	 (*put)(struct store *, uint64_t rev, uint32_t seq,
		    const char *, size_t, const void *, size_t,
		    struct store_kv *meta, uint64_t *prev_version,
		    struct store_err *);
	/* *deleted is 0 (and nothing is recorded) if the key was absent. */
	int	 (*del)(struct store *, uint64_t rev, uint32_t seq,
		    const char *, size_t, int *deleted, struct store_err *);
	int	 (*mark)(struct store *, struct store_err *);
	int	 (*undo)(struct store *, struct store_err *);
	int	 (*commit)(struct store *, uint64_t rev, struct store_err *);
	void	 (*rollback)(struct store *);
	int	 (*history)(struct store *, uint64_t from_rev, store_event_cb,
		    void *, struct store_err *);
	int	 (*compact)(struct store *, uint64_t rev, struct store_err *);
	int	 (*stats)(struct store *, struct store_stats *,
		    struct store_err *);
	int	 caps;
	/*
	 * Remote stores (or NULL): reads outside a batch answered later on
	 * the daemon's loop, never before the call returns; -1 with err if
	 * one failed at once (done is not called then).
	 */
	int	 (*get_async)(struct store *, const char *, size_t,
		    store_read_done, void *, struct store_err *);
	int	 (*range_async)(struct store *, const struct store_range *,
		    store_read_done, void *, struct store_err *);
	/*
	 * STORE_CAP_PER_REQUEST: store_commit() answered later, the same
	 * way; the batch is closed when it returns.
	 */
	int	 (*commit_async)(struct store *, uint64_t rev,
		    store_commit_done, void *, struct store_err *);
	/* And store_begin(), reading the keys at base_rev meanwhile. */
	int	 (*begin_async)(struct store *, const struct store_keys *,
		    store_commit_done, void *, struct store_err *);
};

#define STORE_CAP_PER_REQUEST	0x1

struct store {
	const struct store_backend	*backend;
	void				*impl;	/* the backend's state */
	uint64_t			 rev;		/* committed */
	uint64_t			 compact_rev;	/* events < this gone */
	uint64_t			 base_rev;	/* a batch reads at */
	uint64_t			 seen_rev;	/* remote: newest seen */
	uint64_t			 commit_rev;	/* remote: last landed */
	int				 in_batch;
	int				 reopened;	/* store_reopen_batch */
	store_commit_done		 begun;		/* store_begin_async */
	void				*begun_arg;
};

/* The revision a read answers with: no older than what it read. */
static inline uint64_t
store_read_rev(const struct store *s)
{
	return (s->seen_rev > s->rev ? s->seen_rev : s->rev);
}

extern const struct store_backend	 store_sqlite_backend;
extern const struct store_backend	 store_mem_backend;
extern const struct store_backend	 store_etcd_backend;

/*
 * spec: "sqlite:PATH", "memory", ...  On success returns a store whose rev
 * and compact_rev are loaded; the caller frees it with store_close().
 */
struct store	*store_open(const char *spec, const struct store_options *,
		    struct store_err *);
void		 store_close(struct store *);
int		 store_err_set(struct store_err *, enum store_errcode,
		    const char *, ...) __attribute__((format(printf, 3, 4)));

int	store_get(struct store *, const char *, size_t, store_kv_cb, void *,
	    struct store_err *);
long	store_range(struct store *, const struct store_range *, store_kv_cb,
	    void *, int *, struct store_err *);
/* 1 if store_get_async()/store_range_async() may be used now. */
int	store_reads_async(const struct store *);
int	store_get_async(struct store *, const char *, size_t, store_read_done,
	    void *, struct store_err *);
int	store_range_async(struct store *, const struct store_range *,
	    store_read_done, void *, struct store_err *);
int	store_begin(struct store *, struct store_err *);
int	store_begin_async(struct store *, const struct store_keys *,
	    store_commit_done, void *, struct store_err *);
int	store_put(struct store *, uint64_t, uint32_t, const char *, size_t,
	    const void *, size_t, struct store_kv *, uint64_t *,
	    struct store_err *);
int	store_delete(struct store *, uint64_t, uint32_t, const char *, size_t,
	    int *, struct store_err *);
int	store_mark(struct store *, struct store_err *);
int	store_undo(struct store *, struct store_err *);
int	store_commit(struct store *, uint64_t, struct store_err *);
int	store_commit_async(struct store *, uint64_t, store_commit_done,
	    void *, struct store_err *);
void	store_rollback(struct store *);
int	store_reopen_batch(struct store *, uint64_t, struct store_err *);
int	store_history(struct store *, uint64_t, store_event_cb, void *,
	    struct store_err *);
int	store_compact(struct store *, uint64_t, struct store_err *);
int	store_stats(struct store *, struct store_stats *, struct store_err *);

#endif
