#include <stdlib.h>

#include <event2/event.h>

#include "commit.h"
#include "conn.h"
#include "log.h"
#include "metad.h"
#include "ops.h"
#include "server.h"
#include "watch.h"

#define COMMIT_RETRIES_MAX	20
#define COMMIT_RETRY_US		500
/* A written request waits at most this long for its events. */
#define COMMIT_PARK_MS		2000

struct commit {
	struct metad		*md;
	struct req_queue	 queue;
	unsigned		 queued;
	struct event		*ev;
	/* Per-request store: one write at a time, the others waiting. */
	struct req		*inflight;
	unsigned		 attempt;	/* of inflight */
	uint64_t		 base_rev;	/* its batch read at */
	struct event		*retry_timer;
	struct req_queue	 waiting;
	unsigned		 nwaiting;
	/* Committed, answered once their events came. */
	struct req_queue	 parked;
	unsigned		 nparked;
	struct event		*park_timer;
};

static void	commit_retry_cb(evutil_socket_t, short, void *);

static void	commit_answer(struct commit *, struct req_queue *);

static void
commit_cb(evutil_socket_t fd, short what, void *arg)
{
	commit_run(arg);
}

/*
 * Answer the parked requests, in order, up to the first whose write is
 * above rev (UINT64_MAX: all of them).
 */
void
commit_unpark(struct commit *cm, uint64_t rev)
{
	struct req_queue	 ready;
	struct req		*r;

	TAILQ_INIT(&ready);
	while ((r = TAILQ_FIRST(&cm->parked)) != NULL && r->wrote_rev <= rev) {
		TAILQ_REMOVE(&cm->parked, r, entry);
		TAILQ_INSERT_TAIL(&ready, r, entry);
		cm->nparked--;
	}
	if (cm->nparked == 0)
		event_del(cm->park_timer);
	commit_answer(cm, &ready);
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
	TAILQ_INIT(&cm->parked);
	TAILQ_INIT(&cm->waiting);
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
	if (!(cm->md->store->backend->caps & STORE_CAP_PER_REQUEST))
		commit_run(cm);
	commit_unpark(cm, UINT64_MAX);
	/*
	 * A remote store's writes the drain did not see through: none is
	 * started now; their connections go with the daemon.
	 */
	TAILQ_CONCAT(&cm->waiting, &cm->queue, entry);
	if (cm->inflight != NULL)
		TAILQ_INSERT_HEAD(&cm->waiting, cm->inflight, entry);
	while ((r = TAILQ_FIRST(&cm->waiting)) != NULL) {
		TAILQ_REMOVE(&cm->waiting, r, entry);
		server_conn_unref(cm->md->server, r->conn);
		req_free(r);
	}
	event_free(cm->ev);
	event_free(cm->park_timer);
	event_free(cm->retry_timer);
	free(cm);
}

unsigned
commit_queued(struct commit *cm)
{
	return (cm->queued + cm->nparked + cm->nwaiting +
	    (cm->inflight != NULL));
}

/*
 * Queued in this turn of the loop: the commit event, activated now, runs
 * after every I/O callback already active in this turn.
 */
void
commit_enqueue(struct commit *cm, struct req *r)
{
	TAILQ_INSERT_TAIL(&cm->queue, r, entry);
	if (cm->queued++ == 0)
		event_active(cm->ev, 0, 0);
}

/* Apply one request at rev; answers it whatever happens. */
static void
commit_apply(struct commit *cm, struct req *r, uint64_t *cur)
{
	struct store		*st = cm->md->store;
	struct store_err	 se;
	int			 wrote = 0, mark;

	mark = !(r->op->flags & OP_ONE_WRITE);
	if (mark && store_mark(st, &se) != 0) {
		reply_store_error(r, &se);
		return;
	}
	if (r->op->apply(r, *cur + 1, &wrote, &se) != 0) {
		reply_store_error(r, &se);
		if (mark && store_undo(st, &se) != 0)
			log_warnx("undo: %s", se.msg);
		return;
	}
	if (wrote)
		*cur += 1;
}

/* The batch could not be committed: every request gets the error. */
static void
commit_fail(struct req_queue *batch, const struct store_err *se)
{
	struct req	*r;

	log_warnx("commit failed: %s", se->msg);
	TAILQ_FOREACH(r, batch, entry)
		reply_store_error(r, se);
}

