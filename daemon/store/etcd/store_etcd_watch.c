/*
 * The etcd backend's events: one persistent watch stream on the whole
 * prefix (a gRPC Watch call on the daemon's event loop, etcd_grpc.c) feeds
 * a bounded cache of recent events and tells the watch hub (opts.notify);
 * the stream resumes from the last revision seen after any failure, so no
 * event is lost or repeated, unless etcd compacted what it had not read
 * yet: then those revisions are reported compacted (store.h).  History
 * older than the cache is replayed by a watch from the asked revision, on
 * the daemon's loop too.  The stream also keeps the view of the prefix
 * current (store_etcd_view.c), before anyone is told of the events.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd.h"

/* An idle stream is reopened after this long (nothing lost). */
#define ETCD_STREAM_IDLE_S	300

/* Keep the cache bounded: drop whole revisions from its head. */
static void
etcd_cache_trim(struct store_etcd *e)
{
	struct etcd_evs	*c = &e->cache;
	uint64_t	 rev;

	while (c->head < c->n && (c->n - c->head > ETCD_CACHE_EVENTS_MAX ||
	    c->bytes > ETCD_CACHE_BYTES_MAX)) {
		rev = c->v[c->head].rev;
		while (c->head < c->n && c->v[c->head].rev == rev) {
			c->bytes -= ETCD_EV_BYTES(&c->v[c->head]);
			etcd_ev_free(&c->v[c->head]);
			c->head++;
		}
		e->before_cache = rev;
		e->cache_from = rev + 1;
	}
}

static void etcd_watch_schedule(struct store_etcd *);

/*
 * etcd cancelled the stream's watch, and keeps the stream open: ignore
 * what else comes on it and open another (from the timer: not inside the
 * connection's own callback).  If a compaction passed the revision the
 * stream resumed from (compact_rev), the events in between are gone: raise
 * st->compact_rev above them and hand them to opts.notify as compacted
 * (store.h), so that the watches that needed them hear so; the stream
 * goes on from the revision after.  etcd's compaction at C keeps no delete
 * made at C, so what metad still has starts at C + 1.
 */
static void
etcd_stream_cancelled(struct store_etcd *e, uint64_t compact_rev)
{
	struct store	*st = e->st;
	uint64_t	 from = st->head.rev;

	log_warnx("etcd cancelled the watch stream at rev %" PRIu64
	    " (compact rev %" PRIu64 ")", st->head.rev + 1, compact_rev);
	e->wcancelled = 1;
	etcd_watch_schedule(e);
	if (compact_rev == 0)
		return;
	if (compact_rev + 1 > st->head.compact_rev)
		st->head.compact_rev = compact_rev + 1;
	if (st->head.compact_rev <= st->head.rev + 1)
		return;
	log_warnx("etcd compacted revs %" PRIu64 "..%" PRIu64 " before "
	    "metad read their events", st->head.rev + 1, compact_rev);
	st->head.rev = st->head.compact_rev - 1;
	/* Keepalives may be among them: leases are timed afresh. */
	etcd_expiry_reload(e);
	etcd_view_moved(e, 1);
	/* Nothing below compact_rev is readable: the cache starts afresh. */
	etcd_evs_clear(&e->cache, 0);
	e->cache_from = st->head.rev + 1;
	e->before_cache = st->head.rev;
	if (e->opts.notify != NULL)
		e->opts.notify(e->opts.notify_arg, from, st->head.rev);
	etcd_lease_stream_moved(e);
}

/*
 * etcd cancelled the stream's watch for its token (etcd_auth_refused): the
 * stream opens again once a new one is in (etcd_stream_renewed), from the
 * revision after the last one seen.  0 if that is not why.
 */
