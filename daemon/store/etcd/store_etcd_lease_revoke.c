/*
 * The etcd backend's revoke (store_etcd_lease_revoke_now()): the lease's
 * keys counted (timetolive), for a client's revoke its record put again
 * saying so (the watches' "cause", metad-protocol(7) WATCHES), then etcd's
 * LeaseRevoke, answered once the watch stream passed its revision with
 * the deletes it saw there.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd.h"
#include "store/etcd/store_etcd_lease.h"

static void	etcd_revoke_note(struct etcd_lcall *, uint64_t);
static void	etcd_revoke_keys_cb(void *, const cJSON *,
		    const struct store_err *);

/*
 * The keys a revoke deleted: the delete events of its revision (etcd
 * deletes them all at one, with nothing else), once the stream has passed
 * it; what timetolive listed just before the revoke (a put attaching a key
 * may land in between) only if those events are gone (compacted).
 */
uint64_t
etcd_revoke_count(struct store_etcd *e, uint64_t rev, uint64_t listed)
{
	const struct etcd_evs	*ca = &e->cache;
	uint64_t		 n = 0;
	size_t			 i;

	if (rev < e->cache_from)
		return (listed);
	for (i = ca->n; i > ca->head && ca->v[i - 1].rev >= rev; i--) {
		if (ca->v[i - 1].rev == rev && ca->v[i - 1].deleted)
			n++;
	}
	return (n);
}

/* The revoke landed at c->rrev, n keys deleted: answered (c freed). */
static void
etcd_revoke_end(struct etcd_lcall *c, uint64_t n)
{
	if (c->igone) {		/* the stream passed what etcd had said */
		etcd_lidem_gone(c, c->rrev);
		return;
	}
	if (c->itok != NULL) {
		etcd_lidem_finish(c, 1, c->rrev, n);
		return;
	}
	c->rdone(c->arg, 1, c->rrev, n, NULL);
	etcd_lcall_free(c);
}

/* The stream moved: revokes whose revision it passed are answered. */
void
etcd_lease_stream_moved(struct store_etcd *e)
{
	struct etcd_lcall	*c, *next;

	for (c = LIST_FIRST(&e->rwaits); c != NULL; c = next) {
		next = LIST_NEXT(c, wentry);
		if (c->rrev > e->st->head.rev)
			continue;
		etcd_revoke_end(c, etcd_revoke_count(e, c->rrev, c->nkeys));
	}
}

/*
 * The revoke is done (etcd answered it) but the stream has not passed its
 * revision in ETCD_REVOKE_WAIT_MS (etcd unreachable for the stream only):
 * answered with the keys timetolive listed just before it.
 */
static void
etcd_revoke_late(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_lcall	*c = arg;

	(void)fd;
	(void)what;
	if (!c->igone)
		log_warnx("etcd: lease %" PRIu64 " revoked at rev %" PRIu64
		    "; the watch stream is not there yet after %d ms: its keys "
		    "counted from before the revoke", c->id, c->rrev,
		    ETCD_REVOKE_WAIT_MS);
	etcd_revoke_end(c, c->nkeys);
}

static void
etcd_revoke_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_etcd	*e = E(c->st);

	if (reply == NULL) {
		if (err->code == STORE_ERR_NO_LEASE && c->itok != NULL) {
			etcd_lidem_finish(c, 0, 0, 0);
			return;
		}
		if (err->code == STORE_ERR_UNKNOWN && c->itok != NULL &&
		    c->tries++ == 0) {
			/* Its answer lost: is the lease there still? */
			etcd_lcall_send(c, "/v3/lease/timetolive", 0,
			    etcd_revoke_keys_cb);
			return;
		}
		if (err->code == STORE_ERR_NO_LEASE)	/* expired meanwhile */
			c->rdone(c->arg, 0, 0, 0, NULL);
		else
			c->rdone(c->arg, 0, 0, 0, err);
		etcd_lcall_free(c);
		return;
	}
	/* Answered once the stream delivered its deletes, counted. */
	etcd_revoke_park(c, etcd_header_rev(e, reply));
	etcd_lease_stream_moved(e);
}

