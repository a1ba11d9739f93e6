#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "enc.h"
#include "etcd_http.h"
#include "log.h"
#include "util.h"

static void	etcd_http_probe_cb(evutil_socket_t, short, void *);
static void	etcd_http_acalls_free(struct etcd_http *);

int
etcd_http_init(struct etcd_http *h, const char *urls, struct event_base *main,
    struct store_err *err)
{
	const char	*p = urls, *comma;
	size_t		 len;

	memset(h, 0, sizeof *h);
	LIST_INIT(&h->acalls);
	while (*p != '\0') {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (h->nep == STORE_ENDPOINTS_MAX)
			return (store_err_set(err, STORE_ERR_INTERNAL, "more "
			    "than %d etcd endpoints", STORE_ENDPOINTS_MAX));
		if (etcd_http_parse_url(&h->ep[h->nep], p, len, err) != 0)
			return (-1);
		h->nep++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (h->nep == 0)
		return (store_err_set(err, STORE_ERR_INTERNAL, "no etcd "
		    "endpoint given (etcd:http://HOST:PORT[,...])"));
	if ((h->base = event_base_new()) == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "event_base_new failed"));
	h->main = main;
	if (main != NULL && ((h->probe_timer = evtimer_new(main,
	    etcd_http_probe_cb, h)) == NULL || etcd_grpc_init(&h->grpc, main,
	    ETCD_REPLY_MAX_BYTES) != 0))
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "evtimer_new failed"));
	return (0);
}

void
etcd_http_close(struct etcd_http *h)
{
	unsigned	 i;

	for (i = 0; i < h->nep; i++) {
		if (h->conn[i] != NULL)
			evhttp_connection_free(h->conn[i]);
	}
	etcd_grpc_close(&h->grpc);
	etcd_http_acalls_free(h);
	for (i = 0; i < h->nep; i++) {
		unsigned j;

		for (j = 0; j < ETCD_ASYNC_CONNS; j++) {
			if (h->aconn[i][j] != NULL)
				evhttp_connection_free(h->aconn[i][j]);
		}
		if (h->cconn[i] != NULL)
			evhttp_connection_free(h->cconn[i]);
	}
	if (h->probe_timer != NULL)
		event_free(h->probe_timer);
	if (h->probe_conn != NULL)
		evhttp_connection_free(h->probe_conn);
	if (h->base != NULL)
		event_base_free(h->base);
	memset(h, 0, sizeof *h);
}

struct evhttp_request *
etcd_http_request(struct evhttp_connection *conn,
    const struct etcd_endpoint *ep, const char *path, const char *body,
    void (*cb)(struct evhttp_request *, void *), void *arg)
{
	struct evhttp_request	*req;
	struct evkeyvalq	*hd;

	if ((req = evhttp_request_new(cb, arg)) == NULL)
		return (NULL);
	hd = evhttp_request_get_output_headers(req);
	evhttp_add_header(hd, "Host", ep->host);
	evhttp_add_header(hd, "Content-Type", "application/json");
	evbuffer_add(evhttp_request_get_output_buffer(req), body,
	    strlen(body));
	if (evhttp_make_request(conn, req, EVHTTP_REQ_POST, path) != 0)
		return (NULL);	/* evhttp freed req */
	return (req);
}

struct etcd_call {
	struct event_base	*base;
	int			 done;
	int			 status;	/* 0: no answer */
	struct buf		 body;
};

/*
 * The HTTP status of an answer (0: none came), its body appended to b;
 * -1 for a body over ETCD_REPLY_MAX_BYTES.
 */
static int
etcd_http_take(struct evhttp_request *req, struct buf *b)
{
	struct evbuffer	*in;
	size_t		 n;
	int		 status;

	if (req == NULL || (status = evhttp_request_get_response_code(req)) ==
	    0)
		return (0);
	in = evhttp_request_get_input_buffer(req);
	if ((n = evbuffer_get_length(in)) > ETCD_REPLY_MAX_BYTES)
		return (-1);
	buf_reserve(b, b->len + n + 1);
	if (evbuffer_remove(in, b->data + b->len, n) != (int)n)
		return (-1);
	b->len += n;
	return (status);
}

static void
etcd_http_done(struct evhttp_request *req, void *arg)
{
	struct etcd_call	*c = arg;

	c->done = 1;
	c->status = etcd_http_take(req, &c->body);
	event_base_loopbreak(c->base);
}

/* One attempt on the current endpoint: the HTTP status, 0 if none. */
static int
etcd_http_try(struct etcd_http *h, const char *path, const char *body,
    struct buf *out)
{
	struct etcd_endpoint	*ep = &h->ep[h->cur];
	struct etcd_call	 c;

