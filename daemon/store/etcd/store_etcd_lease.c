/*
 * The etcd backend's leases (metad-protocol(7), lease_grant and the
 * lease ops after it): etcd leases, through its gRPC
 * Lease service (LeaseGrant, LeaseKeepAlive, LeaseTimeToLive, LeaseLeases,
 * LeaseRevoke; the requests and answers in the gateway's JSON shape,
 * etcd_pb.h).  LeaseKeepAlive is a bidirectional stream: each refresh is
 * a stream of its own, one request then half-closed, whose one answer
 * etcd sends before it ends the stream; a refresh is rare (a client's
 * keepalive), so no stream is kept open between them.  etcd
 * keeps them and their deadlines, so they are shared by every daemon on
 * that etcd and expire by etcd's clock whether a daemon runs or not; etcd
 * deletes an expired or revoked lease's keys at one revision, and the watch
 * stream delivers the deletes like any other write.
 *
 * Ids: metad picks them, at random below 2^53 (they travel as JSON
 * numbers), with bit 52 set for a session lease: that is how any daemon
 * tells one (etcd keeps no flag).  etcd's TTLs are whole seconds: a TTL in
 * ms is rounded up, and etcd may raise it to its minimum (about 1.5 times
 * its election timeout); what it granted is answered.
 *
 * etcd's leases are not under a prefix: each metad lease has a key of its
 * own, PREFIX "l/" ID, attached to it (so it goes with the lease), that
 * scopes it to the daemons of that prefix: lease_list reads those keys,
 * and info and revoke answer not found for a lease without one.  (A
 * keepalive or a put names any lease etcd has.)  Like the slots, the key
 * is outside PREFIX "k/": no client sees it.
 *
 * A put naming a lease carries it in its txn (store_etcd_txn.c); etcd
 * refuses a txn naming a lease it lacks, as STORE_ERR_NO_LEASE
 * (etcd_client.c).  A lease's keys are those etcd attached to it under the
 * prefix; they come back as keys only (timetolive tells no more).
 */
#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "enc.h"
#include "log.h"
#include "store/etcd/store_etcd.h"
#include "store/etcd/store_etcd_lease.h"


/* Grants tried with fresh ids when etcd already has one. */
#define ETCD_GRANT_TRIES	4

struct etcd_lcall *
etcd_lcall_new(struct store *st, uint64_t id, void *arg)
{
	struct etcd_lcall	*c = xcalloc(1, sizeof *c);

	c->st = st;
	c->id = id;
	c->arg = arg;
	buf_init(&c->isent);
	LIST_INSERT_HEAD(&E(st)->lcalls, c, entry);
	return (c);
}

void
etcd_lcall_free(struct etcd_lcall *c)
{
	LIST_REMOVE(c, entry);
	if (c->rrev != 0)
		LIST_REMOVE(c, wentry);
	if (c->rtimer != NULL)
		event_free(c->rtimer);
	free(c->ids);
	free(c->v);
	free(c->after);
	free(c->subs);
	free(c->itok);
	buf_free(&c->isent);
	free(c);
}

void
etcd_lease_state(uint64_t id, const cJSON *o, const char *ttl,
    struct store_lease_state *ls)
{
	memset(ls, 0, sizeof *ls);
	ls->id = id;
	ls->session = (id & ETCD_LEASE_SESSION) != 0;
	ls->remaining_ms = etcd_u64(o, ttl) * 1000;
	ls->ttl_ms = etcd_u64(o, "grantedTTL") * 1000;
	if (ls->ttl_ms == 0)
		ls->ttl_ms = ls->remaining_ms;
	ls->found = ls->ttl_ms > 0;
}

/* The call of path for c, cb its answer; fails c at once if it cannot. */
void
etcd_lcall_send(struct etcd_lcall *c, const char *path, int once,
    etcd_call_cb cb)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	char			 body[160];
	int			 rc;

	if (strcmp(path, "/v3/lease/grant") == 0)
		snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\","
		    "\"TTL\":\"%" PRIu64 "\"}", c->id,
		    (c->ttl_ms + 999) / 1000);
	else if (strcmp(path, "/v3/lease/leases") == 0)
		snprintf(body, sizeof body, "{}");
	else
		snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\"%s}",
		    c->id, strcmp(path, "/v3/lease/timetolive") == 0 &&
		    (c->rdone != NULL || c->kdone != NULL || c->marker) ?
		    ",\"keys\":true" : "");
	rc = once ? etcd_call_once(&e->client, path, body, cb, c, &err) :
	    etcd_call_async(&e->client, path, body, cb, c, &err);
	if (rc != 0)
		cb(c, NULL, &err);
}

/* PREFIX "l/" ID (e->prefix is PREFIX "k/"), into out. */
void
etcd_lease_marker(struct store_etcd *e, uint64_t id, struct buf *out)
{
	buf_reset(out);
	buf_printf(out, "%.*sl/%" PRIu64, (int)e->prefix_len - 2, e->prefix,
	    id);
}

