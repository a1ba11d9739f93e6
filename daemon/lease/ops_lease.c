/*
 * The lease ops (metad-protocol(7), LEASES and lease_grant to lease_list):
 * lease_grant and lease_revoke go through the group commit (a grant's
 * record is durable before it is answered; a revoke deletes the lease's
 * keys at one rev); lease_keepalive, lease_info and lease_list answer from
 * the lease table (lease.h) at once.  A put's "lease" is checked here
 * too (ops_lease_arg, and ops_lease_local_live: the local strategy's
 * ops_lease_live).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/commit.h"
#include "lease/lease.h"
#include "log.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"
#include "core/watch.h"

/* "lease" of a request: 1 given (*id), 0 absent, -1 bad (e). */
int
ops_lease_arg(const cJSON *o, int required, uint64_t *id,
    struct proto_err *e)
{
	int	 rc;

	*id = 0;
	if ((rc = proto_get_u64(o, "lease", required, id, e)) == 0)
		return (0);
	if (rc == -1 && cJSON_GetObjectItemCaseSensitive(o, "lease") == NULL)
		return (-1);	/* required and absent */
	if (rc == -1 || *id == 0)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"lease\" "
		    "must be a lease id from 1 to %llu",
		    (unsigned long long)LEASE_ID_MAX));
	return (1);
}

/* 1 if lease id lives in the table; else 0, answered not_found. */
static int
ops_lease_local_live(struct req *r, uint64_t id)
{
	char	 msg[PROTO_MSG_MAX];

	if (lease_find(r->md->leases, id) != NULL)
		return (1);
	snprintf(msg, sizeof msg, "lease %llu not found (unknown, expired "
	    "or revoked)", (unsigned long long)id);
	reply_error(r, PROTO_NOT_FOUND, msg);
	return (0);
}

static const struct op ops_lease_revoke_entry;

static struct lease_req *
ops_lease_state(struct req *r)
{
	struct lease_req	*lr;

	lr = xcalloc(1, sizeof *lr);
	lr->req = r;
	r->state = lr;
	r->state_free = ops_lease_state_free;
	return (lr);
}

int
ops_lease_answered_ok(const struct req *r)
{
	static const char	 ok[] = "\"ok\":true";
	size_t			 at = 1;	/* after "{" */

	if (r->id_len > 0)	/* "id":ID, */
		at += strlen("\"id\":") + r->id_len + 1;
	return (r->resp.len >= at + sizeof ok - 1 &&
	    memcmp(r->resp.data + at, ok, sizeof ok - 1) == 0);
}

/* A revoke's deletes were not committed: they are no lease's end. */
static void
ops_lease_forget(struct metad *md, struct lease_req *lr)
{
	if (lr->rev != 0)
		watch_lease_forget(md->watch, lr->rev, lr->id);
	lr->rev = 0;
}

/*
 * The request of an applied grant or revoke is freed: its answer is final.
 * An error (its batch's commit failed) undoes what apply did to the table:
 * the grant's lease goes, the revoked lease lives on as it was (a session
 * lease is revoked again LEASE_RETRY_MS later: its connection was let go).
 * A revoke that landed removes it.
 */
void
ops_lease_state_free(void *arg)
{
	struct lease_req	*lr = arg;
	struct req		*r = lr->req;
	struct lease		*l;

	if (lr->applied && r != NULL && r->md->leases != NULL &&
	    (l = lease_lookup(r->md->leases, lr->id)) != NULL) {
		if (strcmp(r->op->name, "lease_grant") == 0) {
			if (!ops_lease_answered_ok(r))
				lease_remove(r->md->leases, l);
		} else if (ops_lease_answered_ok(r))
			lease_remove(r->md->leases, l);
		else {
			lease_unrevoke(r->md->leases, l);
			ops_lease_forget(r->md, lr);
		}
	}
	free(lr);
}