static int
etcd_stream_refused(struct store_etcd *e, const struct etcd_pb_watch *w)
{
	if (!etcd_auth_refused(0, (const char *)w->reason, w->reason_len))
		return (0);
	switch (etcd_client_renew(&e->client, e->wgen, &e->wrenew)) {
	case -1:
		return (0);	/* no token of ours: a refusal, as any */
	case 1:
		etcd_watch_schedule(e);		/* a new one is in */
		break;
	}
	log_info("etcd refused the watch stream's token (%.*s); it opens "
	    "again with a new one", (int)(w->reason_len > 80 ? 80 :
	    w->reason_len), (const char *)w->reason);
	e->wcancelled = 1;
	return (1);
}

static void
etcd_stream_renewed(void *arg, const struct store_err *err)
{
	etcd_watch_schedule(arg);	/* paced, even when it failed */
}

/* A message of the stream (etcd_grpc.h): -1 if malformed. */
static int
etcd_stream_msg(void *arg, const uint8_t *p, size_t n)
{
	struct store_etcd	*e = arg;
	struct store		*st = e->st;
	struct etcd_pb_watch	 w;
	struct etcd_wmsg	 m;
	uint64_t		 from = st->head.rev;
	size_t			 live = e->cache.n - e->cache.head, i;

	if (etcd_pb_watch_read(p, n, &w) != 0)
		return (-1);
	if (e->wcancelled)
		return (0);	/* a stream etcd cancelled: being reopened */
	if (etcd_wmsg_pb(e, &w, &e->cache, &m, 1) != 0) {
		log_warnx("etcd watch: a response without a header (%zu "
		    "bytes)", n);
		return (0);
	}
	if (m.canceled) {
		if (m.compact_rev == 0 && etcd_stream_refused(e, &w))
			return (0);
		etcd_stream_cancelled(e, m.compact_rev);
		return (0);
	}
	if (m.last_rev <= st->head.rev)
		return (0);
	/* The view first: a write is answered once its events are out. */
	for (i = e->cache.head + live; i < e->cache.n; i++)
		etcd_view_apply(e, &e->cache.v[i]);
	st->head.rev = m.last_rev;
	etcd_view_moved(e, 0);
	etcd_lease_stream_moved(e);	/* before a trim: revokes count */
	etcd_cache_trim(e);
	if (e->opts.notify != NULL)
		e->opts.notify(e->opts.notify_arg, from, st->head.rev);
	return (0);
}

/* The stream ended (etcd went away, or the connection broke). */
static void
etcd_stream_done(void *arg, int status, struct buf *body, cJSON *reply)
{
	struct store_etcd	*e = arg;

	cJSON_Delete(reply);
	e->wst = NULL;
	log_warnx("etcd watch stream on %s ended; resuming from rev %" PRIu64,
	    e->client.ep[e->wep].url, e->st->head.rev + 1);
	etcd_watch_schedule(e);
}

/*
 * The stream: a gRPC Watch call (etcd_grpc.c) on the endpoint's streams
 * connection, from the revision after the last one seen.
 */
static int
etcd_stream_open(struct store_etcd *e)
{
	struct etcd_endpoint	*ep = &e->client.ep[e->wep];
	struct store_err	 err;
	char			 body[1024];

	if (e->wst != NULL)
		etcd_grpc_stream_drop(e->wst);
	e->wst = NULL;
	e->wcancelled = 0;
	e->wgen = e->client.cred.gen;
	snprintf(body, sizeof body, "{\"create_request\":{\"key\":\"%s\","
	    "\"range_end\":\"%s\",\"start_revision\":\"%" PRIu64 "\","
	    "\"progress_notify\":true,\"prev_kv\":true}}", e->wbeg64,
	    e->wend64,
	    e->st->head.rev + 1);
	e->wst = etcd_grpc_stream(&e->client.grpc, e->wep, ep->host, ep->port,
	    ETCD_PB_WATCH, body, ETCD_STREAM_IDLE_S * 1000, etcd_stream_msg,
	    etcd_stream_done, e, &err);
	if (e->wst == NULL) {
		log_warnx("etcd watch stream on %s: %s", ep->url, err.msg);
		return (-1);
	}
	return (0);
}

