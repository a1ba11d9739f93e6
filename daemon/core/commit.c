#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "core/commit.h"
#include "core/events.h"
#include "core/idem.h"
#include "log.h"
#include "metad.h"
#include "metrics/metrics.h"
#include "core/reply.h"
#include "core/req.h"

#define COMMIT_RETRIES_MAX	20
#define COMMIT_RETRY_US		500
/* A written request waits at most this long for its events. */
#define COMMIT_PARK_MS		2000

/* A batch out: being read, applied, or committed. */
struct cbatch {
	struct commit		*cm;
	TAILQ_ENTRY(cbatch)	 entry;
	struct req_queue	 reqs;
	unsigned		 n;
	unsigned		 attempt;	/* a lost race runs it again */
	uint64_t		 base_rev, last_rev;	/* it read at, wrote to */
	unsigned		 writers;
	struct store_keys	 ks;		/* its requests' keys */
	struct event		*retry_timer;
};

struct commit {
	struct metad		*md;
	struct req_queue	 queue;		/* not started */
	unsigned		 queued;
	struct event		*ev;
	TAILQ_HEAD(, cbatch)	 out;
	unsigned		 nout, nreqs_out;
	unsigned		 nforwarded;	/* core/forward.c's, out */
	unsigned		 gen;		/* of commit_run's scans */
	int			 closing;	/* freed when nothing is out */
	/* Committed, answered once their events were delivered. */
	struct req_queue	 parked;
	unsigned		 nparked;
	struct event		*park_timer;
};

static void	commit_run(struct commit *);

static void	commit_begin(struct cbatch *);

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

/* Wake the park timer for the oldest parked request. */
static void
commit_park_arm(struct commit *cm)
{
	struct req	*r = TAILQ_FIRST(&cm->parked);
	struct timeval	 tv;
	uint64_t	 now = (uint64_t)mono_ms(), due;

	if (r == NULL) {
		event_del(cm->park_timer);
		return;
	}
	due = r->parked_ms + COMMIT_PARK_MS;
	due = due > now ? due - now : 0;
	tv.tv_sec = (time_t)(due / 1000);
	tv.tv_usec = (suseconds_t)(due % 1000) * 1000;
	evtimer_add(cm->park_timer, &tv);
}

/*
 * Answer the parked requests whose write is at or below rev (UINT64_MAX:
 * all of them); batches out together land in any order, so the list is
 * in park order, not rev order.  Their connections answer in request
 * order whatever order they end in.
 */
static void
commit_unpark(struct commit *cm, uint64_t rev)
{
	struct req	*r, *next;
	struct req	*head = TAILQ_FIRST(&cm->parked);

	for (r = head; r != NULL; r = next) {
		next = TAILQ_NEXT(r, entry);
		if (r->wrote_rev > rev || r->replay_rev > rev)
			continue;
		TAILQ_REMOVE(&cm->parked, r, entry);
		cm->nparked--;
		req_done(r);
	}
	if (TAILQ_FIRST(&cm->parked) != head || cm->nparked == 0)
		commit_park_arm(cm);
}

void
commit_delivered(void *arg, uint64_t delivered)
{
	commit_unpark(arg, delivered);
}

static void
commit_park_cb(evutil_socket_t fd, short what, void *arg)
{
	struct commit	*cm = arg;
	struct req	*r;
	uint64_t	 now = (uint64_t)mono_ms();

	while ((r = TAILQ_FIRST(&cm->parked)) != NULL &&
	    r->parked_ms + COMMIT_PARK_MS <= now) {
		log_warnx("the events of rev %llu did not come back from the "
		    "store in %d ms; answering anyway",
		    (unsigned long long)r->wrote_rev, COMMIT_PARK_MS);
		TAILQ_REMOVE(&cm->parked, r, entry);
		cm->nparked--;
		req_done(r);
	}
	commit_park_arm(cm);
}

struct commit *
commit_create(struct metad *md)
{
	struct commit	*cm;

	cm = xcalloc(1, sizeof *cm);
	cm->md = md;
	TAILQ_INIT(&cm->queue);
	TAILQ_INIT(&cm->out);
	TAILQ_INIT(&cm->parked);
	if ((cm->ev = event_new(md->base, -1, 0, commit_cb, cm)) == NULL ||
	    (cm->park_timer = evtimer_new(md->base, commit_park_cb,
	    cm)) == NULL)
		fatalx("event_new");
	return (cm);
}

