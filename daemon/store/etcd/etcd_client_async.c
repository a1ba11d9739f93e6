/*
 * etcd_client.h's asynchronous calls, answered on the daemon's loop, over
 * gRPC (etcd_grpc.h), with failover to the next endpoint, pauses while
 * etcd is busy, and the calls sent once (writes) or as copies.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "store/etcd/etcd_client.h"
#include "store/etcd/etcd_client_int.h"
#include "log.h"
#include "util.h"

/* Struct etcd_acall: one asynchronous call. */
struct etcd_acall {
	struct etcd_client	*h;
	LIST_ENTRY(etcd_acall)	 entry;		/* h->acalls */
	char			*path;
	unsigned		 ep, tries;
	int			 pinned;	/* to ep only, no failover */
	int			 once;		/* never sent again */
	int			 copy;		/* of a write: gRPC lane 1 */
	unsigned		 busy;		/* answers "try later" */
	unsigned		 gen;		/* of the token it was sent with */
	int			 renewed;	/* sent again with a new token */
	struct etcd_renewal	 renewal;	/* waiting for one */
	enum etcd_pb_rpc	 rpc;
	struct buf		 pb;		/* the request */
	struct event		*pause;		/* before trying again, or NULL */
	etcd_call_cb		 cb;
	etcd_call_pb_cb		 pbcb;		/* or: answer in protobuf */
	void			*arg;
	struct event		*fire;		/* cb, from the loop */
	cJSON			*reply;
	struct buf		 answer;	/* pbcb's */
	int			 answered;	/* reply, or answer */
	struct store_err	 err;
	int64_t			 t0;		/* made, mono_us() */
};

static void
etcd_acall_free(struct etcd_acall *a)
{
	LIST_REMOVE(a, entry);
	etcd_renewal_cancel(&a->renewal);
	if (a->fire != NULL)
		event_free(a->fire);
	if (a->pause != NULL)
		event_free(a->pause);
	cJSON_Delete(a->reply);
	free(a->path);
	buf_free(&a->pb);
	buf_free(&a->answer);
	free(a);
}

/* At close: the calls still out are dropped, their cb never runs. */
void
etcd_client_acalls_free(struct etcd_client *h)
{
	while (!LIST_EMPTY(&h->acalls))
		etcd_acall_free(LIST_FIRST(&h->acalls));
}

