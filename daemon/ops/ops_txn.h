/*
 * A txn as ops_txn.c parsed it (metad-protocol(7), TRANSACTIONS), shared
 * with ops_txn_len.c, which sizes its answer before it is built.  The
 * strings point into the request's cJSON tree; values are owned.
 */
#ifndef METAD_OPS_TXN_H
#define METAD_OPS_TXN_H

#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "ops/fence.h"
#include "store/store.h"

struct req;

enum txn_target {
	TXN_VERSION,
	TXN_CREATE_REV,
	TXN_MOD_REV,
	TXN_VALUE
};

enum txn_result {
	TXN_EQ,
	TXN_NE,
	TXN_LT,
	TXN_GT
};

struct txn_cmp {
	const char		*key;
	size_t			 key_len;
	enum txn_target		 target;
	enum txn_result		 result;
	uint64_t		 n;
	struct proto_bytes	 value;
};

enum txn_op_type {
	TXN_PUT,
	TXN_DELETE,
	TXN_GET
};

struct txn_op {
	enum txn_op_type	 type;
	const char		*key;
	size_t			 key_len;
	struct proto_bytes	 value;
	uint64_t		 lease;		/* put: attach to, 0: none */
};

struct txn_branch {
	struct txn_op		*ops;
	size_t			 n;
};

struct txn {
	struct txn_cmp		*cmps;
	size_t			 ncmps;
	struct txn_branch	 then;
	struct txn_branch	 els;
	struct fence		 fence;
};

/*
 * The bytes the answer of branch b would take (ops_txn_len.c), at most:
 * its gets read now in the batch, each seeing the branch's own earlier
 * writes, as they will be when it runs.  Counting stops once past limit
 * (any value > limit: too large).  (size_t)-1 on a store error (se).
 */
size_t	ops_txn_len(struct req *, const struct txn_branch *, size_t limit,
	    struct store_err *);

#endif
