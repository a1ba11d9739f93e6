#include <stdlib.h>

#include <event2/event.h>

#include "commit.h"
#include "events.h"
#include "log.h"
#include "metad.h"
#include "reply.h"
#include "req.h"

#define COMMIT_RETRIES_MAX	20
#define COMMIT_RETRY_US		500
/* A written request waits at most this long for its events. */
#define COMMIT_PARK_MS		2000

struct commit {
	struct metad		*md;
	struct req_queue	 queue;		/* not started */
	unsigned		 queued;
	struct event		*ev;
	/* The batch out, and its attempt (a lost race runs it again). */
	struct req_queue	 batch;
	unsigned		 nbatch;
	int			 busy;
	unsigned		 attempt;
	uint64_t		 base_rev, last_rev;	/* it read at, wrote to */
	unsigned		 writers;
	struct event		*retry_timer;
	/* Committed, answered once their events were delivered. */
	struct req_queue	 parked;
	unsigned		 nparked;
	struct event		*park_timer;
};

static void	commit_run(struct commit *);
static void	commit_begin(struct commit *);

static void
commit_cb(evutil_socket_t fd, short what, void *arg)
{
	commit_run(arg);
}

static void
commit_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	commit_begin(arg);
}

/*
 * Answer the parked requests, in order, up to the first whose write is
 * above rev (UINT64_MAX: all of them).
 */
void
commit_unpark(struct commit *cm, uint64_t rev)
{
	struct req	*r;

	while ((r = TAILQ_FIRST(&cm->parked)) != NULL && r->wrote_rev <= rev) {
		TAILQ_REMOVE(&cm->parked, r, entry);
		cm->nparked--;
		req_done(r);
	}
	if (cm->nparked == 0)
		event_del(cm->park_timer);
}

static void
commit_park_cb(evutil_socket_t fd, short what, void *arg)
{
	struct commit	*cm = arg;

	log_warnx("the events of rev %llu did not come back from the store "
	    "in %d ms; answering anyway",
	    (unsigned long long)TAILQ_FIRST(&cm->parked)->wrote_rev,
	    COMMIT_PARK_MS);
	commit_unpark(cm, UINT64_MAX);
}

struct commit *
commit_create(struct metad *md)
{
	struct commit	*cm;

	cm = xcalloc(1, sizeof *cm);
	cm->md = md;
	TAILQ_INIT(&cm->queue);
	TAILQ_INIT(&cm->batch);
	TAILQ_INIT(&cm->parked);
	if ((cm->ev = event_new(md->base, -1, 0, commit_cb, cm)) == NULL ||
	    (cm->park_timer = evtimer_new(md->base, commit_park_cb,
	    cm)) == NULL ||
	    (cm->retry_timer = evtimer_new(md->base, commit_retry_cb,
	    cm)) == NULL)
		fatalx("event_new");
	return (cm);
}

void
commit_free(struct commit *cm)
{
	struct req	*r;

	if (cm == NULL)
		return;
	commit_unpark(cm, UINT64_MAX);
	/* No remote write is started now that nobody will be answered for. */
	TAILQ_CONCAT(&cm->batch, &cm->queue, entry);
	while ((r = TAILQ_FIRST(&cm->batch)) != NULL) {
		TAILQ_REMOVE(&cm->batch, r, entry);
		req_done(r);
	}
	event_free(cm->ev);
	event_free(cm->park_timer);
	event_free(cm->retry_timer);
	free(cm);
}

unsigned
commit_queued(struct commit *cm)
{
	return (cm->queued + cm->nbatch + cm->nparked);
}

/*
 * Queued in this turn of the loop: the commit event, activated now, runs
 * after every I/O callback already active in this turn, so writes that
 * arrive together are committed together.
 */
void
commit_enqueue(struct commit *cm, struct req *r)
{
	TAILQ_INSERT_TAIL(&cm->queue, r, entry);
	if (cm->queued++ == 0 && !cm->busy)
		event_active(cm->ev, 0, 0);
}

/*
 * The batch is over: park each request until the events of its write were
 * delivered (at once if they were, or if it wrote nothing), then go on
 * with the next batch.
 */
static void
commit_end(struct commit *cm)
{
	struct timeval	 tv = { COMMIT_PARK_MS / 1000,
			    (COMMIT_PARK_MS % 1000) * 1000 };
	struct req	*r;

	while ((r = TAILQ_FIRST(&cm->batch)) != NULL) {
		TAILQ_REMOVE(&cm->batch, r, entry);
		if (cm->nparked == 0)
			evtimer_add(cm->park_timer, &tv);
		TAILQ_INSERT_TAIL(&cm->parked, r, entry);
		cm->nparked++;
	}
	cm->nbatch = 0;
	cm->busy = 0;
	events_compacted(cm->md->events);
	commit_unpark(cm, events_delivered(cm->md->events));
	if (cm->queued > 0)
		event_active(cm->ev, 0, 0);
}

