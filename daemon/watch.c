#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "conn.h"
#include "log.h"
#include "metad.h"
#include "ops.h"
#include "wait.h"
#include "watch.h"

struct watch {
	struct watch_hub	*hub;
	uint64_t		 id;
	struct conn		*c;
	char			*key;		/* the key or the prefix */
	size_t			 key_len;
	int			 prefix;
	uint64_t		 next_rev;	/* first rev not delivered */
	uint64_t		 emitting;	/* rev being delivered */
	int			 live;
	int			 dead;
	TAILQ_ENTRY(watch)	 hub_entry;
	TAILQ_ENTRY(watch)	 conn_entry;
};

struct watch_hub {
	struct metad		*md;
	TAILQ_HEAD(, watch)	 watches;
	uint64_t		 next_id;
	int			 sweep;
};

struct watch_hub *
watch_hub_create(struct metad *md)
{
	struct watch_hub	*hub;

	hub = xcalloc(1, sizeof *hub);
	hub->md = md;
	hub->next_id = 1;
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
	conn_send(w->c, head, (size_t)n);
	conn_send(w->c, body->data, body->len);
}

static void
watch_free(struct watch *w)
{
	TAILQ_REMOVE(&w->hub->watches, w, hub_entry);
	TAILQ_REMOVE(&w->c->watches, w, conn_entry);
	w->hub->md->nwatches--;
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
		    w->hub->md->store->compact_rev);
	else
		n = snprintf(line, sizeof line, "{\"watch\":%" PRIu64
		    ",\"event\":\"cancelled\",\"reason\":\"%s\","
		    "\"next_rev\":%" PRIu64 "}\n", w->id, reason, w->next_rev);
	conn_send(w->c, line, (size_t)n);
	w->dead = 1;
	w->hub->sweep = 1;
}

