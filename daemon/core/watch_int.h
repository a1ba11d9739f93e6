/*
 * The watch hub's insides, shared by watch.c (delivery, catch-up,
 * progress) and watch_ops.c (the watch, unwatch and watch_progress ops).
 */
#ifndef METAD_WATCH_INT_H
#define METAD_WATCH_INT_H

#include <sys/queue.h>

#include <stdint.h>

#include "util.h"

struct event;
struct watch_index;
struct watch_index_ent;

/*
 * One key or prefix of a watch, and its entry in the hub's index.  There
 * is one per key of every watch, a million idle watches' worth: the
 * fields are as small as their limits allow (len: KEY_MAX_BYTES).
 */
struct watch_filter {
	char			*key;
	struct watch_index_ent	*ent;
	uint32_t		 len;
	int			 prefix;
};

/* The timer of a watch with progress_ms (a watch without has none). */
struct watch_timer {
	struct event		*ev;
	int64_t			 last_sent_ms;	/* event or progress */
};

/*
 * A million idle watches must stay small: what only some need is apart
 * (progress), the small fields are packed at the end.
 */
struct watch {
	struct watch_hub	*hub;
	uint64_t		 id;
	struct watch_peer	*peer;		/* its connection's, or NULL */
	struct watch_filter	*filters;
	/*
	 * First rev not delivered.  A live watch's is at least the hub's
	 * delivered + 1 (watch_next_rev): it is not moved at each delivery.
	 */
	uint64_t		 next_rev;
	uint64_t		 emitting;	/* rev being delivered */
	uint64_t		 mark;		/* the event it last matched */
	struct watch_timer	*progress;	/* or NULL */
	TAILQ_ENTRY(watch)	 hub_entry;	/* hub's watches, or dead */
	TAILQ_ENTRY(watch)	 catching_entry;	/* until live */
	TAILQ_ENTRY(watch)	 conn_entry;
	unsigned		 progress_ms;	/* 0: none */
	uint16_t		 nfilters;	/* WATCH_KEYS_MAX at most */
	unsigned		 live:1;
	unsigned		 dead:1;
	unsigned		 reading:1;	/* a history read is out */
	unsigned		 prev_kv:1;	/* its events carry "prev" */
	unsigned		 with_lease:1;	/* its puts' carry "lease" */
	unsigned		 indexed:1;	/* in the hub's index */
};

TAILQ_HEAD(watch_list, watch);

/* What an event line carries beyond the event (watch_body_of()). */
#define WATCH_BODY_PREV		1	/* "prev" */
#define WATCH_BODY_LEASE	2	/* a put's "lease" */
#define WATCH_BODIES		4

struct watch_hub {
	struct metad		*md;
	/* An event line's, reused: one for each WATCH_BODY_* set. */
	struct buf		 body[WATCH_BODIES];
	unsigned		 nprev;		/* watches with prev_kv */
	struct watch_list	 watches;
	/*
	 * Of those, the ones not live yet (catching up), in id order too: a
	 * compaction cancels only such watches, and walks only them
	 * (watch_compacted).  A watch is on it from its start until it turns
	 * live, is cancelled or is freed.
	 */
	struct watch_list	 catching;
	struct watch_list	 dead;		/* cancelled, to free */
	struct watch_index	*index;
	uint64_t		 next_id;
	uint64_t		 serial;	/* of the event being matched */
	uint64_t		 delivered;	/* events' (watch_set_delivered) */
	struct watch		**match;	/* the event's watches */
	size_t			 nmatch, match_cap;
	int			 match_sorted;	/* ids ascending */
	/* Revs whose deletes a lease's end made (watch_lease.c). */
	struct watch_lease_rev	*lease_revs;
	size_t			 nlease_revs;
};

struct watch_lease_rev {
	uint64_t		 rev;
	uint64_t		 lease;
	int			 expired;
};

/*
 * The lease whose end made the deletes at rev, and whether it expired
 * (else revoked): 1, or 0 if none did.
 */
int		watch_lease_of(const struct watch_hub *, uint64_t rev,
		    uint64_t *lease, int *expired);
/* The rev its next event is at least (next_rev, for a live watch). */
uint64_t	watch_next_rev(const struct watch *);
/* Put its keys and prefixes in the hub's index (and count prev_kv). */
void		watch_index_in(struct watch *);
void		watch_free(struct watch *);
void		watch_sweep(struct watch_hub *);
void		watch_catch_up(struct watch *);
/* The rev of its progress: every event of it up to there was sent. */
uint64_t	watch_progress_rev(const struct watch *);
/* Send its progress line now; start its timer if it has progress_ms. */
void		watch_progress_send(struct watch *);
void		watch_progress_start(struct watch *);

#endif