/* A due lease's revoke ended: done, or tried again later. */
static void
ops_lease_revoke_done(struct req *r)
{
	struct lease_table	*lt = r->md->leases;
	struct lease_req	*lr = r->state;
	struct lease		*l;

	if ((l = lease_lookup(lt, lr->id)) != NULL && l->revoking &&
	    l->heap_i == SIZE_MAX) {
		if (ops_lease_answered_ok(r))
			lease_remove(lt, l);
		else {
			log_warnx("lease %llu: revoke failed: %.*s",
			    (unsigned long long)l->id, (int)r->resp.len,
			    (const char *)r->resp.data);
			ops_lease_forget(r->md, lr);
			lease_retry(lt, l);
		}
	}
	lr->applied = 0;	/* done here, not by its state_free */
	req_free(r);
}

void
ops_lease_due(struct lease *l, void *arg)
{
	struct metad		*md = arg;
	struct lease_req	*lr;
	struct req		*r;

	r = xcalloc(1, sizeof *r);
	r->md = md;
	r->op = &ops_lease_revoke_entry;
	buf_init(&r->resp);
	lr = xcalloc(1, sizeof *lr);
	lr->id = l->id;
	lr->req = r;
	r->state = lr;
	r->state_free = ops_lease_state_free;
	r->on_done = ops_lease_revoke_done;
	commit_enqueue(md->commit, r);
}

int
ops_lease_grant_prepare(struct req *r, struct proto_err *e)
{
	struct lease_req	*lr = ops_lease_state(r);

	if (proto_get_u64(r->json, "ttl_ms", 1, &lr->ttl_ms, e) != 1)
		return (-1);
	if (lr->ttl_ms < LEASE_TTL_MIN_MS || lr->ttl_ms > LEASE_TTL_MAX_MS)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"ttl_ms\" "
		    "must be from %d to %d", LEASE_TTL_MIN_MS,
		    LEASE_TTL_MAX_MS));
	if (proto_get_bool(r->json, "session", 0, &lr->session, e) == -1)
		return (-1);
	return (0);
}

int
ops_lease_full(struct req *r, size_t n)
{
	char	 msg[PROTO_MSG_MAX];

	if (n < r->md->cfg.max_leases)
		return (0);
	snprintf(msg, sizeof msg, "leases granted: %zu, the limit is %u "
	    "(--max-leases)", n, r->md->cfg.max_leases);
	reply_error(r, PROTO_RESOURCE_EXHAUSTED, msg);
	return (1);
}

int
ops_lease_grant_apply(struct req *r, uint64_t rev, int *wrote,
    struct store_err *se)
{
	struct lease_req	*lr = r->state;
	struct lease_table	*lt = r->md->leases;
	struct store_lease	 sl;
	struct lease		*l;
	struct jw		 w;

	if (ops_lease_full(r, lease_count(lt)))
		return (0);
	l = lease_add(lt, lr->ttl_ms, lr->session, r->conn);
	sl.id = l->id;
	sl.ttl_ms = l->ttl_ms;
	sl.session = l->session;
	if (store_lease_put(r->md->store, &sl, se) != 0) {
		lease_remove(lt, l);
		return (-1);
	}
	*wrote = 0;	/* a record, no revision */
	lr->id = l->id;
	lr->applied = 1;
	reply_begin(r, &w);
	jw_name(&w, "lease");
	jw_u64(&w, l->id);
	jw_name(&w, "ttl_ms");
	jw_u64(&w, l->ttl_ms);
	reply_end(r, &w);
	/* Its connection closed before the grant was applied. */
	if (l->session && (r->conn == NULL || *r->conn_dead))
		lease_expire(lt, l);
	return (0);
}

static int
ops_lease_id_prepare(struct req *r, struct proto_err *e)
{
	struct lease_req	*lr = ops_lease_state(r);

	return (ops_lease_arg(r->json, 1, &lr->id, e) == 1 ? 0 : -1);
}

