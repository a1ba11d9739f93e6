/*
 * compact: drop history below a rev.  It goes through the group commit
 * like any write, so it is ordered with the writes around it and durable
 * when answered; it takes no revision of its own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"

struct ops_compact {
	uint64_t	 rev;
};

int
ops_compact_prepare(struct req *r, struct proto_err *e)
{
	struct ops_compact	*c;

	c = xcalloc(1, sizeof *c);
	r->state = c;
	r->state_free = free;
	if (proto_get_u64(r->json, "rev", 1, &c->rev, e) != 1)
		return (-1);
	return (0);
}

int
ops_compact_apply(struct req *r, uint64_t rev, int *wrote,
    struct store_err *se)
{
	struct ops_compact	*c = r->state;
	struct store		*st = r->md->store;
	char			 msg[PROTO_MSG_MAX];
	struct jw		 w;

	*wrote = 0;
	if (c->rev > rev - 1) {		/* rev: where a write would go */
		snprintf(msg, sizeof msg, "compact rev %" PRIu64 " is beyond "
		    "the current rev %" PRIu64, c->rev, rev - 1);
		reply_error(r, PROTO_BAD_REQUEST, msg);
		return (0);
	}
	if (store_compact(st, c->rev, se) != 0)
		return (-1);
	reply_begin(r, &w);
	jw_name(&w, "compact_rev");
	jw_u64(&w, store_compact_rev(st));
	jw_name(&w, "rev");
	jw_u64(&w, rev - 1);
	reply_end(r, &w);
	return (0);
}

const struct op ops_compact_entry = {
	.name = "compact",
	.flags = OP_WRITE | OP_ONE_WRITE | OP_IDEM,
	.fields = { "rev" },
	.prepare = ops_compact_prepare,
	.apply = ops_compact_apply,
};