static void
etcd_watch_timer(evutil_socket_t fd, short what, void *arg)
{
	struct store_etcd	*e = arg;

	if (etcd_stream_open(e) != 0)
		etcd_watch_schedule(e);
}

/* Reconnect soon, to the next endpoint. */
static void
etcd_watch_schedule(struct store_etcd *e)
{
	struct timeval	 tv = { 0, ETCD_RECONNECT_MS * 1000 };

	e->wep = (e->wep + 1) % e->client.nep;
	evtimer_add(e->wtimer, &tv);
}

int
store_etcd_watch_start(struct store_etcd *e, struct store_err *err)
{
	if (etcd_view_open(e, err) != 0 || etcd_expiry_open(e, err) != 0)
		return (-1);
	e->wtimer = evtimer_new(e->opts.base, etcd_watch_timer, e);
	if (e->wtimer == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "evtimer_new failed"));
	e->wep = e->client.cur;
	e->wrenew.cb = etcd_stream_renewed;
	e->wrenew.arg = e;
	if (etcd_stream_open(e) != 0)
		return (store_err_set(err, STORE_ERR_UNAVAILABLE, "cannot "
		    "open the etcd watch stream"));
	return (0);
}

void
store_etcd_watch_stop(struct store_etcd *e)
{
	etcd_renewal_cancel(&e->wrenew);
	if (e->wtimer != NULL)
		event_free(e->wtimer);
	e->wtimer = NULL;
	if (e->wst != NULL)
		etcd_grpc_stream_drop(e->wst);
	e->wst = NULL;
	etcd_view_close(e);
}

/* After etcd_client_close(): no lease call is out any more. */
void
store_etcd_watch_end(struct store_etcd *e)
{
	etcd_expiry_close(e);
}

/*
 * History older than the cache: a gRPC Watch from the asked revision on
 * the daemon's loop (a stream of its own on the endpoint's streams
 * connection), read until it reaches until (the last metad revision below
 * the cache) or has max events, whole revisions.
 */
struct etcd_replay {
	struct store_etcd	*e;
	LIST_ENTRY(etcd_replay)	 entry;		/* e->replays */
	struct etcd_gstream	*st;		/* NULL once ended */
	struct event		*fire;		/* the end, from the loop */
	struct etcd_evs		 evs;
	uint64_t		 from, until;
	size_t			 max;
	int			 done, failed;
	uint64_t		 compact_rev;
	store_history_done	 cb;
	void			*arg;
	unsigned		 gen;		/* its token's */
	int			 renewed;	/* opened again with a new one */
	int			 waiting;	/* for it, or to open again */
	struct etcd_renewal	 renewal;
};

static void	etcd_replay_open(struct etcd_replay *);

/* A message of the replay's stream (etcd_grpc.h): -1 if malformed. */
static int
etcd_replay_msg(void *arg, const uint8_t *p, size_t n)
{
	struct etcd_replay	*rp = arg;
	struct etcd_pb_watch	 w;
	struct etcd_wmsg	 m;
	int			 r;

	if (rp->done || rp->waiting)
		return (0);
	if (etcd_pb_watch_read(p, n, &w) != 0)
		return (-1);	/* the stream ends: failed */
	if (w.canceled && w.compact_rev == 0 && !rp->renewed &&
	    etcd_auth_refused(0, (const char *)w.reason, w.reason_len) &&
	    (r = etcd_client_renew(&rp->e->client, rp->gen,
	    &rp->renewal)) >= 0) {
		/* Refused for its token: again, once, with a new one. */
		rp->renewed = rp->waiting = 1;
		if (r == 1)
			event_active(rp->fire, 0, 0);
		return (0);
	}
	if (etcd_wmsg_pb(rp->e, &w, &rp->evs, &m, 0) != 0 || m.canceled) {
		rp->failed = 1;
		rp->compact_rev = m.compact_rev;
		rp->done = 1;
	} else if (m.last_rev >= rp->until ||
	    rp->evs.n - rp->evs.head >= rp->max)
		rp->done = 1;
	if (rp->done)
		event_active(rp->fire, 0, 0);
	return (0);
}

