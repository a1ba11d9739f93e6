/*
 * etcd's gRPC API over HTTP/2 (etcd_grpc.h): libnghttp2 frames the calls,
 * a bufferevent carries the bytes, over TLS to an https endpoint
 * (store_tls.c; why a connection failed is kept for the messages) (this
 * file: what comes on the connections; etcd_grpc_conn.c makes them;
 * etcd_grpc_call.c starts the calls and streams).  A gRPC
 * message is a 5-byte prefix (a compressed flag, never set here, and a
 * big-endian length) and the protobuf; the status comes in the trailers
 * (grpc-status, grpc-message), or in the headers alone when the call
 * failed at once.
 */
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
#include "log.h"
#include "util.h"

/* A stream's header blocks, names and values, at most. */
#define ETCD_GRPC_HEADERS_MAX	(64 << 10)
/* What a connection's streams hold at once: two answers at the limit. */
#define ETCD_GRPC_HELD_MAX(g)	(2 * ((g)->max_bytes + 5))

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

/*
 * What etcd sent on c is past a limit (what): the connection is closed
 * (metad-protocol(7), LIMITS: a remote store's answers are bounded before
 * they are buffered), every call on it unanswered.  For nghttp2's
 * callbacks to return: the session's read fails, and its caller closes c.
 */
static int
etcd_gconn_refuse(struct etcd_gconn *c, struct etcd_gstream *st,
    const char *what, size_t n, size_t max)
{
	log_warnx("etcd: %s on %s is %zu bytes, past the limit of %zu: "
	    "closing the connection to %s", what, st != NULL ?
	    etcd_pb_method(st->rpc) : "a stream", n, max, c->authority);
	return (NGHTTP2_ERR_CALLBACK_FAILURE);
}

/*
 * DATA kept in st->in, counted in its connection's held bytes: 0, or -1
 * (logged) if that would pass what a connection may hold.
 */
static int
etcd_gstream_hold(struct etcd_gstream *st, const void *p, size_t n)
{
	struct etcd_gconn	*c = st->c;

	if (c->held + n > ETCD_GRPC_HELD_MAX(st->g)) {
		etcd_gconn_refuse(c, st, "what the connection's answers hold",
		    c->held + n, ETCD_GRPC_HELD_MAX(st->g));
		return (-1);
	}
	buf_add(&st->in, p, n);
	st->held += n;
	c->held += n;
	return (0);
}

/* st->in is given up: its bytes no longer count. */
static void
etcd_gstream_unhold(struct etcd_gstream *st)
{
	if (st->c != NULL)
		st->c->held -= st->held;
	st->held = 0;
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
	etcd_gstream_unhold(st);
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
	st->hdr_bytes += namelen + valuelen;
	if (st->hdr_bytes > ETCD_GRPC_HEADERS_MAX)
		return (etcd_gconn_refuse(st->c, st, "a header block",
		    st->hdr_bytes, ETCD_GRPC_HEADERS_MAX));
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
		if (etcd_gstream_hold(st, p, take) != 0)
			goto held;
		off = take;
		if (st->in.len < 5)
			return (0);
		n = etcd_grpc_msglen(st->in.data);
		if (n > st->g->max_bytes)
			goto large;
		if (st->in.data[0] != 0)
			goto bad;
		take = 5 + (size_t)n - st->in.len;
		take = take < len - off ? take : len - off;
		if (etcd_gstream_hold(st, p + off, take) != 0)
			goto held;
		off += take;
		if (st->in.len < 5 + (size_t)n)
			return (0);
		if (st->mcb(st->arg, (const uint8_t *)st->in.data + 5, n) != 0)
			goto bad;
		buf_reset(&st->in);
		etcd_gstream_unhold(st);
	}
	while (len - off >= 5) {
		n = etcd_grpc_msglen(p + off);
		if (n > st->g->max_bytes)
			goto large;
		if (p[off] != 0)
			goto bad;
		if (len - off - 5 < n)
			break;
		if (st->mcb(st->arg, p + off + 5, n) != 0)
			goto bad;
		off += 5 + n;
	}
	if (off < len && etcd_gstream_hold(st, p + off, len - off) != 0)
		goto held;
	return (0);