int
ops_lease_revoke_prepare(struct req *r, struct proto_err *e)
{
	return (ops_lease_id_prepare(r, e));
}

/* Also the revoke the daemon makes when a lease expires (lease.c). */
int
ops_lease_revoke_apply(struct req *r, uint64_t rev, int *wrote,
    struct store_err *se)
{
	struct lease_req	*lr = r->state;
	struct lease		*l;
	struct jw		 w;
	uint64_t		 n = 0;
	char			 msg[PROTO_MSG_MAX];

	if ((l = lease_lookup(r->md->leases, lr->id)) == NULL ||
	    (l->revoked && !lr->applied)) {
		snprintf(msg, sizeof msg, "lease %llu not found (unknown, "
		    "expired or revoked)", (unsigned long long)lr->id);
		reply_error(r, PROTO_NOT_FOUND, msg);
		return (0);
	}
	if (store_lease_revoke(r->md->store, rev, lr->id, &n, se) != 0)
		return (-1);
	/* Gone from the table once the commit landed (state_free). */
	lease_revoking(r->md->leases, l);
	l->revoked = 1;
	lr->applied = 1;
	*wrote = n > 0;
	/* Its deletes say so (a due lease's revoke is its expiry). */
	if (n > 0) {
		lr->rev = rev;
		watch_lease_ended(r->md->watch, rev, lr->id,
		    r->on_done == ops_lease_revoke_done);
	}
	reply_begin(r, &w);
	jw_name(&w, "rev");
	jw_u64(&w, n > 0 ? rev : rev - 1);
	jw_name(&w, "deleted");
	jw_u64(&w, n);
	reply_end(r, &w);
	return (0);
}

void
ops_lease_keepalive(struct req *r)
{
	struct proto_err	 e;
	struct lease		*l;
	struct jw		 w;
	uint64_t		 id;

	if (ops_lease_arg(r->json, 1, &id, &e) != 1)
		reply_error(r, e.code, e.msg);
	else if (ops_lease_local_live(r, id)) {
		l = lease_find(r->md->leases, id);
		lease_refresh(r->md->leases, l);
		reply_begin(r, &w);
		jw_name(&w, "lease");
		jw_u64(&w, l->id);
		jw_name(&w, "ttl_ms");
		jw_u64(&w, l->ttl_ms);
		reply_end(r, &w);
	}
	req_done(r);
}

/*
 * lease_info's answer, once the lease's keys are read (n < 0: failed):
 * the local and the remote lease ops share it.
 */
void
ops_lease_info_answer(struct req *r, uint64_t remaining_ms, long n,
    const struct store_kv *kvs, int more, const struct store_err *se)
{
	struct lease_req	*lr = r->state;
	struct jw		 w;
	long			 i;

	if (n < 0) {
		reply_store_error(r, se);
		req_done(r);
		return;
	}
	reply_begin(r, &w);
	jw_name(&w, "lease");
	jw_u64(&w, lr->id);
	jw_name(&w, "ttl_ms");
	jw_u64(&w, lr->ttl_ms);
	jw_name(&w, "remaining_ms");
	jw_u64(&w, remaining_ms);
	jw_name(&w, "session");
	jw_bool(&w, lr->session);
	jw_name(&w, "keys");
	jw_arr_open(&w);
	for (i = 0; i < n; i++)
		jw_str(&w, kvs[i].key, kvs[i].key_len);
	jw_arr_close(&w);
	jw_name(&w, "more");
	jw_bool(&w, more);
	reply_end(r, &w);
	req_done(r);
}

static void
ops_lease_info_keys(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req		*r = arg;
	struct lease_req	*lr = r->state;
	uint64_t		 now = (uint64_t)mono_ms();

	ops_lease_info_answer(r, lr->deadline > now ? lr->deadline - now : 0,
	    n, kvs, more, se);
}

