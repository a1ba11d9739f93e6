/*
 * The local backends' side of the store interface (sqlite, memory): they
 * answer every call at once, so they are written synchronously, and
 * store_local.c turns these functions into the interface's asynchronous
 * calls (the callback runs before the call returns), but for a commit
 * whose fsync comes later (sqlite, --sync full): it is out until the
 * backend says it landed, and commits land in order.  A local commit also
 * trims the history to the last opts.history revisions, in the same
 * transaction, and hands the batch's events to opts.notify once durable.
 */
#ifndef METAD_STORE_LOCAL_H
#define METAD_STORE_LOCAL_H

#include "store/store_backend.h"

struct store_local {
	/*
	 * Number of kvs passed to cb, or -1; *more if more keys follow.  A
	 * range with rev: as of that rev (compact_rev <= rev < the current).
	 */
	long	 (*range)(struct store *, const struct store_range *,
		    store_kv_cb, void *, int *more, struct store_err *);
	/* Events with rev >= from_rev in (rev, seq) order until cb stops. */
	int	 (*history)(struct store *, uint64_t from_rev, store_event_cb,
		    void *, struct store_err *);
	/* The key as of rev (compact_rev <= rev < the current): 1, 0, -1. */
	int	 (*get_at)(struct store *, const char *, size_t, uint64_t,
		    store_kv_cb, void *, struct store_err *);
	/* The key's events with rev >= from_rev, in order, until cb stops. */
	int	 (*key_history)(struct store *, const char *, size_t, uint64_t,
		    store_event_cb, void *, struct store_err *);
	int	 (*stats)(struct store *, struct store_stats *,
		    struct store_err *);
	int	 (*begin)(struct store *, struct store_err *);
	/*
	 * 0: durable as the sync mode promises; 1: out, durable later (the
	 * backend then calls store_local_landed(), and answers every later
	 * commit with 1 until they all landed); -1: all undone.
	 */
	int	 (*commit)(struct store *, uint64_t rev, struct store_err *);
};

/*
 * Its state of its own (s->local), made at open for a backend with a
 * local side, freed at close.
 */
void	store_local_init(struct store *);
void	store_local_free(struct store *);
/* 1 if a commit is out (landed later, store_local_landed()). */
int	store_local_any_out(const struct store *);
/* 1 while begins are held back (store_local_hold()). */
int	store_local_held(const struct store *);

void	store_local_read_get(struct store *, const char *, size_t, uint64_t,
	    int, store_read_done, void *);
void	store_local_read_key_history(struct store *, const char *, size_t,
	    uint64_t, size_t, store_history_done, void *);
void	store_local_read_range(struct store *, const struct store_range *,
	    store_read_done, void *);
void	store_local_read_history(struct store *, uint64_t, size_t,
	    store_history_done, void *);
void	store_local_read_stats(struct store *, store_stats_done, void *);
void	store_local_begin(struct store *, const struct store_keys *,
	    store_done, void *);
void	store_local_commit(struct store *, uint64_t, store_done, void *);
/* The oldest commit out is durable: it lands (and the clean ones behind). */
void	store_local_landed(struct store *);
/*
 * Begins wait (their callbacks called later, in order) from hold until
 * release: a read that must see no batch out holds them until the
 * batches out landed.
 */
void	store_local_hold(struct store *);
void	store_local_release(struct store *);

#endif
