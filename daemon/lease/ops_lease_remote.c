/*
 * The lease ops (metad-protocol(7), LEASES; metad(8), BACKEND INTERNALS,
 * etcd) on a backend that keeps leases itself (ops_lease_remote_strategy,
 * chosen at start: etcd).  The backend grants, times and expires them, and
 * deletes their keys; every daemon on it sees the same leases.  So these
 * ops are calls to it, answered when it answers, and none goes through the
 * group commit: a grant is durable when the backend answers, and a
 * revoke's deletes are written by the backend at one rev, answered once
 * the daemon's watch stream has delivered that rev.  The lease table
 * (lease.c) holds only this daemon's session leases, to keep them alive
 * while their connection lives and revoke them when it closes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "lease/lease.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/idem.h"
#include "core/reply.h"
#include "core/wait.h"

/* How long a revoke's answer waits for its deletes to be delivered. */
#define LEASE_REVOKE_WAIT_MS	30000

static void
ops_lease_remote_not_found(struct req *r, uint64_t id)
{
	char	 msg[PROTO_MSG_MAX];

	snprintf(msg, sizeof msg, "lease %llu not found (unknown, expired "
	    "or revoked)", (unsigned long long)id);
	reply_error(r, PROTO_NOT_FOUND, msg);
}

/* The lease's id in r->state (a lease_req), or answered and -1. */
static int
ops_lease_remote_id(struct req *r)
{
	struct proto_err	 e;
	struct lease_req	*lr = xcalloc(1, sizeof *lr);

	r->state = lr;
	r->state_free = free;
	if (ops_lease_arg(r->json, 1, &lr->id, &e) == 1)
		return (0);
	reply_error(r, e.code, e.msg);
	req_done(r);
	return (-1);
}

static void
ops_lease_remote_answer(struct req *r, const struct store_lease_state *ls)
{
	struct jw	 w;

	reply_begin(r, &w);
	jw_name(&w, "lease");
	jw_u64(&w, ls->id);
	jw_name(&w, "ttl_ms");
	jw_u64(&w, ls->ttl_ms);
	reply_end(r, &w);
}

static void
ops_lease_remote_revoked_answer(struct req *r, uint64_t rev, uint64_t n)
{
	struct jw	 w;

	reply_begin(r, &w);
	jw_name(&w, "rev");
	jw_u64(&w, rev);
	jw_name(&w, "deleted");
	jw_u64(&w, n);
	reply_end(r, &w);
}

static void
ops_lease_remote_granted(void *arg, const struct store_lease_state *ls,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct lease	*l;

	r->md->lease_grants_out--;
	if (se != NULL) {
		reply_store_error(r, se);
		req_done(r);
		return;
	}
	ops_lease_remote_answer(r, ls);
	if (ls->session) {
		/* Kept alive while its connection lives (lease.c). */
		l = lease_add_remote(r->md->leases, ls->id, ls->ttl_ms,
		    r->conn);
		if (r->conn == NULL || *r->conn_dead)
			lease_expire(r->md->leases, l);
	}
	req_done(r);
}

/*
 * A token (metad-protocol(7), IDEMPOTENT WRITES): the backend writes its
 * record with the grant or revoke, holding the answer made here; a
 * request named again is answered from it.
 */
static void
ops_lease_remote_record(void *arg, const struct store_lease_state *ls,
    int found, uint64_t rev, uint64_t n, struct buf *out)
{
	struct req		*r = arg;
	struct lease_req	*lr = r->state;

	if (ls != NULL)
		ops_lease_remote_answer(r, ls);
	else if (!found)
		ops_lease_remote_not_found(r, lr->id);
	else
		ops_lease_remote_revoked_answer(r, rev, n);
	if (idem_answer(r, out) != 0)
		buf_reset(out);
	buf_reset(&r->resp);
}

