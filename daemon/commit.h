/*
 * Group commit.  Write requests that arrive in the same turn of the event
 * loop are applied in one store batch (one transaction, one fsync) at
 * consecutive revisions, in arrival order; every response is sent only after
 * the batch is durable.  If the commit fails, every write of the batch is
 * answered with the error and nothing of it remains.
 *
 * A per-request store (etcd) takes writes one at a time instead, each in a
 * batch of its own whose commit is answered on the loop (a lost race with
 * another daemon runs it again), and each is answered once the store's
 * events have reached its revision.
 *
 * Ownership: commit_enqueue() takes the request; the commit frees it once
 * answered.
 */
#ifndef METAD_COMMIT_H
#define METAD_COMMIT_H

#include <stdint.h>

struct commit;
struct metad;
struct req;

struct commit	*commit_create(struct metad *);
void		 commit_free(struct commit *);
void		 commit_enqueue(struct commit *, struct req *);
/* Commit what is queued now (also run from the loop after each turn). */
void		 commit_run(struct commit *);
/* Requests queued, or written and waiting for their events. */
unsigned	 commit_queued(struct commit *);
/* A per-request store's events reached rev: answer who waited for them. */
void		 commit_unpark(struct commit *, uint64_t rev);

#endif
