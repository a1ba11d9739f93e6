#include <stdlib.h>

#include "core/events.h"
#include "log.h"
#include "metad.h"
#include "util.h"
#include "core/wait.h"
#include "core/watch.h"

/* Events read from the history at a time for live delivery. */
#define EVENTS_CHUNK	1024
/* Listeners at most (the commit is the one there is). */
#define EVENTS_LISTENERS_MAX	4

struct events {
	struct metad	*md;
	uint64_t	 delivered;	/* all events <= this handed out */
	uint64_t	 target;	/* durable, to hand out */
	uint64_t	 compact_rev;	/* the watches were told of */
	int		 reading;
	struct {
		events_listener	*fn;
		void		*arg;
	}		 listeners[EVENTS_LISTENERS_MAX];
	int		 nlisteners;
};

static void	events_read(struct events *);

/* ev->delivered is rev: the watch hub and the waits read it too. */
static void
events_set(struct events *ev, uint64_t rev)
{
	ev->delivered = rev;
	watch_set_delivered(ev->md->watch, rev);
	wait_set_delivered(ev->md->waits, rev);
}

struct events *
events_create(struct metad *md)
{
	struct events	*ev;

	ev = xcalloc(1, sizeof *ev);
	ev->md = md;
	ev->target = store_rev(md->store);
	events_set(ev, ev->target);
	ev->compact_rev = store_compact_rev(md->store);
	return (ev);
}

void
events_free(struct events *ev)
{
	free(ev);
}

void
events_listen(struct events *ev, events_listener *fn, void *arg)
{
	if (ev->nlisteners == EVENTS_LISTENERS_MAX)
		fatalx("events_listen: more than %d listeners",
		    EVENTS_LISTENERS_MAX);
	ev->listeners[ev->nlisteners].fn = fn;
	ev->listeners[ev->nlisteners].arg = arg;
	ev->nlisteners++;
}

/* Tell the listeners what was delivered. */
static void
events_tell(struct events *ev)
{
	int	 i;

	for (i = 0; i < ev->nlisteners; i++)
		ev->listeners[i].fn(ev->listeners[i].arg, ev->delivered);
}

uint64_t
events_delivered(struct events *ev)
{
	return (ev->delivered);
}

void
events_compacted(struct events *ev)
{
	uint64_t	 rev = store_compact_rev(ev->md->store);

	if (rev <= ev->compact_rev)
		return;
	ev->compact_rev = rev;
	watch_compacted(ev->md->watch, rev);
}

/*
 * The events from delivered + 1 up to the store's compact rev were
 * compacted before they could be read (store.h): the live watches owed
 * one are cancelled with compacted; waits and the parked writes go on.
 */
static void
events_lost(struct events *ev)
{
	uint64_t	 to = store_compact_rev(ev->md->store) - 1;

	if (to > ev->target)
		to = ev->target;
	log_warnx("the events of revs %llu..%llu were compacted before they "
	    "were delivered; cancelling the watches that needed them",
	    (unsigned long long)ev->delivered + 1, (unsigned long long)to);
	watch_lost(ev->md->watch, to + 1);
	events_set(ev, to);
}

static void
events_got(void *arg, long n, const struct store_event *evs, int more,
    const struct store_err *se)
{
	struct events	*ev = arg;
	struct metad	*md = ev->md;
	long		 i;

	ev->reading = 0;
	if (n < 0 && se->code == STORE_ERR_COMPACTED &&
	    store_compact_rev(md->store) > ev->delivered + 1)
		events_lost(ev);
	else if (n < 0) {
		/* Should not happen; the watches cannot go on exactly. */
		log_warnx("history of revs %llu..%llu: %s",
		    (unsigned long long)ev->delivered + 1,
		    (unsigned long long)ev->target, se->msg);
		watch_failed(md->watch);
		events_set(ev, ev->target);
	} else {
		for (i = 0; i < n; i++) {
			watch_event(md->watch, &evs[i]);
			wait_event(md->waits, &evs[i]);
		}
		if (more && n > 0 && evs[n - 1].rev < ev->target)
			events_set(ev, evs[n - 1].rev);
		else
			events_set(ev, ev->target);
	}
	watch_delivered(md->watch, ev->delivered);
	wait_sweep(md->waits);
	wait_reached(md->waits, ev->delivered);
	events_compacted(ev);
	events_tell(ev);
	events_read(ev);
}

static void
events_read(struct events *ev)
{
	if (ev->reading || ev->delivered >= ev->target)
		return;
	if (!watch_any(ev->md->watch) && !wait_any(ev->md->waits)) {
		events_set(ev, ev->target);	/* no watch or wait to tell */
		events_tell(ev);
		return;
	}
	ev->reading = 1;
	store_read_history(ev->md->store, ev->delivered + 1, EVENTS_CHUNK,
	    events_got, ev);
}

void
events_notify(void *arg, uint64_t from, uint64_t to)
{
	struct metad	*md = arg;
	struct events	*ev = md->events;

	if (ev == NULL || to <= ev->target)
		return;
	ev->target = to;
	events_read(ev);
}