static void
commit_destroy(struct commit *cm)
{
	event_free(cm->ev);
	event_free(cm->park_timer);
	free(cm);
}

/*
 * At exit.  Batches still out are the store's until it calls back (it
 * does when it closes): they end then, and the commit with the last.
 */
void
commit_free(struct commit *cm)
{
	struct req	*r;

	if (cm == NULL)
		return;
	commit_unpark(cm, UINT64_MAX);
	/* No remote write is started now that nobody will be answered for. */
	while ((r = TAILQ_FIRST(&cm->queue)) != NULL) {
		TAILQ_REMOVE(&cm->queue, r, entry);
		req_done(r);
	}
	cm->queued = 0;
	event_del(cm->ev);
	if (cm->nout > 0 || cm->nforwarded > 0)
		cm->closing = 1;
	else
		commit_destroy(cm);
}

unsigned
commit_queued(struct commit *cm)
{
	return (cm->queued + cm->nreqs_out + cm->nparked + cm->nforwarded);
}

unsigned
commit_out(struct commit *cm)
{
	return (cm->nout + cm->nparked + cm->nforwarded);
}

void
commit_forwarding(struct commit *cm)
{
	cm->nforwarded++;
}

void
commit_forwarded(struct commit *cm, struct req *r)
{
	cm->nforwarded--;
	if (cm->closing) {
		req_done(r);
		if (cm->nout == 0 && cm->nforwarded == 0)
			commit_destroy(cm);
		return;
	}
	if (r->wrote_rev <= events_delivered(cm->md->events)) {
		req_done(r);
		return;
	}
	r->parked_ms = (uint64_t)mono_ms();
	TAILQ_INSERT_TAIL(&cm->parked, r, entry);
	if (cm->nparked++ == 0)
		commit_park_arm(cm);
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
	if (cm->queued++ == 0)
		event_active(cm->ev, 0, 0);
}

static void
commit_batch_free(struct cbatch *b)
{
	struct commit	*cm = b->cm;

	TAILQ_REMOVE(&cm->out, b, entry);
	cm->nout--;
	cm->nreqs_out -= b->n;
	event_free(b->retry_timer);
	free(b);
}

/*
 * The batch is over: park each request until the events of its write were
 * delivered (at once if they were, or if it wrote nothing), then go on
 * with the next batches.
 */
static void
commit_end(struct cbatch *b)
{
	struct commit	*cm = b->cm;
	struct req	*r;
	uint64_t	 now = (uint64_t)mono_ms();

	while ((r = TAILQ_FIRST(&b->reqs)) != NULL) {
		TAILQ_REMOVE(&b->reqs, r, entry);
		if (r->order != NULL)	/* NULL: the daemon's own (a revoke) */
			r->order->writes_out--;
		if (cm->closing) {
			req_done(r);
			continue;
		}
		r->parked_ms = now;
		TAILQ_INSERT_TAIL(&cm->parked, r, entry);
		if (cm->nparked++ == 0)
			commit_park_arm(cm);
	}
	commit_batch_free(b);
	if (cm->closing) {
		if (cm->nout == 0 && cm->nforwarded == 0)
			commit_destroy(cm);
		return;
	}
	events_compacted(cm->md->events);
	commit_unpark(cm, events_delivered(cm->md->events));
	if (cm->queued > 0)
		event_active(cm->ev, 0, 0);
}

/* The batch could not be committed: every request gets the error. */
static void
commit_fail(struct cbatch *b, const struct store_err *se)
{
	struct req	*r;

	log_warnx("commit failed: %s", se->msg);
	TAILQ_FOREACH(r, &b->reqs, entry) {
		reply_store_error(r, se);
		r->wrote_rev = r->replay_rev = 0;
	}
	commit_end(b);
}

/*
 * Apply one request at the next rev; answers it whatever happens.  One
 * carrying a token is answered from its record if it has one, else
 * applied and its answer recorded with it (core/idem.h).
 */
