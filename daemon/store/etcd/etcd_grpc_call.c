/*
 * etcd's gRPC API (etcd_grpc.h): the calls and the streams, on the
 * connections of etcd_grpc.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>
#include <event2/util.h>
#include <nghttp2/nghttp2.h>

#include "store/etcd/etcd_grpc.h"
#include "store/etcd/etcd_grpc_int.h"
#include "log.h"
#include "util.h"

static void
etcd_gstream_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_gstream	*st = arg;
	struct etcd_gconn	*c = st->c;

	if (c == NULL)
		return;
	if (c->last_read.tv_sec < st->sent.tv_sec ||
	    (c->last_read.tv_sec == st->sent.tv_sec &&
	    c->last_read.tv_usec <= st->sent.tv_usec)) {
		/* Nothing came since: the connection is dead. */
		log_warnx("etcd: no answer on the gRPC connection to %s; "
		    "given up", c->authority);
		etcd_gconn_fail(c);
		return;
	}
	if (st->id > 0 && nghttp2_session_find_stream(c->s, st->id) != NULL)
		nghttp2_submit_rst_stream(c->s, NGHTTP2_FLAG_NONE, st->id,
		    NGHTTP2_CANCEL);
	etcd_gstream_finish(st, 0);
	etcd_gconn_flush(c);
}

/*
 * A call, or (mcb) a stream, with its request pb[0..n); NULL (err set) if
 * it cannot start.
 */
static struct etcd_gstream *
etcd_grpc_start(struct etcd_grpc *g, unsigned ep, int lane, const char *host,
    unsigned short port, enum etcd_pb_rpc rpc, const void *pb, size_t pblen,
    unsigned timeout_ms, etcd_grpc_cb cb, etcd_grpc_msg_cb mcb, void *arg,
    struct store_err *err)
{
	struct etcd_gconn	*c;
	struct etcd_gstream	*st;
	nghttp2_data_provider	 dp;
	const char		*path = etcd_pb_method(rpc);
	struct timeval		 tv;
	unsigned char		 pre[5] = { 0, 0, 0, 0, 0 };
	uint32_t		 n;
	const struct etcd_grpc_cred *cred = g->cred;
	size_t			 nnv;
	nghttp2_nv		 nv[] = {
#define NV(k, v)	{ (uint8_t *)(k), (uint8_t *)(v), sizeof (k) - 1, \
		    strlen(v), NGHTTP2_NV_FLAG_NO_COPY_NAME }
		NV(":method", "POST"),
		NV(":scheme", cred != NULL && cred->tls != NULL &&
		    (cred->https & (1u << ep)) ? "https" : "http"),
		NV(":path", path != NULL ? path : "/"),
		NV(":authority", host),
		NV("content-type", "application/grpc"),
		NV("te", "trailers"),
		/* etcd's authentication: the token, as gRPC metadata. */
		NV("token", cred != NULL && cred->token != NULL ?
		    cred->token : ""),
#undef NV
	};

	st = xcalloc(1, sizeof *st);
	st->g = g;
	st->rpc = rpc;
	st->code = -1;
	st->cb = cb;
	st->mcb = mcb;
	st->idle_ms = timeout_ms;
	st->arg = arg;
	buf_init(&st->out);
	buf_init(&st->in);
	buf_reserve(&st->out, sizeof pre + pblen);
	buf_add(&st->out, pre, sizeof pre);
	buf_add(&st->out, pb, pblen);
	n = (uint32_t)pblen;
	st->out.data[1] = (char)(n >> 24);
	st->out.data[2] = (char)(n >> 16);
	st->out.data[3] = (char)(n >> 8);
	st->out.data[4] = (char)n;
	if ((c = g->conn[ep][lane]) == NULL &&
	    (c = etcd_gconn_new(g, ep, lane, host, port)) == NULL) {
		etcd_gstream_free(st);
		store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd %s:%u: "
		    "no connection", host, port);
		return (NULL);
	}
	nv[3].value = (uint8_t *)c->authority;
	nv[3].valuelen = strlen(c->authority);
	memset(&dp, 0, sizeof dp);
	dp.read_callback = etcd_gstream_read_cb;
	/* No token for Authenticate, nor before there is one. */
	nnv = sizeof nv / sizeof nv[0];
	if (cred == NULL || cred->token == NULL || rpc == ETCD_PB_AUTH)
		nnv--;
	if ((st->timer = evtimer_new(g->base, etcd_gstream_timeout_cb,
	    st)) == NULL || (st->id = nghttp2_submit_request(c->s, NULL, nv,
	    nnv, &dp, st)) < 0) {
		etcd_gstream_free(st);
		store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd %s: "
		    "the request could not be sent", path);
		return (NULL);
	}
	st->c = c;
	TAILQ_INSERT_TAIL(&c->streams, st, entry);
	evutil_gettimeofday(&st->sent, NULL);
	tv.tv_sec = timeout_ms / 1000;
	tv.tv_usec = (timeout_ms % 1000) * 1000;
	evtimer_add(st->timer, &tv);
	/* Sent with the loop turn's others; on failure, st answers 0. */
	c->unsent = 1;
	event_active(g->flush, 0, 0);
	return (st);
}