bad:
	log_warnx("etcd: a malformed gRPC message (%u bytes) on %s", n,
	    etcd_pb_method(st->rpc));
	nghttp2_submit_rst_stream(st->c->s, NGHTTP2_FLAG_NONE, st->id,
	    NGHTTP2_CANCEL);
	etcd_gstream_finish(st, 0);
	return (0);
large:
	/* Never buffered: the stream ends, and its connection closes. */
	etcd_gconn_refuse(st->c, st, "a gRPC message", n, st->g->max_bytes);
held:
	etcd_gstream_finish(st, 0);
	return (NGHTTP2_ERR_CALLBACK_FAILURE);
}

/* The length the prefix of a call's answer says, DATA p its next bytes
 * (with st->in, at least 5 bytes). */
static size_t
etcd_gstream_claim(const struct etcd_gstream *st, const uint8_t *p)
{
	uint8_t	 pre[5];
	size_t	 have = st->in.len < 5 ? st->in.len : 5;

	if (have > 0)
		memcpy(pre, st->in.data, have);
	memcpy(pre + have, p, 5 - have);
	return (etcd_grpc_msglen(pre));
}

static int
etcd_gstream_data_cb(nghttp2_session *s, uint8_t flags, int32_t id,
    const uint8_t *data, size_t len, void *arg)
{
	struct etcd_gstream	*st;
	struct etcd_gconn	*c = arg;
	size_t			 n = 0;

	if ((st = nghttp2_session_get_stream_user_data(s, id)) == NULL)
		return (0);
	if (st->mcb != NULL)
		return (etcd_gstream_msgs(st, data, len));
	/* The answer's length, once its prefix is in: past the limit,
	 * refused before anything is buffered; more DATA than it, malformed. */
	if (st->in.len + len >= 5 && (n = etcd_gstream_claim(st, data)) >
	    st->g->max_bytes) {
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id,
		    NGHTTP2_CANCEL);
		etcd_gstream_finish(st, -1);
		return (etcd_gconn_refuse(c, st, "an answer", n,
		    st->g->max_bytes));
	}
	if (st->in.len + len >= 5 && st->in.len + len > 5 + n) {
		log_warnx("etcd: an answer on %s is longer than its message "
		    "(%zu bytes)", etcd_pb_method(st->rpc), n);
		nghttp2_submit_rst_stream(s, NGHTTP2_FLAG_NONE, id,
		    NGHTTP2_CANCEL);
		etcd_gstream_finish(st, 0);
		return (0);
	}
	if (st->in.cap == 0 && len >= 5)	/* room for all of it at once */
		buf_reserve(&st->in, 5 + etcd_grpc_msglen(data));
	if (etcd_gstream_hold(st, data, len) != 0) {
		etcd_gstream_finish(st, -1);
		return (NGHTTP2_ERR_CALLBACK_FAILURE);
	}
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
	struct etcd_gconn	*c;
	const uint8_t		*p;
	uint32_t		 n = 0;
	size_t			 cost;

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
	/* Decoded, a message of small fields takes some 40 times its size:
	 * one that would take more than ETCD_PB_DECODE_MAX is refused. */
	if (!st->raw && n == st->in.len - 5 && (cost = etcd_pb_decode_cost(
	    st->rpc, p + 5, n)) > ETCD_PB_DECODE_MAX(n)) {
		c = st->c;
		etcd_gstream_finish(st, 0);
		log_warnx("etcd: the answer to %s (%u bytes) would take %zu "
		    "bytes decoded, past the limit of %zu: closing the "
		    "connection to %s", etcd_pb_method(st->rpc), n, cost,
		    ETCD_PB_DECODE_MAX(n), c->authority);
		return (NGHTTP2_ERR_CALLBACK_FAILURE);
	}
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

void
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

void
etcd_gconn_callbacks(nghttp2_session_callbacks *cbs)
{
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
}