static void
commit_apply(struct cbatch *b, struct req *r)
{
	struct store		*st = b->cm->md->store;
	struct store_err	 se;
	int			 wrote = 0, mark, rc;

	buf_reset(&r->resp);
	r->wrote_rev = r->replay_rev = 0;
	if (r->idem != NULL && (rc = idem_replay(r, st, &se)) != 0) {
		if (rc < 0)
			reply_store_error(r, &se);
		return;
	}
	mark = !(r->op->flags & OP_ONE_WRITE) || r->idem != NULL;
	if (mark && store_mark(st, &se) != 0) {
		reply_store_error(r, &se);
		return;
	}
	if (r->op->apply(r, b->last_rev + 1, &wrote, &se) != 0 ||
	    (r->idem != NULL && idem_record(r, st, wrote ? b->last_rev + 1 :
	    0, &se) != 0)) {
		reply_store_error(r, &se);
		if (mark && store_undo(st, &se) != 0)
			log_warnx("undo: %s", se.msg);
		return;
	}
	if (wrote) {
		r->wrote_rev = ++b->last_rev;
		b->writers++;
	}
}

/*
 * The (one) writing request's commit landed elsewhere than planned (a
 * writer outside metad, or other batches out with it, moved the store), or
 * the store asked: run it again on the state it was decided on, to answer
 * with the revisions its write really has.  Returns it, or NULL if its
 * answer could not be made again (it is answered with the error).
 */
static struct req *
commit_reanswer(struct cbatch *b)
{
	struct store		*st = b->cm->md->store;
	struct store_err	 se;
	struct req		*r;
	int			 wrote = 0;

	TAILQ_FOREACH(r, &b->reqs, entry) {
		if (r->wrote_rev != 0)
			break;
	}
	log_debug("rev %llu planned, landed at %llu",
	    (unsigned long long)b->last_rev,
	    (unsigned long long)store_commit_rev(st));
	r->wrote_rev = store_commit_rev(st);
	buf_reset(&r->resp);
	if (store_reopen(st, b->base_rev, &se) != 0 ||
	    r->op->apply(r, r->wrote_rev, &wrote, &se) != 0) {
		log_warnx("rev %llu was written, but its answer could not be "
		    "made again: %s", (unsigned long long)r->wrote_rev,
		    se.msg);
		buf_reset(&r->resp);
		reply_store_error(r, &se);
		r = NULL;
	}
	store_rollback(st);
	return (r);
}

/* The writer's record was fixed (idem_fix()), or could not be. */
static void
commit_fixed(void *arg, const struct store_err *se)
{
	if (se != NULL)
		log_warnx("the answer of a write with an idem token could not "
		    "be recorded where it landed: %s", se->msg);
	commit_end(arg);
}

static void
commit_landed(void *arg, const struct store_err *se)
{
	struct cbatch	*b = arg;
	struct store	*st = b->cm->md->store;
	struct timeval	 tv = { 0, 0 };

	if (se != NULL && se->code == STORE_ERR_CONFLICT &&
	    b->attempt < COMMIT_RETRIES_MAX && !b->cm->closing) {
		/* Another writer was first: again, after a pause. */
		tv.tv_usec = COMMIT_RETRY_US * b->attempt *
		    (1 + random() % 4);
		evtimer_add(b->retry_timer, &tv);
		return;
	}
	if (se != NULL) {
		commit_fail(b, se);
		return;
	}
	b->cm->md->metrics.commits++;
	metrics_hist_observe(&b->cm->md->metrics.batch_size, (double)b->n);
	if (b->writers == 1 && (store_commit_rev(st) != b->last_rev ||
	    store_answer_again(st)) &&
	    idem_fix(commit_reanswer(b), st, commit_fixed, b))
		return;
	commit_end(b);
}

static void
commit_begun(void *arg, const struct store_err *se)
{
	struct cbatch	*b = arg;
	struct store	*st = b->cm->md->store;
	struct req	*r;

	if (se != NULL) {
		commit_fail(b, se);
		return;
	}
	b->base_rev = b->last_rev = store_base_rev(st);
	b->writers = 0;
	TAILQ_FOREACH(r, &b->reqs, entry)
		commit_apply(b, r);
	store_commit(st, b->last_rev, commit_landed, b);
}

