/*
 * The backends' side of the store (store.h is the callers'): the vtable a
 * backend fills, grouped by purpose, and struct store, which only the
 * generic store code (store.c, store_lease.c, store_local.c, store_snap.c)
 * and the backends read.  Each backend lives in its own folder
 * (daemon/store/sqlite/, mem/, etcd/) and is named in store.c's table of
 * spec prefixes, nowhere else.  What every backend guarantees is in
 * store.h.
 */
#ifndef METAD_STORE_BACKEND_H
#define METAD_STORE_BACKEND_H

#include <sys/queue.h>

#include "store/store.h"
#include "store/store_forward.h"
#include "store/store_idem.h"

struct store_local;
struct store_local_state;

struct store_backend {
	const char	*name;

	/* Open and close.  arg: what follows "name:" in the spec (or ""). */
	int	 (*open)(struct store *, const char *arg,
		    const struct store_options *, struct store_err *);
	void	 (*close)(struct store *);

	/*
	 * Batches and commits (store_begin() .. store_commit()).  batch_max:
	 * write requests one batch may hold (0: no limit); batches_out:
	 * batches that may be out at once (0: one); ordered: batches land in
	 * the order they were committed, each begun on the writes of the
	 * ones before it, landed or not (a local store whose fsync comes
	 * later), so a request need not wait for a batch out that names its
	 * keys, nor for its connection's write out, and a batch that wrote
	 * nothing lands behind the ones out.
	 */
	unsigned	 batch_max;
	unsigned	 batches_out;
	int		 ordered;
	void	 (*begin)(struct store *, const struct store_keys *,
		    store_done, void *);
	/* 1 found (cb called once), 0 absent, -1 error. */
	int	 (*get)(struct store *, const char *, size_t, store_kv_cb,
		    void *, struct store_err *);
	/*
	 * Fills *meta (value NULL) and *prev_version (0 if it was absent);
	 * lease (0: none) is recorded with the put's event, and attached by
	 * lease_attach() after it.
	 */
	int	 (*put)(struct store *, uint64_t rev, uint32_t seq,
		    const char *, size_t, const void *, size_t,
		    uint64_t lease, struct store_kv *meta,
		    uint64_t *prev_version, struct store_err *);
	/* *deleted is 0 (and nothing is recorded) if the key was absent. */
	int	 (*del)(struct store *, uint64_t rev, uint32_t seq,
		    const char *, size_t, int *deleted, struct store_err *);
	/*
	 * Every key in [key, end) (end NULL: no end) deleted at rev, seq 0,
	 * 1, ... in key order, each as del does (detached from its lease);
	 * *n the keys deleted.  A remote store read the range at begin
	 * (store_keys.rkey).
	 */
	int	 (*del_range)(struct store *, uint64_t rev, const char *,
		    size_t, const char *end, size_t, uint64_t *n,
		    struct store_err *);
	int	 (*mark)(struct store *, struct store_err *);
	int	 (*undo)(struct store *, struct store_err *);
	int	 (*compact)(struct store *, uint64_t rev, struct store_err *);
	void	 (*commit)(struct store *, uint64_t rev, store_done, void *);
	void	 (*rollback)(struct store *);
	/*
	 * A store that can land a batch above its planned rev: make the
	 * batch just committed readable again at its base (NULL elsewhere).
	 */
	void	 (*reopen)(struct store *);

	/* Reads outside a batch; rev 0: the current state, else as of rev. */
	void	 (*read_get)(struct store *, const char *, size_t, uint64_t,
		    int serializable, store_read_done, void *);
	void	 (*read_range)(struct store *, const struct store_range *,
		    store_read_done, void *);

	/*
	 * History: at most about max_events events, but never half a
	 * revision; one key's events from a rev on
	 * (store_read_key_history()).
	 */
	void	 (*read_history)(struct store *, uint64_t from_rev,
		    size_t max_events, store_history_done, void *);
	void	 (*read_key_history)(struct store *, const char *, size_t,
		    uint64_t from_rev, size_t limit, store_history_done,
		    void *);

	/*
	 * Leases (store_lease_*() in store.h); all NULL for a backend
	 * without them.  Reads outside a batch: every lease
	 * recorded; the keys attached to one (a range of keys only, from
	 * after, up to limit).  Inside a batch: record a lease (or replace
	 * its record: a backend whose leases the daemon times); attach the key just put to lease (0: detach it);
	 * delete every key attached to lease at rev (seq 0, 1, ...) and the
	 * lease's record, *n the keys deleted.
	 */
	void	 (*read_leases)(struct store *, store_leases_done, void *);
	void	 (*read_lease_keys)(struct store *, uint64_t lease,
		    const char *after, size_t after_len, uint64_t limit,
		    store_read_done, void *);
	int	 (*lease_put)(struct store *, const struct store_lease *,
		    struct store_err *);
	int	 (*lease_attach)(struct store *, const char *, size_t,
		    uint64_t lease, struct store_err *);
	int	 (*lease_revoke)(struct store *, uint64_t rev, uint64_t lease,
		    uint64_t *n, struct store_err *);

