/*
 * etcd_http.h's asynchronous calls, answered on the daemon's loop: over
 * gRPC (etcd_grpc.h) for the KV calls, else on the gateway (evhttp), with
 * failover to the next endpoint, pauses while etcd is busy, and the calls
 * sent once (writes) or as copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/http.h>

#include "store/etcd/etcd_http.h"
#include "store/etcd/etcd_http_int.h"
#include "log.h"
#include "util.h"

/* Struct etcd_acall: one asynchronous call. */
struct etcd_acall {
	struct etcd_http	*h;
	LIST_ENTRY(etcd_acall)	 entry;		/* h->acalls */
	char			*path, *body;
	unsigned		 ep, tries;
	int			 conn;		/* of aconn[ep], or -1 */
	int			 pinned;	/* to ep only, no failover */
	int			 once;		/* never sent again */
	int			 copy;		/* of a write: cconn */
	unsigned		 busy;		/* answers "try later" */
	enum etcd_pb_rpc	 rpc;		/* over gRPC, or NONE */
	struct buf		 pb;		/* then the request */
	struct event		*pause;		/* before trying again, or NULL */
	etcd_http_cb		 cb;
	etcd_http_pb_cb		 pbcb;		/* or: answer in protobuf */
	void			*arg;
	struct event		*fire;		/* cb, from the loop */
	cJSON			*reply;
	struct buf		 answer;	/* pbcb's */
	int			 answered;	/* reply, or answer */
	struct store_err	 err;
};

/* The call's connection is free again. */
static void
etcd_acall_unbusy(struct etcd_acall *a)
{
	if (a->conn >= 0)
		a->h->abusy[a->ep][a->conn]--;
	a->conn = -1;
}

static void
etcd_acall_free(struct etcd_acall *a)
{
	LIST_REMOVE(a, entry);
	etcd_acall_unbusy(a);
	if (a->fire != NULL)
		event_free(a->fire);
	if (a->pause != NULL)
		event_free(a->pause);
	cJSON_Delete(a->reply);
	free(a->path);
	free(a->body);
	buf_free(&a->pb);
	buf_free(&a->answer);
	free(a);
}

/* At close: the calls still out are dropped, their cb never runs. */
void
etcd_http_acalls_free(struct etcd_http *h)
{
	while (!LIST_EMPTY(&h->acalls))
		etcd_acall_free(LIST_FIRST(&h->acalls));
}

static void
etcd_acall_fire(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_acall	*a = arg;

	if (a->pbcb != NULL)
		a->pbcb(a->arg, a->answered ? &a->answer : NULL,
		    a->answered ? NULL : &a->err);
	else
		a->cb(a->arg, a->reply, a->reply != NULL ? NULL : &a->err);
	etcd_acall_free(a);
}

static int	etcd_acall_send(struct etcd_acall *);
static void	etcd_acall_pause_cb(evutil_socket_t, short, void *);

static const struct timeval etcd_busy_pause = { 0, ETCD_BUSY_PAUSE_MS * 1000 };

/* The answer of a's call: status (0: none), body b, or reply if parsed. */
static void
etcd_acall_answer(struct etcd_acall *a, int status, struct buf *b,
    cJSON *reply)
{
	struct etcd_http	*h = a->h;

	if (status == 0) {
		h->ep[a->ep].healthy = 0;
		if (a->pinned) {
			store_err_set(&a->err, STORE_ERR_UNAVAILABLE, "etcd "
			    "%s: no answer", h->ep[a->ep].url);
			event_active(a->fire, 0, 0);
			return;
		}
		if (h->cur == a->ep)
			h->cur = (h->cur + 1) % h->nep;
		if (a->once) {
			/* Sent, maybe done: only the caller can tell. */
			store_err_set(&a->err, STORE_ERR_UNKNOWN, "etcd %s: no "
			    "answer from %s", a->path, h->ep[a->ep].url);
			event_active(a->fire, 0, 0);
			return;
		}
		if (++a->tries < h->nep && !h->down &&
		    etcd_acall_send(a) == 0)
			return;
		etcd_http_unreachable(h, &a->err);
	} else {
		h->ep[a->ep].healthy = 1;
		if (status == 200 && reply != NULL)
			a->reply = reply;
		else if (status == 200 && a->pbcb != NULL) {
			a->answer = *b;		/* taken */
			buf_init(b);
		} else
			etcd_http_parse(b, status, a->path, &a->reply,
			    &a->err);
		a->answered = a->reply != NULL || (status == 200 &&
		    a->pbcb != NULL);
		if (!a->answered && !a->once && !a->pinned &&
		    a->err.code == STORE_ERR_UNAVAILABLE &&
		    ++a->busy < ETCD_BUSY_TRIES && (a->pause != NULL ||
		    (a->pause = evtimer_new(h->main, etcd_acall_pause_cb,
		    a)) != NULL)) {
			/* A leader change: the same call, after a pause. */
			event_add(a->pause, &etcd_busy_pause);
			return;
		}
	}
	event_active(a->fire, 0, 0);
}

static void
etcd_acall_done(struct evhttp_request *req, void *arg)
{
	struct etcd_acall	*a = arg;
	struct buf		 b;

	etcd_acall_unbusy(a);
	buf_init(&b);
	etcd_acall_answer(a, etcd_http_take(req, &b), &b, NULL);
	buf_free(&b);
}

static void
etcd_acall_grpc_done(void *arg, int status, struct buf *b, cJSON *reply)
{
	etcd_acall_answer(arg, status, b, reply);
}

static void
etcd_acall_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_acall	*a = arg;

	if (a->h->down || etcd_acall_send(a) != 0) {
		etcd_http_down_err(&a->err);
		event_active(a->fire, 0, 0);
	}
}