void
etcd_revoke_park(struct etcd_lcall *c, uint64_t rev)
{
	struct store_etcd	*e = E(c->st);
	struct timeval		 tv = { ETCD_REVOKE_WAIT_MS / 1000,
				    ETCD_REVOKE_WAIT_MS % 1000 * 1000 };

	c->rrev = rev;
	LIST_INSERT_HEAD(&e->rwaits, c, wentry);
	if (c->rrev > e->st->head.rev) {
		c->rtimer = evtimer_new(e->opts.base, etcd_revoke_late, c);
		if (c->rtimer != NULL)
			evtimer_add(c->rtimer, &tv);
	}
}

/* The keys first (to count them), then the revoke, sent once. */
static void
etcd_revoke_keys_cb(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;
	struct store_kv			*v;
	size_t				 n;

	if (reply == NULL) {
		c->rdone(c->arg, 0, 0, 0, err);
		etcd_lcall_free(c);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &ls);
	if ((!ls.found || !etcd_lease_marked(E(c->st), c->id, reply)) &&
	    c->itok != NULL) {
		etcd_lidem_gone(c, etcd_header_rev(E(c->st), reply));
		return;
	}
	if (!ls.found || !etcd_lease_marked(E(c->st), c->id, reply)) {
		c->rdone(c->arg, 0, 0, 0, NULL);
		etcd_lcall_free(c);
		return;
	}
	v = etcd_lease_keys(E(c->st), c->id, reply, &n);
	etcd_lease_keys_free(v, n);
	c->nkeys = n;
	if (c->asked || c->itok != NULL)
		etcd_revoke_note(c, ls.ttl_ms);
	else
		etcd_revoke_send(c);
}

void
etcd_revoke_send(struct etcd_lcall *c)
{
	etcd_lcall_send(c, "/v3/lease/revoke", 1, etcd_revoke_cb);
}

/* The record says the revoke was asked: now the revoke. */
static void
etcd_revoke_noted(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;

	if (reply == NULL && err->code == STORE_ERR_NO_LEASE) {
		c->rdone(c->arg, 0, 0, 0, NULL);	/* expired meanwhile */
		etcd_lcall_free(c);
		return;
	}
	/* Not noted (etcd is failing over): revoked, told as expired. */
	etcd_lcall_send(c, "/v3/lease/revoke", 1, etcd_revoke_cb);
}

/*
 * A client's revoke puts the lease's record again first, saying so: the
 * record's delete at the revoke's revision then carries it (its prev_kv)
 * to every daemon's watches ("cause":"revoked", metad-protocol(7)).  One
 * revision more than the revoke's own.
 */
static void
etcd_revoke_note(struct etcd_lcall *c, uint64_t ttl_ms)
{
	struct etcd_known	*k = etcd_known_find(E(c->st), c->id);

	if (c->itok != NULL)	/* with its token's record, pending */
		etcd_lidem_note(c, k != NULL && k->ttl_ms != 0 ? k->ttl_ms :
		    ttl_ms, k != NULL && k->ttl_ms != 0 ? k->stamp : 0);
	else if (k != NULL && k->ttl_ms != 0)
		etcd_lease_record_put(c, k->ttl_ms, k->stamp, 1,
		    etcd_revoke_noted);
	else
		etcd_lease_record_put(c, ttl_ms, 0, 1, etcd_revoke_noted);
}

void
store_etcd_lease_revoke_now(struct store *st, uint64_t id, int asked,
    const struct store_lease_idem *idem, store_revoke_done done, void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, id, arg);

	c->rdone = done;
	c->asked = asked;
	etcd_lidem_take(c, idem);
	etcd_lcall_send(c, "/v3/lease/timetolive", 0, etcd_revoke_keys_cb);
}