/* The token's record for the backend's call, or NULL: none. */
static const struct store_lease_idem *
ops_lease_remote_idem(struct req *r, struct store_lease_idem *idem)
{
	struct lease_req	*lr = r->state;

	if (r->idem == NULL)
		return (NULL);
	idem->tok = r->idem_name;
	idem->len = r->idem_name_len;
	idem->mod = lr->idem_mod;
	idem->pending = lr->idem_pending;
	idem->expires_ms = idem_now_ms() + r->md->cfg.idem_window_ms;
	idem->answer = ops_lease_remote_record;
	return (idem);
}

static void
ops_lease_remote_replayed(struct req *r)
{
	req_done(r);
}

/*
 * The token's record read: answered from it (once its rev is delivered),
 * or go(r) to apply the request.
 */
static void
ops_lease_remote_looked(void *arg, int rc, const struct store_idem *rec,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct lease_req	*lr = r->state;
	struct store_err	 e2;

	if (rc == 0) {
		lr->idem_mod = rec->mod;
		lr->idem_pending = rec->pending;
		lr->go(r);
		return;
	}
	if (rc < 0 || idem_replay_rec(r, rec, &e2) < 0) {
		reply_store_error(r, rc < 0 ? se : &e2);
		req_done(r);
		return;
	}
	if (rec->rev == 0)
		req_done(r);
	else
		wait_rev(r, rec->rev, LEASE_REVOKE_WAIT_MS,
		    ops_lease_remote_replayed);
}

/*
 * Requests of this daemon with one token go one at a time, as the group
 * commit has them wait for each other: the next reads the record once the
 * one before was answered (its request freed), and finds its answer.
 */
static void
ops_lease_remote_look(evutil_socket_t fd, short what, void *arg)
{
	struct lease_req	*lr = arg;
	struct req		*r = lr->req;

	(void)fd;
	(void)what;
	store_lease_idem_get(r->md->store, r->idem_name, r->idem_name_len,
	    idem_now_ms(), ops_lease_remote_looked, r);
}

static void
ops_lease_remote_idem_free(void *arg)
{
	struct lease_req	*lr = arg, *o, *next = NULL;
	struct metad		*md = lr->req->md;
	struct timeval		 now = { 0, 0 };

	LIST_REMOVE(lr, idem_entry);
	if (!lr->idem_waiting) {
		/* The oldest waiting (the list is newest first). */
		LIST_FOREACH(o, &md->lease_idem, idem_entry) {
			if (o->idem_waiting && o->idem_tok_len ==
			    lr->idem_tok_len && memcmp(o->idem_tok,
			    lr->idem_tok, lr->idem_tok_len) == 0)
				next = o;
		}
		if (next != NULL) {
			next->idem_waiting = 0;
			evtimer_add(next->idem_ev, &now);
		}
	}
	event_free(lr->idem_ev);
	free(lr->idem_tok);
	lr->idem_free(lr);
}

/* go(r) at once, or once the token's record says to apply it. */
static void
ops_lease_remote_idem_first(struct req *r, void (*go)(struct req *))
{
	struct lease_req	*lr = r->state, *o;
	struct timeval		 now = { 0, 0 };

	if (r->idem == NULL) {
		go(r);
		return;
	}
	lr->go = go;
	lr->req = r;
	lr->idem_tok = xmemdup(r->idem_name, r->idem_name_len);
	lr->idem_tok_len = r->idem_name_len;
	if ((lr->idem_ev = evtimer_new(r->md->base, ops_lease_remote_look,
	    lr)) == NULL)
		fatalx("evtimer_new");
	lr->idem_free = r->state_free;
	r->state_free = ops_lease_remote_idem_free;
	LIST_FOREACH(o, &r->md->lease_idem, idem_entry) {
		if (o->idem_tok_len == lr->idem_tok_len && memcmp(o->idem_tok,
		    lr->idem_tok, lr->idem_tok_len) == 0)
			lr->idem_waiting = 1;
	}
	LIST_INSERT_HEAD(&r->md->lease_idem, lr, idem_entry);
	if (!lr->idem_waiting)
		evtimer_add(lr->idem_ev, &now);
}

