#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "metad.h"
#include "metrics/metrics.h"
#include "core/req.h"
#include "core/reply.h"
#include "core/watch.h"
#include "core/watch_index.h"
#include "core/watch_int.h"

/* Events read from the history at a time while a watch catches up. */
#define WATCH_CATCHUP_CHUNK	512

struct watch_hub *
watch_hub_create(struct metad *md)
{
	struct watch_hub	*hub;
	size_t			 i;

	hub = xcalloc(1, sizeof *hub);
	hub->md = md;
	hub->next_id = 1;
	for (i = 0; i < WATCH_BODIES; i++)
		buf_init(&hub->body[i]);
	TAILQ_INIT(&hub->watches);
	TAILQ_INIT(&hub->catching);
	TAILQ_INIT(&hub->dead);
	hub->index = watch_index_create();
	return (hub);
}

uint64_t
watch_next_rev(const struct watch *w)
{
	if (w->live && w->next_rev <= w->hub->delivered)
		return (w->hub->delivered + 1);
	return (w->next_rev);
}

static int
watch_matches(const struct watch *w, const char *key, size_t len)
{
	const struct watch_filter	*f;
	unsigned			 i;

	for (i = 0; i < w->nfilters; i++) {
		f = &w->filters[i];
		if (f->prefix ? len >= f->len && memcmp(key, f->key,
		    f->len) == 0 : len == f->len && memcmp(key, f->key,
		    len) == 0)
			return (1);
	}
	return (0);
}

void
watch_index_in(struct watch *w)
{
	struct watch_filter	*f;
	unsigned		 i;

	for (i = 0; i < w->nfilters; i++) {
		f = &w->filters[i];
		f->ent = watch_index_add(w->hub->index, f->key, f->len,
		    f->prefix, w);
	}
	w->indexed = 1;
	if (w->prev_kv && w->hub->nprev++ == 0)
		store_want_prev(w->hub->md->store, 1);
}

static void
watch_index_out(struct watch *w)
{
	unsigned	 i;

	if (!w->indexed)
		return;
	w->indexed = 0;
	if (w->prev_kv && --w->hub->nprev == 0)
		store_want_prev(w->hub->md->store, 0);
	for (i = 0; i < w->nfilters; i++) {
		watch_index_del(w->hub->index, w->filters[i].ent);
		w->filters[i].ent = NULL;
	}
}

/* The WATCH_BODY_* that w's event lines carry. */
static int
watch_body_of(const struct watch *w)
{
	return ((w->prev_kv ? WATCH_BODY_PREV : 0) |
	    (w->with_lease ? WATCH_BODY_LEASE : 0));
}

/*
 * The part of an event line after {"watch":W — built once per event for
 * each set of WATCH_BODY_* its watches ask for.
 */
static void
watch_event_body(const struct watch_hub *hub, struct buf *b,
    const struct store_event *ev, int what)
{
	struct jw	 w;
	uint64_t	 lease = 0;
	int		 expired = 0;

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
		if (ev->cause != STORE_CAUSE_NONE) {
			lease = ev->cause_lease;
			expired = ev->cause == STORE_CAUSE_EXPIRED;
		}
		if (ev->cause != STORE_CAUSE_NONE ||
		    watch_lease_of(hub, ev->rev, &lease, &expired)) {
			jw_name(&w, "lease");
			jw_u64(&w, lease);
			jw_name(&w, "cause");
			jw_cstr(&w, expired ? "expired" : "revoked");
		}
	}
	jw_name(&w, "mod_rev");
	jw_u64(&w, ev->rev);
	if ((what & WATCH_BODY_LEASE) && ev->type == STORE_EVENT_PUT &&
	    ev->kv.lease != 0) {
		jw_name(&w, "lease");
		jw_u64(&w, ev->kv.lease);
	}
	if ((what & WATCH_BODY_PREV) && ev->prev_state == STORE_PREV_KV)
		reply_kv(&w, "prev", &ev->prev, 1);
	else if ((what & WATCH_BODY_PREV) && ev->prev_state == STORE_PREV_NONE)
		reply_kv(&w, "prev", NULL, 1);
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
	if (w->progress != NULL)
		w->progress->last_sent_ms = mono_ms();
}

/* It leaves the hub's watches catching up: it turns live or ends. */
static void
watch_caught(struct watch *w)
{
	TAILQ_REMOVE(&w->hub->catching, w, catching_entry);
	w->peer->ncatching--;
}

