/*
 * Waits: {"op":"wait","key":K,"version":N,"timeout_ms":T} answers the kv
 * once the key exists with version >= N, or error timeout.  A wait is a
 * request not yet answered, so nothing after it on its connection is
 * answered first.  A get or list with min_rev waits here the same way for
 * the daemon's view to reach a rev.
 *
 * Ownership: the wait list owns its waits; a connection's are dropped when
 * it closes (wait_conn_closed).
 */
#ifndef METAD_WAIT_H
#define METAD_WAIT_H

#include <stdint.h>

struct conn;
struct req;
struct store_event;
struct wait_list;

struct wait_list	*wait_create(void);
/* The wait op (a row of ops.c's table). */
void			 wait_op_wait(struct req *);
/* At exit: waits still open end unanswered (their conns closed). */
void			 wait_free(struct wait_list *);
int			 wait_any(struct wait_list *);
unsigned		 wait_count(struct wait_list *);
/* A durable event; answers the waits it satisfies. */
void			 wait_event(struct wait_list *,
			    const struct store_event *);
/*
 * Events' newest rev whose events were all delivered, told at each change
 * (a rev wait up to it goes on at once).
 */
void			 wait_set_delivered(struct wait_list *, uint64_t);
/* End answered waits, resuming their connections. */
void			 wait_sweep(struct wait_list *);
void			 wait_conn_closed(struct wait_list *, struct conn *);
/*
 * min_rev (metad-protocol(7), READS AT A REVISION): r goes on with go(r)
 * once the events up to rev are delivered (at once if they are), or answers
 * timeout after timeout_ms.
 */
void			 wait_rev(struct req *, uint64_t, uint64_t,
			    void (*)(struct req *));
/* The events up to delivered are out: start the rev waits they end. */
void			 wait_reached(struct wait_list *, uint64_t);

#endif