/* Its base64. */
char *
etcd_lease_marker64(struct store_etcd *e, uint64_t id)
{
	struct buf	 k;
	char		*k64;

	buf_init(&k);
	etcd_lease_marker(e, id, &k);
	k64 = etcd_b64(k.data, k.len);
	buf_free(&k);
	return (k64);
}

/* 1 if a timetolive answer's keys hold the lease's own key. */
int
etcd_lease_marked(struct store_etcd *e, uint64_t id, const cJSON *reply)
{
	const cJSON	*k;
	char		*m = etcd_lease_marker64(e, id);
	int		 found = 0;

	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(reply,
	    "keys")) {
		if (cJSON_IsString(k) && strcmp(k->valuestring, m) == 0)
			found = 1;
	}
	free(m);
	return (found);
}

static uint64_t
etcd_lease_new_id(int session)
{
	uint64_t	 id = 0;

	if (getrandom(&id, sizeof id, 0) != sizeof id)
		id = (uint64_t)getpid() << 20 ^ (uint64_t)time(NULL) ^
		    (uint64_t)random();
	id &= ETCD_LEASE_SESSION - 1;
	if (id == 0)
		id = 1;
	return (session ? id | ETCD_LEASE_SESSION : id);
}

static void	etcd_mark_cb(void *, const cJSON *, const struct store_err *);

static void
etcd_grant_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;

	if (reply == NULL && strstr(err->msg, "lease already exists") !=
	    NULL && ++c->tries < ETCD_GRANT_TRIES) {
		c->id = etcd_lease_new_id(c->session);
		etcd_lcall_send(c, "/v3/lease/grant", 1, etcd_grant_cb);
		return;
	}
	if (reply == NULL) {
		c->done(c->arg, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &ls);
	/* etcd's TTL may be too late: then metad times it too. */
	c->stamp = etcd_lease_stamped(c->ttl_ms, ls.remaining_ms / 1000);
	if (c->itok != NULL)
		etcd_lidem_grant(c);
	else
		etcd_lease_record_put(c, c->ttl_ms, c->stamp, 0, etcd_mark_cb);
}

void
etcd_grant_done(struct etcd_lcall *c, uint64_t rev)
{
	struct store_lease_state	 ls;

	etcd_expiry_learn(E(c->st), c->id, c->ttl_ms, c->stamp, rev);
	memset(&ls, 0, sizeof ls);
	ls.id = c->id;
	ls.ttl_ms = ls.remaining_ms = c->ttl_ms;
	ls.session = c->session;
	ls.found = 1;
	c->done(c->arg, &ls, NULL);
	etcd_lcall_free(c);
}

/* The lease's own key is put: the grant is answered. */
static void
etcd_mark_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall		*c = arg;

	if (reply == NULL) {	/* the lease expires unmarked, by its TTL */
		c->done(c->arg, NULL, err);
		etcd_lcall_free(c);
	} else
		etcd_grant_done(c, etcd_header_rev(E(c->st), reply));
}

/*
 * The lease's record (its own key, attached to it) put: its ttl_ms, whether
 * stamped and, for a client's revoke, that it is revoked; cb the answer,
 * called at once if the put cannot be sent.
 */
void
etcd_lease_record_put(struct etcd_lcall *c, uint64_t ttl_ms, int stamp,
    int revoked, etcd_call_cb cb)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	struct buf		 b;
	char			*m = etcd_lease_marker64(e, c->id), *v64;

	buf_init(&b);
	if (revoked)
		etcd_lease_value_revoked(&b, ttl_ms, stamp);
	else
		etcd_lease_value(&b, ttl_ms, stamp);
	v64 = etcd_b64(b.data, b.len);
	b.len = 0;
	buf_printf(&b, "{\"key\":\"%s\",\"value\":\"%s\",\"lease\":\"%"
	    PRIu64 "\"}", m, v64, c->id);
	free(m);
	free(v64);
	if (etcd_call_once(&e->client, "/v3/kv/put", buf_cstr(&b),
	    cb, c, &err) != 0)
		cb(c, NULL, &err);
	buf_free(&b);
}

void
store_etcd_lease_grant(struct store *st, uint64_t ttl_ms, int session,
    const struct store_lease_idem *idem, store_lease_done done, void *arg)
{
	struct etcd_lcall	*c;

	c = etcd_lcall_new(st, etcd_lease_new_id(session), arg);
	c->ttl_ms = ttl_ms;
	c->session = session;
	c->done = done;
	etcd_lidem_take(c, idem);
	etcd_lcall_send(c, "/v3/lease/grant", 1, etcd_grant_cb);
}

/* Answer a lease call not found (found 0), or its error. */
static void
etcd_state_err(struct etcd_lcall *c, const struct store_err *err)
{
	struct store_lease_state	 ls;

	if (strstr(err->msg, "requested lease not found") != NULL ||
	    err->code == STORE_ERR_NO_LEASE) {
		memset(&ls, 0, sizeof ls);
		ls.id = c->id;
		c->done(c->arg, &ls, NULL);
	} else
		c->done(c->arg, NULL, err);
	etcd_lcall_free(c);
}

/*
 * ls as metad has it: a lease known from its record has the ttl_ms it was
 * granted for (not etcd's whole seconds), and a stamped one the time left
 * by this daemon's clock.
 */
