/*
 * What metad tells its service manager on $NOTIFY_SOCKET (sd_notify(3);
 * nothing when it is not set): READY=1 once it serves; STATUS= lines
 * ("STATUS=serving, rev 812, 3 connections") at start and when they
 * change, at most once a second; WATCHDOG=1 from the event loop every
 * half of $WATCHDOG_USEC (WatchdogSec=), so a loop that is stuck stops
 * pinging and systemd restarts it; STOPPING=1 at the drain.
 */
#ifndef METAD_SERVICE_H
#define METAD_SERVICE_H

struct metad;

/* metad serves: READY=1, the first STATUS=, the timers. */
struct service	*service_start(struct metad *);
/* SIGTERM: STOPPING=1 and STATUS=stopping; the timers end. */
void		 service_stopping(struct service *);
void		 service_free(struct service *);

#endif
