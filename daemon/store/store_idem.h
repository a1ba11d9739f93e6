/*
 * The store's records of idempotent writes (store_idem.c), the same
 * interface on every backend.
 */
#ifndef METAD_STORE_IDEM_H
#define METAD_STORE_IDEM_H

#include "store/store.h"

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

#endif
