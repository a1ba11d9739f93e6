#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "metad.h"
#include "core/req.h"
#include "core/reply.h"
#include "core/watch.h"

/* Events read from the history at a time while a watch catches up. */
#define WATCH_CATCHUP_CHUNK	512

struct watch {
	struct watch_hub	*hub;
	uint64_t		 id;
	struct watch_peer	*peer;		/* its connection's, or NULL */
	char			*key;		/* the key or the prefix */
	size_t			 key_len;
	int			 prefix;
	uint64_t		 next_rev;	/* first rev not delivered */
	uint64_t		 emitting;	/* rev being delivered */
	int			 live;
	int			 dead;
	int			 reading;	/* a history read is out */
	TAILQ_ENTRY(watch)	 hub_entry;
	TAILQ_ENTRY(watch)	 conn_entry;
};

struct watch_hub {
	struct metad		*md;
	struct buf		 body;		/* an event line's, reused */
	TAILQ_HEAD(, watch)	 watches;
	uint64_t		 next_id;
	int			 sweep;
	uint64_t		 delivered;	/* events' (watch_set_delivered) */
};

struct watch_hub *
watch_hub_create(struct metad *md)
{
	struct watch_hub	*hub;

	hub = xcalloc(1, sizeof *hub);
	hub->md = md;
	hub->next_id = 1;
	buf_init(&hub->body);
	TAILQ_INIT(&hub->watches);
	return (hub);
}

static int
watch_matches(const struct watch *w, const char *key, size_t len)
{
	if (w->prefix)
		return (len >= w->key_len &&
		    memcmp(key, w->key, w->key_len) == 0);
	return (len == w->key_len && memcmp(key, w->key, len) == 0);
}

/* The part of an event line after {"watch":W — built once per event. */
static void
watch_event_body(struct buf *b, const struct store_event *ev)
{
	struct jw	 w;

	buf_reset(b);
	jw_init(&w, b);
	w.depth = 1;
	w.comma[1] = 1;
	jw_name(&w, "event");
	if (ev->type == STORE_EVENT_PUT) {
		jw_cstr(&w, "put");
		jw_name(&w, "key");
		jw_str(&w, ev->kv.key, ev->kv.key_len);
		jw_value(&w, ev->kv.value, ev->kv.value_len);
		jw_name(&w, "version");
		jw_u64(&w, ev->kv.version);
		jw_name(&w, "create_rev");
		jw_u64(&w, ev->kv.create_rev);
	} else {
		jw_cstr(&w, "delete");
		jw_name(&w, "key");
		jw_str(&w, ev->kv.key, ev->kv.key_len);
	}
	jw_name(&w, "mod_rev");
	jw_u64(&w, ev->rev);
	buf_add(b, "}\n", 2);
}

static void
watch_send(struct watch *w, const struct buf *body)
{
	char	 head[40];
	int	 n;

	n = snprintf(head, sizeof head, "{\"watch\":%" PRIu64, w->id);
	w->peer->send(w->peer->arg, head, (size_t)n);
	w->peer->send(w->peer->arg, body->data, body->len);
}

/* Its history read, if one is out, frees it when it comes back. */
static void
watch_free(struct watch *w)
{
	if (w->peer != NULL) {
		TAILQ_REMOVE(&w->hub->watches, w, hub_entry);
		TAILQ_REMOVE(&w->peer->watches, w, conn_entry);
		w->hub->md->nwatches--;
		if (w->peer->peer_watches != NULL)
			(*w->peer->peer_watches)--;
		w->peer = NULL;
	}
	if (w->reading)
		return;
	free(w->key);
	free(w);
}

