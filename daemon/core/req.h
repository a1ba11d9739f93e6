/*
 * What a request is: one decoded request line, the op it names, and how it
 * ends.
 *
 * Every request ends in req_done() exactly once, when r->resp holds its
 * whole answer: at once for most ops, later for a write (after its commit)
 * or for a read that waits (a remote store, a wait).  The connection sends
 * answers in the order the requests came, whatever order they end in.
 *
 * Ownership: a struct req owns its cJSON tree (NULL when the direct
 * decoder, ops_fast.c, read the line: its arguments are then in wa, their
 * strings in strs), its response buffer and any decoded state; the connection frees it once its answer is sent (or, when
 * the connection closed meanwhile, at req_done()).  While a request lives,
 * it holds a reference to its connection.
 */
#ifndef METAD_REQ_H
#define METAD_REQ_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "metad_limits.h"
#include "proto.h"
#include "store/store.h"
#include "util.h"

struct commit_order;
struct conn;
struct metad;
struct watch_peer;

enum precond_kind {
	PRECOND_NONE,
	PRECOND_ABSENT,
	PRECOND_VERSION,	/* 0 means absent */
	PRECOND_MOD_REV
};

struct precond {
	enum precond_kind	 kind;
	uint64_t		 n;
};

/* The access a connection was given, which each of its requests carries. */
enum conn_access {
	CONN_ACCESS_NONE,
	CONN_ACCESS_RO,
	CONN_ACCESS_RW
};

/*
 * A write's fence ("fence":{"key":K,"epoch":N}; set 0: none), parsed and
 * checked by ops/fence.c.
 */
struct fence {
	int			 set;
	const char		*key;
	size_t			 key_len;
	uint64_t		 epoch;
};

/* put and delete. */
struct write_args {
	const char		*key;
	size_t			 key_len;
	struct proto_bytes	 value;
	struct precond		 pc;
	struct fence		 fence;
	uint64_t		 lease;		/* put: attach to, 0: none */
	/* delete of a range: [key, end), end NULL for no end */
	int			 range;
	const char		*end;
	size_t			 end_len;
};

struct req {
	struct metad		*md;
	struct conn		*conn;
	enum conn_access	 access;	/* its connection's */
	const int		*conn_dead;	/* its connection's: closed */
	struct watch_peer	*peer;		/* its connection's (watch.h) */
	/* Its connection's write order (commit.h), or NULL: the daemon's. */
	struct commit_order	*order;
	cJSON			*json;
	const struct op		*op;
	/* The id as JSON text (id_len 0: none), in strs or id_owned. */
	const char		*id;
	size_t			 id_len;
	char			*id_owned;
	struct write_args	 wa;		/* put, delete; a get's key (ops_fast) */
	int			 serializable;	/* ops_fast: a get's consistency */
	/* An op's own decoded arguments (txn, epoch_bump), freed by req_free. */
	void			*state;
	void			 (*state_free)(void *);
	struct buf		 resp;
	/* The metrics' (net/conn.c): its op's name, its answer's code,
	 * when its line was read (mono_ns()). */
	const char		*op_name;
	enum proto_code		 code;
	int64_t			 start_ns;
	/* A write: the revision it landed at, or 0 if it wrote nothing. */
	uint64_t		 wrote_rev;
	/*
	 * Idempotent writes (core/idem.h): its peer's identity (its
	 * connection's; NULL: the daemon's own request), the token it
	 * carries ("idem", in json, or in strs from ops_fast; NULL: none),
	 * and when it was answered from its token's record, the rev that
	 * answer says (it waits for that rev's events like the write did).
	 */
	const char		*identity;
	size_t			 identity_len;
	const char		*idem;
	size_t			 idem_len;
	uint64_t		 replay_rev;
	/* Its record's name (idem_name_make()) and the answer recorded. */
	char			*idem_name;
	size_t			 idem_name_len;
	struct buf		 idem_rec;
	uint64_t		 idem_expires;	/* the record's, wall ms */
	uint64_t		 parked_ms;	/* waits for its events since */
	int			 done;		/* resp is the answer */
	/*
	 * Called once, at req_done(): where the answer goes.  A
	 * connection's request goes back to it (conn_req_done, which sends
	 * answers in request order); one the daemon made itself (conn NULL:
	 * a lease's revoke) frees itself.
	 */
	void			 (*on_done)(struct req *);
	TAILQ_ENTRY(req)	 entry;		/* its owner's queue */
	TAILQ_ENTRY(req)	 conn_entry;	/* the connection's order */
	/* A connection's requests: room for the line's strings (ops_fast). */
	char			 strs[];
};

TAILQ_HEAD(req_queue, req);

#define OP_WRITE	0x1	/* queued for the group commit */
#define OP_RW		0x2	/* needs rw access */
/*
 * A write op whose apply makes at most one store write: a failure leaves
 * nothing half done (the store refuses the batch's commit if it did), so
 * the commit needs no savepoint around it.
 */
#define OP_ONE_WRITE	0x4
/* A lease op: unknown_op on a backend without leases (store_has_leases). */
#define OP_LEASE	0x8
/* A write op that may carry "idem" (metad-protocol(7), IDEMPOTENT
 * WRITES): its answer is recorded with its write (core/idem.h). */
#define OP_IDEM		0x20

/* What a write op's prepared request does (struct op's does, req_does). */
#define REQ_READS	0x1	/* reads: its answer may be of --max-answer-bytes */
#define REQ_WRITES	0x2	/* may write */

/* The fields an op knows besides "op" and "id" (struct op), at most. */
#define OP_FIELDS_MAX	12

/*
 * One op's row (as tmux's cmd_entry): the file of an op exports its row,
 * ops/ops.c lists them.  A request naming a field not in fields answers
 * bad_request naming it (ops_fields_check).
 */
struct op {
	const char	*name;
	int		 flags;
	/* The fields it knows besides "op" and "id", NULL-terminated. */
	const char	*fields[OP_FIELDS_MAX + 1];
	/* Other ops: run, ending in req_done() now or later. */
	void		 (*run)(struct req *);
	/* Write ops: validate into req (0), or fail with e (-1). */
	int		 (*prepare)(struct req *, struct proto_err *);
	/*
	 * Write ops, inside a batch: answer into req->resp; *wrote if the
	 * store changed at rev.  -1 on a store error (nothing answered).
	 */
	int		 (*apply)(struct req *, uint64_t rev, int *wrote,
			    struct store_err *);
	/* Write ops: the keys apply will read; NULL if none. */
	void		 (*keys)(struct req *, struct store_keys *);
	/*
	 * Write ops whose requests differ in what they do (txn): what the
	 * prepared request does, REQ_READS and REQ_WRITES.  A read-only
	 * connection may send one that does not write (ops/ops.c); one that
	 * reads starts as a read does (net/conn.c).  NULL: it writes, and
	 * reads nothing.
	 */
	int		 (*does)(const struct req *);
};

/* 1 if r goes through the group commit (a decoded write op). */
static inline int
req_writes(const struct req *r)
{
	return (r->op != NULL && (r->op->flags & OP_WRITE));
}

/* What r, a prepared write, does (REQ_READS, REQ_WRITES): its op's does. */
static inline int
req_does(const struct req *r)
{
	return (r->op->does != NULL ? r->op->does(r) : REQ_WRITES);
}

/* r->resp is r's whole answer: send it in its turn. */
void	req_done(struct req *);
void	req_free(struct req *);
/* "rw", "ro" or "none", as hello answers it. */
const char	*req_access_name(enum conn_access);

#endif