static void
watch_cancel_conn(struct conn *c, const char *reason)
{
	struct watch	*w;

	log_info("uid %ld pid %ld: cancelling watches (%s)", (long)c->uid,
	    (long)c->pid, reason);
	TAILQ_FOREACH(w, &c->watches, conn_entry)
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

struct watch_catchup {
	struct watch	*w;
	struct buf	 body;
	uint64_t	 rev;
	int		 stopped;
};

static int
watch_catchup_cb(const struct store_event *ev, void *arg)
{
	struct watch_catchup	*cu = arg;
	struct watch		*w = cu->w;

	if (ev->rev != cu->rev) {
		/* Pause only between revisions. */
		if (conn_output_full(w->c)) {
			cu->stopped = 1;
			return (1);
		}
		cu->rev = ev->rev;
		w->next_rev = ev->rev + 1;
	}
	if (watch_matches(w, ev->kv.key, ev->kv.key_len)) {
		watch_event_body(&cu->body, ev);
		watch_send(w, &cu->body);
	}
	return (0);
}

/* Replay history until caught up (then live) or the output is full. */
static void
watch_catch_up(struct watch *w)
{
	struct store		*st = w->hub->md->store;
	struct watch_catchup	 cu;
	struct store_err	 se;

	if (w->live || w->dead)
		return;
	memset(&cu, 0, sizeof cu);
	cu.w = w;
	buf_init(&cu.body);
	if (w->next_rev <= st->rev &&
	    store_history(st, w->next_rev, watch_catchup_cb, &cu, &se) != 0) {
		log_warnx("watch %" PRIu64 ": history: %s", w->id, se.msg);
		watch_cancel(w, se.code == STORE_ERR_COMPACTED ? "compacted" :
		    se.code == STORE_ERR_UNAVAILABLE ? "unavailable" :
		    "internal");
	} else if (!cu.stopped) {
		if (w->next_rev <= st->rev)
			w->next_rev = st->rev + 1;
		w->live = 1;
	}
	buf_free(&cu.body);
}

void
watch_conn_drained(struct conn *c)
{
	struct watch	*w;
	struct watch_hub *hub = c->md->watch;

	TAILQ_FOREACH(w, &c->watches, conn_entry) {
		if (conn_output_full(c))
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
		if (conn_output_full(w->c)) {
			w->next_rev = ev->rev;
			watch_cancel_conn(w->c, "slow_consumer");
			return;
		}
		w->emitting = ev->rev;
		w->next_rev = ev->rev + 1;
	}
	watch_send(w, body);
}

struct watch_live {
	struct watch_hub	*hub;
	struct buf		 body;
};

static int
watch_live_cb(const struct store_event *ev, void *arg)
{
	struct watch_live	*wl = arg;
	struct watch		*w;
	int			 built = 0;

	TAILQ_FOREACH(w, &wl->hub->watches, hub_entry) {
		if (!w->live || w->dead ||
		    !watch_matches(w, ev->kv.key, ev->kv.key_len))
			continue;
		if (!built) {
			watch_event_body(&wl->body, ev);
			built = 1;
		}
		watch_deliver(w, ev, &wl->body);
	}
	wait_event(wl->hub->md->waits, ev);
	return (0);
}

void
watch_committed(struct watch_hub *hub, uint64_t from, uint64_t to)
{
	struct store		*st = hub->md->store;
	struct watch_live	 wl;
	struct store_err	 se;
	struct watch		*w;

	if (TAILQ_EMPTY(&hub->watches) && !wait_any(hub->md->waits))
		return;
	memset(&wl, 0, sizeof wl);
	wl.hub = hub;
	buf_init(&wl.body);
	if (store_history(st, from + 1, watch_live_cb, &wl, &se) != 0) {
		/* Should not happen; the watches cannot go on exactly. */
		log_warnx("history after commit: %s", se.msg);
		TAILQ_FOREACH(w, &hub->watches, hub_entry)
			watch_cancel(w, "internal");
	}
	buf_free(&wl.body);
	TAILQ_FOREACH(w, &hub->watches, hub_entry) {
		if (w->live && w->next_rev <= to)
			w->next_rev = to + 1;
	}
	watch_sweep(hub);
	wait_sweep(hub->md->waits);
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
watch_conn_closed(struct conn *c)
{
	struct watch	*w;

	while ((w = TAILQ_FIRST(&c->watches)) != NULL)
		watch_free(w);
}

void
watch_hub_free(struct watch_hub *hub)
{
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

void
watch_op_watch(struct req *r)
{
	struct watch_hub	*hub = r->md->watch;
	struct store		*st = r->md->store;
	struct proto_err	 e;
	struct watch		*w;
	struct jw		 jw;
	uint64_t		 from;
	unsigned		 n = 0;

	TAILQ_FOREACH(w, &r->conn->watches, conn_entry)
		n++;
	w = xcalloc(1, sizeof *w);
	if (watch_args(r, w, &from, &e) != 0) {
		free(w->key);
		free(w);
		reply_error(r, e.code, e.msg);
		return;
	}
	if (n >= WATCHES_PER_CONN_MAX || (from != 0 && from < st->compact_rev)) {
		free(w->key);
		free(w);
		if (n >= WATCHES_PER_CONN_MAX) {
			snprintf(e.msg, sizeof e.msg, "this connection has %u "
			    "watches, the limit is %d", n,
			    WATCHES_PER_CONN_MAX);
			reply_error(r, PROTO_BAD_REQUEST, e.msg);
			return;
		}
		snprintf(e.msg, sizeof e.msg, "from_rev %" PRIu64 " is "
		    "compacted; history starts at %" PRIu64, from,
		    st->compact_rev);
		reply_error_begin(r, &jw, PROTO_COMPACTED, e.msg);
		jw_name(&jw, "compact_rev");
		jw_u64(&jw, st->compact_rev);
		reply_error_end(r, &jw);
		return;
	}
	w->hub = hub;
	w->id = hub->next_id++;
	w->c = r->conn;
	w->next_rev = from != 0 ? from : st->rev + 1;
	TAILQ_INSERT_TAIL(&hub->watches, w, hub_entry);
	TAILQ_INSERT_TAIL(&r->conn->watches, w, conn_entry);
	r->md->nwatches++;

	/* The answer goes first, then the history it replays. */
	reply_begin(r, &jw);
	jw_name(&jw, "watch");
	jw_u64(&jw, w->id);
	jw_name(&jw, "rev");
	jw_u64(&jw, st->rev);
	reply_end(r, &jw);
	conn_send(r->conn, r->resp.data, r->resp.len);
	buf_reset(&r->resp);
	watch_catch_up(w);
	watch_sweep(hub);
}

void
watch_op_unwatch(struct req *r)
{
	struct proto_err	 e;
	struct watch		*w;
	struct jw		 jw;
	uint64_t		 id;

	if (proto_get_u64(r->json, "watch", 1, &id, &e) != 1) {
		reply_error(r, e.code, e.msg);
		return;
	}
	TAILQ_FOREACH(w, &r->conn->watches, conn_entry) {
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
watch_op_compact(struct req *r)
{
	struct store		*st = r->md->store;
	struct proto_err	 e;
	struct store_err	 se;
	struct jw		 w;
	uint64_t		 rev;

	if (proto_get_u64(r->json, "rev", 1, &rev, &e) != 1) {
		reply_error(r, e.code, e.msg);
		return;
	}
	if (rev > st->rev) {
		snprintf(e.msg, sizeof e.msg, "compact rev %" PRIu64 " is "
		    "beyond the current rev %" PRIu64, rev, st->rev);
		reply_error(r, PROTO_BAD_REQUEST, e.msg);
		return;
	}
	if (rev > st->compact_rev) {
		if (store_compact(st, rev, &se) != 0) {
			reply_store_error(r, &se);
			return;
		}
		watch_compacted(r->md->watch, rev);
	}
	reply_begin(r, &w);
	jw_name(&w, "compact_rev");
	jw_u64(&w, st->compact_rev);
	jw_name(&w, "rev");
	jw_u64(&w, st->rev);
	reply_end(r, &w);
}
