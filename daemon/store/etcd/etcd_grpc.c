/*
 * etcd's gRPC API over HTTP/2 (etcd_grpc.h): libnghttp2 frames the calls,
 * a bufferevent carries the bytes, over TLS to an https endpoint
 * (etcd_tls.c; why a connection failed is kept for the messages) (this
 * file: the connections and what comes on them; etcd_grpc_call.c starts
 * the calls and streams).  A gRPC
 * message is a 5-byte prefix (a compressed flag, never set here, and a
 * big-endian length) and the protobuf; the status comes in the trailers
 * (grpc-status, grpc-message), or in the headers alone when the call
 * failed at once.
 */
#include <sys/socket.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/util.h>
#include <nghttp2/nghttp2.h>

#include "store/etcd/etcd_grpc.h"
#include "store/etcd/etcd_grpc_int.h"
#include "store/etcd/etcd_tls.h"
#include "log.h"
#include "util.h"

/* The flow-control windows offered to etcd: a big answer flows at once. */
#define ETCD_GRPC_WINDOW	(16 << 20)

static const int grpc_http[] = {
	200, 408, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501,
	500, 503, 500, 401
};

int
etcd_grpc_http_status(int code)
{
	if (code < 0 || (size_t)code >= sizeof grpc_http / sizeof grpc_http[0])
		return (500);
	return (grpc_http[code]);
}

/* The length in a gRPC message's 5-byte prefix p. */
static uint32_t
etcd_grpc_msglen(const void *p)
{
	const uint8_t	*b = p;

	return ((uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 |
	    (uint32_t)b[3] << 8 | b[4]);
}

void
etcd_gstream_free(struct etcd_gstream *st)
{
	if (st->timer != NULL)
		event_free(st->timer);
	buf_free(&st->out);
	buf_free(&st->in);
	free(st->msg);
	cJSON_Delete(st->reply);
	free(st);
}

void
etcd_grpc_fire(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_grpc	*g = arg;
	struct etcd_gstream	*st;
	struct buf		 body;
	cJSON			*reply;

	while ((st = TAILQ_FIRST(&g->done)) != NULL) {
		TAILQ_REMOVE(&g->done, st, entry);
		reply = st->reply;
		st->reply = NULL;
		body = st->in;		/* the error body, if any */
		buf_init(&st->in);
		st->cb(st->arg, st->status, &body, reply);
		buf_free(&body);
		etcd_gstream_free(st);
	}
}

/* The answer of st is status: its cb runs from the loop. */
void
etcd_gstream_finish(struct etcd_gstream *st, int status)
{
	struct etcd_gconn	*c = st->c;

	if (c == NULL)
		return;
	TAILQ_REMOVE(&c->streams, st, entry);
	if (c->s != NULL && st->id > 0)
		nghttp2_session_set_stream_user_data(c->s, st->id, NULL);
	st->c = NULL;
	st->status = status;
	if (st->timer != NULL)
		evtimer_del(st->timer);
	TAILQ_INSERT_TAIL(&st->g->done, st, entry);
	event_active(st->g->fire, 0, 0);
}

/* The connection is lost: no call on it will be answered. */
void
etcd_gconn_fail(struct etcd_gconn *c)
{
	struct etcd_gstream	*st;

	if (c->g->conn[c->ep][c->lane] == c)
		c->g->conn[c->ep][c->lane] = NULL;
	while ((st = TAILQ_FIRST(&c->streams)) != NULL)
		etcd_gstream_finish(st, 0);
	if (c->s != NULL)
		nghttp2_session_del(c->s);
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	free(c);
}

/* What nghttp2 has to send, into the bufferevent; -1 if c failed. */
int
etcd_gconn_flush(struct etcd_gconn *c)
{
	if (nghttp2_session_send(c->s) != 0 || c->goaway ||
	    (!nghttp2_session_want_read(c->s) &&
	    !nghttp2_session_want_write(c->s))) {
		etcd_gconn_fail(c);
		return (-1);
	}
	return (0);
}

static ssize_t
etcd_gconn_send_cb(nghttp2_session *s, const uint8_t *data, size_t len,
    int flags, void *arg)
{
	struct etcd_gconn	*c = arg;

	if (bufferevent_write(c->bev, data, len) != 0)
		return (NGHTTP2_ERR_CALLBACK_FAILURE);
	return ((ssize_t)len);
}

ssize_t
etcd_gstream_read_cb(nghttp2_session *s, int32_t id, uint8_t *p, size_t len,
    uint32_t *flags, nghttp2_data_source *src, void *arg)
{
	struct etcd_gstream	*st;
	size_t			 n;

	if ((st = nghttp2_session_get_stream_user_data(s, id)) == NULL)
		return (NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE);	/* given up */
	n = st->out.len - st->off;
	if (n == 0 && st->mcb != NULL)
		return (NGHTTP2_ERR_DEFERRED);	/* a stream stays open */
	if (n > len)
		n = len;
	memcpy(p, st->out.data + st->off, n);
	st->off += n;
	if (st->off == st->out.len && st->mcb == NULL)
		*flags |= NGHTTP2_DATA_FLAG_EOF;
	return ((ssize_t)n);
}

static int
etcd_gstream_header_cb(nghttp2_session *s, const nghttp2_frame *frame,
    const uint8_t *name, size_t namelen, const uint8_t *value,
    size_t valuelen, uint8_t flags, void *arg)
{
	struct etcd_gstream	*st;
	char			 v[16];

	st = nghttp2_session_get_stream_user_data(s, frame->hd.stream_id);
	if (st == NULL)
		return (0);
	if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
		free(st->msg);
		st->msg = NULL;
		if (valuelen == 0)	/* grpc-go sends it empty on success */
			return (0);
		st->msg = xmalloc(valuelen + 1);
		memcpy(st->msg, value, valuelen);
		st->msg[valuelen] = '\0';
		return (0);
	}
	if (valuelen >= sizeof v)
		return (0);
	memcpy(v, value, valuelen);
	v[valuelen] = '\0';
	if (namelen == 7 && memcmp(name, ":status", 7) == 0)
		st->http = atoi(v);
	else if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0)
		st->code = atoi(v);
	return (0);
}