/* The replay's stream ended (etcd ended it, it failed, or idled out). */
static void
etcd_replay_ended(void *arg, int status, struct buf *body, cJSON *reply)
{
	struct etcd_replay	*rp = arg;

	cJSON_Delete(reply);
	rp->st = NULL;
	if (rp->waiting)
		return;		/* opened again once its token is in */
	if (!rp->done)
		rp->failed = 1;
	rp->done = 1;
	event_active(rp->fire, 0, 0);
}

/* Hand over events of evs with rev >= from, at most max (whole revs). */
static void
etcd_history_emit(const struct etcd_evs *evs, uint64_t from, size_t max,
    int more, store_history_done cb, void *arg)
{
	const struct etcd_ev	*ev;
	struct store_event	*out;
	size_t			 i, n = 0;

	out = xcalloc(evs->n - evs->head + 1, sizeof *out);
	for (i = evs->head; i < evs->n; i++) {
		ev = &evs->v[i];
		if (ev->rev < from)
			continue;
		if (n >= max && ev->rev != out[n - 1].rev) {
			more = 1;
			break;
		}
		out[n].rev = ev->rev;
		out[n].seq = ev->seq;
		out[n].type = ev->deleted ? STORE_EVENT_DELETE :
		    STORE_EVENT_PUT;
		etcd_kv_of(ev, &out[n].kv, !ev->deleted);
		out[n].kv.mod_rev = ev->mod_rev;
		out[n].prev_state = (enum store_prev)ev->prev_state;
		out[n].cause = (enum store_cause)ev->cause;
		out[n].cause_lease = ev->cause_lease;
		if (ev->prev_state == STORE_PREV_KV) {
			out[n].prev.key = ev->key;
			out[n].prev.key_len = ev->key_len;
			out[n].prev.value = ev->prev_value;
			out[n].prev.value_len = ev->prev_value_len;
			out[n].prev.version = ev->prev_version;
			out[n].prev.create_rev = ev->prev_create_rev;
			out[n].prev.mod_rev = ev->prev_mod_rev;
			out[n].prev.lease = ev->prev_lease;
		}
		n++;
	}
	cb(arg, (long)n, out, more, NULL);
	free(out);
}

static void
etcd_replay_free(struct etcd_replay *rp)
{
	LIST_REMOVE(rp, entry);
	etcd_renewal_cancel(&rp->renewal);
	if (rp->st != NULL)
		etcd_grpc_stream_drop(rp->st);
	if (rp->fire != NULL)
		event_free(rp->fire);
	etcd_evs_free(&rp->evs);
	free(rp);
}

/* At close: replays still out are dropped, their callbacks never run. */
void
store_etcd_replays_free(struct store_etcd *e)
{
	while (!LIST_EMPTY(&e->replays))
		etcd_replay_free(LIST_FIRST(&e->replays));
}

static void
etcd_replay_end(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_replay	*rp = arg;
	struct store_etcd	*e = rp->e;
	struct store		*st = e->st;
	struct store_err	 err;

	if (rp->waiting) {
		etcd_replay_open(rp);	/* with the new token */
		return;
	}
	if (rp->compact_rev != 0) {
		/* etcd's compaction at C keeps no event of C: from C + 1. */
		if (rp->compact_rev + 1 > st->head.compact_rev)
			st->head.compact_rev = rp->compact_rev + 1;
		store_err_set(&err, STORE_ERR_COMPACTED, "history from rev %"
		    PRIu64 " is compacted (etcd keeps revs from %" PRIu64 ")",
		    rp->from, rp->compact_rev + 1);
		rp->cb(rp->arg, -1, NULL, 0, &err);
	} else if (rp->failed) {
		store_err_set(&err, STORE_ERR_UNAVAILABLE, "etcd history from "
		    "rev %" PRIu64 " could not be read", rp->from);
		rp->cb(rp->arg, -1, NULL, 0, &err);
	} else if (rp->evs.n > rp->evs.head)
		etcd_history_emit(&rp->evs, rp->from, rp->max, 1, rp->cb,
		    rp->arg);
	else	/* nothing of ours before the cache */
		etcd_history_emit(&e->cache, e->cache_from, rp->max, 0,
		    rp->cb, rp->arg);
	etcd_replay_free(rp);
}