static void
ops_lease_remote_grant_go(struct req *r)
{
	struct lease_req	*lr = r->state;
	struct store_lease_idem	 idem;

	/* Those of the prefix etcd holds, and those asked for. */
	if (ops_lease_full(r, store_lease_count(r->md->store) +
	    r->md->lease_grants_out)) {
		req_done(r);
		return;
	}
	r->md->lease_grants_out++;
	store_lease_grant(r->md->store, lr->ttl_ms, lr->session,
	    ops_lease_remote_idem(r, &idem), ops_lease_remote_granted, r);
}

static void
ops_lease_remote_grant(struct req *r)
{
	struct proto_err	 e;

	if (ops_lease_grant_prepare(r, &e) != 0) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	ops_lease_remote_idem_first(r, ops_lease_remote_grant_go);
}

static void
ops_lease_remote_kept(void *arg, const struct store_lease_state *ls,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct lease_req *lr = r->state;

	if (se != NULL)
		reply_store_error(r, se);
	else if (!ls->found)
		ops_lease_remote_not_found(r, lr->id);
	else
		ops_lease_remote_answer(r, ls);
	req_done(r);
}

static void
ops_lease_remote_keepalive(struct req *r)
{
	struct lease_req	*lr;

	if (ops_lease_remote_id(r) != 0)
		return;
	lr = r->state;
	store_lease_keepalive(r->md->store, lr->id, ops_lease_remote_kept, r);
}

/* The revoke's deletes are delivered: answer. */
static void
ops_lease_remote_revoked_go(struct req *r)
{
	struct lease_req	*lr = r->state;

	ops_lease_remote_revoked_answer(r, lr->rev, lr->ttl_ms);
	req_done(r);
}

static void
ops_lease_remote_revoked(void *arg, int found, uint64_t rev, uint64_t n,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct lease_req	*lr = r->state;
	struct lease		*l;

	if (se != NULL || !found) {
		if (se != NULL)
			reply_store_error(r, se);
		else
			ops_lease_remote_not_found(r, lr->id);
		req_done(r);
		return;
	}
	if ((l = lease_lookup(r->md->leases, lr->id)) != NULL)
		lease_remove(r->md->leases, l);
	lr->rev = rev;
	lr->ttl_ms = n;		/* the keys it deleted */
	wait_rev(r, rev, LEASE_REVOKE_WAIT_MS, ops_lease_remote_revoked_go);
}

static void
ops_lease_remote_revoke_go(struct req *r)
{
	struct lease_req	*lr = r->state;
	struct store_lease_idem	 idem;

	store_lease_revoke_now(r->md->store, lr->id, 1,
	    ops_lease_remote_idem(r, &idem), ops_lease_remote_revoked, r);
}

static void
ops_lease_remote_revoke(struct req *r)
{
	if (ops_lease_remote_id(r) != 0)
		return;
	ops_lease_remote_idem_first(r, ops_lease_remote_revoke_go);
}

static void
ops_lease_remote_info_keys(void *arg, long n, const struct store_kv *kvs,
    int more, const struct store_err *se)
{
	struct req		*r = arg;
	struct lease_req	*lr = r->state;

	/* remaining, as the backend said */
	ops_lease_info_answer(r, lr->deadline, n, kvs, more, se);
}

static void
ops_lease_remote_info_got(void *arg, const struct store_lease_state *ls,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct lease_req	*lr = r->state;

	if (se != NULL || !ls->found) {
		if (se != NULL)
			reply_store_error(r, se);
		else
			ops_lease_remote_not_found(r, lr->id);
		req_done(r);
		return;
	}
	lr->ttl_ms = ls->ttl_ms;
	/* The table holds this daemon's session leases (the backend may
	 * keep them as leases with a TTL: the metad backend). */
	lr->session = ls->session || lease_find(r->md->leases, lr->id) != NULL;
	lr->deadline = ls->remaining_ms;
	store_read_lease_keys(r->md->store, lr->id, NULL, 0,
	    LEASE_INFO_KEYS_MAX, ops_lease_remote_info_keys, r);
}

