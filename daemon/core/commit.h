/*
 * Group commit.  Write requests are queued in arrival order and taken in
 * batches of at most the store's batch_max: each batch is opened with the
 * keys its requests read, its requests are applied at consecutive revisions
 * (a failed one undone alone), and it is committed; a batch that lost a
 * race with another writer runs again.  Up to the store's batches_out
 * batches are out at once.  Writes of one connection land in the order
 * sent: on an ordered store (local) every queued write joins the next
 * batch, which lands after the ones out; on another (etcd) a connection
 * has one write out at a time when batches go out together, and a write
 * waits while a batch out names one of its keys.  A write is answered once the store
 * is durable and its events have been delivered to watches and waits
 * (commit_delivered, an events listener), so a watcher has a write's event before its writer has
 * the answer.  If a commit fails, every write of the batch is answered
 * with the error and nothing of it remains.
 *
 * Ownership: commit_enqueue() borrows the request until req_done().
 */
#ifndef METAD_COMMIT_H
#define METAD_COMMIT_H

#include <stdint.h>

struct commit;
struct metad;
struct req;

/*
 * A source of writes whose order the commit keeps (a connection's): how
 * many of its writes are in batches out, and the batch scan that last
 * passed one over.  Its owner embeds it, zeroed, and points each of its
 * write requests at it (req->order).
 */
struct commit_order {
	unsigned		 writes_out;
	unsigned		 gen;
};

struct commit	*commit_create(struct metad *);
/* At exit: requests not answered yet end unanswered (their conns closed). */
void		 commit_free(struct commit *);
void		 commit_enqueue(struct commit *, struct req *);
/* Requests queued, out, or waiting for their events. */
unsigned	 commit_queued(struct commit *);
/*
 * Writes whose outcome is not answered yet though they left the queue:
 * batches out at the store, and requests landed and parked for their
 * events (at most COMMIT_PARK_MS).  The drain waits for these past its
 * 2 s: each has a true answer to give.
 */
unsigned	 commit_out(struct commit *);
/*
 * A write the store takes whole (core/forward.c): out from
 * commit_forwarding() to commit_forwarded(), when r's answer came; r is
 * then answered once its rev's events were delivered (wrote_rev), as a
 * batch's writes are.  Counted by commit_queued() and commit_out().
 */
void		 commit_forwarding(struct commit *);
void		 commit_forwarded(struct commit *, struct req *);
/*
 * An events listener (events_listen, arg the commit): the events up to
 * delivered are out, answer who waited for them.
 */
void		 commit_delivered(void *, uint64_t delivered);

#endif