/*
 * A stream's DATA: each complete message to its mcb, in order (from
 * inside the session's read: mcb must not drop the stream), read in
 * place; only a message cut short waits in st->in for the next DATA.
 * Its idle timer starts again.
 */
static int
etcd_gstream_msgs(struct etcd_gstream *st, const uint8_t *p, size_t len)
{
	struct timeval	 tv;
	uint32_t	 n = 0;
	size_t		 off = 0, take;

	evutil_gettimeofday(&st->sent, NULL);
	tv.tv_sec = st->idle_ms / 1000;
	tv.tv_usec = (st->idle_ms % 1000) * 1000;
	evtimer_add(st->timer, &tv);
	if (st->in.len > 0) {
		/* The message begun in an earlier DATA, first. */
		take = st->in.len < 5 ? 5 - st->in.len : 0;
		take = take < len ? take : len;
		buf_add(&st->in, p, take);
		off = take;
		if (st->in.len < 5)
			return (0);
		n = etcd_grpc_msglen(st->in.data);
		if (st->in.data[0] != 0 || n > st->g->max_bytes)
			goto bad;
		take = 5 + (size_t)n - st->in.len;
		take = take < len - off ? take : len - off;
		buf_add(&st->in, p + off, take);
		off += take;
		if (st->in.len < 5 + (size_t)n)
			return (0);
		if (st->mcb(st->arg, (const uint8_t *)st->in.data + 5, n) != 0)
			goto bad;
		buf_reset(&st->in);
	}
	while (len - off >= 5) {
		n = etcd_grpc_msglen(p + off);
		if (p[off] != 0 || n > st->g->max_bytes)
			goto bad;
		if (len - off - 5 < n)
			break;
		if (st->mcb(st->arg, p + off + 5, n) != 0)
			goto bad;
		off += 5 + n;
	}
	if (off < len)
		buf_add(&st->in, p + off, len - off);
	return (0);
bad:
	log_warnx("etcd: a malformed gRPC message (%u bytes) on %s", n,
	    etcd_pb_method(st->rpc));
	nghttp2_submit_rst_stream(st->c->s, NGHTTP2_FLAG_NONE, st->id,
	    NGHTTP2_CANCEL);
	etcd_gstream_finish(st, 0);
	return (0);
}

static int
etcd_gstream_data_cb(nghttp2_session *s, uint8_t flags, int32_t id,
    const uint8_t *data, size_t len, void *arg)
{
	struct etcd_gstream	*st;

	if ((st = nghttp2_session_get_stream_user_data(s, id)) == NULL)
		return (0);
	if (st->mcb != NULL)
		return (etcd_gstream_msgs(st, data, len));
	if (st->in.len + len > st->g->max_bytes + 5) {
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id,
		    NGHTTP2_CANCEL);
		etcd_gstream_finish(st, -1);
		return (0);
	}
	if (st->in.cap == 0 && len >= 5)	/* room for all of it at once */
		buf_reserve(&st->in, etcd_grpc_msglen(data) <=
		    st->g->max_bytes ? 5 + etcd_grpc_msglen(data) : len);
	buf_add(&st->in, data, len);
	return (0);
}

/* grpc-message is percent-encoded. */
static void
etcd_grpc_unpercent(char *s)
{
	char	*w = s, h[3] = { 0, 0, 0 };

	for (; *s != '\0'; s++) {
		if (s[0] == '%' && s[1] != '\0' && s[2] != '\0') {
			h[0] = s[1];
			h[1] = s[2];
			*w++ = (char)strtol(h, NULL, 16);
			s += 2;
		} else
			*w++ = *s;
	}
	*w = '\0';
}