	/*
	 * Leases the backend keeps itself (etcd: every daemon on it shares
	 * them, and they expire by the backend's clock whether a daemon
	 * runs or not); NULL for a backend whose leases the daemon times
	 * (lease_put above).  Outside batches; done runs later.  A put
	 * naming a lease the backend does not know fails its batch with
	 * STORE_ERR_NO_LEASE, having written nothing.  A token's record
	 * (idem, NULL: none) is read by lease_idem_get (1 found, whatever
	 * its expiry: store_idem.c checks it) and written with the grant or
	 * revoke (store_idem.h).
	 */
	void	 (*lease_grant)(struct store *, uint64_t ttl_ms, int session,
		    const struct store_lease_idem *, store_lease_done, void *);
	void	 (*lease_keepalive)(struct store *, uint64_t lease,
		    store_lease_done, void *);
	void	 (*lease_get)(struct store *, uint64_t lease,
		    store_lease_done, void *);
	void	 (*lease_revoke_now)(struct store *, uint64_t lease,
		    int asked, const struct store_lease_idem *,
		    store_revoke_done, void *);
	void	 (*lease_idem_get)(struct store *, const void *, size_t,
		    store_idem_done, void *);

	/*
	 * Idempotent writes' records (store_idem_*() in store.h), inside a
	 * batch, with it; NULL for a backend without them.  get: 1 found
	 * (whatever its expiry: store.c checks it), 0, -1.  put: record it,
	 * and drop at most STORE_IDEM_PURGE records expired at now_ms.
	 */
	int	 (*idem_get)(struct store *, const void *, size_t,
		    struct store_idem *, struct store_err *);
	int	 (*idem_put)(struct store *, const void *, size_t,
		    const struct store_idem *, uint64_t now_ms,
		    struct store_err *);
	/* A remote store's: store_idem_fix(), outside batches. */
	void	 (*idem_fix)(struct store *, const void *, size_t,
		    const struct store_idem *, store_done, void *);
	/*
	 * A store that is a metad (store_forward.h): a write request whole,
	 * to the metad it uses; NULL elsewhere.  A replica's load, in a
	 * batch (store_put_as(), which checks kv): memory's only.
	 */
	void	 (*forward)(struct store *, const char *, size_t,
		    store_forward_done, void *);
	int	 (*put_as)(struct store *, const struct store_kv *,
		    struct store_err *);
	/* The leases it knows of (etcd: every daemon's on the prefix). */
	size_t	 (*lease_count)(struct store *);

	/*
	 * Snapshots: the backend's own way to take one (store_snapshot()),
	 * or NULL: the store is then read with read_range at one rev.
	 */
	int	 (*snapshot)(struct store_snapshot *, struct store_err *);

	/* Status; reports: what it measures (store_reports()). */
	void	 (*read_stats)(struct store *, store_stats_done, void *);
	unsigned	 reports;

	/*
	 * Local backends: their synchronous side, which store_local.c turns
	 * into the calls above (NULL for a remote backend).
	 */
	const struct store_local *local;
};

/* The backends, each in its own folder; store.c's table names them. */
extern const struct store_backend	 store_sqlite_backend;
extern const struct store_backend	 store_mem_backend;
extern const struct store_backend	 store_etcd_backend;
extern const struct store_backend	 store_remote_backend;

struct store {
	/* First: what store.h's accessors read (the backend keeps it). */
	struct store_head		 head;
	const struct store_backend	*backend;
	void				*impl;	/* the backend's state */
	/* A local backend's commits out and held begins (store_local.c). */
	struct store_local_state	*local;
	struct store_options		 opts;
	int				 in_batch;
	int				 dirty;		/* the batch wrote */
	uint64_t			 batch_rev;	/* its newest write */
	int				 reopened;	/* store_reopen() */
	unsigned			 out;		/* batches out */
	unsigned			 ends;		/* of them, so far */
	int64_t				 compact_us;	/* the batch's began */
};

/*
 * A backend's report of a step of its work (opts.report, store.h), if
 * anybody listens: call and outcome for STORE_REPORT_CALL.
 */
void	store_report(struct store *, enum store_report, const char *call,
	    enum store_errcode outcome, double seconds);

/*
 * The generic store's checks of a write in a batch (store.c): 0, or -1 and
 * err; and the note that one was made at rev.
 */
int	store_check_write(struct store *, const char *what, uint64_t rev,
	    size_t key_len, struct store_err *);
void	store_wrote(struct store *, uint64_t rev);

#endif
