/*
 * The daemon's leases (metad-protocol(7), LEASES): which leases live, when
 * each expires, and which connection holds each session lease.  The store
 * keeps each lease's record and its keys (store.h); this table keeps the
 * deadlines, in memory only: after a restart every lease starts again with
 * its whole TTL.
 *
 * Deadlines are a binary min-heap with one libevent timer armed for the
 * earliest, so an idle lease costs nothing until it is due and a
 * keepalive costs O(log n).  When a lease is due (or its session's
 * connection closes) it is marked revoking at once -- from then on it is
 * unknown to puts and keepalives -- and handed to the table's on_due,
 * given at creation (ops_lease_due: a lease_revoke request through the
 * group commit like any write: its keys are deleted at one rev, and
 * watchers get the delete events before anything after it is answered).
 * The lease leaves the table when that revoke is applied; a revoke that
 * fails is tried again a second later.  The table builds no request.
 */
#ifndef METAD_LEASE_H
#define METAD_LEASE_H

#include <sys/queue.h>

#include <stdint.h>

#include "metad_limits.h"

struct conn;
struct metad;
struct event;
struct req;
struct lease_table;

struct lease {
	uint64_t		 id;
	uint64_t		 ttl_ms;
	int			 session;
	int			 revoking;	/* due, its revoke queued */
	int			 revoked;	/* a revoke applied, not landed */
	struct conn		*conn;		/* a live session's, or NULL */
	uint64_t		 deadline;	/* monotonic ms */
	size_t			 heap_i;	/* in the heap, or SIZE_MAX */
	struct lease		*hnext;		/* hash chain */
	TAILQ_ENTRY(lease)	 sentry;	/* sessions with a conn */
};

/*
 * The decoded arguments of lease ops (req->state).  A grant or revoke
 * applied in a batch changes the table for good only once its answer is
 * final (the request freed): a batch whose commit fails answers an error,
 * and the table goes back (ops_lease_state_free()).
 */
struct lease_req {
	uint64_t		 id;
	uint64_t		 ttl_ms;
	int			 session;
	uint64_t		 deadline;	/* lease_info's */
	struct req		*req;		/* grant, revoke: its request */
	int			 applied;	/* grant, revoke: applied */
	uint64_t		 rev;		/* revoke: its deletes', or 0 */
	uint64_t		 idem_mod;	/* its token's record, as read */
	int			 idem_pending;
	void			(*go)(struct req *);	/* once it is read */
	/* etcd: in md->lease_idem while out (ops_lease_remote.c) */
	char			*idem_tok;
	size_t			 idem_tok_len;
	int			 idem_waiting;
	struct event		*idem_ev;	/* its wake-up */
	void			(*idem_free)(void *);
	LIST_ENTRY(lease_req)	 idem_entry;
};

/* Lease ids fit a JSON number exactly. */
#define LEASE_ID_MAX		((UINT64_C(1) << 53) - 1)
/* A lease's keys listed by lease_info at most. */
#define LEASE_INFO_KEYS_MAX	1000
/* A revoke that failed is tried again after this. */
#define LEASE_RETRY_MS		1000

/* A local lease is due (revoking now): revoke it, arg as given. */
typedef void	 lease_due_fn(struct lease *, void *arg);

/*
 * remote: the backend keeps the leases (the lease strategy chosen at
 * start, ops_lease_choose()): the table then holds this daemon's session
 * leases only, to keep them alive there.
 */
struct lease_table *lease_table_create(struct metad *md, int remote,
		    lease_due_fn *on_due, void *arg);
/* The store's leases, each with its whole TTL; sessions revoked. */
void		 lease_table_load(struct lease_table *);
void		 lease_table_free(struct lease_table *);

/* A live lease (not revoking), or NULL. */
struct lease	*lease_find(struct lease_table *, uint64_t);
/* A lease still in the table, revoking or not, or NULL. */
struct lease	*lease_lookup(struct lease_table *, uint64_t);
/* A new lease with a fresh id, due ttl_ms from now (not yet recorded). */
struct lease	*lease_add(struct lease_table *, uint64_t ttl_ms, int session,
		    struct conn *);
/*
 * A session lease of a backend that keeps leases itself (etcd), granted
 * there through c: kept alive from here every ttl_ms / 3 while c lives;
 * lease_expire() revokes it there.  The table holds no other lease then.
 */
struct lease	*lease_add_remote(struct lease_table *, uint64_t id,
		    uint64_t ttl_ms, struct conn *c);
/* Due ttl_ms from now again. */
void		 lease_refresh(struct lease_table *, struct lease *);
/* Mark it revoking and revoke it: on_due, or at the store (remote). */
void		 lease_expire(struct lease_table *, struct lease *);
/* Mark it revoking (out of the heap; unknown to puts), nothing queued. */
void		 lease_revoking(struct lease_table *, struct lease *);
/* Its revoke failed: revoke it again LEASE_RETRY_MS from now. */
void		 lease_retry(struct lease_table *, struct lease *);
/*
 * A revoke asked for failed: it lives again, due when it was (a session
 * lease, whose connection was let go, is revoked again instead).
 */
void		 lease_unrevoke(struct lease_table *, struct lease *);
/* Its revoke was applied (or it was never recorded): forget it. */
void		 lease_remove(struct lease_table *, struct lease *);
/* c closes: revoke its session leases now. */
void		 lease_conn_closed(struct lease_table *, struct conn *);
/* The live leases, sorted by id: *n of them, an array to free(). */
struct lease	**lease_list(struct lease_table *, size_t *n);
size_t		 lease_count(struct lease_table *);

#endif
