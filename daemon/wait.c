#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "conn.h"
#include "log.h"
#include "metad.h"
#include "ops.h"
#include "wait.h"

struct waiter {
	struct req		*r;		/* owns id, answers */
	char			*key;
	size_t			 key_len;
	uint64_t		 version;
	struct event		*timer;
	int			 done;		/* to be swept */
	int			 answered;	/* conn owed nothing more */
	TAILQ_ENTRY(waiter)	 entry;
};



struct wait_list {
	TAILQ_HEAD(, waiter)	 waiters;
};

static void	wait_free_one(struct waiter *);

struct wait_list *
wait_create(void)
{
	struct wait_list	*wl;

	wl = xcalloc(1, sizeof *wl);
	TAILQ_INIT(&wl->waiters);
	return (wl);
}

int
wait_any(struct wait_list *wl)
{
	return (!TAILQ_EMPTY(&wl->waiters));
}

void
wait_conn_closed(struct wait_list *wl, struct conn *c)
{
	struct waiter	*wt;

	TAILQ_FOREACH(wt, &wl->waiters, entry) {
		if (wt->r->conn == c && !wt->done) {
			wt->done = 1;
			event_del(wt->timer);
		}
	}
	wait_sweep(wl);
}

void
wait_free(struct wait_list *wl)
{
	struct waiter	*wt;

	while ((wt = TAILQ_FIRST(&wl->waiters)) != NULL) {
		TAILQ_REMOVE(&wl->waiters, wt, entry);
		wait_free_one(wt);
	}
	free(wl);
}

static void	wait_answer(struct waiter *, const struct store_kv *);

void
wait_event(struct wait_list *wl, const struct store_event *ev)
{
	struct waiter	*wt;

	if (ev->type != STORE_EVENT_PUT)
		return;
	TAILQ_FOREACH(wt, &wl->waiters, entry) {
		if (!wt->done && wt->key_len == ev->kv.key_len &&
		    memcmp(wt->key, ev->kv.key, wt->key_len) == 0 &&
		    ev->kv.version >= wt->version)
			wait_answer(wt, &ev->kv);
	}
}



static void
wait_free_one(struct waiter *wt)
{
	event_free(wt->timer);
	req_free(wt->r);
	free(wt->key);
	free(wt);
}

/*
 * Free finished waits.  Their connections resume only after they left the
 * list, since resuming may create or end other waits.
 */
void
wait_sweep(struct wait_list *wl)
{
	TAILQ_HEAD(, waiter)	 done;
	struct waiter		*wt, *next;

	TAILQ_INIT(&done);
	for (wt = TAILQ_FIRST(&wl->waiters); wt != NULL; wt = next) {
		next = TAILQ_NEXT(wt, entry);
		if (!wt->done)
			continue;
		TAILQ_REMOVE(&wl->waiters, wt, entry);
		TAILQ_INSERT_TAIL(&done, wt, entry);
	}
	while ((wt = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, wt, entry);
		if (wt->answered) {
			wt->r->conn->waits--;
			conn_write_done(wt->r->conn);
		}
		wait_free_one(wt);
	}
}

/* Answer a wait: with the kv, or (kv NULL) with a timeout. */
static void
wait_answer(struct waiter *wt, const struct store_kv *kv)
{
	struct req	*r = wt->r;
	struct jw	 w;
	char		 msg[PROTO_MSG_MAX];

	if (kv != NULL) {
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
	wt->done = 1;
	wt->answered = 1;
	event_del(wt->timer);
	conn_send(r->conn, r->resp.data, r->resp.len);
}

static void
wait_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct waiter		*wt = arg;

	wait_answer(wt, NULL);
	wait_sweep(wt->r->md->waits);
}



struct wait_now {
	struct req	*r;
	uint64_t	 version;
	int		 answered;
};

static int
wait_now_cb(const struct store_kv *kv, void *arg)
{
	struct wait_now	*wn = arg;
	struct jw	 w;

	if (kv->version < wn->version)
		return (0);
	reply_begin(wn->r, &w);
	reply_kv(&w, "kv", kv, 1);
	jw_name(&w, "rev");
	jw_u64(&w, store_read_rev(wn->r->md->store));
	reply_end(wn->r, &w);
	wn->answered = 1;
	return (0);
}

static int
wait_args(struct req *r, struct waiter *wt, uint64_t *timeout_ms,
    struct proto_err *e)
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
	*timeout_ms = WAIT_TIMEOUT_MAX_MS;
	if (proto_get_u64(r->json, "timeout_ms", 0, timeout_ms, e) == -1)
		return (-1);
	if (*timeout_ms > WAIT_TIMEOUT_MAX_MS)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"timeout_ms\" "
		    "is over the limit of %llu (24 hours)",
		    (unsigned long long)WAIT_TIMEOUT_MAX_MS));
	wt->key = xmemdup(key, klen);
	wt->key_len = klen;
	return (0);
}

/* A wait owes its answer: copy what the answer needs from r. */
static struct req *
wait_req_clone(struct req *r)
{
	struct req	*c;

	c = xcalloc(1, sizeof *c);
	c->md = r->md;
	c->conn = r->conn;
	memcpy(c->id, r->id, r->id_len);
	c->id_len = r->id_len;
	buf_init(&c->resp);
	return (c);
}

void
wait_op_wait(struct req *r)
{
	struct proto_err	 e;
	struct store_err	 se;
	struct waiter		*wt;
	struct wait_now		 wn;
	struct timeval		 tv;
	uint64_t		 timeout_ms;

	wt = xcalloc(1, sizeof *wt);
	if (wait_args(r, wt, &timeout_ms, &e) != 0) {
		free(wt->key);
		free(wt);
		reply_error(r, e.code, e.msg);
		return;
	}
	memset(&wn, 0, sizeof wn);
	wn.r = r;
	wn.version = wt->version;
	if (store_get(r->md->store, wt->key, wt->key_len, wait_now_cb, &wn,
	    &se) == -1)
		reply_store_error(r, &se);
	else if (!wn.answered && timeout_ms == 0) {
		snprintf(e.msg, sizeof e.msg, "key did not reach version %"
		    PRIu64 " in time", wt->version);
		reply_error(r, PROTO_TIMEOUT, e.msg);
	} else if (!wn.answered) {
		wt->r = wait_req_clone(r);
		wt->timer = evtimer_new(r->md->base, wait_timeout_cb, wt);
		if (wt->timer == NULL)
			fatalx("evtimer_new");
		tv.tv_sec = (time_t)(timeout_ms / 1000);
		tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
		evtimer_add(wt->timer, &tv);
		TAILQ_INSERT_TAIL(&r->md->waits->waiters, wt, entry);
		r->conn->pending++;
		r->conn->waits++;
		return;
	}
	free(wt->key);
	free(wt);
}

