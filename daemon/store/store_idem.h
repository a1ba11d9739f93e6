/*
 * The store's records of idempotent writes (store_idem.c), the same
 * interface on every backend.
 */
#ifndef METAD_STORE_IDEM_H
#define METAD_STORE_IDEM_H

#include "store/store.h"

struct buf;

/*
 * Idempotent writes (metad-protocol(7), IDEMPOTENT WRITES): the answer a
 * write request carrying a token got, recorded in the batch that applied
 * it, so durable with it and gone with it if the batch is undone or fails.
 * tok is opaque bytes, 1 to STORE_IDEM_TOK_MAX (the caller puts the
 * peer's identity in it).  Inside a batch: store_idem_get() sees the
 * batch's own records; 1 found (*rec filled, its answer valid until the
 * next call on the store), 0 absent, -1 error; a record whose expires_ms
 * (wall-clock ms) is at or before now_ms is absent.  store_idem_put()
 * records (or replaces) one, and drops a few expired ones, never more
 * than STORE_IDEM_PURGE a call.  store_has_idem() is 0 for a backend
 * without records: the others fail.
 */
#define STORE_IDEM_TOK_MAX	512
#define STORE_IDEM_PURGE	4

struct store_idem {
	const void		*answer;
	size_t			 answer_len;
	uint64_t		 rev;		/* its write's, 0: none */
	uint64_t		 expires_ms;	/* wall clock */
	/*
	 * A remote store's get: the write landed at rev, but its answer
	 * was not kept (store_idem_fix() never came); store_idem_get()
	 * fails saying so.
	 */
	int			 lost;
	/*
	 * store_lease_idem_get()'s: the record's version where it is kept
	 * (etcd: its mod_revision; 0: none), for the call that writes it;
	 * pending: a revoke begun whose answer is not recorded yet.
	 */
	uint64_t		 mod;
	int			 pending;
};

int	store_has_idem(const struct store *);
int	store_idem_get(struct store *, const void *tok, size_t len,
	    uint64_t now_ms, struct store_idem *, struct store_err *);
int	store_idem_put(struct store *, const void *tok, size_t len,
	    const struct store_idem *, uint64_t now_ms, struct store_err *);
/*
 * Outside a batch, on a store that can land a batch elsewhere than planned
 * (store_reopen()): the record put by the batch just landed holds the
 * answer made before its rev was known; replace it with rec, the answer
 * made again (at rec->rev, where the batch landed).  done is called once;
 * an error leaves the first record (a replay then learns its answer was
 * not kept).  Local stores fail.
 */
void	store_idem_fix(struct store *, const void *tok, size_t len,
	    const struct store_idem *, store_done, void *);

/*
 * A token on a lease call to a backend that keeps leases itself
 * (store_lease_grant(), store_lease_revoke_now()): outside batches, so the
 * backend writes the record with the call's effect.  A grant's record is
 * written with the lease's own record (etcd: in one txn); a revoke's is
 * begun with it (pending) and holds the answer once the revoke is
 * answered, so the revoke named again finishes it or answers it.  mod is
 * the record as store_lease_idem_get() read it (0: absent): the write
 * fails STORE_ERR_CONFLICT if it moved since (another call with the token
 * came first; the caller sends it again).  answer makes the answer to
 * record, the caller's own (the store knows no protocol): for a grant's
 * lease ls, or for a revoke (ls NULL) found and its n keys deleted at rev.
 */
typedef void (*store_lease_answer)(void *arg,
		    const struct store_lease_state *ls, int found,
		    uint64_t rev, uint64_t n, struct buf *out);
struct store_lease_idem {
	const void		*tok;
	size_t			 len;
	uint64_t		 mod;
	int			 pending;	/* store_idem.pending as read */
	uint64_t		 expires_ms;	/* wall clock */
	store_lease_answer	 answer;
};

/*
 * The record named tok, outside a batch: done gets 1 (a final answer,
 * valid during the call), 0 (none: absent, expired, or a revoke begun;
 * rec's mod and pending tell) or -1 and the error (as store_idem_get()'s,
 * a record whose answer was lost too).
 */
typedef void (*store_idem_done)(void *, int rc, const struct store_idem *,
		    const struct store_err *);
void	store_lease_idem_get(struct store *, const void *tok, size_t len,
	    uint64_t now_ms, store_idem_done, void *);

#endif