/* rp's stream, from its revision: a watch of the prefix until it has it. */
static void
etcd_replay_open(struct etcd_replay *rp)
{
	struct store_etcd	*e = rp->e;
	unsigned		 cur = e->client.cur;
	struct etcd_endpoint	*ep = &e->client.ep[cur];
	struct store_err	 err;
	char			 body[1024];

	if (rp->st != NULL)
		etcd_grpc_stream_drop(rp->st);
	rp->st = NULL;
	rp->waiting = 0;
	rp->gen = e->client.cred.gen;
	snprintf(body, sizeof body, "{\"create_request\":{\"key\":\"%s\","
	    "\"range_end\":\"%s\",\"start_revision\":\"%" PRIu64 "\","
	    "\"prev_kv\":true}}", e->wbeg64, e->wend64, rp->from);
	rp->st = etcd_grpc_stream(&e->client.grpc, cur, ep->host, ep->port,
	    ETCD_PB_WATCH, body, ETCD_CALL_TIMEOUT_S * 1000, etcd_replay_msg,
	    etcd_replay_ended, rp, &err);
	if (rp->st == NULL) {
		rp->failed = rp->done = 1;
		event_active(rp->fire, 0, 0);
	}
}

/* The new token rp waited for (err: none could be had). */
static void
etcd_replay_renewed(void *arg, const struct store_err *err)
{
	struct etcd_replay	*rp = arg;

	if (err != NULL) {
		rp->waiting = 0;
		rp->failed = rp->done = 1;
	}
	event_active(rp->fire, 0, 0);
}

static void
etcd_replay(struct store_etcd *e, uint64_t from, size_t max,
    store_history_done cb, void *arg)
{
	struct etcd_replay	*rp;
	struct store_err	 err;

	if (e->client.down) {
		store_err_set(&err, STORE_ERR_UNAVAILABLE, "etcd is "
		    "unreachable: history from rev %" PRIu64 " cannot be read "
		    "now", from);
		cb(arg, -1, NULL, 0, &err);
		return;
	}
	rp = xcalloc(1, sizeof *rp);
	rp->e = e;
	rp->from = from;
	rp->until = e->before_cache;
	rp->max = max;
	rp->cb = cb;
	rp->arg = arg;
	rp->renewal.cb = etcd_replay_renewed;
	rp->renewal.arg = rp;
	LIST_INSERT_HEAD(&e->replays, rp, entry);
	if ((rp->fire = event_new(e->opts.base, -1, 0, etcd_replay_end,
	    rp)) == NULL)
		fatalx("etcd_replay: out of memory");
	etcd_replay_open(rp);
}

void
store_etcd_read_history(struct store *st, uint64_t from, size_t max,
    store_history_done cb, void *arg)
{
	struct store_etcd	*e = st->impl;
	struct store_err	 err;

	if (max == 0)
		max = 1;
	if (from < st->head.compact_rev) {
		store_err_set(&err, STORE_ERR_COMPACTED, "history from rev %"
		    PRIu64 " is compacted (kept from %" PRIu64 ")", from,
		    st->head.compact_rev);
		cb(arg, -1, NULL, 0, &err);
	} else if (from < e->cache_from && from <= e->before_cache)
		etcd_replay(e, from, max, cb, arg);
	else
		etcd_history_emit(&e->cache, from, max, 0, cb, arg);
}
