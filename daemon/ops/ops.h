/*
 * The op dispatch table and the ops.  ops_parse() decodes a request line
 * and checks access; ops_start() runs the op of a request its connection
 * admitted (net/conn.c: the request order): a write op is validated (prepare: every
 * argument checked before any work) and queued for the group commit, which
 * calls apply inside a batch at the request's revision; any other op runs
 * at once and ends in req_done(), now or later (req.h).
 */
#ifndef METAD_OPS_H
#define METAD_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "core/req.h"
#include "store/store.h"

struct conn;
struct lease;
struct metad;

/*
 * Decode a request line into r, made by its connection with room
 * OPS_FAST_ROOM(len) for the line's strings: the direct decoder, else the
 * general one.  0, or -1 with e, the answer.
 */
int		 ops_parse(struct req *, const char *, size_t,
		    struct proto_err *);
/*
 * Start r, admitted in its turn (rc and e as ops_parse gave them; line
 * and len the line it was parsed from): an error is answered, a decoded
 * write goes to the group commit (or whole to the metad a forwarding
 * store uses), another op runs.  r ends in req_done(), now or later.
 */
void		 ops_start(struct req *, const char *line, size_t len, int rc,
		    const struct proto_err *);
/*
 * The general decoder of a request line into r (a cJSON tree, the id, the
 * op, access, the op's fields and prepare): 0, or -1 with e, the answer.
 */
int		 ops_decode(struct req *, const char *, size_t,
		    struct proto_err *);
/*
 * The request's "id" (ops_id.c), from r->json and the line it came from,
 * kept in r as the text it was sent as: 0 (none is 0 too), or -1 with e.
 */
int		 ops_id_take(struct req *, const char *, size_t,
		    struct proto_err *);

/*
 * The direct decoder (ops_fast.c) of plain get, put and delete lines: 1 if
 * it decoded the line into *f, its strings unescaped into out (room for
 * len + 2 bytes, each string followed by a NUL), 0 if it leaves the line
 * to ops_decode (which may accept it or not).  It takes only lines that
 * ops_decode accepts, with the same op, id, arguments and token.
 */
struct ops_fast {
	const char	*op;		/* the op's name: get, put, delete */
	const char	*id;		/* the id's JSON text, or NULL */
	size_t		 id_len;
	const char	*key;
	size_t		 key_len;
	const char	*value;		/* put */
	size_t		 value_len;
	struct precond	 pc;
	uint64_t	 lease;		/* put: 0 none */
	int		 serializable;	/* get: "consistency" */
	const char	*idem;		/* put, delete: the token, or NULL */
	size_t		 idem_len;
};
int		 ops_fast_decode(const char *, size_t, size_t max_value,
		    char *out, struct ops_fast *);
/* The room ops_fast needs in a request's strs for a line of len bytes:
 * what ops_fast_decode writes, then the id's text and the token with a NUL
 * (all from the line, none longer there). */
#define OPS_FAST_ROOM(len)	((len) + 2)
/* r (from ops_parse, with its strs) as ops_decode would make it: 1, or 0
 * untouched. */
int		 ops_fast(struct req *, const char *, size_t);
/* The row of the op named, or NULL: the ops' table (ops.c), then the
 * lease strategy's rows (md->lease_ops). */
const struct op	*ops_find(const struct metad *, const char *);
/* The i-th of those rows (from 0), or NULL past the last. */
const struct op	*ops_row(const struct metad *, size_t);
/* 0, or -1 and e (bad_request) for a field the op's row does not list
 * (ops_fields.c). */
int		 ops_fields_check(const struct op *, const cJSON *,
		    struct proto_err *);
int		 ops_fields_check_obj(const char *const *, const cJSON *,
		    const char *, struct proto_err *);
int		 ops_fields_check_txn(const char *, const cJSON *,
		    struct proto_err *);
int		 ops_fail_at(struct proto_err *, const char *, size_t);
int		 ops_field_list(const cJSON *, const char *, const cJSON **,
		    size_t *, struct proto_err *);

/*
 * The metrics' exposition (ops_metrics.c: the counters, and the gauges
 * read now, the store's included: without them when it does not answer),
 * handed to done now or later (a remote store's stats).
 */
