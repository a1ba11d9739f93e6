/*
 * The etcd view's linearizable reads (store_etcd_view.c has the view): a
 * read at the current rev queues; once the loop turn is over one probe, a
 * quorum read of the slot keys, goes out for every read queued (as
 * Kubernetes' consistent reads from its watch cache).  Every write made
 * through metad puts its slot, so the newest slot's mod_revision S is the
 * newest such write acknowledged before the probe was answered
 * (etcd_probe_body()): once the view applied
 * the events up to S, it holds every write any daemon acknowledged before
 * the reads were sent, and answers them.  A probe whose revision the view
 * has not reached within VIEW_LATE_MS (the stream is down, say) has its
 * reads answered by etcd instead; so does one whose view was dropped.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd.h"
#include "store/etcd/store_etcd_view.h"

#define VIEW_LATE_MS		1000

/* From the view, or (it was dropped, or is late) from etcd. */
static void
lin_read_answer(struct etcd_view *v, struct view_read *vr, int direct)
{
	if (!v->on || direct) {
		if (vr->is_range)
			etcd_read_range_direct(v->e, &vr->rg, vr->done,
			    vr->arg);
		else
			etcd_read_get_direct(v->e, vr->key, vr->key_len, 0,
			    vr->done, vr->arg);
	} else if (vr->is_range)
		etcd_view_range(v->e, &vr->rg, vr->done, vr->arg);
	else
		etcd_view_get(v->e, vr->key, vr->key_len, vr->done, vr->arg);
	free(vr->key);
	free(vr->after);
	free(vr->start);
	free(vr->end);
	free(vr);
}

static void
lin_reads_fail(struct view_reads *q, const struct store_err *err)
{
	struct view_read	*vr;

	while ((vr = TAILQ_FIRST(q)) != NULL) {
		TAILQ_REMOVE(q, vr, entry);
		vr->done(vr->arg, -1, NULL, 0, err);
		free(vr->key);
		free(vr->after);
		free(vr->start);
		free(vr->end);
		free(vr);
	}
}

static void
lin_probe_free(struct view_probe *p)
{
	if (p->late != NULL)
		event_free(p->late);
	free(p);
}

/* Answer p's reads (it has left the list). */
static void
lin_probe_answer(struct etcd_view *v, struct view_probe *p, int direct)
{
	struct view_read	*vr;

	while ((vr = TAILQ_FIRST(&p->reads)) != NULL) {
		TAILQ_REMOVE(&p->reads, vr, entry);
		lin_read_answer(v, vr, direct);
	}
	lin_probe_free(p);
}

/*
 * Answer the probes whose revision the view has reached (each connection
 * keeps its own answers in order, whatever order they end in).
 */
void
etcd_lin_progress(struct etcd_view *v)
{
	struct view_probe	*p, *next;

	for (p = TAILQ_FIRST(&v->probes); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (!p->back || (p->need > v->e->st->head.rev && v->on))
			continue;
		TAILQ_REMOVE(&v->probes, p, entry);
		lin_probe_answer(v, p, 0);
		next = TAILQ_FIRST(&v->probes);	/* answers may end others */
	}
}

static void
lin_probe_late(evutil_socket_t fd, short what, void *arg)
{
	struct view_probe	*p = arg;
	struct etcd_view	*v = p->v;

	log_warnx("etcd view: at rev %" PRIu64 " after %d ms, not yet at %"
	    PRIu64 "; etcd answers the reads", v->e->st->head.rev, VIEW_LATE_MS,
	    p->need);
	TAILQ_REMOVE(&v->probes, p, entry);
	lin_probe_answer(v, p, 1);
}

static void
lin_probe_back(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct view_probe	*p = arg;
	struct etcd_view	*v = p->v;
	struct timeval		 tv = { VIEW_LATE_MS / 1000,
				    (VIEW_LATE_MS % 1000) * 1000 };

	p->back = 1;
	if (reply == NULL) {
		TAILQ_REMOVE(&v->probes, p, entry);
		lin_reads_fail(&p->reads, err);
		lin_probe_free(p);
		return;
	}
	(void)etcd_header_rev(v->e, reply);
	p->need = etcd_first_u64(reply, "mod_revision");
	if (p->need > v->e->st->head.rev && v->on) {
		if ((p->late = evtimer_new(v->e->opts.base, lin_probe_late,
		    p)) == NULL)
			fatalx("evtimer_new");
		evtimer_add(p->late, &tv);
	}
	etcd_lin_progress(v);
}

/* The loop turn is over: one probe for the reads it queued. */
void
etcd_lin_kick(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_view	*v = arg;
	struct view_probe	*p;
	struct store_err	 err;
	struct buf		 b;

	if (TAILQ_EMPTY(&v->queued))
		return;
	p = xcalloc(1, sizeof *p);
	p->v = v;
	TAILQ_INIT(&p->reads);
	TAILQ_CONCAT(&p->reads, &v->queued, entry);
	TAILQ_INSERT_TAIL(&v->probes, p, entry);
	buf_init(&b);
	etcd_probe_body(v->e, &b);
	if (etcd_call_async(&v->e->client, "/v3/kv/range", buf_cstr(&b),
	    lin_probe_back, p, &err) != 0)
		lin_probe_back(p, NULL, &err);
	buf_free(&b);
}

static void
lin_queue(struct etcd_view *v, struct view_read *vr)
{
	TAILQ_INSERT_TAIL(&v->queued, vr, entry);
	event_active(v->kick, EV_TIMEOUT, 0);
}

void
etcd_lin_get(struct store_etcd *e, const char *key, size_t len,
    store_read_done done, void *arg)
{
	struct view_read	*vr;

	vr = xcalloc(1, sizeof *vr);
	vr->key = xmemdup(key, len);
	vr->key_len = len;
	vr->done = done;
	vr->arg = arg;
	lin_queue(e->view, vr);
}

void
etcd_lin_range(struct store_etcd *e, const struct store_range *r,
    store_read_done done, void *arg)
{
	struct view_read	*vr;

	vr = xcalloc(1, sizeof *vr);
	vr->is_range = 1;
	vr->rg = *r;
	vr->key = xmemdup(r->prefix, r->prefix_len);
	vr->key_len = r->prefix_len;
	vr->rg.prefix = vr->key;
	if (r->after != NULL) {
		vr->after = xmemdup(r->after, r->after_len);
		vr->after_len = r->after_len;
		vr->rg.after = vr->after;
	}
	if (r->start != NULL)
		vr->rg.start = vr->start = xmemdup(r->start, r->start_len);
	if (r->end != NULL)
		vr->rg.end = vr->end = xmemdup(r->end, r->end_len);
	vr->done = done;
	vr->arg = arg;
	lin_queue(e->view, vr);
}

/* The store closes: what still waits fails (no callback comes later). */
void
etcd_lin_close(struct etcd_view *v)
{
	struct view_probe	*p;
	struct store_err	 err;

	store_err_set(&err, STORE_ERR_UNAVAILABLE, "the store is closing");
	lin_reads_fail(&v->queued, &err);
	while ((p = TAILQ_FIRST(&v->probes)) != NULL) {
		TAILQ_REMOVE(&v->probes, p, entry);
		lin_reads_fail(&p->reads, &err);
		lin_probe_free(p);
	}
}