static void
commit_answer(struct commit *cm, struct req_queue *batch)
{
	struct req	*r;

	TAILQ_FOREACH(r, batch, entry)
		conn_send(r->conn, r->resp.data, r->resp.len);
	while ((r = TAILQ_FIRST(batch)) != NULL) {
		TAILQ_REMOVE(batch, r, entry);
		conn_write_done(r->conn);
		server_conn_unref(cm->md->server, r->conn);
		req_free(r);
	}
}

/*
 * Keep the events of the last --history revisions: compact, in steps of a
 * sixteenth of that, so that trimming costs little per commit.
 */
static void
commit_trim_history(struct commit *cm)
{
	struct store		*st = cm->md->store;
	struct store_err	 se;
	uint64_t		 keep = cm->md->cfg.history, floor;

	if (st->rev < keep)
		return;
	floor = st->rev - keep + 1;
	if (floor <= st->compact_rev + keep / 16)
		return;
	if (store_compact(st, floor, &se) != 0) {
		log_warnx("history compaction to rev %llu: %s",
		    (unsigned long long)floor, se.msg);
		return;
	}
	watch_compacted(cm->md->watch, floor);
}

/*
 * A writer outside metad moved the store between store_begin() and the
 * commit, which landed at r->wrote_rev instead of base_rev + 1: run the
 * request again on the state it was decided on (the same base_rev) to
 * answer with the revisions its write really has.
 */
static int
commit_reanswer(struct commit *cm, struct req *r, struct store_err *se)
{
	struct store	*st = cm->md->store;
	int		 wrote = 0, rc;

	log_debug("rev %llu planned, landed at %llu (a writer outside metad)",
	    (unsigned long long)cm->base_rev + 1,
	    (unsigned long long)r->wrote_rev);
	buf_reset(&r->resp);
	if (store_reopen_batch(st, cm->base_rev, se) != 0)
		return (-1);
	rc = r->op->apply(r, r->wrote_rev, &wrote, se);
	store_rollback(st);
	return (rc);
}

/*
 * Answer a per-request store's write: at once, or, from the first written
 * request on, once the store's events reached its rev, so that, as with a
 * local store, a watcher has the events of a write before its writer has
 * the answer, and a read after the answer reports a rev no older than the
 * write.
 */
static void
commit_one_done(struct commit *cm, struct req *r)
{
	struct store		*st = cm->md->store;
	struct req_queue	 one;
	struct timeval		 tv = { COMMIT_PARK_MS / 1000,
				    (COMMIT_PARK_MS % 1000) * 1000 };

	cm->inflight = NULL;
	if (cm->nparked == 0 && r->wrote_rev <= st->rev) {
		TAILQ_INIT(&one);
		TAILQ_INSERT_TAIL(&one, r, entry);
		commit_answer(cm, &one);
		return;
	}
	if (cm->nparked == 0)
		evtimer_add(cm->park_timer, &tv);
	TAILQ_INSERT_TAIL(&cm->parked, r, entry);
	cm->nparked++;
}

static void	commit_next(struct commit *);

static void
commit_one_error(struct commit *cm, struct req *r,
    const struct store_err *se)
{
	buf_reset(&r->resp);
	reply_store_error(r, se);
	commit_one_done(cm, r);
}

/* The commit of cm->inflight landed, or failed (se). */
static void
commit_landed(void *arg, const struct store_err *se)
{
	struct commit		*cm = arg;
	struct store		*st = cm->md->store;
	struct req		*r = cm->inflight;
	struct store_err	 se2;
	struct timeval		 tv = { 0, 0 };

	if (se == NULL) {
		r->wrote_rev = st->commit_rev;
		if (r->wrote_rev != cm->base_rev + 1 &&
		    commit_reanswer(cm, r, &se2) != 0) {
			log_warnx("rev %llu was written, but its answer could "
			    "not be made again: %s",
			    (unsigned long long)r->wrote_rev, se2.msg);
			commit_one_error(cm, r, &se2);
		} else
			commit_one_done(cm, r);
	} else if (se->code == STORE_ERR_CONFLICT &&
	    cm->attempt < COMMIT_RETRIES_MAX) {
		/* Another daemon wrote first: again, after a pause. */
		tv.tv_usec = COMMIT_RETRY_US * cm->attempt *
		    (1 + random() % 4);
		evtimer_add(cm->retry_timer, &tv);
		return;
	} else
		commit_one_error(cm, r, se);
	commit_next(cm);
}

