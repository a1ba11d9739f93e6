#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "metad.h"
#include "service.h"
#include "store/store.h"
#include "systemd.h"
#include "util.h"

#define SERVICE_STATUS_MS	1000

struct service {
	struct metad	*md;
	struct event	*status_ev;
	struct event	*watchdog_ev;
	char		 last[128];	/* the STATUS= line last sent */
};

static void
service_notify(const char *state)
{
	if (systemd_notify(state) != 0)
		log_warn("NOTIFY_SOCKET: %s", state);
}

/* The STATUS= line now; 1 if it says something new (kept as sent). */
static int
service_status(struct service *sv)
{
	char	 line[sizeof sv->last];

	snprintf(line, sizeof line, "STATUS=serving, rev %llu, %u "
	    "connection%s", (unsigned long long)store_rev(sv->md->store),
	    sv->md->nconns, sv->md->nconns == 1 ? "" : "s");
	if (strcmp(line, sv->last) == 0)
		return (0);
	memcpy(sv->last, line, sizeof line);
	return (1);
}

static void
service_status_cb(evutil_socket_t fd, short what, void *arg)
{
	struct service	*sv = arg;

	if (service_status(sv))
		service_notify(sv->last);
}

static void
service_watchdog_cb(evutil_socket_t fd, short what, void *arg)
{
	service_notify("WATCHDOG=1");
}

/* A persistent timer every ms milliseconds. */
static struct event *
service_timer(struct metad *md, long ms, event_callback_fn cb, void *arg)
{
	struct timeval	 tv = { ms / 1000, (ms % 1000) * 1000 };
	struct event	*ev;

	if ((ev = event_new(md->base, -1, EV_PERSIST, cb, arg)) == NULL ||
	    event_add(ev, &tv) != 0)
		fatalx("event_new");
	return (ev);
}

struct service *
service_start(struct metad *md)
{
	struct service	*sv = xcalloc(1, sizeof *sv);
	char		 first[sizeof sv->last + 16];
	long		 usec;

	sv->md = md;
	if (getenv("NOTIFY_SOCKET") == NULL)
		return (sv);
	/* One datagram: READY=1 comes first, with what it serves. */
	service_status(sv);
	snprintf(first, sizeof first, "READY=1\n%s", sv->last);
	service_notify(first);
	sv->status_ev = service_timer(md, SERVICE_STATUS_MS,
	    service_status_cb, sv);
	if ((usec = systemd_watchdog_usec()) > 0) {
		service_notify("WATCHDOG=1");
		sv->watchdog_ev = service_timer(md, usec / 2000 > 0 ?
		    usec / 2000 : 1, service_watchdog_cb, sv);
	}
	return (sv);
}

static void
service_timers_free(struct service *sv)
{
	if (sv->status_ev != NULL)
		event_free(sv->status_ev);
	if (sv->watchdog_ev != NULL)
		event_free(sv->watchdog_ev);
	sv->status_ev = sv->watchdog_ev = NULL;
}

void
service_stopping(struct service *sv)
{
	service_timers_free(sv);
	if (getenv("NOTIFY_SOCKET") == NULL)
		return;
	service_notify("STOPPING=1\nSTATUS=stopping");
}

void
service_free(struct service *sv)
{
	if (sv == NULL)
		return;
	service_timers_free(sv);
	free(sv);
}
