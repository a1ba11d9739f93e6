/*
 * Idempotent writes (metad-protocol(7), IDEMPOTENT WRITES), in the group
 * commit.  A write request carrying "idem" looks its token's record up in
 * its batch before it is applied: a record (the token was applied within
 * --idem-window) answers it again as it was answered then, with its own
 * id, and it writes nothing; otherwise it is applied and its answer is
 * recorded in the same batch, durable with its write, for the window.
 * Tokens are their peer's: a record is named by the peer's identity, a
 * NUL, then the token (a remote store reads it with the batch's keys, and
 * two requests naming it wait for each other as for a key).  A store error
 * is never recorded (the write did not happen): the client may send it
 * again.
 */
#ifndef METAD_IDEM_H
#define METAD_IDEM_H

#include <stdint.h>

#include "store/store.h"
#include "store/store_idem.h"

struct req;

/* r's record's name, from its identity and token; 0, or -1 (too long). */
int	idem_name_make(struct req *);
/* 1: r answered from its record (nothing to apply); 0: apply it; -1: se. */
int	idem_replay(struct req *, struct store *, struct store_err *);
/* r answered from rec, a record read (1), or -1 and se. */
int	idem_replay_rec(struct req *, const struct store_idem *,
	    struct store_err *);
/* r's answer (r->resp) without its id, into out: 0, or -1 if not one. */
int	idem_answer(const struct req *, struct buf *);
/* The wall clock in ms, which records' expiries are in. */
uint64_t idem_now_ms(void);
/*
 * r was applied (its answer in r->resp, its write at rev, 0: none):
 * record the answer in the batch.  0, or -1 and se.
 */
int	idem_record(struct req *, struct store *, uint64_t rev,
	    struct store_err *);
/*
 * r, the one writer of a batch, was answered again where its batch landed
 * (a remote store's; NULL: that failed): if its answer is not the one
 * recorded, replace the record (store_idem_fix()) and return 1, done
 * called later; else 0.
 */
int	idem_fix(struct req *, struct store *, store_done, void *);

#endif
