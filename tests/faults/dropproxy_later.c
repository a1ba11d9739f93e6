/*
 * dropproxy -d MS (dropproxy.c): each piece of the answer to a /v3/watch
 * request waits MS ms in its request's later list, then is relayed, in
 * order; the answer's end (proxy_up_done, held) follows the last piece.
 * One timer per request, armed for the first piece waiting: every piece
 * waits as long, so they are due in the order they came.
 */
#include <sys/queue.h>
#include <sys/time.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "dropproxy.h"

/* Drop the pieces still waiting (the client is gone or closed). */
void
proxy_later_clear(struct proxy_req *pr)
{
	struct proxy_later	*pl;

	while ((pl = TAILQ_FIRST(&pr->later)) != NULL) {
		TAILQ_REMOVE(&pr->later, pl, entry);
		evbuffer_free(pl->buf);
		free(pl);
	}
	pr->later_bytes = 0;
	if (pr->later_ev != NULL)
		evtimer_del(pr->later_ev);
}

/* Not from the later event's own callback. */
void
proxy_later_free(struct proxy_req *pr)
{
	proxy_later_clear(pr);
	if (pr->later_ev != NULL)
		event_free(pr->later_ev);
	pr->later_ev = NULL;
}

static void
proxy_now(struct timespec *ts)
{
	if (clock_gettime(CLOCK_MONOTONIC, ts) == -1) {
		perror("dropproxy: clock_gettime");
		exit(1);
	}
}

/* Arm the later event for the first piece waiting (if any). */
static void
proxy_later_arm(struct proxy_req *pr)
{
	struct proxy_later	*pl;
	struct timespec		 now;
	struct timeval		 tv = { 0, 0 };
	long long		 ns;

	if ((pl = TAILQ_FIRST(&pr->later)) == NULL)
		return;
	proxy_now(&now);
	ns = (long long)(pl->due.tv_sec - now.tv_sec) * 1000000000LL +
	    (pl->due.tv_nsec - now.tv_nsec);
	if (ns > 0) {
		tv.tv_sec = (time_t)(ns / 1000000000LL);
		tv.tv_usec = (suseconds_t)(ns % 1000000000LL / 1000);
	}
	evtimer_add(pr->later_ev, &tv);
}

/* Relay the pieces whose time came; then the end, if it came too. */
static void
proxy_later_fire(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_req	*pr = arg;
	struct proxy_later	*pl;
	struct timespec		 now;

	proxy_now(&now);
	while ((pl = TAILQ_FIRST(&pr->later)) != NULL &&
	    (pl->due.tv_sec < now.tv_sec || (pl->due.tv_sec == now.tv_sec &&
	    pl->due.tv_nsec <= now.tv_nsec))) {
		TAILQ_REMOVE(&pr->later, pl, entry);
		pr->later_bytes -= evbuffer_get_length(pl->buf);
		evhttp_send_reply_chunk(pr->client, pl->buf);
		evbuffer_free(pl->buf);
		free(pl);
		if (proxy_client_behind(pr))
			return;
	}
	if (!TAILQ_EMPTY(&pr->later))
		proxy_later_arm(pr);
	else if (pr->held)
		proxy_reply_end(pr, NULL, pr->held_ok);
}

/* Keep a piece of a delayed answer for px->delay_ms. */
void
proxy_later_add(struct proxy_req *pr, struct evbuffer *in)
{
	struct proxy_later	*pl;
	long			 ms = pr->px->delay_ms;

	if ((pl = calloc(1, sizeof *pl)) == NULL ||
	    (pl->buf = evbuffer_new()) == NULL) {
		fprintf(stderr, "dropproxy: out of memory\n");
		exit(1);
	}
	proxy_now(&pl->due);
	pl->due.tv_sec += ms / 1000;
	pl->due.tv_nsec += (ms % 1000) * 1000000L;
	if (pl->due.tv_nsec >= 1000000000L) {
		pl->due.tv_sec++;
		pl->due.tv_nsec -= 1000000000L;
	}
	evbuffer_add_buffer(pl->buf, in);
	pr->later_bytes += evbuffer_get_length(pl->buf);
	TAILQ_INSERT_TAIL(&pr->later, pl, entry);
	if (TAILQ_FIRST(&pr->later) == pl)
		proxy_later_arm(pr);
}

/* pr's answer is to be delayed: its timer.  -1: out of memory. */
int
proxy_later_init(struct proxy_req *pr)
{
	pr->later_ev = evtimer_new(pr->px->base, proxy_later_fire, pr);
	return (pr->later_ev == NULL ? -1 : 0);
}