	if (h->conn[h->cur] == NULL) {
		h->conn[h->cur] = evhttp_connection_base_new(h->base, NULL,
		    ep->host, ep->port);
		if (h->conn[h->cur] == NULL)
			return (0);
		evhttp_connection_set_timeout(h->conn[h->cur],
		    ETCD_HTTP_TIMEOUT_S);
		evhttp_connection_set_retries(h->conn[h->cur], 0);
	}
	memset(&c, 0, sizeof c);
	c.base = h->base;
	c.body = *out;
	if (etcd_http_request(h->conn[h->cur], ep, path, body,
	    etcd_http_done, &c) == NULL)
		return (0);
	while (!c.done) {
		if (event_base_loop(h->base, EVLOOP_ONCE) != 0)
			break;	/* nothing pending: no answer will come */
	}
	*out = c.body;
	if (c.status == 0) {
		/* Start afresh on this endpoint next time. */
		evhttp_connection_free(h->conn[h->cur]);
		h->conn[h->cur] = NULL;
	}
	return (c.status);
}

static int
etcd_http_fail(const struct buf *b, int status, const char *path,
    struct store_err *err)
{
	enum store_errcode	 code = STORE_ERR_INTERNAL;
	const char		*msg = b->len > 0 ? b->data : "";

	if (strstr(msg, "compacted") != NULL)
		code = STORE_ERR_COMPACTED;
	else if (strstr(msg, "too many operations in txn") != NULL)
		return (store_err_set(err, code, "etcd refused a txn of more "
		    "operations than its --max-txn-ops (metad's fit 128, "
		    "etcd's default; see metad(8))"));
	else if (strstr(msg, "requested lease not found") != NULL)
		return (store_err_set(err, STORE_ERR_NO_LEASE, "lease not "
		    "found (unknown, expired or revoked); nothing written"));
	else if (status >= 500 || strstr(msg, "\"code\":14") != NULL)
		code = STORE_ERR_UNAVAILABLE;
	return (store_err_set(err, code, "etcd %s: HTTP %d %.160s", path,
	    status, msg));
}

static void
etcd_http_probe_schedule(struct etcd_http *h)
{
	struct timeval	 tv = { 0, ETCD_PROBE_MS * 1000 };

	evtimer_add(h->probe_timer, &tv);
}

static void
etcd_http_probe_done(struct evhttp_request *req, void *arg)
{
	struct etcd_http	*h = arg;
	struct etcd_endpoint	*ep = &h->ep[h->probe_ep];

	if (req != NULL && evhttp_request_get_response_code(req) == 200) {
		log_info("etcd: %s answers again", ep->url);
		ep->healthy = 1;
		h->cur = h->probe_ep;
		h->down = 0;
		return;
	}
	ep->healthy = 0;
	h->probe_ep = (h->probe_ep + 1) % h->nep;
	etcd_http_probe_schedule(h);
}

/* Ask the next endpoint, on the daemon's loop, whether etcd is back. */
static void
etcd_http_probe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_http	*h = arg;
	struct etcd_endpoint	*ep = &h->ep[h->probe_ep];

	if (h->probe_conn != NULL)
		evhttp_connection_free(h->probe_conn);
	h->probe_conn = evhttp_connection_base_new(h->main, NULL, ep->host,
	    ep->port);
	if (h->probe_conn == NULL) {
		etcd_http_probe_schedule(h);
		return;
	}
	evhttp_connection_set_timeout(h->probe_conn, ETCD_HTTP_TIMEOUT_S);
	evhttp_connection_set_retries(h->probe_conn, 0);
	if (etcd_http_request(h->probe_conn, ep, "/v3/maintenance/status",
	    "{}", etcd_http_probe_done, h) == NULL)
		etcd_http_probe_schedule(h);
}

static int
etcd_http_down_err(struct store_err *err)
{
	return (store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd is "
	    "unreachable (no endpoint answered; retrying every %d ms)",
	    ETCD_PROBE_MS));
}

/* No endpoint answered: fail at once until the probe finds one that does. */
static int
etcd_http_unreachable(struct etcd_http *h, struct store_err *err)
{
	if (h->main != NULL && !h->down) {
		log_warnx("etcd: no endpoint answers; requests fail at once "
		    "until one does");
		h->down = 1;
		h->probe_ep = h->cur;
		etcd_http_probe_schedule(h);
	}
	return (store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd is "
	    "unreachable (%u endpoint%s tried)", h->nep,
	    h->nep == 1 ? "" : "s"));
}

/* An answer of etcd (status, body b) as *out, or an error. */
static int
etcd_http_parse(struct buf *b, int status, const char *path, cJSON **out,
    struct store_err *err)
{
	*out = NULL;
	buf_cstr(b);
	if (status == -1)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: a "
		    "reply over %u bytes", path, ETCD_REPLY_MAX_BYTES));
	if (status != 200)
		return (etcd_http_fail(b, status, path, err));
	*out = cJSON_ParseWithLengthOpts(b->data, b->len + 1, NULL, 1);
	if (*out == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: the "
		    "reply is not JSON", path));
	return (0);
}

