/*
 * Requests and the op dispatch table.
 *
 * A struct req is one decoded request line.  ops_handle() decodes it, checks
 * access and looks up its op.  A read op answers at once into req->resp, or,
 * on a store whose reads are asynchronous, calls ops_defer() and answers
 * later with ops_answer_deferred() (the connection answers nothing else in
 * between).  A
 * write op is validated first (prepare: every argument checked before any
 * work), then queued for the group commit, which calls apply inside a batch
 * at the request's revision; apply writes the response.
 *
 * Ownership: a struct req owns its cJSON tree, its response buffer and any
 * decoded value; req_free() releases them.  The connection it points to is
 * kept alive by the conn's refs while the request is queued.
 */
#ifndef METAD_OPS_H
#define METAD_OPS_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "jsonw.h"
#include "metad_limits.h"
#include "proto.h"
#include "store.h"
#include "util.h"

struct conn;
struct metad;

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
};

struct req {
	struct metad		*md;
	struct conn		*conn;
	cJSON			*json;
	const struct op		*op;
	/* The id as JSON text, or "": escaping takes up to 6 bytes a byte. */
	char			 id[ID_MAX_BYTES * 6 + 8];
	size_t			 id_len;
	struct write_args	 wa;
	/* An op's own decoded arguments (txn, epoch_bump), freed by req_free. */
	void			*state;
	void			 (*state_free)(void *);
	struct buf		 resp;
	/* A per-request store: the revision its write landed at, or 0. */
	uint64_t		 wrote_rev;
	int			 deferred;	/* see ops_defer() */
	TAILQ_ENTRY(req)	 entry;
};

TAILQ_HEAD(req_queue, req);

#define OP_WRITE	0x1	/* queued for the group commit */
#define OP_RW		0x2	/* answered now, needs rw access */
/*
 * A write op whose apply makes at most one store write: a failure leaves
 * nothing half done (the store refuses the batch's commit if it did), so
 * the commit needs no savepoint around it.
 */
#define OP_ONE_WRITE	0x4

struct op {
	const char	*name;
	int		 flags;
	/* Read ops: answer now. */
	void		 (*read)(struct req *);
	/* Write ops: validate into req (0), or fail with e (-1). */
	int		 (*prepare)(struct req *, struct proto_err *);
	/*
	 * Write ops, inside a batch: answer into req->resp; *wrote if the
	 * store changed at rev.  -1 on a store error (nothing answered).
	 */
	int		 (*apply)(struct req *, uint64_t rev, int *wrote,
			    struct store_err *);
	/* Write ops: the keys apply will read (a remote store fetches them
	 * beforehand); NULL if none worth it. */
	void		 (*keys)(struct req *, struct store_keys *);
};

/* Handle one request line from conn; 1 if it must wait (see conn.h). */
int		 ops_handle(struct conn *, const char *, size_t);
const struct op	*ops_find(const char *);
void		 req_free(struct req *);
/* A read whose answer comes later: the request stays until then. */
void		 ops_defer(struct req *);
/* Send the deferred answer in r->resp, and free r. */
void		 ops_answer_deferred(struct req *);

/* Response building (reply.c). */
void	reply_begin(struct req *, struct jw *);
void	reply_end(struct req *, struct jw *);
void	reply_error(struct req *, enum proto_code, const char *);
void	reply_error_begin(struct req *, struct jw *, enum proto_code,
	    const char *);
void	reply_error_end(struct req *, struct jw *);
void	reply_store_error(struct req *, const struct store_err *);
enum proto_code reply_store_code(const struct store_err *);
/* "kv":{...} with or without the value. */
void	reply_kv(struct jw *, const char *, const struct store_kv *, int);
/* A whole error line for a request we could not decode. */
void	reply_raw_error(struct buf *, const char *id, size_t id_len,
	    enum proto_code, const char *);

/* Read ops (ops_read.c). */
void	ops_hello(struct req *);
void	ops_ping(struct req *);
void	ops_get(struct req *);
void	ops_list(struct req *);
void	ops_status(struct req *);

/* Write ops (ops_write.c). */
int	ops_put_prepare(struct req *, struct proto_err *);
int	ops_put_apply(struct req *, uint64_t, int *, struct store_err *);
void	ops_write_keys(struct req *, struct store_keys *);
int	ops_delete_prepare(struct req *, struct proto_err *);
int	ops_delete_apply(struct req *, uint64_t, int *, struct store_err *);

/* Fences on put, delete and txn (fence.c). */
int	fence_parse(const cJSON *, struct fence *, struct proto_err *);
int	fence_check(struct req *, const struct fence *, struct store_err *);

/* Transactions (ops_txn.c). */
int	ops_txn_prepare(struct req *, struct proto_err *);
int	ops_txn_apply(struct req *, uint64_t, int *, struct store_err *);
void	ops_txn_keys(struct req *, struct store_keys *);

/* Epochs (ops_epoch.c). */
void	ops_epoch_get(struct req *);
int	ops_epoch_bump_prepare(struct req *, struct proto_err *);
int	ops_epoch_bump_apply(struct req *, uint64_t, int *, struct store_err *);
void	ops_epoch_bump_keys(struct req *, struct store_keys *);

#endif