/* The batch could not be committed: every request gets the error. */
static void
commit_fail(struct commit *cm, const struct store_err *se)
{
	struct req	*r;

	log_warnx("commit failed: %s", se->msg);
	TAILQ_FOREACH(r, &cm->batch, entry) {
		reply_store_error(r, se);
		r->wrote_rev = 0;
	}
	commit_end(cm);
}

/* Apply one request at the next rev; answers it whatever happens. */
static void
commit_apply(struct commit *cm, struct req *r)
{
	struct store		*st = cm->md->store;
	struct store_err	 se;
	int			 wrote = 0, mark;

	buf_reset(&r->resp);
	r->wrote_rev = 0;
	mark = !(r->op->flags & OP_ONE_WRITE);
	if (mark && store_mark(st, &se) != 0) {
		reply_store_error(r, &se);
		return;
	}
	if (r->op->apply(r, cm->last_rev + 1, &wrote, &se) != 0) {
		reply_store_error(r, &se);
		if (mark && store_undo(st, &se) != 0)
			log_warnx("undo: %s", se.msg);
		return;
	}
	if (wrote) {
		r->wrote_rev = ++cm->last_rev;
		cm->writers++;
	}
}

/*
 * A writer outside metad moved the store between the batch's read and its
 * commit, which landed at commit_rev instead of last_rev: run the (one)
 * writing request again on the state it was decided on, to answer with
 * the revisions its write really has.
 */
static void
commit_reanswer(struct commit *cm)
{
	struct store		*st = cm->md->store;
	struct store_err	 se;
	struct req		*r;
	int			 wrote = 0;

	TAILQ_FOREACH(r, &cm->batch, entry) {
		if (r->wrote_rev != 0)
			break;
	}
	log_debug("rev %llu planned, landed at %llu (a writer outside metad)",
	    (unsigned long long)cm->last_rev,
	    (unsigned long long)st->commit_rev);
	r->wrote_rev = st->commit_rev;
	buf_reset(&r->resp);
	if (store_reopen(st, cm->base_rev, &se) != 0 ||
	    r->op->apply(r, r->wrote_rev, &wrote, &se) != 0) {
		log_warnx("rev %llu was written, but its answer could not be "
		    "made again: %s", (unsigned long long)r->wrote_rev,
		    se.msg);
		buf_reset(&r->resp);
		reply_store_error(r, &se);
	}
	store_rollback(st);
}

static void
commit_landed(void *arg, const struct store_err *se)
{
	struct commit	*cm = arg;
	struct store	*st = cm->md->store;
	struct timeval	 tv = { 0, 0 };

	if (se != NULL && se->code == STORE_ERR_CONFLICT &&
	    cm->attempt < COMMIT_RETRIES_MAX) {
		/* Another daemon wrote first: again, after a pause. */
		tv.tv_usec = COMMIT_RETRY_US * cm->attempt *
		    (1 + random() % 4);
		evtimer_add(cm->retry_timer, &tv);
		return;
	}
	if (se != NULL) {
		commit_fail(cm, se);
		return;
	}
	if (cm->writers == 1 && st->commit_rev != cm->last_rev)
		commit_reanswer(cm);
	commit_end(cm);
}

static void
commit_begun(void *arg, const struct store_err *se)
{
	struct commit	*cm = arg;
	struct store	*st = cm->md->store;
	struct req	*r;

	if (se != NULL) {
		commit_fail(cm, se);
		return;
	}
	cm->base_rev = cm->last_rev = st->base_rev;
	cm->writers = 0;
	TAILQ_FOREACH(r, &cm->batch, entry)
		commit_apply(cm, r);
	store_commit(st, cm->last_rev, commit_landed, cm);
}

/* One attempt at the batch: open it with the keys its requests read. */
static void
commit_begin(struct commit *cm)
{
	struct store_keys	 ks;
	struct req		*r;

	cm->attempt++;
	ks.n = 0;
	TAILQ_FOREACH(r, &cm->batch, entry) {
		if (r->op->keys != NULL)
			r->op->keys(r, &ks);
	}
	store_begin(cm->md->store, &ks, commit_begun, cm);
}

static void
commit_run(struct commit *cm)
{
	unsigned	 max = cm->md->store->backend->batch_max;
	struct req	*r;

	if (cm->busy || cm->queued == 0)
		return;
	event_del(cm->ev);
	while ((r = TAILQ_FIRST(&cm->queue)) != NULL &&
	    (max == 0 || cm->nbatch < max)) {
		TAILQ_REMOVE(&cm->queue, r, entry);
		TAILQ_INSERT_TAIL(&cm->batch, r, entry);
		cm->queued--;
		cm->nbatch++;
	}
	cm->busy = 1;
	cm->attempt = 0;
	commit_begin(cm);
}