/* Its history read, if one is out, frees it when it comes back. */
void
watch_free(struct watch *w)
{
	unsigned	 i;

	if (w->peer != NULL) {
		TAILQ_REMOVE(w->dead ? &w->hub->dead : &w->hub->watches, w,
		    hub_entry);
		if (!w->dead && !w->live)
			watch_caught(w);
		TAILQ_REMOVE(&w->peer->watches, w, conn_entry);
		w->peer->nwatches--;
		w->hub->md->nwatches--;
		if (w->peer->peer_watches != NULL)
			(*w->peer->peer_watches)--;
		w->peer = NULL;
		watch_index_out(w);
		if (w->progress != NULL) {
			event_free(w->progress->ev);
			free(w->progress);
		}
		w->progress = NULL;
	}
	if (w->reading)
		return;
	for (i = 0; i < w->nfilters; i++)
		free(w->filters[i].key);
	free(w->filters);
	free(w);
}

/*
 * Tell the client the watch is over; it leaves the index now and is freed
 * at the next sweep.
 */
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
		    "\"next_rev\":%" PRIu64 "}\n", w->id, reason,
		    watch_next_rev(w));
	w->peer->send(w->peer->arg, line, (size_t)n);
	watch_index_out(w);
	if (w->progress != NULL)
		event_del(w->progress->ev);
	TAILQ_REMOVE(&w->hub->watches, w, hub_entry);
	TAILQ_INSERT_TAIL(&w->hub->dead, w, hub_entry);
	if (!w->live)
		watch_caught(w);
	w->dead = 1;
	metrics_cancelled(&w->hub->md->metrics, reason);
}

static void
watch_cancel_peer(struct watch_peer *p, const char *reason)
{
	struct watch	*w;

	if (p->pid >= 0)
		log_info("%s pid %ld: cancelling watches (%s)", p->who, p->pid,
		    reason);
	else
		log_info("%s: cancelling watches (%s)", p->who, reason);
	TAILQ_FOREACH(w, &p->watches, conn_entry)
		watch_cancel(w, reason);
}

void
watch_sweep(struct watch_hub *hub)
{
	struct watch	*w;

	while ((w = TAILQ_FIRST(&hub->dead)) != NULL)
		watch_free(w);
}

/* Its catching up is over: it gets the events as they come. */
static void
watch_live(struct watch *w)
{
	w->live = 1;
	watch_caught(w);
}

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
			watch_event_body(w->hub, &body, &evs[i],
			    watch_body_of(w));
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
		watch_live(w);
	else
		watch_catch_up(w);
}

