#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/commit.h"
#include "core/forward.h"
#include "core/idem.h"
#include "enc.h"
#include "log.h"
#include "metad.h"
#include "ops/ops.h"
#include "store/store_forward.h"
#include "core/reply.h"

/* The rows, each exported by its op's file (as tmux's cmd_entry). */
extern const struct op ops_hello_entry;
extern const struct op ops_ping_entry;
extern const struct op ops_get_entry;
extern const struct op ops_list_entry;
extern const struct op ops_history_entry;
extern const struct op ops_status_entry;
extern const struct op ops_metrics_entry;
extern const struct op watch_op_watch_entry;
extern const struct op watch_op_unwatch_entry;
extern const struct op watch_op_progress_entry;
extern const struct op wait_op_wait_entry;
extern const struct op snapshot_op_snapshot_entry;
extern const struct op snapshot_op_read_entry;
extern const struct op ops_compact_entry;
extern const struct op ops_put_entry;
extern const struct op ops_delete_entry;
extern const struct op ops_txn_entry;
extern const struct op ops_epoch_get_entry;
extern const struct op ops_epoch_bump_entry;

/* The lease ops' rows come from the lease strategy (md->lease_ops). */
static const struct op *const ops_table[] = {
	&ops_hello_entry,
	&ops_ping_entry,
	&ops_get_entry,
	&ops_list_entry,
	&ops_history_entry,
	&ops_status_entry,
	&ops_metrics_entry,
	&watch_op_watch_entry,
	&watch_op_unwatch_entry,
	&watch_op_progress_entry,
	&wait_op_wait_entry,
	&snapshot_op_snapshot_entry,
	&snapshot_op_read_entry,
	&ops_compact_entry,
	&ops_put_entry,
	&ops_delete_entry,
	&ops_txn_entry,
	&ops_epoch_get_entry,
	&ops_epoch_bump_entry,
	NULL
};

static const struct op *
ops_find_in(const struct op *const *rows, const char *name)
{
	size_t	 i;

	for (i = 0; rows != NULL && rows[i] != NULL; i++) {
		if (strcmp(rows[i]->name, name) == 0)
			return (rows[i]);
	}
	return (NULL);
}

const struct op *
ops_find(const struct metad *md, const char *name)
{
	const struct op	*op;

	if ((op = ops_find_in(ops_table, name)) != NULL)
		return (op);
	return (md->lease_ops != NULL ?
	    ops_find_in(md->lease_ops->rows, name) : NULL);
}

const struct op *
ops_row(const struct metad *md, size_t i)
{
	size_t	 n = sizeof ops_table / sizeof ops_table[0] - 1;

	if (i < n)
		return (ops_table[i]);
	i -= n;
	if (md->lease_ops == NULL || md->lease_ops->rows == NULL)
		return (NULL);
	for (n = 0; n < i && md->lease_ops->rows[n] != NULL; n++)
		;
	return (md->lease_ops->rows[n]);
}

int
ops_lease_live(struct req *r, uint64_t id)
{
	return (r->md->lease_ops->live(r, id));
}

/*
 * "idem" (metad-protocol(7), IDEMPOTENT WRITES): 1 to IDEM_TOKEN_MAX_BYTES
 * of a string, on a row with OP_IDEM (ops_fields_check let it through);
 * kept in r (its bytes are r->json's).
 */
static int
ops_idem_take(struct req *r, struct proto_err *e)
{
	int	 rc;

	if (!(r->op->flags & OP_IDEM))
		return (0);
	if ((rc = proto_get_str(r->json, "idem", 0, &r->idem, &r->idem_len,
	    e)) != 1)
		return (rc);
	if (r->idem_len == 0 || r->idem_len > IDEM_TOKEN_MAX_BYTES)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"idem\" "
		    "must be a token of 1 to %d bytes", IDEM_TOKEN_MAX_BYTES));
	if (!store_has_idem(r->md->store) && !store_forwards(r->md->store))
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"idem\": "
		    "idempotent writes are not available on the %s backend "
		    "yet", store_name(r->md->store)));
	if (idem_name_make(r) != 0)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"idem\": "
		    "this connection has no peer identity to scope it"));
	return (0);
}

int
ops_decode(struct req *r, const char *line, size_t len, struct proto_err *e)
{
	const char	*name;
	size_t		 name_len, n;

	if ((r->json = proto_parse(line, len, e)) == NULL)
		return (-1);
	if (ops_id_take(r, line, len, e) != 0)
		return (-1);
	if (proto_get_str(r->json, "op", 1, &name, &name_len, e) != 1)
		return (-1);
	if ((r->op = ops_find(r->md, name)) == NULL) {
		/* Quote 64 bytes of it at most, not splitting a character. */
		n = name_len < 64 ? name_len : 64;
		while (n > 0 && n < name_len &&
		    ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
		return (proto_fail(e, PROTO_UNKNOWN_OP, "unknown op \"%.*s\"",
		    (int)n, name));
	}
	/* As a daemon without leases would answer: clients can tell. */
	if ((r->op->flags & OP_LEASE) && !store_has_leases(r->md->store))
		return (proto_fail(e, PROTO_UNKNOWN_OP, "op \"%s\" is not "
		    "available on the %s backend (no leases there yet)",
		    r->op->name, store_name(r->md->store)));
	if (ops_fields_check(r->op, r->json, e) != 0 ||
	    ops_idem_take(r, e) != 0)
		return (-1);
	if ((r->op->flags & (OP_WRITE | OP_RW)) && r->op->does == NULL &&
	    r->access != CONN_ACCESS_RW)
		return (proto_fail(e, PROTO_READ_ONLY, "op \"%s\" writes, and "
		    "this connection is read-only", r->op->name));
	if (r->op->prepare != NULL && r->op->prepare(r, e) != 0)
		return (-1);
	if (r->op->does != NULL && r->access != CONN_ACCESS_RW &&
	    (req_does(r) & REQ_WRITES))
		return (proto_fail(e, PROTO_READ_ONLY, "op \"%s\" writes, and "
		    "this connection is read-only (a txn of gets only may "
		    "run)", r->op->name));
	return (0);
}

int
ops_parse(struct req *r, const char *line, size_t len, struct proto_err *e)
{
	return (ops_fast(r, line, len) ? 0 : ops_decode(r, line, len, e));
}

void
ops_start(struct req *r, const char *line, size_t len, int rc,
    const struct proto_err *e)
{
	if (rc != 0) {
		reply_error(r, e->code, e->msg);
		req_done(r);
	} else if (req_writes(r) && store_forwards(r->md->store))
		forward_start(r, line, len);	/* the metad used writes it */
	else if (req_writes(r))
		commit_enqueue(r->md->commit, r);
	else
		r->op->run(r);
}