static void
etcd_acall_fire(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_acall	*a = arg;

	etcd_client_report(a->h, a->rpc, a->t0, a->answered ||
	    a->reply != NULL ? NULL : &a->err);
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
	struct etcd_client	*h = a->h;

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
		etcd_client_unreachable(h, &a->err);
	} else {
		h->ep[a->ep].healthy = 1;
		if (status != 200 && !a->renewed && a->rpc != ETCD_PB_AUTH &&
		    etcd_auth_refused(status, b->data, b->len)) {
			/* Refused before it was done: again, once. */
			a->renewed = 1;
			switch (etcd_client_renew(h, a->gen, &a->renewal)) {
			case 1:
				if (etcd_acall_send(a) == 0)
					return;
				break;
			case 0:
				return;		/* etcd_acall_renewed */
			}
		}
		if (status == 200 && reply != NULL)
			a->reply = reply;
		else if (status == 200 && a->pbcb != NULL) {
			a->answer = *b;		/* taken */
			buf_init(b);
		} else
			etcd_client_parse(b, status, a->path, &a->reply,
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
etcd_acall_grpc_done(void *arg, int status, struct buf *b, cJSON *reply)
{
	etcd_acall_answer(arg, status, b, reply);
}

static void
etcd_acall_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_acall	*a = arg;

	if (a->h->down || etcd_acall_send(a) != 0) {
		etcd_client_down_err(&a->err);
		event_active(a->fire, 0, 0);
	}
}

/* The renewal a's call waited for: send it again, or fail it. */
static void
etcd_acall_renewed(void *arg, const struct store_err *err)
{
	struct etcd_acall	*a = arg;

	if (err != NULL)
		a->err = *err;
	else if (a->h->down || etcd_acall_send(a) != 0)
		etcd_client_down_err(&a->err);
	else
		return;
	event_active(a->fire, 0, 0);
}

static int
etcd_acall_send(struct etcd_acall *a)
{
	struct etcd_client	*h = a->h;
	struct etcd_endpoint	*ep;
	struct store_err	 err;

	if (!a->pinned)
		a->ep = h->cur;
	ep = &h->ep[a->ep];
	a->gen = h->cred.gen;
	return (etcd_grpc_call(&h->grpc, a->ep, a->copy, ep->host, ep->port,
	    a->rpc, a->pb.data, a->pb.len, a->pbcb != NULL, a->copy ?
	    ETCD_COPY_TIMEOUT_MS : ETCD_CALL_TIMEOUT_S * 1000,
	    etcd_acall_grpc_done, a, &err));
}

/*
 * A call: its request the gateway's JSON (body, encoded here, once), or
 * already in protobuf (pb, taken).
 */
static int
etcd_client_acall(struct etcd_client *h, int how, unsigned ep, const char *path,
    const char *body, struct buf *pb, etcd_call_cb cb,
    etcd_call_pb_cb pbcb, void *arg, struct store_err *err)
{
	int	 pinned = (how & ETCD_CALL_PINNED) != 0;

	struct etcd_acall	*a;
	const char		*why;

	if (h->main == NULL || etcd_pb_rpc_of(path) == ETCD_PB_NONE ||
	    (h->down && !pinned)) {
		if (pb != NULL)
			buf_free(pb);
		if (h->main == NULL)
			return (store_err_set(err, STORE_ERR_INTERNAL, "no "
			    "event loop for asynchronous etcd calls"));
		if (etcd_pb_rpc_of(path) == ETCD_PB_NONE)
			return (store_err_set(err, STORE_ERR_INTERNAL, "etcd "
			    "%s: not a gRPC call", path));
		return (etcd_client_down_err(err));
	}
	a = xcalloc(1, sizeof *a);
	a->h = h;
	a->t0 = mono_us();
	a->pinned = pinned;
	a->once = (how & ETCD_CALL_ONCE) != 0;
	a->copy = (how & ETCD_CALL_COPY) != 0;
	a->ep = ep;
	a->rpc = etcd_pb_rpc_of(path);
	a->path = xstrdup(path);
	a->cb = cb;
	a->pbcb = pbcb;
	a->arg = arg;
	a->renewal.cb = etcd_acall_renewed;
	a->renewal.arg = a;
	buf_init(&a->pb);
	buf_init(&a->answer);
	LIST_INSERT_HEAD(&h->acalls, a, entry);
	if (pb != NULL) {
		a->pb = *pb;		/* taken */
		buf_init(pb);
	} else if (etcd_pb_encode(a->rpc, body, &a->pb, &why) != 0) {
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
etcd_call_pb(struct etcd_client *h, int how, const char *path,
    struct buf *pb, etcd_call_pb_cb cb, void *arg, struct store_err *err)
{
	return (etcd_client_acall(h, how, 0, path, NULL, pb, NULL, cb, arg,
	    err));
}

int
etcd_call_async(struct etcd_client *h, const char *path, const char *body,
    etcd_call_cb cb, void *arg, struct store_err *err)
{
	return (etcd_client_acall(h, 0, 0, path, body, NULL, cb, NULL, arg,
	    err));
}

int
etcd_call_once(struct etcd_client *h, const char *path, const char *body,
    etcd_call_cb cb, void *arg, struct store_err *err)
{
	return (etcd_client_acall(h, ETCD_CALL_ONCE, 0, path, body, NULL, cb,
	    NULL, arg, err));
}

int
etcd_call_at(struct etcd_client *h, unsigned ep, const char *path,
    const char *body, etcd_call_cb cb, void *arg, struct store_err *err)
{
	return (etcd_client_acall(h, ETCD_CALL_PINNED, ep, path, body, NULL, cb,
	    NULL, arg, err));
}