void
ops_lease_info(struct req *r)
{
	struct proto_err	 e;
	struct lease_req	*lr = ops_lease_state(r);
	struct lease		*l;

	if (ops_lease_arg(r->json, 1, &lr->id, &e) != 1) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	if (!ops_lease_local_live(r, lr->id)) {
		req_done(r);
		return;
	}
	/* What the answer needs, copied: the lease may go meanwhile. */
	l = lease_find(r->md->leases, lr->id);
	lr->ttl_ms = l->ttl_ms;
	lr->session = l->session;
	lr->deadline = l->deadline;
	store_read_lease_keys(r->md->store, lr->id, NULL, 0,
	    LEASE_INFO_KEYS_MAX, ops_lease_info_keys, r);
}

void
ops_lease_list(struct req *r)
{
	struct lease	**v;
	struct jw	 w;
	size_t		 i, n;
	uint64_t	 now = (uint64_t)mono_ms();

	v = lease_list(r->md->leases, &n);
	reply_begin(r, &w);
	jw_name(&w, "leases");
	jw_arr_open(&w);
	for (i = 0; i < n; i++) {
		jw_obj_open(&w);
		jw_name(&w, "lease");
		jw_u64(&w, v[i]->id);
		jw_name(&w, "ttl_ms");
		jw_u64(&w, v[i]->ttl_ms);
		jw_name(&w, "remaining_ms");
		jw_u64(&w, v[i]->deadline > now ? v[i]->deadline - now : 0);
		jw_name(&w, "session");
		jw_bool(&w, v[i]->session);
		jw_obj_close(&w);
	}
	jw_arr_close(&w);
	reply_end(r, &w);
	free(v);
	req_done(r);
}

static const struct op ops_lease_grant_entry = {
	.name = "lease_grant",
	.flags = OP_WRITE | OP_ONE_WRITE | OP_LEASE | OP_IDEM,
	.fields = { "ttl_ms", "session" },
	.prepare = ops_lease_grant_prepare,
	.apply = ops_lease_grant_apply,
};

static const struct op ops_lease_revoke_entry = {
	.name = "lease_revoke",
	.flags = OP_WRITE | OP_LEASE | OP_IDEM,
	.fields = { "lease" },
	.prepare = ops_lease_revoke_prepare,
	.apply = ops_lease_revoke_apply,
};

static const struct op ops_lease_keepalive_entry = {
	.name = "lease_keepalive",
	.flags = OP_RW | OP_LEASE | OP_IDEM,
	.fields = { "lease" },
	.run = ops_lease_keepalive,
};

static const struct op ops_lease_info_entry = {
	.name = "lease_info",
	.flags = OP_LEASE,
	.fields = { "lease" },
	.run = ops_lease_info,
};

static const struct op ops_lease_list_entry = {
	.name = "lease_list",
	.flags = OP_LEASE,
	.run = ops_lease_list,
};

static const struct op *const ops_lease_rows[] = {
	&ops_lease_grant_entry,
	&ops_lease_revoke_entry,
	&ops_lease_keepalive_entry,
	&ops_lease_info_entry,
	&ops_lease_list_entry,
	NULL
};

/* Every live lease (not being revoked). */
static size_t
ops_lease_local_count(const struct metad *md)
{
	return (md->leases != NULL ? lease_count(md->leases) : 0);
}

/* The daemon times the leases: the lease table's deadlines (lease.c). */
const struct ops_leases ops_lease_local_strategy = {
	.remote = 0,
	.rows = ops_lease_rows,
	.live = ops_lease_local_live,
	.count = ops_lease_local_count,
};

/*
 * The one place that asks the store which leases it has: a backend with a
 * lease_grant of its own keeps them (store_leases_remote()).  A backend
 * without leases gets the local rows, which ops_decode() answers
 * unknown_op.
 */
const struct ops_leases *
ops_lease_choose(const struct store *s)
{
	return (store_leases_remote(s) ? &ops_lease_remote_strategy :
	    &ops_lease_local_strategy);
}