static int
etcd_acall_send(struct etcd_acall *a)
{
	struct etcd_http		 *h = a->h;
	struct etcd_endpoint		 *ep;
	struct evhttp_connection	**cp;
	struct timeval			  tv = { ETCD_HTTP_TIMEOUT_S, 0 };
	struct store_err		  err;
	unsigned			  i, best = 0;

	if (!a->pinned)
		a->ep = h->cur;
	ep = &h->ep[a->ep];
	if (a->rpc != ETCD_PB_NONE)
		return (etcd_grpc_call(&h->grpc, a->ep, a->copy, ep->host,
		    ep->port, a->rpc, a->pb.data, a->pb.len, a->pbcb != NULL,
		    a->copy ? ETCD_COPY_TIMEOUT_MS :
		    ETCD_HTTP_TIMEOUT_S * 1000, etcd_acall_grpc_done, a,
		    &err));
	if (a->copy) {
		cp = &h->cconn[a->ep];
		tv.tv_sec = ETCD_COPY_TIMEOUT_MS / 1000;
		tv.tv_usec = (ETCD_COPY_TIMEOUT_MS % 1000) * 1000;
	} else {
		/* An idle connection, or the least busy one. */
		for (i = 0; i < ETCD_ASYNC_CONNS; i++) {
			if (h->abusy[a->ep][i] < h->abusy[a->ep][best])
				best = i;
			if (h->abusy[a->ep][i] == 0)
				break;
		}
		if (i < ETCD_ASYNC_CONNS)
			best = i;
		cp = &h->aconn[a->ep][best];
	}
	if (*cp == NULL) {
		*cp = evhttp_connection_base_new(h->main, NULL, ep->host,
		    ep->port);
		if (*cp == NULL)
			return (-1);
		evhttp_connection_set_timeout_tv(*cp, &tv);
		evhttp_connection_set_retries(*cp, 0);
	}
	if (etcd_http_request(*cp, ep, a->path, a->body, etcd_acall_done,
	    a) == NULL)
		return (-1);
	if (!a->copy) {
		a->conn = (int)best;
		h->abusy[a->ep][best]++;
	}
	return (0);
}

/*
 * A call: its body the gateway's JSON, or (ETCD_CALL_PB) a KV request
 * already in protobuf (pb); a KV call's JSON is encoded here, once.
 */
static int
etcd_http_acall(struct etcd_http *h, int how, unsigned ep, const char *path,
    const char *body, struct buf *pb, etcd_http_cb cb,
    etcd_http_pb_cb pbcb, void *arg, struct store_err *err)
{
	int	 pinned = (how & ETCD_CALL_PINNED) != 0;

	struct etcd_acall	*a;
	const char		*why;

	if (h->main == NULL || (h->down && !pinned)) {
		if (pb != NULL)
			buf_free(pb);
		if (h->main == NULL)
			return (store_err_set(err, STORE_ERR_INTERNAL, "no "
			    "event loop for asynchronous etcd calls"));
		return (etcd_http_down_err(err));
	}
	a = xcalloc(1, sizeof *a);
	a->h = h;
	a->conn = -1;
	a->pinned = pinned;
	a->once = (how & ETCD_CALL_ONCE) != 0;
	a->copy = (how & ETCD_CALL_COPY) != 0;
	a->ep = ep;
	a->rpc = etcd_pb_rpc_of(path);
	a->path = xstrdup(path);
	a->body = body != NULL && a->rpc == ETCD_PB_NONE ? xstrdup(body) :
	    NULL;
	a->cb = cb;
	a->pbcb = pbcb;
	a->arg = arg;
	buf_init(&a->pb);
	buf_init(&a->answer);
	LIST_INSERT_HEAD(&h->acalls, a, entry);
	if (pb != NULL && a->rpc != ETCD_PB_NONE) {
		a->pb = *pb;		/* taken */
		buf_init(pb);
	} else if (a->rpc != ETCD_PB_NONE && etcd_pb_encode(a->rpc, body,
	    &a->pb, &why) != 0) {
		etcd_acall_free(a);
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: %s",
		    path, why));
	}
	if ((a->fire = event_new(h->main, -1, 0, etcd_acall_fire, a)) == NULL ||
	    etcd_acall_send(a) != 0) {
		etcd_acall_free(a);
		return (store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd %s: "
		    "the request could not be sent", path));
	}
	return (0);
}

int
etcd_http_call_pb(struct etcd_http *h, int how, const char *path,
    struct buf *pb, etcd_http_pb_cb cb, void *arg, struct store_err *err)
{
	if (etcd_pb_rpc_of(path) == ETCD_PB_NONE) {
		buf_free(pb);
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: not "
		    "a gRPC call", path));
	}
	return (etcd_http_acall(h, how, 0, path, NULL, pb, NULL, cb, arg,
	    err));
}

int
etcd_http_call_async(struct etcd_http *h, const char *path, const char *body,
    etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, 0, 0, path, body, NULL, cb, NULL, arg,
	    err));
}

int
etcd_http_call_once(struct etcd_http *h, const char *path, const char *body,
    etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, ETCD_CALL_ONCE, 0, path, body, NULL, cb,
	    NULL, arg, err));
}

int
etcd_http_call_copy(struct etcd_http *h, const char *path, const char *body,
    etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, ETCD_CALL_ONCE | ETCD_CALL_COPY, 0, path,
	    body, NULL, cb, NULL, arg, err));
}

int
etcd_http_call_at(struct etcd_http *h, unsigned ep, const char *path,
    const char *body, etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, ETCD_CALL_PINNED, ep, path, body, NULL, cb,
	    NULL, arg, err));
}