/* st's error as the gateway gives it: a status and a JSON body in st->in. */
static int
etcd_gstream_error(struct etcd_gstream *st)
{
	cJSON	*j = cJSON_CreateObject();
	char	*s;

	if (st->msg != NULL)
		etcd_grpc_unpercent(st->msg);
	cJSON_AddStringToObject(j, "error", st->msg != NULL ? st->msg : "");
	cJSON_AddNumberToObject(j, "code", st->code);
	cJSON_AddStringToObject(j, "message", st->msg != NULL ? st->msg : "");
	s = cJSON_PrintUnformatted(j);
	cJSON_Delete(j);
	buf_reset(&st->in);
	buf_addstr(&st->in, s);
	free(s);
	return (etcd_grpc_http_status(st->code));
}

static int
etcd_gstream_close_cb(nghttp2_session *s, int32_t id, uint32_t error_code,
    void *arg)
{
	struct etcd_gstream	*st;
	const uint8_t		*p;
	uint32_t		 n = 0;

	if ((st = nghttp2_session_get_stream_user_data(s, id)) == NULL)
		return (0);
	if (st->mcb != NULL) {
		log_warnx("etcd: the %s stream ended (HTTP %d, gRPC status "
		    "%d%s%s)", etcd_pb_method(st->rpc), st->http, st->code,
		    st->msg != NULL ? ": " : "", st->msg != NULL ? st->msg :
		    "");
		etcd_gstream_finish(st, 0);
		return (0);
	}
	if (error_code != NGHTTP2_NO_ERROR || st->http != 200 ||
	    st->code < 0) {
		etcd_gstream_finish(st, 0);	/* no answer */
		return (0);
	}
	if (st->code != 0) {
		etcd_gstream_finish(st, etcd_gstream_error(st));
		return (0);
	}
	p = (const uint8_t *)st->in.data;
	if (st->in.len >= 5)
		n = etcd_grpc_msglen(p);
	if (st->in.len < 5 || p[0] != 0 || n != st->in.len - 5 ||
	    (st->raw ? etcd_pb_check(st->rpc, p + 5, n) != 0 :
	    (st->reply = etcd_pb_decode(st->rpc, p + 5, n)) == NULL)) {
		log_warnx("etcd: a malformed gRPC answer (%zu bytes) to %s",
		    st->in.len, etcd_pb_method(st->rpc));
		etcd_gstream_finish(st, 0);
		return (0);
	}
	if (st->raw) {	/* the answer itself, for the cb */
		memmove(st->in.data, st->in.data + 5, n);
		st->in.len = n;
	} else
		buf_reset(&st->in);
	etcd_gstream_finish(st, 200);
	return (0);
}

static int
etcd_gconn_frame_cb(nghttp2_session *s, const nghttp2_frame *frame,
    void *arg)
{
	struct etcd_gconn	*c = arg;

	if (frame->hd.type == NGHTTP2_GOAWAY)
		c->goaway = 1;
	return (0);
}

static int
etcd_gconn_not_sent_cb(nghttp2_session *s, const nghttp2_frame *frame,
    int lib_error_code, void *arg)
{
	struct etcd_gconn	*c = arg;
	struct etcd_gstream	*st;

	if (frame->hd.type != NGHTTP2_HEADERS)
		return (0);
	TAILQ_FOREACH(st, &c->streams, entry) {
		if (st->id == frame->hd.stream_id) {
			etcd_gstream_finish(st, 0);
			break;
		}
	}
	return (0);
}

static void
etcd_gconn_read_cb(struct bufferevent *bev, void *arg)
{
	struct etcd_gconn	*c = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	size_t			 n = evbuffer_get_length(in);
	ssize_t			 r;

	evutil_gettimeofday(&c->last_read, NULL);
	r = nghttp2_session_mem_recv(c->s, evbuffer_pullup(in, -1), n);
	if (r < 0) {
		log_warnx("etcd: gRPC connection to %s: %s", c->authority,
		    nghttp2_strerror((int)r));
		etcd_gconn_fail(c);
		return;
	}
	evbuffer_drain(in, n);
	etcd_gconn_flush(c);
}

