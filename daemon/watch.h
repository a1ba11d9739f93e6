/*
 * The watch hub: watches, waits, and the history they replay.
 *
 * A watch on a key or a prefix delivers every change at rev >= its from_rev,
 * in (rev, seq) order, exactly once.  It first catches up from the store's
 * history, a bounded chunk at a time (never more than the connection's
 * output cap), then turns live: watch_committed() hands it each batch after
 * the batch is durable.  Events never split a revision across a pause.
 *
 * A connection whose unsent output passes --max-pending-bytes when a live
 * event is due has all its watches cancelled, each with the rev to resume
 * from ("next_rev"): nothing is lost, and memory stays bounded.
 *
 * Ownership: the hub owns watches; a connection's are freed when it closes
 * (watch_conn_closed).
 */
#ifndef METAD_WATCH_H
#define METAD_WATCH_H

#include <stdint.h>

struct conn;
struct metad;
struct req;
struct watch_hub;

struct watch_hub	*watch_hub_create(struct metad *);
void			 watch_hub_free(struct watch_hub *);

/* Events of revs (from, to] were committed. */
void	watch_committed(struct watch_hub *, uint64_t from, uint64_t to);
/* History below rev is gone: cancel watches that still needed it. */
void	watch_compacted(struct watch_hub *, uint64_t rev);
/* The connection's output drained: continue catching up. */
void	watch_conn_drained(struct conn *);
void	watch_conn_closed(struct conn *);

/* Ops (read ops in the dispatch table). */
void	watch_op_watch(struct req *);
void	watch_op_unwatch(struct req *);
void	watch_op_compact(struct req *);

#endif