/* One attempt at the batch: open it with the keys its requests read. */
static void
commit_begin(struct cbatch *b)
{
	b->attempt++;
	store_begin(b->cm->md->store, &b->ks, commit_begun, b);
}

static int
commit_keys_meet(const struct store_keys *a, const struct store_keys *b)
{
	size_t	 i, j;

	for (i = 0; i < a->n; i++) {
		for (j = 0; j < b->n; j++) {
			if (a->k[i].len == b->k[j].len &&
			    memcmp(a->k[i].key, b->k[j].key, a->k[i].len) == 0)
				return (1);
		}
	}
	return (0);
}

/* May r join the batch being made: nothing before it must land first? */
static int
commit_may_start(struct commit *cm, struct req *r, struct store_keys *ks)
{
	struct cbatch	*b;
	size_t		 i;

	ks->n = 0;
	ks->rkey = NULL;
	if (store_lands_in_order(cm->md->store))
		return (1);	/* it lands behind the batches out, on them */
	if (r->order != NULL && (r->order->gen == cm->gen ||
	    r->order->writes_out > 0))
		return (0);
	if (r->op->keys != NULL)
		r->op->keys(r, ks);
	/* A range (a range delete's) is the only batch out: it has no keys. */
	if (ks->rkey != NULL && !TAILQ_EMPTY(&cm->out))
		return (0);
	if (r->idem != NULL) {
		/* Its answer is recorded as made: no key blind (store.h). */
		for (i = 0; i < ks->n; i++)
			ks->k[i].blind = 0;
		store_keys_add_idem(ks, r->idem_name, r->idem_name_len);
	}
	TAILQ_FOREACH(b, &cm->out, entry) {
		if (b->ks.rkey != NULL || commit_keys_meet(ks, &b->ks))
			return (0);
	}
	return (1);
}

/*
 * Start batches while the store takes more out.  A request joins one
 * unless a write of its connection is out or was passed over (its writes
 * land in the order sent), or a batch out names one of its keys (it waits
 * for it: it would only lose the race).  With one batch out at a time,
 * every queued request joins it.
 */
static void
commit_run(struct commit *cm)
{
	unsigned			 max = store_batch_max(cm->md->store);
	unsigned			 maxout =
					    store_batches_out(cm->md->store);
	struct store_keys		 ks;
	struct cbatch			*b;
	struct req			*r, *next;
	size_t				 i;

	while (cm->nout < maxout && cm->queued > 0 && !cm->closing) {
		cm->gen++;
		b = NULL;
		for (r = TAILQ_FIRST(&cm->queue); r != NULL; r = next) {
			next = TAILQ_NEXT(r, entry);
			if (!commit_may_start(cm, r, &ks) ||
			    (ks.rkey != NULL && b != NULL)) {
				if (r->order != NULL)
					r->order->gen = cm->gen;
				continue;
			}
			if (b == NULL) {
				b = xcalloc(1, sizeof *b);
				b->cm = cm;
				TAILQ_INIT(&b->reqs);
			}
			TAILQ_REMOVE(&cm->queue, r, entry);
			cm->queued--;
			TAILQ_INSERT_TAIL(&b->reqs, r, entry);
			b->n++;
			for (i = 0; i < ks.n; i++) {
				if (ks.k[i].idem)
					store_keys_add_idem(&b->ks,
					    ks.k[i].key, ks.k[i].len);
				else
					store_keys_add_as(&b->ks, ks.k[i].key,
					    ks.k[i].len, ks.k[i].blind);
			}
			if (ks.rkey != NULL) {
				b->ks.rkey = ks.rkey;
				b->ks.rkey_len = ks.rkey_len;
				b->ks.rend = ks.rend;
				b->ks.rend_len = ks.rend_len;
				break;	/* alone in its batch */
			}
			if (max != 0 && b->n >= max)
				break;
		}
		if (b == NULL)
			break;
		if ((b->retry_timer = evtimer_new(cm->md->base,
		    commit_retry_cb, b)) == NULL)
			fatalx("evtimer_new");
		TAILQ_FOREACH(r, &b->reqs, entry) {
			if (r->order != NULL)
				r->order->writes_out++;
		}
		TAILQ_INSERT_TAIL(&cm->out, b, entry);
		cm->nout++;
		cm->nreqs_out += b->n;
		commit_begin(b);
	}
}
