/*
 * What the reads of ops_read.c share with ops_mget.c: the read options of
 * get and list (metad-protocol(7), READS AT A REVISION): rev (the state as
 * of it), min_rev and timeout_ms (first wait until the daemon's view
 * reached it), consistency.  Kept in r->state with what the op reads.
 */
#ifndef METAD_OPS_READ_H
#define METAD_OPS_READ_H

#include "core/req.h"
#include "store/store.h"

struct read_args {
	int			 has_rev;
	uint64_t		 rev;
	uint64_t		 min_rev;
	uint64_t		 timeout_ms;
	int			 serializable;
	const char		*key;		/* get */
	size_t			 key_len;
	struct store_range	 rg;		/* list */
};

/* The options of r->json into a: 0, or -1 and e. */
int	ops_read_args(struct req *, struct read_args *, struct proto_err *);
/* "rev":0 (the empty store): 1 answered (compacted), -1 empty, 0 not. */
int	ops_read_at_zero(struct req *, const struct read_args *);
/* Run go with a in r->state (freed with r): now, or once min_rev is seen. */
void	ops_read_start(struct req *, struct read_args *,
	    void (*go)(struct req *));
/* get with "keys" (ops_mget.c). */
void	ops_mget(struct req *);
/* list with "count_only" (ops_count.c): takes a, freed with r. */
void	ops_list_count(struct req *, struct read_args *);

#endif
