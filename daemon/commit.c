#include <stdlib.h>
#include <unistd.h>

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

struct commit {
	struct metad		*md;
	struct req_queue	 queue;
	unsigned		 queued;
	struct event		*ev;
};

static void
commit_cb(evutil_socket_t fd, short what, void *arg)
{
	commit_run(arg);
}

struct commit *
commit_create(struct metad *md)
{
	struct commit	*cm;

	cm = xcalloc(1, sizeof *cm);
	cm->md = md;
	TAILQ_INIT(&cm->queue);
	if ((cm->ev = event_new(md->base, -1, 0, commit_cb, cm)) == NULL)
		fatalx("event_new");
	return (cm);
}

void
commit_free(struct commit *cm)
{
	if (cm == NULL)
		return;
	while (cm->queued > 0)
		commit_run(cm);
	event_free(cm->ev);
	free(cm);
}

unsigned
commit_queued(struct commit *cm)
{
	return (cm->queued);
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
 * A per-request store (etcd): each write request is a batch of its own at
 * the store's next revision; when another writer got there first nothing
 * was written, so the request runs again, at most COMMIT_RETRIES_MAX times
 * with a growing pause.  Its events reach the watches from the store.
 */
static void
commit_one(struct commit *cm, struct req *r)
{
	struct store		*st = cm->md->store;
	struct store_err	 se;
	unsigned		 attempt;
	int			 wrote, rc;

	for (attempt = 1;; attempt++) {
		buf_reset(&r->resp);
		if (store_begin(st, &se) != 0)
			break;
		wrote = 0;
		if ((rc = r->op->apply(r, st->base_rev + 1, &wrote, &se)) != 0 ||
		    !wrote) {
			store_rollback(st);
			if (rc == 0)
				return;		/* answered, nothing written */
			break;
		}
		if (store_commit(st, st->base_rev + 1, &se) == 0)
			return;
		if (se.code != STORE_ERR_CONFLICT ||
		    attempt == COMMIT_RETRIES_MAX)
			break;
		usleep(COMMIT_RETRY_US * attempt * (1 + random() % 4));
	}
	buf_reset(&r->resp);
	reply_store_error(r, &se);
}

static void
commit_run_each(struct commit *cm, struct req_queue *batch)
{
	struct req	*r;

	TAILQ_FOREACH(r, batch, entry)
		commit_one(cm, r);
}

void
commit_run(struct commit *cm)
{
	struct store		*st = cm->md->store;
	struct req_queue	 batch;
	struct store_err	 se;
	struct req		*r;
	uint64_t		 cur = st->rev, prev = st->rev;

	if (cm->queued == 0)
		return;
	TAILQ_INIT(&batch);
	TAILQ_CONCAT(&batch, &cm->queue, entry);
	cm->queued = 0;
	event_del(cm->ev);

	if (st->backend->caps & STORE_CAP_PER_REQUEST)
		commit_run_each(cm, &batch);
	else if (store_begin(st, &se) != 0)
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