int
etcd_http_call(struct etcd_http *h, const char *path, const char *body,
    cJSON **out, struct store_err *err)
{
	struct buf	 b;
	unsigned	 tries;
	int		 status = 0;

	*out = NULL;
	if (h->down)
		return (etcd_http_down_err(err));
	buf_init(&b);
	for (tries = 0; tries < h->nep; tries++) {
		buf_reset(&b);
		if ((status = etcd_http_try(h, path, body, &b)) != 0)
			break;
		h->ep[h->cur].healthy = 0;
		h->cur = (h->cur + 1) % h->nep;
	}
	if (status == 0) {
		buf_free(&b);
		return (etcd_http_unreachable(h, err));
	}
	h->ep[h->cur].healthy = 1;
	status = etcd_http_parse(&b, status, path, out, err);
	buf_free(&b);
	return (status);
}

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
	struct event		*pause;		/* before trying again */
	etcd_http_cb		 cb;
	void			*arg;
	struct event		*fire;		/* cb, from the loop */
	cJSON			*reply;
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
	free(a);
}

/* At close: the calls still out are dropped, their cb never runs. */
static void
etcd_http_acalls_free(struct etcd_http *h)
{
	while (!LIST_EMPTY(&h->acalls))
		etcd_acall_free(LIST_FIRST(&h->acalls));
}

static void
etcd_acall_fire(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_acall	*a = arg;

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
		else
			etcd_http_parse(b, status, a->path, &a->reply,
			    &a->err);
		if (a->reply == NULL && !a->once && !a->pinned &&
		    a->err.code == STORE_ERR_UNAVAILABLE &&
		    ++a->busy < ETCD_BUSY_TRIES) {
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
		    ep->port, a->rpc, a->pb.data, a->pb.len, a->copy ?
		    ETCD_COPY_TIMEOUT_MS :
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
    const char *body, const struct buf *pb, etcd_http_cb cb, void *arg,
    struct store_err *err)
{
	int	 pinned = (how & ETCD_CALL_PINNED) != 0;

	struct etcd_acall	*a;
	const char		*why;

	if (h->main == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "no event loop "
		    "for asynchronous etcd calls"));
	if (h->down && !pinned)
		return (etcd_http_down_err(err));
	a = xcalloc(1, sizeof *a);
	a->h = h;
	a->conn = -1;
	a->pinned = pinned;
	a->once = (how & ETCD_CALL_ONCE) != 0;
	a->copy = (how & ETCD_CALL_COPY) != 0;
	a->ep = ep;
	a->rpc = etcd_pb_rpc_of(path);
	a->path = xstrdup(path);
	a->body = a->rpc == ETCD_PB_NONE ? xstrdup(body) : NULL;
	a->cb = cb;
	a->arg = arg;
	buf_init(&a->pb);
	LIST_INSERT_HEAD(&h->acalls, a, entry);
	if (pb != NULL && a->rpc != ETCD_PB_NONE)
		buf_add(&a->pb, pb->data, pb->len);
	else if (a->rpc != ETCD_PB_NONE && etcd_pb_encode(a->rpc, body,
	    &a->pb, &why) != 0) {
		etcd_acall_free(a);
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: %s",
		    path, why));
	}
	if ((a->fire = event_new(h->main, -1, 0, etcd_acall_fire, a)) == NULL ||
	    (a->pause = evtimer_new(h->main, etcd_acall_pause_cb, a)) == NULL ||
	    etcd_acall_send(a) != 0) {
		etcd_acall_free(a);
		return (store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd %s: "
		    "the request could not be sent", path));
	}
	return (0);
}

int
etcd_http_call_pb(struct etcd_http *h, int how, const char *path,
    const struct buf *pb, etcd_http_cb cb, void *arg, struct store_err *err)
{
	if (etcd_pb_rpc_of(path) == ETCD_PB_NONE)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: not "
		    "a gRPC call", path));
	return (etcd_http_acall(h, how, 0, path, NULL, pb, cb, arg, err));
}

int
etcd_http_call_async(struct etcd_http *h, const char *path, const char *body,
    etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, 0, 0, path, body, NULL, cb, arg, err));
}

int
etcd_http_call_once(struct etcd_http *h, const char *path, const char *body,
    etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, ETCD_CALL_ONCE, 0, path, body, NULL, cb,
	    arg, err));
}

int
etcd_http_call_copy(struct etcd_http *h, const char *path, const char *body,
    etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, ETCD_CALL_ONCE | ETCD_CALL_COPY, 0, path,
	    body, NULL, cb, arg, err));
}

int
etcd_http_call_at(struct etcd_http *h, unsigned ep, const char *path,
    const char *body, etcd_http_cb cb, void *arg, struct store_err *err)
{
	return (etcd_http_acall(h, ETCD_CALL_PINNED, ep, path, body, NULL, cb,
	    arg, err));
}
