#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "metad.h"
#include "core/req.h"
#include "core/reply.h"
#include "core/wait.h"

struct waiter {
	struct req		*r;		/* until answered */
	char			*key;		/* NULL: a wait for a rev */
	size_t			 key_len;
	uint64_t		 version;
	uint64_t		 rev;		/* a rev wait: until delivered */
	void			 (*go)(struct req *);
	uint64_t		 timeout_ms;
	struct event		*timer;
	int			 reading;	/* the first read is out */
	int			 answered;	/* r->resp is the answer */
	TAILQ_ENTRY(waiter)	 entry;
};

struct wait_list {
	TAILQ_HEAD(, waiter)	 waiters;
	uint64_t		 delivered;	/* events' (wait_set_delivered) */
};

struct wait_list *
wait_create(void)
{
	struct wait_list	*wl;

	wl = xcalloc(1, sizeof *wl);
	TAILQ_INIT(&wl->waiters);
	return (wl);
}

void
wait_set_delivered(struct wait_list *wl, uint64_t rev)
{
	wl->delivered = rev;
}

int
wait_any(struct wait_list *wl)
{
	return (!TAILQ_EMPTY(&wl->waiters));
}

unsigned
wait_count(struct wait_list *wl)
{
	struct waiter	*wt;
	unsigned	 n = 0;

	TAILQ_FOREACH(wt, &wl->waiters, entry)
		n++;
	return (n);
}

static void
wait_free_one(struct waiter *wt)
{
	if (wt->timer != NULL)
		event_free(wt->timer);
	free(wt->key);
	free(wt);
}

/*
 * End the answered waits: they leave the list before their requests end,
 * since ending one may start other waits on its connection.  A wait whose
 * first read is still out is freed when it comes back.
 */
void
wait_sweep(struct wait_list *wl)
{
	TAILQ_HEAD(, waiter)	 done;
	struct waiter		*wt, *next;
	struct req		*r;

	TAILQ_INIT(&done);
	for (wt = TAILQ_FIRST(&wl->waiters); wt != NULL; wt = next) {
		next = TAILQ_NEXT(wt, entry);
		if (!wt->answered)
			continue;
		TAILQ_REMOVE(&wl->waiters, wt, entry);
		TAILQ_INSERT_TAIL(&done, wt, entry);
	}
	while ((wt = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, wt, entry);
		r = wt->r;
		wt->r = NULL;
		if (!wt->reading)
			wait_free_one(wt);
		req_done(r);
	}
}

/* Answer a wait: with the kv, or (kv NULL) with a timeout. */
static void
wait_answer(struct waiter *wt, const struct store_kv *kv)
{
	struct req	*r = wt->r;
	struct jw	 w;
	char		 msg[PROTO_MSG_MAX];

	if (wt->answered)
		return;
	if (kv == NULL && wt->key == NULL) {
		snprintf(msg, sizeof msg, "the daemon's view did not reach "
		    "rev %" PRIu64 " in time (it is at %" PRIu64 ")", wt->rev,
		    r->md->waits->delivered);
		reply_error(r, PROTO_TIMEOUT, msg);
	} else if (kv != NULL) {
		reply_begin(r, &w);
		reply_kv(&w, "kv", kv, 1);
		jw_name(&w, "rev");
		jw_u64(&w, store_read_rev(r->md->store));
		reply_end(r, &w);
	} else {
		snprintf(msg, sizeof msg, "key did not reach version %" PRIu64
		    " in time", wt->version);
		reply_error(r, PROTO_TIMEOUT, msg);
	}
	wt->answered = 1;
	if (wt->timer != NULL)
		event_del(wt->timer);
}

void
wait_event(struct wait_list *wl, const struct store_event *ev)
{
	struct waiter	*wt;

	if (ev->type != STORE_EVENT_PUT)
		return;
	TAILQ_FOREACH(wt, &wl->waiters, entry) {
		if (!wt->answered && wt->key != NULL &&
		    wt->key_len == ev->kv.key_len &&
		    memcmp(wt->key, ev->kv.key, wt->key_len) == 0 &&
		    ev->kv.version >= wt->version)
			wait_answer(wt, &ev->kv);
	}
}

/* The connection is gone: its waits end unanswered. */
void
wait_conn_closed(struct wait_list *wl, struct conn *c)
{
	struct waiter	*wt;

	TAILQ_FOREACH(wt, &wl->waiters, entry) {
		if (wt->r->conn == c && !wt->answered) {
			wt->answered = 1;
			event_del(wt->timer);
		}
	}
	wait_sweep(wl);
}

void
wait_free(struct wait_list *wl)
{
	struct waiter	*wt;

	TAILQ_FOREACH(wt, &wl->waiters, entry)
		wt->answered = 1;
	wait_sweep(wl);
	free(wl);
}

static void
wait_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waiter	*wt = arg;
	struct metad	*md = wt->r->md;

	wait_answer(wt, NULL);
	wait_sweep(md->waits);
}