/* Why c failed (what: the bufferevent's event), into g->why. */
static void
etcd_gconn_why(struct etcd_gconn *c, short what, int sys)
{
	struct etcd_grpc	*g = c->g;
	char			 why[ETCD_GRPC_WHY_MAX];

	if (c->tls != NULL)
		etcd_tls_failed(g->cred->tls, c->bev, (what & BEV_EVENT_EOF) ?
		    0 : sys, c->shaken && c->last_read.tv_sec == 0, why,
		    sizeof why);
	else
		snprintf(why, sizeof why, "%s", (what & BEV_EVENT_EOF) ?
		    "etcd closed the connection" : sys != 0 ? strerror(sys) :
		    "the connection failed");
	snprintf(g->why, sizeof g->why, "%.48s: %.109s", c->authority, why);
	log_debug("etcd: the connection to %s failed: %s", c->authority, why);
}

static void
etcd_gconn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct etcd_gconn	*c = arg;
	int			 sys = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_CONNECTED) {
		c->shaken = 1;		/* TLS: the handshake is done */
		c->g->why[0] = '\0';
	}
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)) {
		etcd_gconn_why(c, what, sys);
		etcd_gconn_fail(c);
	}
}

/*
 * c's bufferevent, connecting to ai: over TLS (a new SSL for host, which
 * the bufferevent frees) when the endpoint is https.  -1 if it failed.
 */
static int
etcd_gconn_connect(struct etcd_gconn *c, const char *host,
    const struct evutil_addrinfo *ai)
{
	struct etcd_grpc	*g = c->g;

	if (g->cred != NULL && g->cred->tls != NULL &&
	    (g->cred->https & (1u << c->ep))) {
		if ((c->bev = etcd_tls_bev(g->cred->tls, g->base, host,
		    &c->tls)) == NULL)
			return (-1);
	} else if ((c->bev = bufferevent_socket_new(g->base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return (-1);
	bufferevent_setcb(c->bev, etcd_gconn_read_cb, NULL,
	    etcd_gconn_event_cb, c);
	if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) != 0 ||
	    bufferevent_socket_connect(c->bev, ai->ai_addr,
	    (int)ai->ai_addrlen) != 0) {
		snprintf(g->why, sizeof g->why, "%s: %s", c->authority,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

struct etcd_gconn *
etcd_gconn_new(struct etcd_grpc *g, unsigned ep, int lane, const char *host,
    unsigned short port)
{
	nghttp2_session_callbacks	*cbs;
	nghttp2_settings_entry		 set[] = {
		{ NGHTTP2_SETTINGS_ENABLE_PUSH, 0 },
		{ NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, ETCD_GRPC_WINDOW },
	};
	struct evutil_addrinfo		 hints, *ai = NULL;
	struct etcd_gconn		*c;
	char				 ps[8];
	int				 one = 1, fd, rc;

	c = xcalloc(1, sizeof *c);
	c->g = g;
	c->ep = ep;
	c->lane = lane;
	TAILQ_INIT(&c->streams);
	/* An IPv6 literal keeps its brackets in :authority only. */
	snprintf(c->authority, sizeof c->authority, strchr(host, ':') != NULL ?
	    "[%s]:%u" : "%s:%u", host, port);
	snprintf(ps, sizeof ps, "%u", port);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = evutil_getaddrinfo(host, ps, &hints, &ai)) != 0 ||
	    ai == NULL) {
		snprintf(g->why, sizeof g->why, "%s: %s", c->authority,
		    rc != 0 ? evutil_gai_strerror(rc) : "no address");
		goto fail;
	}
	if (etcd_gconn_connect(c, host, ai) != 0)
		goto fail;
	evutil_freeaddrinfo(ai);
	ai = NULL;
	if ((fd = bufferevent_getfd(c->bev)) >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	if (nghttp2_session_callbacks_new(&cbs) != 0)
		goto fail;
	nghttp2_session_callbacks_set_send_callback(cbs, etcd_gconn_send_cb);
	nghttp2_session_callbacks_set_on_header_callback(cbs,
	    etcd_gstream_header_cb);
	nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs,
	    etcd_gstream_data_cb);
	nghttp2_session_callbacks_set_on_stream_close_callback(cbs,
	    etcd_gstream_close_cb);
	nghttp2_session_callbacks_set_on_frame_recv_callback(cbs,
	    etcd_gconn_frame_cb);
	nghttp2_session_callbacks_set_on_frame_not_send_callback(cbs,
	    etcd_gconn_not_sent_cb);
	if (nghttp2_session_client_new(&c->s, cbs, c) != 0)
		c->s = NULL;
	nghttp2_session_callbacks_del(cbs);
	if (c->s == NULL ||
	    nghttp2_submit_settings(c->s, NGHTTP2_FLAG_NONE, set,
	    sizeof set / sizeof set[0]) != 0 ||
	    nghttp2_session_set_local_window_size(c->s, NGHTTP2_FLAG_NONE, 0,
	    ETCD_GRPC_WINDOW) != 0)
		goto fail;
	g->conn[ep][lane] = c;
	return (c);
fail:
	if (ai != NULL)
		evutil_freeaddrinfo(ai);
	etcd_gconn_fail(c);
	return (NULL);
}