/* Tell the client the watch is over; it is freed at the next sweep. */
static void
watch_cancel(struct watch *w, const char *reason)
{
	char	 line[160];
	int	 n;

	if (w->dead)
		return;
	if (strcmp(reason, "compacted") == 0)
		n = snprintf(line, sizeof line, "{\"watch\":%" PRIu64
		    ",\"event\":\"cancelled\",\"reason\":\"%s\","
		    "\"compact_rev\":%" PRIu64 "}\n", w->id, reason,
		    store_compact_rev(w->hub->md->store));
	else
		n = snprintf(line, sizeof line, "{\"watch\":%" PRIu64
		    ",\"event\":\"cancelled\",\"reason\":\"%s\","
		    "\"next_rev\":%" PRIu64 "}\n", w->id, reason, w->next_rev);
	w->peer->send(w->peer->arg, line, (size_t)n);
	w->dead = 1;
	w->hub->sweep = 1;
}

static void
watch_cancel_peer(struct watch_peer *p, const char *reason)
{
	struct watch	*w;

	log_info("uid %ld pid %ld: cancelling watches (%s)", p->uid, p->pid,
	    reason);
	TAILQ_FOREACH(w, &p->watches, conn_entry)
		watch_cancel(w, reason);
}

static void
watch_sweep(struct watch_hub *hub)
{
	struct watch	*w, *next;

	if (!hub->sweep)
		return;
	hub->sweep = 0;
	for (w = TAILQ_FIRST(&hub->watches); w != NULL; w = next) {
		next = TAILQ_NEXT(w, hub_entry);
		if (w->dead)
			watch_free(w);
	}
}

static void	watch_catch_up(struct watch *);

/*
 * A chunk of history for a catching-up watch: send what matches, pausing
 * only between revisions when the output is full; then go on reading, or
 * turn live once every delivered event was seen.
 */
static void
watch_catchup_got(void *arg, long n, const struct store_event *evs,
    int more, const struct store_err *se)
{
	struct watch	*w = arg;
	struct buf	 body;
	long		 i;
	int		 stopped = 0;

	w->reading = 0;
	if (w->peer == NULL || w->dead) {
		watch_free(w);
		return;
	}
	if (n < 0) {
		log_warnx("watch %" PRIu64 ": history: %s", w->id, se->msg);
		watch_cancel(w, se->code == STORE_ERR_COMPACTED ? "compacted" :
		    se->code == STORE_ERR_UNAVAILABLE ? "unavailable" :
		    "internal");
		watch_sweep(w->hub);
		return;
	}
	buf_init(&body);
	for (i = 0; i < n && !stopped; i++) {
		if (evs[i].rev < w->next_rev)
			continue;
		if (evs[i].rev != w->emitting) {
			if (w->peer->full(w->peer->arg)) {
				stopped = 1;	/* conn drained: resume */
				break;
			}
			w->emitting = evs[i].rev;
		}
		if (watch_matches(w, evs[i].kv.key, evs[i].kv.key_len)) {
			watch_event_body(&body, &evs[i]);
			watch_send(w, &body);
		}
		if (i + 1 == n || evs[i + 1].rev != evs[i].rev)
			w->next_rev = evs[i].rev + 1;
	}
	buf_free(&body);
	if (stopped)
		return;
	if (!more && w->next_rev <= w->hub->delivered)
		w->next_rev = w->hub->delivered + 1;
	if (w->next_rev > w->hub->delivered)
		w->live = 1;
	else
		watch_catch_up(w);
}

/* Replay history from next_rev until caught up (then live). */
static void
watch_catch_up(struct watch *w)
{
	if (w->live || w->dead || w->reading || w->peer == NULL)
		return;
	if (w->next_rev > w->hub->delivered) {
		w->live = 1;
		return;
	}
	w->reading = 1;
	store_read_history(w->hub->md->store, w->next_rev,
	    WATCH_CATCHUP_CHUNK, watch_catchup_got, w);
}

void
watch_peer_drained(struct watch_peer *p)
{
	struct watch	*w;
	struct watch_hub *hub = p->md->watch;

	TAILQ_FOREACH(w, &p->watches, conn_entry) {
		if (p->full(p->arg))
			break;
		watch_catch_up(w);
	}
	watch_sweep(hub);
}