static void
ops_lease_remote_info(struct req *r)
{
	struct lease_req	*lr;

	if (ops_lease_remote_id(r) != 0)
		return;
	lr = r->state;
	store_lease_get(r->md->store, lr->id, ops_lease_remote_info_got, r);
}

static void
ops_lease_remote_listed(void *arg, long n, const struct store_lease *v,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct jw	 w;
	long		 i;

	if (n < 0) {
		reply_store_error(r, se);
		req_done(r);
		return;
	}
	reply_begin(r, &w);
	jw_name(&w, "leases");
	jw_arr_open(&w);
	for (i = 0; i < n; i++) {
		jw_obj_open(&w);
		jw_name(&w, "lease");
		jw_u64(&w, v[i].id);
		jw_name(&w, "ttl_ms");
		jw_u64(&w, v[i].ttl_ms);
		jw_name(&w, "remaining_ms");
		jw_u64(&w, v[i].remaining_ms);
		jw_name(&w, "session");
		jw_bool(&w, v[i].session ||
		    lease_find(r->md->leases, v[i].id) != NULL);
		jw_obj_close(&w);
	}
	jw_arr_close(&w);
	reply_end(r, &w);
	req_done(r);
}

static void
ops_lease_remote_list(struct req *r)
{
	store_read_leases(r->md->store, ops_lease_remote_listed, r);
}

/* The backend checks a put's lease in its own txn. */
static int
ops_lease_remote_live(struct req *r, uint64_t id)
{
	(void)r;
	(void)id;
	return (1);
}

/* Not through the group commit: flags without OP_WRITE. */
static const struct op ops_lease_remote_grant_entry = {
	.name = "lease_grant",
	.flags = OP_RW | OP_LEASE | OP_IDEM,
	.fields = { "ttl_ms", "session" },
	.run = ops_lease_remote_grant,
};

static const struct op ops_lease_remote_revoke_entry = {
	.name = "lease_revoke",
	.flags = OP_RW | OP_LEASE | OP_IDEM,
	.fields = { "lease" },
	.run = ops_lease_remote_revoke,
};

static const struct op ops_lease_remote_keepalive_entry = {
	.name = "lease_keepalive",
	.flags = OP_RW | OP_LEASE | OP_IDEM,
	.fields = { "lease" },
	.run = ops_lease_remote_keepalive,
};

static const struct op ops_lease_remote_info_entry = {
	.name = "lease_info",
	.flags = OP_LEASE,
	.fields = { "lease" },
	.run = ops_lease_remote_info,
};

static const struct op ops_lease_remote_list_entry = {
	.name = "lease_list",
	.flags = OP_LEASE,
	.run = ops_lease_remote_list,
};

static const struct op *const ops_lease_remote_rows[] = {
	&ops_lease_remote_grant_entry,
	&ops_lease_remote_revoke_entry,
	&ops_lease_remote_keepalive_entry,
	&ops_lease_remote_info_entry,
	&ops_lease_remote_list_entry,
	NULL
};

/* The leases the table holds: this daemon's session ones (lease.h). */
static size_t
ops_lease_remote_count(const struct metad *md)
{
	return (md->leases != NULL ? lease_count(md->leases) : 0);
}

/* The backend keeps the leases (chosen by ops_lease_choose()). */
const struct ops_leases ops_lease_remote_strategy = {
	.remote = 1,
	.rows = ops_lease_remote_rows,
	.live = ops_lease_remote_live,
	.count = ops_lease_remote_count,
};