void
etcd_state_known(struct store_etcd *e, struct store_lease_state *ls)
{
	struct etcd_known	*k = etcd_known_find(e, ls->id);

	if (k == NULL || k->ttl_ms == 0 || !ls->found)
		return;
	ls->ttl_ms = k->ttl_ms;
	if (k->stamp && k->timer != NULL)
		ls->remaining_ms = etcd_known_remaining(k);
	if (ls->remaining_ms > ls->ttl_ms)
		ls->remaining_ms = ls->ttl_ms;
}

/* lease_get's timetolive. */
static void
etcd_state_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;

	if (reply == NULL) {
		etcd_state_err(c, err);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &ls);
	if (c->marker && !etcd_lease_marked(E(c->st), c->id, reply))
		ls.found = 0;	/* another prefix's, or no metad's */
	etcd_state_known(E(c->st), &ls);
	c->done(c->arg, &ls, NULL);
	etcd_lcall_free(c);
}

/*
 * A keepalive: etcd's, then, for a stamped lease, its record put again
 * (the stamp every daemon times it from: store_etcd_expire.c), answered
 * once both landed.  A lease this daemon does not know yet (granted
 * through another whose record put it has not seen) has its record read
 * first.
 */
static void
etcd_ka_answer(struct etcd_lcall *c)
{
	c->ls.remaining_ms = c->ls.ttl_ms;	/* the whole TTL again */
	c->done(c->arg, &c->ls, NULL);
	etcd_lcall_free(c);
}

static void
etcd_ka_stamped(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;

	if (reply == NULL) {	/* not stamped: not kept alive */
		etcd_state_err(c, err);
		return;
	}
	etcd_expiry_learn(E(c->st), c->id, c->ttl_ms, 1,
	    etcd_header_rev(E(c->st), reply));
	etcd_ka_answer(c);
}

static void
etcd_ka_stamp(struct etcd_lcall *c)
{
	struct etcd_known	*k = etcd_known_find(E(c->st), c->id);

	etcd_state_known(E(c->st), &c->ls);
	if (k == NULL || !k->stamp) {
		etcd_ka_answer(c);
		return;
	}
	c->ttl_ms = k->ttl_ms;
	c->stamp = 1;
	etcd_lease_record_put(c, c->ttl_ms, c->stamp, 0, etcd_ka_stamped);
}

static void
etcd_ka_record(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	const cJSON		*kv;

	if (reply == NULL) {
		c->done(c->arg, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(reply, "kvs"))
		(void)etcd_expiry_kv(E(c->st), kv, 0);
	etcd_ka_stamp(c);
}

static void
etcd_ka_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_etcd	*e = E(c->st);
	struct store_err	 e2;
	struct buf		 b;
	char			*m;

	if (reply == NULL) {
		etcd_state_err(c, err);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &c->ls);
	if (!c->ls.found) {
		c->done(c->arg, &c->ls, NULL);
		etcd_lcall_free(c);
		return;
	}
	if (etcd_known_find(e, c->id) != NULL) {
		etcd_ka_stamp(c);
		return;
	}
	m = etcd_lease_marker64(e, c->id);
	buf_init(&b);
	etcd_range_body(&b, m, NULL, 0, 0, 0);
	free(m);
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&b),
	    etcd_ka_record, c, &e2) != 0)
		etcd_ka_record(c, NULL, &e2);
	buf_free(&b);
}

void
store_etcd_lease_keepalive(struct store *st, uint64_t id,
    store_lease_done done, void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, id, arg);

	c->done = done;
	etcd_lcall_send(c, "/v3/lease/keepalive", 0, etcd_ka_cb);
}

void
store_etcd_lease_get(struct store *st, uint64_t id, store_lease_done done,
    void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, id, arg);

	c->done = done;
	c->marker = 1;
	etcd_lcall_send(c, "/v3/lease/timetolive", 0, etcd_state_cb);
}

/* The key just put into the batch carries lease in its txn. */
int
store_etcd_lease_attach(struct store *st, const char *key, size_t len,
    uint64_t lease, struct store_err *err)
{
	struct etcd_evs	*o = &E(st)->overlay;

	(void)key;
	(void)len;
	if (o->n == o->head)
		return (store_err_set(err, STORE_ERR_INTERNAL, "lease attach "
		    "with no put before it"));
	o->v[o->n - 1].lease = lease;
	return (0);
}

void
store_etcd_leases_free(struct store_etcd *e)
{
	while (!LIST_EMPTY(&e->lcalls))
		etcd_lcall_free(LIST_FIRST(&e->lcalls));
}

void
etcd_lease_err_ids(uint64_t id, uint64_t other, struct store_err *err)
{
	if (other != 0)
		store_err_set(err, STORE_ERR_NO_LEASE, "lease %" PRIu64 " or %"
		    PRIu64 " not found (unknown, expired or revoked); nothing "
		    "written", id, other);
	else
		store_err_set(err, STORE_ERR_NO_LEASE, "lease %" PRIu64 " not "
		    "found (unknown, expired or revoked); nothing written", id);
}
