/*
 * Snapshots of the whole store (store.h).  A backend that has its own way
 * sets backend->snapshot (sqlite: SQLite's online backup API); any other is
 * read here with read_range, a page at a time, at the one revision current
 * when the snapshot started, and written by the sqlite backend's writer,
 * so that every snapshot is a metad SQLite database whatever the backend.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "store/store_backend.h"
#include "store/store_snap.h"
#include "util.h"

/* kvs a read of the generic snapshot asks for. */
#define STORE_SNAP_PAGE		1000

/* What a page read came to. */
enum store_snap_page {
	STORE_SNAP_MORE,
	STORE_SNAP_FINISHED,
	STORE_SNAP_FAILED,
	STORE_SNAP_PENDING		/* not answered yet */
};

struct store_snap_generic {
	struct store_sqlite_writer	*w;
	char				*after;		/* last key copied */
	size_t				 after_len;
	int				 in_step;	/* step() is running */
	enum store_snap_page		 page;		/* answered in it */
	struct store_err		 err;
};

static void
store_snap_step_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store_snapshot	*snap = arg;

	snap->step(snap);
}

/*
 * A timer of 0 rather than event_active(): libevent runs events activated
 * during a turn in that same turn, and the loop would serve nothing else
 * until the snapshot is done.  A timer fires after the next poll.
 */
void
store_snapshot_again(struct store_snapshot *snap)
{
	struct timeval	 now = { 0, 0 };

	evtimer_add(snap->step_ev, &now);
}

void
store_snapshot_end(struct store_snapshot *snap, const struct store_err *err)
{
	if (!snap->cancelled)
		snap->done(snap->arg, snap->rev, err);
	if (snap->cleanup != NULL)
		snap->cleanup(snap);
	event_free(snap->step_ev);
	free(snap->path);
	free(snap);
}

static void
store_snap_generic_cleanup(struct store_snapshot *snap)
{
	struct store_snap_generic	*g = snap->impl;

	store_sqlite_writer_free(g->w);
	free(g->after);
	free(g);
}

/* Writes one page's kvs; the last page finishes the database. */
static enum store_snap_page
store_snap_generic_take(struct store_snapshot *snap, long n,
    const struct store_kv *kvs, int more, const struct store_err *se)
{
	struct store_snap_generic	*g = snap->impl;
	long				 i;

	if (n < 0) {
		g->err = *se;
		return (STORE_SNAP_FAILED);
	}
	for (i = 0; i < n; i++) {
		if (store_sqlite_writer_add(g->w, &kvs[i], &g->err) != 0)
			return (STORE_SNAP_FAILED);
	}
	if (n > 0) {
		free(g->after);
		g->after = xmemdup(kvs[n - 1].key, kvs[n - 1].key_len);
		g->after_len = kvs[n - 1].key_len;
	}
	if (more && n > 0)
		return (STORE_SNAP_MORE);
	if (store_sqlite_writer_finish(g->w, snap->rev, &g->err) != 0)
		return (STORE_SNAP_FAILED);
	return (STORE_SNAP_FINISHED);
}

static void
store_snap_generic_next(struct store_snapshot *snap, enum store_snap_page p)
{
	struct store_snap_generic	*g = snap->impl;

	if (snap->cancelled || p == STORE_SNAP_FINISHED)
		store_snapshot_end(snap, NULL);
	else if (p == STORE_SNAP_FAILED)
		store_snapshot_end(snap, &g->err);
	else
		store_snapshot_again(snap);
}

static void
store_snap_generic_page(void *arg, long n, const struct store_kv *kvs,
    int more, const struct store_err *se)
{
	struct store_snapshot		*snap = arg;
	struct store_snap_generic	*g = snap->impl;
	enum store_snap_page		 p = STORE_SNAP_FAILED;

	snap->reading = 0;
	if (!snap->cancelled)
		p = store_snap_generic_take(snap, n, kvs, more, se);
	if (g->in_step)
		g->page = p;	/* step() goes on */
	else
		store_snap_generic_next(snap, p);
}

/*
 * One read after another, each at the snapshot's rev: the pages are one
 * state however many turns of the loop they take.  A local store answers
 * at once, and step() goes on in its loop; a remote one answers later,
 * and the page callback schedules the next step.
 */
static void
store_snap_generic_step(struct store_snapshot *snap)
{
	struct store_snap_generic	*g = snap->impl;
	struct store_range		 r;

	g->in_step = 1;
	do {
		g->page = STORE_SNAP_PENDING;
		memset(&r, 0, sizeof r);
		r.prefix = "";
		r.after = g->after;
		r.after_len = g->after_len;
		r.limit = STORE_SNAP_PAGE;
		r.rev = snap->rev;
		snap->reading = 1;
		store_read_range(snap->store, &r, store_snap_generic_page,
		    snap);
	} while (g->page == STORE_SNAP_MORE);
	g->in_step = 0;
	if (g->page != STORE_SNAP_PENDING)
		store_snap_generic_next(snap, g->page);
}

static int
store_snap_generic(struct store_snapshot *snap, struct store_err *err)
{
	struct store_snap_generic	*g;

	g = xcalloc(1, sizeof *g);
	if ((g->w = store_sqlite_writer_open(snap->path, err)) == NULL) {
		free(g);
		return (-1);
	}
	snap->impl = g;
	snap->rev = store_read_rev(snap->store);
	snap->step = store_snap_generic_step;
	snap->cleanup = store_snap_generic_cleanup;
	store_snapshot_again(snap);
	return (0);
}

struct store_snapshot *
store_snapshot(struct store *s, const char *path, store_snapshot_done done,
    void *arg, struct store_err *err)
{
	struct store_snapshot	*snap;
	int			 rc;

	if (s->opts.base == NULL) {
		store_err_set(err, STORE_ERR_INTERNAL, "snapshot: no event "
		    "loop");
		return (NULL);
	}
	snap = xcalloc(1, sizeof *snap);
	snap->store = s;
	snap->path = xstrdup(path);
	snap->done = done;
	snap->arg = arg;
	snap->step_ev = event_new(s->opts.base, -1, 0, store_snap_step_cb,
	    snap);
	if (snap->step_ev == NULL)
		fatalx("event_new");
	if (s->backend->snapshot != NULL)
		rc = s->backend->snapshot(snap, err);
	else
		rc = store_snap_generic(snap, err);
	if (rc != 0) {
		event_free(snap->step_ev);
		free(snap->path);
		free(snap);
		return (NULL);
	}
	return (snap);
}

/* done is not called; a read under way ends it when it is answered. */
void
store_snapshot_cancel(struct store_snapshot *snap)
{
	snap->cancelled = 1;
	if (!snap->reading)
		store_snapshot_end(snap, NULL);
}
