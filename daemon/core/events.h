/*
 * Events: the one owner of delivering the store's events to watches and
 * waits.  The store says (opts.notify) that revs (from, to] are durable;
 * events reads them from the store's history, a chunk at a time, hands
 * each event to the live watches and to the waits, and then tells its
 * listeners (events_listen: the commit, which answers the writes whose
 * events are out) the newest rev delivered.  It also tells the watches of
 * compaction (the live ones too when events were compacted before they
 * could be delivered).  A closed or drained connection tells its watches
 * and waits itself (watch_peer_closed, wait_conn_closed).
 */
#ifndef METAD_EVENTS_H
#define METAD_EVENTS_H

#include <stdint.h>

struct events;
struct metad;

/* A listener: the events of every rev up to delivered are out. */
typedef void	 events_listener(void *arg, uint64_t delivered);

struct events	*events_create(struct metad *);
void		 events_free(struct events *);
/* Call fn(arg, delivered) after each delivery, in the order listened. */
void		 events_listen(struct events *, events_listener *fn, void *arg);
/* store_options.notify: events of revs (from, to] are in the history. */
void		 events_notify(void *, uint64_t from, uint64_t to);
/* The newest rev whose events were all delivered. */
uint64_t	 events_delivered(struct events *);
/* The store's compact rev may have risen: cancel who needed what went. */
void		 events_compacted(struct events *);

#endif