/* The key as it was when the wait came: maybe it is there already. */
static void
wait_read_got(void *arg, long n, const struct store_kv *kv, int more,
    const struct store_err *se)
{
	struct waiter	*wt = arg;
	struct metad	*md;

	wt->reading = 0;
	if (wt->r == NULL) {		/* answered meanwhile, and ended */
		wait_free_one(wt);
		return;
	}
	md = wt->r->md;
	if (wt->answered)
		;
	else if (n < 0) {
		reply_store_error(wt->r, se);
		wt->answered = 1;
		event_del(wt->timer);
	} else if (n > 0 && kv->version >= wt->version)
		wait_answer(wt, kv);
	else if (wt->timeout_ms == 0)
		wait_answer(wt, NULL);
	wait_sweep(md->waits);
}

static int
wait_args(struct req *r, struct waiter *wt, struct proto_err *e)
{
	const char	*key;
	size_t		 klen;

	if (proto_get_key(r->json, "key", 1, &key, &klen, e) != 1)
		return (-1);
	wt->version = 1;
	if (proto_get_u64(r->json, "version", 0, &wt->version, e) == -1)
		return (-1);
	if (wt->version == 0)
		wt->version = 1;
	wt->timeout_ms = WAIT_TIMEOUT_MAX_MS;
	if (proto_get_u64(r->json, "timeout_ms", 0, &wt->timeout_ms, e) == -1)
		return (-1);
	if (wt->timeout_ms > WAIT_TIMEOUT_MAX_MS)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"timeout_ms\" "
		    "is over the limit of %llu (24 hours)",
		    (unsigned long long)WAIT_TIMEOUT_MAX_MS));
	wt->key = xmemdup(key, klen);
	wt->key_len = klen;
	return (0);
}

/*
 * The wait is registered before the key is read, so that no event between
 * the read and the registration is missed: whichever answers first wins.
 */
void
wait_op_wait(struct req *r)
{
	struct proto_err	 e;
	struct waiter		*wt;
	struct timeval		 tv;

	wt = xcalloc(1, sizeof *wt);
	if (wait_args(r, wt, &e) != 0) {
		wait_free_one(wt);
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	wt->r = r;
	wt->timer = evtimer_new(r->md->base, wait_timeout_cb, wt);
	if (wt->timer == NULL)
		fatalx("evtimer_new");
	if (wt->timeout_ms > 0) {
		tv.tv_sec = (time_t)(wt->timeout_ms / 1000);
		tv.tv_usec = (suseconds_t)(wt->timeout_ms % 1000) * 1000;
		evtimer_add(wt->timer, &tv);
	}
	TAILQ_INSERT_TAIL(&r->md->waits->waiters, wt, entry);
	wt->reading = 1;
	store_read_get(r->md->store, wt->key, wt->key_len, wait_read_got, wt);
}

/*
 * Rev waits (min_rev of get and list, metad-protocol(7), READS AT A
 * REVISION): the request goes on with go() once the events up to rev are
 * delivered, or answers timeout.
 */
void
wait_rev(struct req *r, uint64_t rev, uint64_t timeout_ms,
    void (*go)(struct req *))
{
	struct waiter	*wt;
	struct timeval	 tv;

	if (r->md->waits->delivered >= rev) {
		go(r);
		return;
	}
	wt = xcalloc(1, sizeof *wt);
	wt->r = r;
	wt->rev = rev;
	wt->go = go;
	wt->timeout_ms = timeout_ms;
	wt->timer = evtimer_new(r->md->base, wait_timeout_cb, wt);
	if (wt->timer == NULL)
		fatalx("evtimer_new");
	tv.tv_sec = (time_t)(timeout_ms / 1000);
	tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
	evtimer_add(wt->timer, &tv);
	TAILQ_INSERT_TAIL(&r->md->waits->waiters, wt, entry);
}

void
wait_reached(struct wait_list *wl, uint64_t delivered)
{
	TAILQ_HEAD(, waiter)	 ready;
	struct waiter		*wt, *next;
	struct req		*r;
	void			 (*go)(struct req *);

	TAILQ_INIT(&ready);
	for (wt = TAILQ_FIRST(&wl->waiters); wt != NULL; wt = next) {
		next = TAILQ_NEXT(wt, entry);
		if (wt->answered || wt->key != NULL || wt->rev > delivered)
			continue;
		TAILQ_REMOVE(&wl->waiters, wt, entry);
		TAILQ_INSERT_TAIL(&ready, wt, entry);
	}
	while ((wt = TAILQ_FIRST(&ready)) != NULL) {
		TAILQ_REMOVE(&ready, wt, entry);
		r = wt->r;
		go = wt->go;
		wait_free_one(wt);
		go(r);
	}
}

const struct op wait_op_wait_entry = {
	.name = "wait",
	.fields = { "key", "version", "timeout_ms" },
	.run = wait_op_wait,
};