typedef void	 ops_metrics_done(void *, const struct buf *text);
void		 ops_metrics_text(struct metad *, ops_metrics_done *, void *);

/* Reads (ops_read.c). */
void	ops_hello(struct req *);
void	ops_ping(struct req *);
void	ops_get(struct req *);
void	ops_list(struct req *);
void	ops_status(struct req *);
/* A read's store error as its answer (compacted: with compact_rev). */
void	ops_read_fail(struct req *, const struct store_err *);
/* One key's events (ops_history.c). */
void	ops_history(struct req *);

/* put and delete (ops_write.c). */
int	ops_put_prepare(struct req *, struct proto_err *);
int	ops_put_apply(struct req *, uint64_t, int *, struct store_err *);
void	ops_write_keys(struct req *, struct store_keys *);
int	ops_delete_prepare(struct req *, struct proto_err *);
int	ops_delete_apply(struct req *, uint64_t, int *, struct store_err *);

/* Transactions (ops_txn.c). */
int	ops_txn_prepare(struct req *, struct proto_err *);
int	ops_txn_apply(struct req *, uint64_t, int *, struct store_err *);
void	ops_txn_keys(struct req *, struct store_keys *);

/* Epochs (ops_epoch.c). */
void	ops_epoch_get(struct req *);
int	ops_epoch_bump_prepare(struct req *, struct proto_err *);
int	ops_epoch_bump_apply(struct req *, uint64_t, int *, struct store_err *);
void	ops_epoch_bump_keys(struct req *, struct store_keys *);

/* compact, through the commit like any write (ops_compact.c). */
int	ops_compact_prepare(struct req *, struct proto_err *);
int	ops_compact_apply(struct req *, uint64_t, int *, struct store_err *);

/* Leases (ops_lease.c). */
int	ops_lease_grant_prepare(struct req *, struct proto_err *);
int	ops_lease_grant_apply(struct req *, uint64_t, int *, struct store_err *);
/* n leases held: at --max-leases, answered resource_exhausted, 1; else 0. */
int	ops_lease_full(struct req *, size_t n);
int	ops_lease_revoke_prepare(struct req *, struct proto_err *);
int	ops_lease_revoke_apply(struct req *, uint64_t, int *,
	    struct store_err *);
void	ops_lease_keepalive(struct req *);
void	ops_lease_info(struct req *);
void	ops_lease_info_answer(struct req *, uint64_t, long,
	    const struct store_kv *, int, const struct store_err *);
void	ops_lease_list(struct req *);
/* A request's "lease" field: 1 given, 0 absent, -1 bad (e). */
int	ops_lease_arg(const cJSON *, int, uint64_t *, struct proto_err *);
/* The final answer of r is a success ("ok":true). */
int	ops_lease_answered_ok(const struct req *);
/* A lease op's state_free: undoes an applied grant or revoke that failed. */
void	ops_lease_state_free(void *);
/*
 * The lease table's on_due (lease_table_create, arg the metad): a local
 * lease's revoke, a lease_revoke request of the daemon's own through the
 * group commit.
 */
void	ops_lease_due(struct lease *, void *);
/*
 * A write's "lease" (a put's, a txn put's): 1 if it may name the lease,
 * else 0 with r answered not_found (the lease strategy's check).
 */
int	ops_lease_live(struct req *, uint64_t);

/*
 * The lease strategy, chosen once at start (ops_lease_choose(), from what
 * the store says it does): the daemon times the leases itself
 * (ops_lease.c), or a backend keeps them (ops_lease_remote.c: etcd).  It
 * supplies the lease ops' rows; nothing else asks the store which it is.
 */
struct ops_leases {
	int			 remote;	/* the backend keeps them */
	const struct op *const	*rows;		/* NULL-terminated */
	/* ops_lease_live() */
	int			(*live)(struct req *, uint64_t);
	/* The leases live that the daemon knows (metad_leases). */
	size_t			(*count)(const struct metad *);
};
extern const struct ops_leases ops_lease_local_strategy;
extern const struct ops_leases ops_lease_remote_strategy;
const struct ops_leases *ops_lease_choose(const struct store *);

#endif