/* Deliver one committed event to a live watch. */
static void
watch_deliver(struct watch *w, const struct store_event *ev,
    const struct buf *body)
{
	/* The caller checked that w is live, not cancelled, and matches. */
	if (ev->rev != w->emitting) {
		if (ev->rev < w->next_rev)
			return;		/* before its from_rev */
		if (w->peer->full(w->peer->arg)) {
			w->next_rev = ev->rev;
			watch_cancel_peer(w->peer, "slow_consumer");
			return;
		}
		w->emitting = ev->rev;
		w->next_rev = ev->rev + 1;
	}
	watch_send(w, body);
}

int
watch_any(struct watch_hub *hub)
{
	return (!TAILQ_EMPTY(&hub->watches));
}

void
watch_event(struct watch_hub *hub, const struct store_event *ev)
{
	struct watch	*w;
	int		 built = 0;

	TAILQ_FOREACH(w, &hub->watches, hub_entry) {
		if (!w->live || w->dead ||
		    !watch_matches(w, ev->kv.key, ev->kv.key_len))
			continue;
		if (!built) {
			watch_event_body(&hub->body, ev);
			built = 1;
		}
		watch_deliver(w, ev, &hub->body);
	}
}

void
watch_delivered(struct watch_hub *hub, uint64_t rev)
{
	struct watch	*w;

	TAILQ_FOREACH(w, &hub->watches, hub_entry) {
		if (w->live && w->next_rev <= rev)
			w->next_rev = rev + 1;
	}
	watch_sweep(hub);
}

void
watch_set_delivered(struct watch_hub *hub, uint64_t rev)
{
	hub->delivered = rev;
}

void
watch_failed(struct watch_hub *hub)
{
	struct watch	*w;

	TAILQ_FOREACH(w, &hub->watches, hub_entry) {
		if (w->live)
			watch_cancel(w, "internal");
	}
}

void
watch_compacted(struct watch_hub *hub, uint64_t rev)
{
	struct watch	*w;

	TAILQ_FOREACH(w, &hub->watches, hub_entry) {
		if (!w->live && w->next_rev < rev)
			watch_cancel(w, "compacted");
	}
	watch_sweep(hub);
}

void
watch_lost(struct watch_hub *hub, uint64_t rev)
{
	struct watch	*w;

	TAILQ_FOREACH(w, &hub->watches, hub_entry) {
		if (w->live && w->next_rev < rev)
			watch_cancel(w, "compacted");
	}
}

void
watch_peer_closed(struct watch_peer *p)
{
	struct watch	*w;

	while ((w = TAILQ_FIRST(&p->watches)) != NULL)
		watch_free(w);
}

void
watch_hub_free(struct watch_hub *hub)
{
	buf_free(&hub->body);
	free(hub);
}

static int
watch_args(struct req *r, struct watch *w, uint64_t *from,
    struct proto_err *e)
{
	const char	*key, *prefix;
	size_t		 klen, plen;
	int		 hk, hp;

	if ((hk = proto_get_key(r->json, "key", 0, &key, &klen, e)) == -1 ||
	    (hp = proto_get_prefix(r->json, "prefix", &prefix, &plen,
	    e)) == -1)
		return (-1);
	if (hk == hp)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give exactly one of "
		    "\"key\" and \"prefix\""));
	w->prefix = hp;
	w->key = hp ? xmemdup(prefix, plen) : xmemdup(key, klen);
	w->key_len = hp ? plen : klen;
	*from = 0;
	if (proto_get_u64(r->json, "from_rev", 0, from, e) == -1)
		return (-1);
	return (0);
}

