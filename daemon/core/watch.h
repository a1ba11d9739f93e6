/*
 * The watch hub: watches on a key or a prefix.
 *
 * A watch names keys and prefixes (one or several) and delivers every
 * change of one of them at rev >= its from_rev, in (rev, seq) order,
 * exactly once; an index (watch_index.h) finds an event's watches.  It first catches up from the store's history, a
 * chunk at a time, pausing (only between revisions) while its connection's
 * output is over the cap, then turns live: events.c hands it each event
 * once durable (watch_event), then the rev all events were delivered up to
 * (watch_delivered).
 *
 * A connection whose unsent output passes --max-pending-bytes when a live
 * event is due has all its watches cancelled, each with the rev to resume
 * from ("next_rev"): nothing is lost, and memory stays bounded.
 *
 * Ownership: the hub owns watches; a connection's are freed when it closes
 * (watch_peer_closed), or, if a history read is out, when it comes back.
 * The hub sees a connection only as its watch_peer.
 */
#ifndef METAD_WATCH_H
#define METAD_WATCH_H

#include <sys/queue.h>

#include <stdint.h>
#include <stddef.h>

struct metad;
struct req;
struct store_event;
struct watch;
struct watch_hub;

#define WATCH_PEER_WHO_MAX	96

/*
 * A connection's side of its watches: the connection embeds it, fills it
 * in, and points each of its requests at it (req->peer).  The hub sends
 * the watches' lines with send and asks full (its unsent output over
 * --max-pending-bytes) before a live event.
 */
struct watch_peer {
	TAILQ_HEAD(, watch)	 watches;
	unsigned		 nwatches;	/* in watches */
	unsigned		 ncatching;	/* of them, not live yet */
	struct metad		*md;
	long			 uid, pid;	/* for the log; TLS: -1 */
	/* "uid 1000", "gid 100" (let in by a group list) or "CN \"alice\""
	 * (a TLS client): the peer's identity, the one its per-peer limits
	 * count, in messages and to tell peers apart. */
	char			 who[WATCH_PEER_WHO_MAX];
	/* The watches of every connection of this peer, bound by
	 * --max-watches-per-peer; NULL: root or metad's own uid. */
	unsigned		*peer_watches;
	void			*arg;		/* send's and full's */
	void			 (*send)(void *, const void *, size_t);
	int			 (*full)(void *);
};

struct watch_hub	*watch_hub_create(struct metad *);
/* The watch, unwatch and watch_progress ops (rows of ops.c's table). */
void			 watch_op_watch(struct req *);
void			 watch_op_unwatch(struct req *);
void			 watch_op_progress(struct req *);
void			 watch_hub_free(struct watch_hub *);

int	watch_any(struct watch_hub *);
/* A durable event, for the live watches. */
void	watch_event(struct watch_hub *, const struct store_event *);
/* Every event up to rev was handed out. */
void	watch_delivered(struct watch_hub *, uint64_t rev);
/*
 * Events' newest rev whose events were all delivered, told at each change
 * (a new watch starts after it).
 */
void	watch_set_delivered(struct watch_hub *, uint64_t rev);
/* Events could not be read: live watches cannot go on exactly. */
void	watch_failed(struct watch_hub *);
/* History below rev is gone: cancel watches that still needed it. */
void	watch_compacted(struct watch_hub *, uint64_t rev);
/*
 * Events below rev were compacted before they could be delivered: cancel
 * the live watches still owed one of them (compacted, not a gap).
 */
void	watch_lost(struct watch_hub *, uint64_t rev);
/*
 * The deletes at rev are those of a lease ending, expired (the daemon's
 * revoke of a due lease) or revoked (a lease_revoke); kept for the last
 * WATCH_LEASE_REVS such revs, so that their delete events say so.  forget:
 * that rev was not committed after all (its batch failed).
 */
void	watch_lease_ended(struct watch_hub *, uint64_t rev, uint64_t lease,
	    int expired);
void	watch_lease_forget(struct watch_hub *, uint64_t rev, uint64_t lease);
/* The connection's output drained: continue catching up. */
void	watch_peer_drained(struct watch_peer *);
/* The connection closes: its watches end. */
void	watch_peer_closed(struct watch_peer *);

#endif