/* Replay history from next_rev until caught up (then live). */
void
watch_catch_up(struct watch *w)
{
	if (w->live || w->dead || w->reading || w->peer == NULL)
		return;
	if (w->next_rev > w->hub->delivered) {
		watch_live(w);
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

	/* Each write out comes here: live watches have nothing to do. */
	TAILQ_FOREACH(w, &p->watches, conn_entry) {
		if (p->ncatching == 0 || p->full(p->arg))
			break;
		watch_catch_up(w);
	}
	watch_sweep(hub);
}

/*
 * The rev every event of w up to which was sent: a live watch's, what the
 * hub delivered (never a rev not yet reached, though from_rev be ahead);
 * a catching-up watch's, the revision before the one it replays.
 */
uint64_t
watch_progress_rev(const struct watch *w)
{
	if (w->live || w->next_rev > w->hub->delivered)
		return (w->hub->delivered);
	return (w->next_rev - 1);
}

void
watch_progress_send(struct watch *w)
{
	char	 line[96];
	int	 n;

	n = snprintf(line, sizeof line, "{\"watch\":%" PRIu64 ",\"event\":"
	    "\"progress\",\"rev\":%" PRIu64 "}\n", w->id,
	    watch_progress_rev(w));
	w->peer->send(w->peer->arg, line, (size_t)n);
	if (w->progress != NULL)
		w->progress->last_sent_ms = mono_ms();
}

/* Its timer: a progress line if nothing was sent for progress_ms. */
static void
watch_progress_cb(evutil_socket_t fd, short what, void *arg)
{
	struct watch	*w = arg;
	struct timeval	 tv;
	int64_t		 due;

	(void)fd;
	(void)what;
	if (w->dead || w->peer == NULL)
		return;
	due = w->progress->last_sent_ms + w->progress_ms - mono_ms();
	if (due <= 0) {
		/* A full connection gets it later, if it drains. */
		if (!w->peer->full(w->peer->arg))
			watch_progress_send(w);
		due = w->progress_ms;
	}
	tv.tv_sec = due / 1000;
	tv.tv_usec = (due % 1000) * 1000;
	evtimer_add(w->progress->ev, &tv);
}

void
watch_progress_start(struct watch *w)
{
	struct timeval	 tv;

	if (w->progress_ms == 0)
		return;
	w->progress = xcalloc(1, sizeof *w->progress);
	w->progress->last_sent_ms = mono_ms();
	w->progress->ev = evtimer_new(w->hub->md->base, watch_progress_cb, w);
	if (w->progress->ev == NULL)
		fatalx("evtimer_new");
	tv.tv_sec = w->progress_ms / 1000;
	tv.tv_usec = (w->progress_ms % 1000) * 1000;
	evtimer_add(w->progress->ev, &tv);
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

/* The index's callback: w matches the event, once however many times. */
static void
watch_matched(void *owner, void *arg)
{
	struct watch_hub	*hub = arg;
	struct watch		*w = owner;

	if (!w->live || w->mark == hub->serial)
		return;
	w->mark = hub->serial;
	if (hub->nmatch == hub->match_cap) {
		hub->match_cap = hub->match_cap ? hub->match_cap * 2 : 64;
		hub->match = xrealloc(hub->match, hub->match_cap *
		    sizeof *hub->match);
	}
	if (hub->nmatch > 0 && hub->match[hub->nmatch - 1]->id > w->id)
		hub->match_sorted = 0;
	hub->match[hub->nmatch++] = w;
}

static int
watch_cmp_id(const void *a, const void *b)
{
	const struct watch	*x = *(struct watch * const *)a;
	const struct watch	*y = *(struct watch * const *)b;

	return (x->id < y->id ? -1 : x->id > y->id);
}

/*
 * The watches the index gives for the event's key, in id order (the
 * order they were made), each once; the line's body encoded once.
 */
void
watch_event(struct watch_hub *hub, const struct store_event *ev)
{
	struct watch	*w;
	struct buf	*body;
	size_t		 i;

	hub->serial++;
	hub->nmatch = 0;
	hub->match_sorted = 1;
	watch_index_match(hub->index, ev->kv.key, ev->kv.key_len,
	    watch_matched, hub);
	if (hub->nmatch == 0)
		return;
	if (!hub->match_sorted)
		qsort(hub->match, hub->nmatch, sizeof *hub->match,
		    watch_cmp_id);
	for (i = 0; i < WATCH_BODIES; i++)
		buf_reset(&hub->body[i]);
	for (i = 0; i < hub->nmatch; i++) {
		w = hub->match[i];
		/* A slow consumer's cancel may take later ones too. */
		if (w->dead)
			continue;
		body = &hub->body[watch_body_of(w)];
		if (body->len == 0)
			watch_event_body(hub, body, ev, watch_body_of(w));
		watch_deliver(w, ev, body);
	}
}

void
watch_delivered(struct watch_hub *hub, uint64_t rev)
{
	(void)rev;	/* live watches' next_rev follow it (watch_next_rev) */
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
	struct watch	*w, *next;

	for (w = TAILQ_FIRST(&hub->watches); w != NULL; w = next) {
		next = TAILQ_NEXT(w, hub_entry);
		if (w->live)
			watch_cancel(w, "internal");
	}
}

/*
 * Only the watches still catching up read the history: a live one's
 * events come from events.c (its losses are watch_lost's).
 */
void
watch_compacted(struct watch_hub *hub, uint64_t rev)
{
	struct watch	*w, *next;

	for (w = TAILQ_FIRST(&hub->catching); w != NULL; w = next) {
		next = TAILQ_NEXT(w, catching_entry);
		if (w->next_rev < rev)
			watch_cancel(w, "compacted");
	}
	watch_sweep(hub);
}

/*
 * It walks every watch, as watch_failed does: it runs only when events
 * were lost, and rev is above the hub's delivered + 1 (events.c), so it
 * cancels every live watch but those from a rev ahead.
 */
void
watch_lost(struct watch_hub *hub, uint64_t rev)
{
	struct watch	*w, *next;

	for (w = TAILQ_FIRST(&hub->watches); w != NULL; w = next) {
		next = TAILQ_NEXT(w, hub_entry);
		if (w->live && watch_next_rev(w) < rev)
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
	size_t	 i;

	watch_sweep(hub);
	for (i = 0; i < WATCH_BODIES; i++)
		buf_free(&hub->body[i]);
	watch_index_free(hub->index);
	free(hub->match);
	free(hub->lease_revs);
	free(hub);
}