/* Answer a watch request; the new watch, or NULL if it was refused. */
static struct watch *
watch_start(struct req *r)
{
	struct watch_hub	*hub = r->md->watch;
	struct store		*st = r->md->store;
	struct proto_err	 e;
	struct watch		*w;
	struct jw		 jw;
	uint64_t		 from;
	unsigned		 n = 0;

	TAILQ_FOREACH(w, &r->peer->watches, conn_entry)
		n++;
	w = xcalloc(1, sizeof *w);
	if (watch_args(r, w, &from, &e) != 0) {
		free(w->key);
		free(w);
		reply_error(r, e.code, e.msg);
		return (NULL);
	}
	if (r->peer->peer_watches != NULL && *r->peer->peer_watches >=
	    r->md->cfg.max_watches_per_peer) {
		free(w->key);
		free(w);
		snprintf(e.msg, sizeof e.msg, "%s has %u watches, the "
		    "limit is %u (--max-watches-per-peer)", r->peer->who,
		    *r->peer->peer_watches, r->md->cfg.max_watches_per_peer);
		reply_error(r, PROTO_RESOURCE_EXHAUSTED, e.msg);
		return (NULL);
	}
	if (n >= WATCHES_PER_CONN_MAX ||
	    (from != 0 && from < store_compact_rev(st))) {
		free(w->key);
		free(w);
		if (n >= WATCHES_PER_CONN_MAX) {
			snprintf(e.msg, sizeof e.msg, "this connection has %u "
			    "watches, the limit is %d", n,
			    WATCHES_PER_CONN_MAX);
			reply_error(r, PROTO_BAD_REQUEST, e.msg);
			return (NULL);
		}
		snprintf(e.msg, sizeof e.msg, "from_rev %" PRIu64 " is "
		    "compacted; history starts at %" PRIu64, from,
		    store_compact_rev(st));
		reply_error_begin(r, &jw, PROTO_COMPACTED, e.msg);
		jw_name(&jw, "compact_rev");
		jw_u64(&jw, store_compact_rev(st));
		reply_error_end(r, &jw);
		return (NULL);
	}
	w->hub = hub;
	w->id = hub->next_id++;
	w->peer = r->peer;
	w->next_rev = from != 0 ? from :
	    hub->delivered + 1;
	TAILQ_INSERT_TAIL(&hub->watches, w, hub_entry);
	TAILQ_INSERT_TAIL(&r->peer->watches, w, conn_entry);
	r->md->nwatches++;
	if (r->peer->peer_watches != NULL)
		(*r->peer->peer_watches)++;

	/* The answer goes first (nothing is before it), then the history. */
	reply_begin(r, &jw);
	jw_name(&jw, "watch");
	jw_u64(&jw, w->id);
	jw_name(&jw, "rev");
	jw_u64(&jw, hub->delivered);
	reply_end(r, &jw);
	return (w);
}

void
watch_op_watch(struct req *r)
{
	struct watch_hub	*hub = r->md->watch;
	struct watch		*w;

	w = watch_start(r);
	req_done(r);
	if (w != NULL) {
		watch_catch_up(w);
		watch_sweep(hub);
	}
}

static void
watch_stop(struct req *r)
{
	struct proto_err	 e;
	struct watch		*w;
	struct jw		 jw;
	uint64_t		 id;

	if (proto_get_u64(r->json, "watch", 1, &id, &e) != 1) {
		reply_error(r, e.code, e.msg);
		return;
	}
	TAILQ_FOREACH(w, &r->peer->watches, conn_entry) {
		if (w->id == id && !w->dead)
			break;
	}
	if (w == NULL) {
		snprintf(e.msg, sizeof e.msg, "no watch %" PRIu64 " on this "
		    "connection", id);
		reply_error(r, PROTO_NOT_FOUND, e.msg);
		return;
	}
	watch_free(w);
	reply_begin(r, &jw);
	jw_name(&jw, "watch");
	jw_u64(&jw, id);
	reply_end(r, &jw);
}

void
watch_op_unwatch(struct req *r)
{
	watch_stop(r);
	req_done(r);
}

const struct op watch_op_watch_entry = {
	.name = "watch",
	.fields = { "key", "prefix", "from_rev" },
	.run = watch_op_watch,
};

const struct op watch_op_unwatch_entry = {
	.name = "unwatch",
	.fields = { "watch" },
	.run = watch_op_unwatch,
};