/* The requests of a loop turn, in as few writes as the frames allow. */
static void
etcd_grpc_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_grpc	*g = arg;
	struct etcd_gconn	*c;
	unsigned		 i;

	for (i = 0; i < STORE_ENDPOINTS_MAX * ETCD_GRPC_LANES; i++) {
		c = g->conn[i / ETCD_GRPC_LANES][i % ETCD_GRPC_LANES];
		if (c != NULL && c->unsent) {
			c->unsent = 0;
			etcd_gconn_flush(c);
		}
	}
}

int
etcd_grpc_call(struct etcd_grpc *g, unsigned ep, int lane, const char *host,
    unsigned short port, enum etcd_pb_rpc rpc, const void *pb, size_t pblen,
    int raw, unsigned timeout_ms, etcd_grpc_cb cb, void *arg,
    struct store_err *err)
{
	struct etcd_gstream	*st;

	st = etcd_grpc_start(g, ep, lane, host, port, rpc, pb, pblen,
	    timeout_ms, cb, NULL, arg, err);
	if (st != NULL)
		st->raw = raw;
	return (st != NULL ? 0 : -1);
}

struct etcd_gstream *
etcd_grpc_stream(struct etcd_grpc *g, unsigned ep, const char *host,
    unsigned short port, enum etcd_pb_rpc rpc, const char *json,
    unsigned idle_ms, etcd_grpc_msg_cb mcb, etcd_grpc_cb end, void *arg,
    struct store_err *err)
{
	struct etcd_gstream	*st;
	struct buf		 pb;
	const char		*why;

	buf_init(&pb);
	if (etcd_pb_encode(rpc, json, &pb, &why) != 0) {
		buf_free(&pb);
		store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: %s",
		    etcd_pb_method(rpc), why);
		return (NULL);
	}
	st = etcd_grpc_start(g, ep, ETCD_GRPC_LANE_STREAMS, host, port, rpc,
	    pb.data, pb.len, idle_ms, end, mcb, arg, err);
	buf_free(&pb);
	return (st);
}

void
etcd_grpc_stream_drop(struct etcd_gstream *st)
{
	struct etcd_gconn	*c = st->c;

	if (c == NULL)		/* ended: its end is due from the loop */
		TAILQ_REMOVE(&st->g->done, st, entry);
	else {
		TAILQ_REMOVE(&c->streams, st, entry);
		if (c->s != NULL && st->id > 0) {
			nghttp2_session_set_stream_user_data(c->s, st->id,
			    NULL);
			if (nghttp2_session_find_stream(c->s, st->id) != NULL)
				nghttp2_submit_rst_stream(c->s,
				    NGHTTP2_FLAG_NONE, st->id, NGHTTP2_CANCEL);
			etcd_gconn_flush(c);
		}
	}
	etcd_gstream_free(st);
}

int
etcd_grpc_init(struct etcd_grpc *g, struct event_base *base,
    size_t max_bytes, const struct etcd_grpc_cred *cred)
{
	memset(g, 0, sizeof *g);
	TAILQ_INIT(&g->done);
	g->base = base;
	g->max_bytes = max_bytes;
	g->cred = cred;
	if (base != NULL && ((g->fire = event_new(base, -1, 0, etcd_grpc_fire,
	    g)) == NULL || (g->flush = event_new(base, -1, 0,
	    etcd_grpc_flush_cb, g)) == NULL))
		return (-1);
	return (0);
}

void
etcd_grpc_close(struct etcd_grpc *g)
{
	struct etcd_gstream	*st;
	unsigned		 i;

	for (i = 0; i < STORE_ENDPOINTS_MAX * ETCD_GRPC_LANES; i++) {
		if (g->conn[i / ETCD_GRPC_LANES][i % ETCD_GRPC_LANES] != NULL)
			etcd_gconn_fail(g->conn[i / ETCD_GRPC_LANES]
			    [i % ETCD_GRPC_LANES]);
	}
	while ((st = TAILQ_FIRST(&g->done)) != NULL) {
		TAILQ_REMOVE(&g->done, st, entry);
		etcd_gstream_free(st);
	}
	if (g->fire != NULL)
		event_free(g->fire);
	if (g->flush != NULL)
		event_free(g->flush);
	memset(g, 0, sizeof *g);
}
