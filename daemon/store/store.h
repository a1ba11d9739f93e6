/*
 * The versioned store: the one interface between metad's request handling
 * and its backends (SQLite, memory, etcd).  A backend knows nothing of
 * connections or of the wire protocol; it knows keys, values, revisions and
 * batches.
 *
 * Asynchronous by contract.  Every call that may have to wait for the
 * backing store -- a read outside a batch, opening a batch, committing one
 * -- takes a callback and returns nothing: the callback is called exactly
 * once, by a local backend (sqlite, memory) before the call returns but
 * for a commit whose fsync comes later (and a begin or a read that waits
 * for such commits to land), by a remote one (etcd) later on the daemon's
 * event loop, or before it returns when it can answer at once (from its
 * cache, or an error).
 * Callers handle both and never block.
 *
 * What every backend guarantees:
 *
 * - Keys are byte strings of 1..KEY_MAX_BYTES bytes (no NUL), ordered
 *   bytewise (memcmp; a proper prefix sorts first).  Values are any bytes.
 * - Each key carries version (1 on create, +1 on every put), create_rev and
 *   mod_rev.  A deleted key is gone: re-creating it starts at version 1 with
 *   a new create_rev.
 * - rev is the newest revision whose events were handed to opts.notify; an
 *   empty local store is at rev 0.  It survives close and reopen.  seen_rev
 *   is the newest revision any answer of the store showed (a remote store's
 *   reads can see writes whose events have not arrived yet).
 * - Writes happen only inside a batch: store_begin() (which reads, with the
 *   batch's base revision base_rev, the keys the batch names), then any
 *   number of store_put()/store_delete()/store_compact() calls, each write
 *   request of the batch at its own rev, then store_commit() or
 *   store_rollback().  A batch holds at most store_batch_max() write
 *   requests (0: no limit); revs within a batch never go down.
 * - Up to store_batches_out() batches may be out at once: begun
 *   and not yet open, or committed and not yet landed.  One batch at most
 *   is open (between begin's callback and store_commit()/rollback()), and
 *   it is open only during calls made from begin's callback: the caller
 *   applies and commits it there.  Batches out together must name disjoint
 *   keys, and the caller orders the ones that must land in order, unless
 *   the store lands them in order (store_lands_in_order()).
 * - Reads outside a batch answer what has landed: a batch out is not
 *   seen until its callback (a local store's batch is out while its
 *   fsync runs, and nobody may see what a crash could still take).
 * - store_get() inside a batch sees the batch's own writes and, for the
 *   rest, the state at base_rev.
 * - store_commit()'s callback says the batch is durable as the sync mode
 *   promises (STORE_SYNC_FULL: fsync'd), and commit_rev is the revision its
 *   last write landed at (unchanged by a batch that wrote nothing).  A
 *   remote store may land above the planned rev when a writer outside
 *   metad moved it, or when other batches were out with it; the caller
 *   then answers again with store_reopen() at the same base.  It must also
 *   when the store set answer_again: a blind key's state was not known when
 *   the batch was applied.  On error nothing of the batch
 *   remains; STORE_ERR_CONFLICT means another writer moved the keys the
 *   batch read, and the caller may run it again.  A remote store whose
 *   answer is lost finds out whether the commit landed, and reports that;
 *   only when it cannot (the store stays unreachable) does the commit fail
 *   with STORE_ERR_UNKNOWN: it may or may not have landed.  Once durable, the batch's
 *   events are handed to opts.notify (before the commit callback on a
 *   local store; from the remote store's event stream otherwise).
 * - store_mark()/store_undo() undo the writes since the mark, inside a
 *   batch, so one request's failure need not spoil the others of its batch.
 * - Every put and delete records an event in the history.
 *   store_read_history() replays events with rev >= from_rev in (rev, seq)
 *   order, whole revisions at a time.  Compaction drops events below a rev
 *   and raises compact_rev, which also survives reopen; a local store also
 *   trims its history as it commits, keeping at least the last
 *   opts.history revisions (and every revision of the batch).
 * - Reads at a revision: store_read_get_at() and a range with rev answer
 *   the state as of any rev R from compact_rev to the current rev, exactly
 *   (STORE_ERR_COMPACTED below, STORE_ERR_FUTURE above).  So compaction at
 *   C keeps, of each key, its last event below C when that is a put (a key
 *   last written before C still has its value at every kept rev: etcd's
 *   rule); those events are never replayed (store_read_history() starts at
 *   compact_rev or later).  store_read_key_history() lists one key's
 *   events from from_rev (>= compact_rev) in (rev, seq) order: at most
 *   about limit, never half a revision, more if others follow.
 * - A remote store may find that events it had not handed out yet were
 *   compacted away before it could read them (its event stream fell
 *   behind a compaction made outside metad).  It then raises compact_rev
 *   above them and calls opts.notify up to compact_rev - 1 (rev moves
 *   there too): a history read of those revisions fails with
 *   STORE_ERR_COMPACTED, and whoever needed their events must be told they
 *   are gone, never skip them silently.
 *
 * Memory: pointers handed to a callback (struct store_kv, struct
 * store_event, struct store_stats) are valid only during that callback;
 * copy what you keep.
 *
 * Errors: synchronous functions that can fail return -1 and fill a struct
 * store_err; callbacks get a struct store_err, or NULL on success.
 */
