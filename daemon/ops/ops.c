#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/commit.h"
#include "enc.h"
#include "log.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"
#include "ops/snapshot.h"
#include "core/wait.h"
#include "core/watch.h"

static const struct op ops_table[] = {
	{ "hello",	0,		ops_hello,	NULL,	NULL,	NULL },
	{ "ping",	0,		ops_ping,	NULL,	NULL,	NULL },
	{ "get",	0,		ops_get,	NULL,	NULL,	NULL },
	{ "list",	0,		ops_list,	NULL,	NULL,	NULL },
	{ "history",	0,		ops_history,	NULL,	NULL,	NULL },
	{ "status",	0,		ops_status,	NULL,	NULL,	NULL },
	{ "watch",	0,		watch_op_watch,	NULL,	NULL,	NULL },
	{ "unwatch",	0,		watch_op_unwatch, NULL,	NULL,	NULL },
	{ "wait",	0,		wait_op_wait,	NULL,	NULL,	NULL },
	{ "snapshot",	0,		snapshot_op_snapshot, NULL, NULL, NULL },
	{ "snapshot_read", 0,		snapshot_op_read, NULL,	NULL,	NULL },
	{ "compact",	OP_WRITE | OP_ONE_WRITE, NULL, ops_compact_prepare,
	    ops_compact_apply, NULL },
	{ "put",	OP_WRITE | OP_ONE_WRITE, NULL, ops_put_prepare,
	    ops_put_apply, ops_write_keys },
	{ "delete",	OP_WRITE | OP_ONE_WRITE, NULL, ops_delete_prepare,
	    ops_delete_apply, ops_write_keys },
	{ "txn",	OP_WRITE | OP_RO_READS, NULL,	ops_txn_prepare, ops_txn_apply,
	    ops_txn_keys },
	{ "epoch_get",	0,		ops_epoch_get,	NULL,	NULL,	NULL },
	{ "epoch_bump",	OP_WRITE | OP_ONE_WRITE, NULL, ops_epoch_bump_prepare,
	    ops_epoch_bump_apply, ops_epoch_bump_keys },
	{ "lease_grant", OP_WRITE | OP_ONE_WRITE | OP_LEASE, NULL,
	    ops_lease_grant_prepare, ops_lease_grant_apply, NULL },
	{ "lease_revoke", OP_WRITE | OP_LEASE, NULL, ops_lease_revoke_prepare,
	    ops_lease_revoke_apply, NULL },
	{ "lease_keepalive", OP_RW | OP_LEASE, ops_lease_keepalive, NULL, NULL,
	    NULL },
	{ "lease_info",	OP_LEASE,	ops_lease_info,	NULL,	NULL,	NULL },
	{ "lease_list",	OP_LEASE,	ops_lease_list,	NULL,	NULL,	NULL },
};

const struct op *
ops_find(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof ops_table / sizeof ops_table[0]; i++) {
		if (strcmp(ops_table[i].name, name) == 0)
			return (&ops_table[i]);
	}
	return (NULL);
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
	if ((r->op = ops_find(name)) == NULL) {
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
	/* A backend that keeps leases itself answers them (etcd). */
	if ((r->op->flags & OP_LEASE) && store_leases_remote(r->md->store))
		r->op = ops_lease_remote_find(r->op->name);
	if (ops_fields_check(r->op->name, r->json, e) != 0)
		return (-1);
	if ((r->op->flags & (OP_WRITE | OP_RW)) &&
	    !(r->op->flags & OP_RO_READS) &&
	    r->access != CONN_ACCESS_RW)
		return (proto_fail(e, PROTO_READ_ONLY, "op \"%s\" writes, and "
		    "this connection is read-only", r->op->name));
	if (r->op->prepare != NULL && r->op->prepare(r, e) != 0)
		return (-1);
	if ((r->op->flags & OP_RO_READS) &&
	    r->access != CONN_ACCESS_RW && ops_txn_writes(r))
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
ops_start(struct req *r, int rc, const struct proto_err *e)
{
	if (rc != 0) {
		reply_error(r, e->code, e->msg);
		req_done(r);
	} else if (req_writes(r))
		commit_enqueue(r->md->commit, r);
	else
		r->op->run(r);
}
