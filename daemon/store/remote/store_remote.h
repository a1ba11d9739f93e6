/*
 * The remote backend (--store metad:URL[,URL...]; metad(8), THE METAD
 * BACKEND): this daemon keeps no data of its own, it uses another metad's
 * store.  Its parts:
 *
 *   remote_conn.c		the connection to the metad used
 *   store_remote.c		open, close, the vtable, writes forwarded
 *				(store_forward.h)
 *   store_remote_load.c	the replica's load, and its compaction
 *   store_remote_read.c	reads from it
 *   store_remote_feed.c	the watch stream: its events into the
 *				replica, rev by rev; the barrier of a
 *				linearizable read
 *   store_remote_lease.c	leases, kept by the metad used
 *
 * The replica (view) is a memory store loaded from the metad used at one
 * rev L (every key as it is there: store_put_as()) and kept by one watch
 * of every key from L + 1: each rev's events applied as one batch at that
 * rev, so its keys, versions, revisions and history are the metad used's.
 * Events of a rev come together on the connection (a watch sends a
 * revision whole), and any other line after them says the rev is whole.
 * This store's rev is the newest rev the stream has said is whole (an
 * event, a progress), its compact_rev above L (history from L + 1 on).
 */
#ifndef METAD_STORE_REMOTE_H
#define METAD_STORE_REMOTE_H

#include <sys/queue.h>

#include "store/store_backend.h"

struct rconn;
struct rwait;

/* The stream's progress lines when it is idle (metad-protocol(7)). */
#define REMOTE_PROGRESS_MS	20
/* A page of the replica's load. */
#define REMOTE_LOAD_PAGE	1000
/* How long a linearizable read waits for the stream to reach its rev. */
#define REMOTE_BARRIER_MS	5000
/* The revs at which a lease's end deleted keys, kept for the history. */
#define REMOTE_ENDS		4096
/* How long open waits for the metad used to answer. */
#define REMOTE_OPEN_MS		10000

struct store_remote {
	struct store		*st;
	struct store		*view;
	struct rconn		*conn;
	struct store_options	 opts;
	/* The watch: its id there (0: not answered yet). */
	uint64_t		 watch;
	/* The load: under way, and at rev; the first one done (open). */
	int			 loading;
	uint64_t		 load_rev;
	struct store_kvbuf	 load_kvs;
	int			 loaded;
	uint64_t		 open_rev;	/* the metad used's, at the load */
	int			 opened;	/* open returned: notify */
	struct store_err	 open_err;
	int			 open_failed;
	/* The rev coming in on the stream, and its events so far. */
	uint64_t		 ev_rev;
	struct store_evbuf	 evs;
	char			*scratch;	/* an event's key and value */
	size_t			 scratch_cap;
	/* The metad used's compact_rev, to compact the replica to. */
	uint64_t		 compact_to;
	/*
	 * The lease ends the stream told (a delete's "lease" and "cause"),
	 * a ring by rev, so that the history read here tells them too.
	 */
	struct {
		uint64_t	 rev, lease;
		int		 expired;
	}			 ends[REMOTE_ENDS];
	unsigned		 nends, ends_next;
	/* Linearizable reads waiting for their barrier (feed). */
	TAILQ_HEAD(, rwait)	 waits;
	struct event		*wait_timer;
};

/* The replica (store_remote_load.c): its notify; the metad used
 * compacted to rev (a compact's answer said so). */
void	remote_view_notify(void *, uint64_t, uint64_t);
void	remote_compacted(struct store_remote *, uint64_t);

/* Reads (store_remote_read.c): the vtable's. */
void	remote_read_get(struct store *, const char *, size_t, uint64_t, int,
	    store_read_done, void *);
void	remote_read_range(struct store *, const struct store_range *,
	    store_read_done, void *);
void	remote_read_history(struct store *, uint64_t, size_t,
	    store_history_done, void *);
void	remote_read_key_history(struct store *, const char *, size_t,
	    uint64_t, size_t, store_history_done, void *);
void	remote_read_stats(struct store *, store_stats_done, void *);

/* The stream (store_remote_feed.c). */
void	remote_feed_up(struct store_remote *);
void	remote_feed_down(struct store_remote *);
int	remote_feed_line(void *, const char *, size_t);
void	remote_feed_answer(void *);
/* Ask for the stream from the rev after ours. */
void	remote_feed_watch(struct store_remote *);
/* The replica loaded again from scratch (store_remote.c). */
void	remote_load(struct store_remote *);
void	remote_feed_free(struct store_remote *);
/*
 * A linearizable read's barrier: run(arg, NULL) once the replica holds
 * every write the metad used acknowledged before now, or with the error.
 */
void	remote_barrier(struct store_remote *,
	    void (*run)(void *, const struct store_err *), void *);

/* Leases (store_remote_lease.c): the vtable's calls. */
void	remote_lease_grant(struct store *, uint64_t, int,
	    const struct store_lease_idem *, store_lease_done, void *);
void	remote_lease_keepalive(struct store *, uint64_t, store_lease_done,
	    void *);
void	remote_lease_get(struct store *, uint64_t, store_lease_done, void *);
void	remote_lease_revoke_now(struct store *, uint64_t, int,
	    const struct store_lease_idem *, store_revoke_done, void *);
void	remote_lease_idem_get(struct store *, const void *, size_t,
	    store_idem_done, void *);
void	remote_read_leases(struct store *, store_leases_done, void *);
void	remote_read_lease_keys(struct store *, uint64_t, const char *,
	    size_t, uint64_t, store_read_done, void *);
size_t	remote_lease_count(struct store *);

/*
 * An answer line's JSON, or NULL with err said: se (the call failed), or
 * the line is bad.
 */
struct cJSON;
struct cJSON	*remote_answer(const char *, size_t, const struct store_err *,
		    struct store_err *);
/* An error answer as a store error (its code, its message). */
void		 remote_answer_error(const struct cJSON *,
		    struct store_err *);

#endif