#ifndef METAD_STORE_H
#define METAD_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "metad_limits.h"

enum store_errcode {
	STORE_ERR_NONE = 0,
	STORE_ERR_FULL,		/* disk or quota full */
	STORE_ERR_IO,		/* I/O error, corruption */
	STORE_ERR_UNAVAILABLE,	/* backend unreachable */
	STORE_ERR_CONFLICT,	/* a commit lost a race: retry */
	STORE_ERR_COMPACTED,	/* history below the compact rev asked */
	STORE_ERR_UNKNOWN,	/* a commit's outcome could not be learned */
	STORE_ERR_FUTURE,	/* a read at a rev above the current one */
	STORE_ERR_NO_LEASE,	/* a put named a lease the backend lacks */
	STORE_ERR_TOO_LARGE,	/* the backend refused a write's size */
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

/*
 * What a store reports of its own work as it ends (store_options.report),
 * for the daemon's metrics (metad(8), METRICS), on the loop: how long
 * each step took; a call also names itself and its outcome.
 */
enum store_report {
	STORE_REPORT_FSYNC,		/* a batch's fsync (local, durable) */
	STORE_REPORT_CHECKPOINT,	/* a checkpoint (its slices), a WAL copy */
	STORE_REPORT_COMPACTION,	/* a compaction, to its batch landed */
	STORE_REPORT_CALL		/* a call to a remote store */
};

/* store_reports(): the kinds a backend reports, as bits, and more. */
#define STORE_REPORTS(kind)	(1u << (kind))
/* Its store_stats.wal_bytes is the size of a write-ahead log. */
#define STORE_REPORTS_WAL	0x100

struct store_options {
	enum store_sync		 sync;
	size_t			 cache_bytes;	/* 0: backend default */
	uint64_t		 history;	/* local: revs kept, 0: all */
	/* Remote backends (etcd): */
	const char		*prefix;	/* key namespace, or NULL */
	struct event_base	*base;		/* the daemon's loop */
	/*
	 * Events of revs (from, to] are durable and in the history, or
	 * those below compact_rev compacted before they were read (above).
	 */
	void			 (*notify)(void *, uint64_t from, uint64_t to);
	void			*notify_arg;
	/* Remote backends: their view of the keys, at most (0: none). */
	size_t			 view_max_bytes;
	/*
	 * Called as a step ends (NULL: nobody listens): call is a call's
	 * name (a string that lives as long as the store), outcome its
	 * error (STORE_ERR_NONE: it answered), both for STORE_REPORT_CALL
	 * only.
	 */
	void			 (*report)(void *, enum store_report,
				    const char *call, enum store_errcode outcome,
				    double seconds);
	void			*report_arg;
	/*
	 * Remote backends: TLS to https:// URLs (the CA, NULL: the
	 * system's; the client's certificate and key, or NULL), and the
	 * user to authenticate as with the one-line password in
	 * password_file (NULL: none).  Files are read at open.
	 */
	const char		*cacert, *cert, *key;
	const char		*user, *password_file;
};

struct store_kv {
	const char		*key;
	size_t			 key_len;
	const unsigned char	*value;		/* NULL when keys_only */
	size_t			 value_len;
	uint64_t		 version;
	uint64_t		 create_rev;
	uint64_t		 mod_rev;
	uint64_t		 lease;		/* attached to, 0: none */
};

enum store_event_type {
	STORE_EVENT_PUT,
	STORE_EVENT_DELETE
};

/* What a history read knows of the key just before an event. */
enum store_prev {
	STORE_PREV_UNKNOWN = 0,	/* not asked (store_want_prev), or gone */
	STORE_PREV_NONE,	/* the event created the key */
	STORE_PREV_KV		/* prev holds it */
};

/* Why a delete happened, when a lease did it (etcd's events tell). */
enum store_cause {
	STORE_CAUSE_NONE = 0,	/* a delete, or not known */
	STORE_CAUSE_EXPIRED,
	STORE_CAUSE_REVOKED
};

struct store_event {
	uint64_t		 rev;
	uint32_t		 seq;
	enum store_event_type	 type;
	struct store_kv		 kv;	/* delete: version 0, value NULL */
	enum store_prev		 prev_state;
	struct store_kv		 prev;	/* STORE_PREV_KV: with its value */
	enum store_cause	 cause;	/* a delete's */
	uint64_t		 cause_lease;	/* the lease that ended */
};

/*
 * The keys a batch will read: a remote store fetches them with the base
 * (store_begin()), and a get inside the batch of a key not among them is
 * an error there.  Enough for every key one request can name: a fence, the
 * compares and the ops of a txn.
 */
#define STORE_PREFETCH_MAX	(1 + TXN_MAX_COMPARES + TXN_MAX_OPS)

struct store_keys {
	struct {
		const char	*key;
		size_t		 len;
		/*
		 * Blind: the request writes the key whatever it holds, and
		 * reads it only to report what it held.  A store may skip
		 * reading it at begin; a get of it in the batch then answers
		 * absent, and the commit sets answer_again (store_reopen()
		 * then reads it as it was just before the commit).
		 */
		int		 blind;
		/*
		 * Not a key: the name of an idempotent write's record
		 * (store_idem_get()), which a remote store reads with the
		 * keys.  A name holds a NUL, so it is never a key's.
		 */
		int		 idem;
	}			 k[STORE_PREFETCH_MAX + 1];
	size_t			 n;
	/*
	 * A range the batch deletes (store_delete_range()): keys in
	 * [rkey, rend), rend NULL for every key from rkey on; rkey NULL for
	 * none.  A remote store reads it with the base and fails the commit
	 * as a conflict if another writer changed a key in it since; a batch
	 * with a range is the only one out.
	 */
	const char		*rkey, *rend;
	size_t			 rkey_len, rend_len;
};

static inline void
store_keys_add_as(struct store_keys *ks, const char *key, size_t len,
    int blind)
{
	if (ks->n < STORE_PREFETCH_MAX) {
		ks->k[ks->n].key = key;
		ks->k[ks->n].len = len;
		ks->k[ks->n].blind = blind;
		ks->k[ks->n].idem = 0;
		ks->n++;
	}
}

/* The name of the batch's idem record: read with its keys. */
static inline void
store_keys_add_idem(struct store_keys *ks, const char *name, size_t len)
{
	if (ks->n < STORE_PREFETCH_MAX + 1) {
		ks->k[ks->n].key = name;
		ks->k[ks->n].len = len;
		ks->k[ks->n].blind = 0;
		ks->k[ks->n].idem = 1;
		ks->n++;
	}
}

static inline void
store_keys_add(struct store_keys *ks, const char *key, size_t len)
{
	store_keys_add_as(ks, key, len, 0);
}

struct store_range {
	const char		*prefix;	/* "" for all keys */
	size_t			 prefix_len;
	const char		*after;		/* exclusive start, or NULL */
	size_t			 after_len;
	uint64_t		 limit;		/* at most this many, > 0 */
	int			 keys_only;
	uint64_t		 rev;		/* the state at, 0: current */
	int			 serializable;	/* see store_read_get_at() */
	/*
	 * Bounds besides the prefix: keys from start (inclusive) up to end
	 * (exclusive), each NULL for none (a list's "key" and "range_end").
	 */
	const char		*start;
	size_t			 start_len;
	const char		*end;
	size_t			 end_len;
	/*
	 * Descending: the highest keys first, up to limit; "more": lower
	 * ones follow; after is then an exclusive upper bound.
	 */
	int			 reverse;
};
/* Range deletes, and a range's bounds as one span: store_range.h. */

#define STORE_ENDPOINTS_MAX	8

struct store_endpoint {
	char			 url[128];
	int			 healthy;
};

struct store_stats {
	uint64_t		 keys;
	uint64_t		 db_bytes;
	uint64_t		 wal_bytes;	/* STORE_REPORTS_WAL */
	/* A remote backend's view of its keys ("on: ...", "off: why"). */
	char			 view[128];
	/* Remote backends: their endpoints and whether each answered. */
	unsigned		 nendpoints;
	struct store_endpoint	 endpoint[STORE_ENDPOINTS_MAX];
};

typedef int (*store_kv_cb)(const struct store_kv *, void *);
typedef int (*store_event_cb)(const struct store_event *, void *);
/* A batch opened, or committed: err NULL when it did. */
typedef void (*store_done)(void *, const struct store_err *);
/*
 * A read: n kvs (a get: 1 found, 0 absent), and for a range whether more
 * follow; or n == -1 and err.
 */
typedef void (*store_read_done)(void *, long n, const struct store_kv *,
		    int more, const struct store_err *);
/*
 * History: n events from the asked rev on, whole revisions; more if events
 * after them exist (ask again from the rev after the last); or n == -1.
 */
typedef void (*store_history_done)(void *, long n,
		    const struct store_event *, int more,
		    const struct store_err *);
typedef void (*store_stats_done)(void *, const struct store_stats *,
		    const struct store_err *);
/* A snapshot was written, as of rev; or err. */
typedef void (*store_snapshot_done)(void *, uint64_t rev,
		    const struct store_err *);

/*
 * A lease's record (metad-protocol(7), LEASES): what a store keeps of it.
 * Deadlines are not kept: after a reopen every lease starts again with its
 * whole TTL.
 */
struct store_lease {
	uint64_t		 id;		/* 1 .. 2^53 - 1 */
	uint64_t		 ttl_ms;
	int			 session;
	uint64_t		 remaining_ms;	/* remote backends' */
};

/* The leases recorded: n of them, or n == -1 and err. */
typedef void (*store_leases_done)(void *, long n, const struct store_lease *,
		    const struct store_err *);

/*
 * A lease as a backend that keeps leases itself (etcd) tells it: found 0
 * for a lease it does not know (never granted, expired or revoked).
 */
struct store_lease_state {
	uint64_t		 id;
	uint64_t		 ttl_ms;	/* as granted */
	uint64_t		 remaining_ms;
	int			 session;
	int			 found;
};
typedef void (*store_lease_done)(void *, const struct store_lease_state *,
		    const struct store_err *);
/* A revoke landed: found 0 if unknown; its n keys deleted at rev. */
typedef void (*store_revoke_done)(void *, int found, uint64_t rev,
		    uint64_t n, const struct store_err *);

/*
 * Copies of kvs and events for callers that keep them past a callback:
 * each copy owns its key and value (one allocation).
 */
struct store_evbuf {
	struct store_event	*v;
	size_t			 n, cap;
};

struct store_kvbuf {
	struct store_kv		*v;
	size_t			 n, cap;
};

/* A store_kv_cb that copies the kv into *(struct store_kv *)arg. */
int	store_kv_copy_cb(const struct store_kv *, void *);
void	store_kv_copy_free(struct store_kv *);
void	store_evbuf_add(struct store_evbuf *, const struct store_event *);
void	store_evbuf_free(struct store_evbuf *);
/* A store_kv_cb that appends a copy to *(struct store_kvbuf *)arg. */
int	store_kvbuf_add(const struct store_kv *, void *);
void	store_kvbuf_free(struct store_kvbuf *);

struct store_snapshot;
struct store_lease_idem;	/* store_idem.h: a grant's, a revoke's token */

/*
 * A store is opaque: callers use the functions of this header, never its
 * fields (struct store is the backends', store_backend.h).  These few are
 * read on every write request and every batch, so they are inline: they
 * read struct store_head, the store's first member, which the generic
 * store code and the backends keep and nobody else touches.
 */
struct store;

struct store_head {
	uint64_t	 rev;		/* events handed out */
	uint64_t	 compact_rev;	/* events < this gone */
	uint64_t	 base_rev;	/* the open batch reads at */
	uint64_t	 seen_rev;	/* newest seen */
	uint64_t	 commit_rev;	/* the last batch landed at */
	int		 answer_again;	/* (store_commit()) */
	int		 want_prev;	/* (store_want_prev()) */
	/* The backend's, for the commit engine (store_backend.h). */
	unsigned	 batch_max;
	unsigned	 batches_out;
	int		 ordered;
};

static inline const struct store_head *
store_head(const struct store *s)
{
	return ((const struct store_head *)(const void *)s);
}

/* The newest revision whose events were handed to opts.notify. */
static inline uint64_t
store_rev(const struct store *s)
{
	return (store_head(s)->rev);
}

/* Events below this revision are compacted away. */
static inline uint64_t
store_compact_rev(const struct store *s)
{
	return (store_head(s)->compact_rev);
}

/* The revision a read answers with: no older than what it read. */
static inline uint64_t
store_read_rev(const struct store *s)
{
	const struct store_head	*h = store_head(s);

	return (h->seen_rev > h->rev ? h->seen_rev : h->rev);
}

/* The base revision of the batch just opened (store_begin()'s callback). */
static inline uint64_t
store_base_rev(const struct store *s)
{
	return (store_head(s)->base_rev);
}

/* The revision the last batch committed landed at (store_commit()). */
static inline uint64_t
store_commit_rev(const struct store *s)
{
	return (store_head(s)->commit_rev);
}

/* The last commit asks its requests to be answered again (store_commit()). */
static inline int
store_answer_again(const struct store *s)
{
	return (store_head(s)->answer_again);
}

/* Write requests one batch may hold; 0: no limit. */
static inline unsigned
store_batch_max(const struct store *s)
{
	return (store_head(s)->batch_max);
}

/* Batches that may be out at once (1 or more). */
static inline unsigned
store_batches_out(const struct store *s)
{
	return (store_head(s)->batches_out > 0 ? store_head(s)->batches_out :
	    1);
}

/*
 * Batches land in the order they were committed, each begun on the writes
 * of the ones before it, landed or not: a request need not wait for a
 * batch out that names its keys, nor for its connection's write out.
 */
static inline int
store_lands_in_order(const struct store *s)
{
	return (store_head(s)->ordered);
}

/* The backend's name, as the spec names it ("sqlite", "memory", "etcd"). */
const char	*store_name(const struct store *);
/*
 * What the backend reports and measures: STORE_REPORTS() of the kinds it
 * reports besides STORE_REPORT_COMPACTION (every store's), and
 * STORE_REPORTS_WAL.
 */
unsigned	 store_reports(const struct store *);
/* An error code's name as a label ("unavailable"; "ok" for none). */
const char	*store_err_name(enum store_errcode);

/*
 * spec: "sqlite:PATH", "memory", "etcd:URL[,URL...]".  On success returns
 * a store whose rev and compact_rev are loaded; the caller frees it with
 * store_close().  Opening may block (a remote store is asked once).
 */
struct store	*store_open(const char *spec, const struct store_options *,
		    struct store_err *);
void		 store_close(struct store *);
/* 0 when spec names a backend (its argument is checked at open), else -1. */
int		 store_spec_check(const char *spec, struct store_err *);
int		 store_err_set(struct store_err *, enum store_errcode,
		    const char *, ...) __attribute__((format(printf, 3, 4)));

/* Reads outside a batch: answered through the callback. */
void	store_read_get(struct store *, const char *, size_t, store_read_done,
	    void *);
/*
 * The key as of rev (0: now); COMPACTED below compact_rev.  serializable:
 * the store may answer from what it holds at once, and miss a write made
 * elsewhere a moment ago (never one it made); else (linearizable) the read
 * sees every write acknowledged before it was asked.  A local store is
 * linearizable either way.
 */
void	store_read_get_at(struct store *, const char *, size_t, uint64_t,
	    int serializable, store_read_done, void *);
/* One key's events from from_rev on, oldest first; at most about limit. */
void	store_read_key_history(struct store *, const char *, size_t,
	    uint64_t from_rev, size_t limit, store_history_done, void *);
void	store_read_range(struct store *, const struct store_range *,
	    store_read_done, void *);
void	store_read_history(struct store *, uint64_t from_rev,
	    size_t max_events, store_history_done, void *);
/*
 * While on, store_read_history() tells each event's prev (the key as of
 * the rev before it; unknown below compact_rev + 1), as a watch with
 * prev_kv needs; a local store reads the key at the rev before, etcd's
 * events carry etcd's prev_kv whether on or not.
 */
void	store_want_prev(struct store *, int on);
void	store_read_stats(struct store *, store_stats_done, void *);

/* Batches. */
void	store_begin(struct store *, const struct store_keys *, store_done,
	    void *);
int	store_get(struct store *, const char *, size_t, store_kv_cb, void *,
	    struct store_err *);
int	store_put(struct store *, uint64_t, uint32_t, const char *, size_t,
	    const void *, size_t, struct store_kv *, uint64_t *,
	    struct store_err *);
int	store_delete(struct store *, uint64_t, uint32_t, const char *, size_t,
	    int *, struct store_err *);

/*
 * Leases (metad-protocol(7), LEASES).  The store keeps each lease's record
 * and which keys are attached to which lease, durably with the batch that
 * wrote them; the daemon keeps the deadlines (daemon/lease/lease.c).  A put
 * attaches its key to the lease it names and detaches it from any other
 * (lease 0: from all); a delete detaches it.  store_lease_revoke() deletes
 * a lease's keys at one rev, recording their delete events, and drops its
 * record.  store_has_leases() is 0 for a backend without leases: the others
 * fail.
 */
int	store_has_leases(const struct store *);
/* 1 if the backend keeps the leases itself (store_backend.lease_grant). */
int	store_leases_remote(const struct store *);
void	store_lease_grant(struct store *, uint64_t ttl_ms, int session,
	    const struct store_lease_idem *, store_lease_done, void *);
/* A backend that keeps the leases: how many it knows of (else 0). */
size_t	store_lease_count(struct store *);
void	store_lease_keepalive(struct store *, uint64_t, store_lease_done,
	    void *);
void	store_lease_get(struct store *, uint64_t, store_lease_done, void *);
/*
 * asked: a client's lease_revoke (else the daemon's own, as a session's
 * end): etcd notes it in the lease's record, so that every daemon's
 * watches tell "revoked" from "expired".
 */
void	store_lease_revoke_now(struct store *, uint64_t, int asked,
	    const struct store_lease_idem *, store_revoke_done, void *);
void	store_read_leases(struct store *, store_leases_done, void *);
void	store_read_lease_keys(struct store *, uint64_t, const char *, size_t,
	    uint64_t, store_read_done, void *);
int	store_put_lease(struct store *, uint64_t, uint32_t, const char *,
	    size_t, const void *, size_t, uint64_t lease, struct store_kv *,
	    uint64_t *, struct store_err *);
int	store_lease_put(struct store *, const struct store_lease *,
	    struct store_err *);
int	store_lease_revoke(struct store *, uint64_t rev, uint64_t lease,
	    uint64_t *n, struct store_err *);
int	store_mark(struct store *, struct store_err *);
int	store_undo(struct store *, struct store_err *);
/*
 * Drop history below rev, with the batch (0 if already below; an error
 * beyond the newest revision, the batch's writes included).
 */
int	store_compact(struct store *, uint64_t, struct store_err *);
void	store_commit(struct store *, uint64_t, store_done, void *);
void	store_rollback(struct store *);
/*
 * Open the batch just committed again, reading at the same base_rev, so
 * that its request can be run once more to answer with the revision its
 * commit landed at (then store_rollback(), which leaves what was committed
 * as it is).  Only a store that can land elsewhere than planned (a remote
 * one) has this; -1 on the others.
 */
int	store_reopen(struct store *, uint64_t base_rev, struct store_err *);

/* Idempotent writes' records: store_idem.h. */

/*
 * A snapshot (store_snap.c): a metad SQLite database of the whole store
 * as of one revision, written to path (a new file: the caller removes it
 * when done with it), step by step on opts.base's loop while the store
 * serves, reads and batches alike.  done is called once, with the
 * snapshot's rev, later.  NULL and err if it cannot start.
 * store_snapshot_cancel() stops one before done; it is not called then.
 */
struct store_snapshot *store_snapshot(struct store *, const char *path,
		    store_snapshot_done, void *, struct store_err *);
void		 store_snapshot_cancel(struct store_snapshot *);

#endif