/*
 * The batch of cm->inflight is open, with the keys it reads fetched (or
 * could not be: se): apply the request, and send its commit.  0 if the
 * commit is out (it ends in commit_landed), -1 if the request is over.
 */
static int
commit_apply_one(struct commit *cm, const struct store_err *se)
{
	struct store		*st = cm->md->store;
	struct req		*r = cm->inflight;
	struct store_err	 se2;
	int			 wrote = 0, rc;

	if (se != NULL) {
		commit_one_error(cm, r, se);
		return (-1);
	}
	if ((rc = r->op->apply(r, st->base_rev + 1, &wrote, &se2)) != 0 ||
	    !wrote) {
		store_rollback(st);
		if (rc != 0)
			commit_one_error(cm, r, &se2);
		else
			commit_one_done(cm, r);	/* answered, nothing written */
		return (-1);
	}
	cm->base_rev = st->base_rev;
	if (store_commit_async(st, st->base_rev + 1, commit_landed, cm,
	    &se2) != 0) {
		commit_one_error(cm, r, &se2);
		return (-1);
	}
	return (0);
}

static void
commit_begun(void *arg, const struct store_err *se)
{
	struct commit	*cm = arg;

	if (commit_apply_one(cm, se) != 0)
		commit_next(cm);
}

/*
 * One attempt at cm->inflight: a batch of its own at the store's next
 * revision, opened with the keys the request reads and committed, both
 * without blocking.  0 if the attempt is out, -1 if the request is over.
 */
static int
commit_attempt(struct commit *cm)
{
	struct store		*st = cm->md->store;
	struct req		*r = cm->inflight;
	struct store_keys	 ks;
	struct store_err	 se;

	cm->attempt++;
	buf_reset(&r->resp);
	ks.n = 0;
	if (r->op->keys != NULL)
		r->op->keys(r, &ks);
	if (store_begin_async(st, &ks, commit_begun, cm, &se) != 0) {
		commit_one_error(cm, r, &se);
		return (-1);
	}
	return (0);
}

static void
commit_retry_cb(evutil_socket_t fd, short what, void *arg)
{
	struct commit	*cm = arg;

	if (commit_attempt(cm) != 0)
		commit_next(cm);
}

/*
 * A per-request store (etcd): write requests go one at a time, each a
 * batch of its own at the store's next revision, committed while the loop
 * goes on; when another writer got there first nothing was written, and
 * the request runs again, at most COMMIT_RETRIES_MAX times with a growing
 * pause.  Its events reach the watches from the store.
 */
static void
commit_next(struct commit *cm)
{
	while (cm->inflight == NULL &&
	    (cm->inflight = TAILQ_FIRST(&cm->waiting)) != NULL) {
		TAILQ_REMOVE(&cm->waiting, cm->inflight, entry);
		cm->nwaiting--;
		cm->attempt = 0;
		if (commit_attempt(cm) == 0)
			return;
	}
}

void
commit_run(struct commit *cm)
{
	struct store		*st = cm->md->store;
	struct req_queue	 batch;
	struct store_err	 se;
	struct req		*r;
	uint64_t		 cur = st->rev, prev = st->rev;
	unsigned		 n;

	if ((n = cm->queued) == 0)
		return;
	TAILQ_INIT(&batch);
	TAILQ_CONCAT(&batch, &cm->queue, entry);
	cm->queued = 0;
	event_del(cm->ev);

	if (st->backend->caps & STORE_CAP_PER_REQUEST) {
		TAILQ_CONCAT(&cm->waiting, &batch, entry);
		cm->nwaiting += n;
		commit_next(cm);
		return;
	}
	if (store_begin(st, &se) != 0)
		commit_fail(&batch, &se);
	else {
		TAILQ_FOREACH(r, &batch, entry)
			commit_apply(cm, r, &cur);
		if (cur == st->rev)
			store_rollback(st);	/* nothing was written */
		else if (store_commit(st, cur, &se) != 0)
			commit_fail(&batch, &se);
		else {
			/* Events go out once durable, before the answers. */
			watch_committed(cm->md->watch, prev, cur);
			commit_trim_history(cm);
		}
	}
	commit_answer(cm, &batch);
}
