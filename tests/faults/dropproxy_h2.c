/*
 * dropproxy's front door (dropproxy.h): every connection is accepted here.
 * One that opens with HTTP/2's preface (metad's gRPC calls, h2c) is relayed
 * to etcd frame by frame: the proxy reads the header blocks (HPACK, with
 * libnghttp2's inflater) to know each call's :path, and a call to
 * /etcdserverpb.KV/Txn (-r: to METHOD) whose request matches (with -k
 * KEY: names KEY; -m TEXT: holds TEXT; else: has its field 1, a Txn's
 * compare as metad's writes have, a Compact's revision, a LeaseGrant's
 * TTL, a LeaseRevoke's or LeaseKeepAlive's ID) is let
 * through to etcd; when etcd's answer to it ends, both connections are
 * closed without relaying it: every answer still in flight on that
 * connection is lost with it, as when a member dies.  With -d MS, once a
 * connection carries a call to /etcdserverpb.Watch/Watch (metad's event
 * stream, on a connection of its own), everything etcd sends on it is
 * relayed MS ms late, in order.  Any other connection (HTTP/1.1: etcd's
 * JSON gateway, which metad does not use) is closed at once.
 */
#include <netinet/in.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>
#include <nghttp2/nghttp2.h>

#include "dropproxy.h"

#define H2_PREFACE	"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define H2_PREFACE_LEN	24
#define H2_WATCH_PATH	"/etcdserverpb.Watch/Watch"
#define H2_CALLS_MAX	1024

struct h2_call {
	int32_t			 id;
	int			 txn;
	struct evbuffer		*body;
};

/* Frames from etcd held back (-d), due at due. */
struct h2_later {
	struct evbuffer		*buf;
	struct timespec		 due;	/* CLOCK_MONOTONIC */
	TAILQ_ENTRY(h2_later)	 entry;
};

struct proxy_tcp {
	struct proxy		*px;
	int			 delayed;	/* a watch: -d applies */
	TAILQ_HEAD(, h2_later)	 later;
	struct event		*later_ev;
	struct bufferevent	*cl, *up;
	int			 mode;		/* 0: undecided, 2: h2 */
	int			 preface;	/* passed */
	int			 closing;
	nghttp2_hd_inflater	*hd;
	int32_t			 hd_stream;	/* of the header block */
	struct h2_call		 calls[H2_CALLS_MAX];
	size_t			 ncalls;
	int32_t			 doomed;	/* its answer is dropped */
	TAILQ_ENTRY(proxy_tcp)	 entry;
};

void
proxy_tcp_free(struct proxy_tcp *t)
{
	size_t		 i;
	struct h2_later	*hl;

	TAILQ_REMOVE(&t->px->tcps, t, entry);
	while ((hl = TAILQ_FIRST(&t->later)) != NULL) {
		TAILQ_REMOVE(&t->later, hl, entry);
		evbuffer_free(hl->buf);
		free(hl);
	}
	if (t->later_ev != NULL)
		event_free(t->later_ev);
	if (t->cl != NULL)
		bufferevent_free(t->cl);
	if (t->up != NULL)
		bufferevent_free(t->up);
	if (t->hd != NULL)
		nghttp2_hd_inflate_del(t->hd);
	for (i = 0; i < t->ncalls; i++)
		evbuffer_free(t->calls[i].body);
	free(t);
}

static struct h2_call *
h2_call(struct proxy_tcp *t, int32_t id)
{
	size_t	 i;

	for (i = 0; i < t->ncalls; i++) {
		if (t->calls[i].id == id)
			return (&t->calls[i]);
	}
	if (t->ncalls == H2_CALLS_MAX)
		return (NULL);
	t->calls[t->ncalls].id = id;
	t->calls[t->ncalls].txn = 0;
	t->calls[t->ncalls].body = evbuffer_new();
	return (&t->calls[t->ncalls++]);
}

/* A varint at *p (n bytes left) into *v, *p and *n past it; -1: cut. */
static int
h2_varint(const uint8_t **p, size_t *n, uint64_t *v)
{
	size_t	 i;

	for (*v = 0, i = 0; i < *n && i < 10; i++) {
		*v |= (uint64_t)((*p)[i] & 0x7f) << (7 * i);
		if (((*p)[i] & 0x80) == 0)
			break;
	}
	if (i >= *n || i >= 10)
		return (-1);
	*p += i + 1;
	*n -= i + 1;
	return (0);
}

/* A protobuf message's top level has field no (varint or bytes). */
static int
h2_has_field(const uint8_t *p, size_t n, unsigned no)
{
	uint64_t	 tag, v;

	while (n > 0) {
		if (h2_varint(&p, &n, &tag) != 0)
			return (0);
		if ((tag & 7) != 2 && (tag & 7) != 0)
			return (0);
		if (h2_varint(&p, &n, &v) != 0)
			return (0);
		if ((tag >> 3) == no)
			return (1);
		if ((tag & 7) == 2) {
			if (v > n)
				return (0);
			p += v;
			n -= v;
		}
	}
	return (0);
}

/* The request of call c is complete: is its answer to be lost? */
static void
h2_call_end(struct proxy_tcp *t, struct h2_call *c)
{
	struct proxy	*px = t->px;
	size_t		 n = evbuffer_get_length(c->body);
	uint8_t		*p = evbuffer_pullup(c->body, -1);
	const char	*m = px->match_raw != NULL ? px->match_raw :
			    strcmp(px->match, PROXY_MATCH_DEFAULT) != 0 ? px->match :
			    NULL;
	int		 hit;

	if (!c->txn || px->drops_left == 0 || t->doomed != 0 || n < 5)
		goto done;
	if (m != NULL)
		hit = memmem(p, n, m, strlen(m)) != NULL;
	else
		hit = h2_has_field(p + 5, n - 5, 1);
	if (hit) {
		t->doomed = c->id;
		if (px->drops_left > 0)
			px->drops_left--;
	}
done:
	evbuffer_free(c->body);
	*c = t->calls[--t->ncalls];
}

/* A header block fragment of stream id; final: the block's last. */
static int
h2_headers(struct proxy_tcp *t, int32_t id, const uint8_t *p, size_t n,
    int final)
{
	struct h2_call	*c = h2_call(t, id);
	nghttp2_nv	 nv;
	ssize_t		 r;
	int		 flags;

	for (;;) {
		flags = 0;
		r = nghttp2_hd_inflate_hd2(t->hd, &nv, &flags, p, n, final);
		if (r < 0)
			return (-1);
		p += r;
		n -= (size_t)r;
		if ((flags & NGHTTP2_HD_INFLATE_EMIT) && c != NULL &&
		    nv.namelen == 5 && memcmp(nv.name, ":path", 5) == 0 &&
		    nv.valuelen == strlen(t->px->method) &&
		    memcmp(nv.value, t->px->method, nv.valuelen) == 0)
			c->txn = 1;
		if ((flags & NGHTTP2_HD_INFLATE_EMIT) && t->px->delay_ms > 0 &&
		    nv.namelen == 5 && memcmp(nv.name, ":path", 5) == 0 &&
		    nv.valuelen == strlen(H2_WATCH_PATH) &&
		    memcmp(nv.value, H2_WATCH_PATH, nv.valuelen) == 0)
			t->delayed = 1;
		if (flags & NGHTTP2_HD_INFLATE_FINAL) {
			nghttp2_hd_inflate_end_headers(t->hd);
			break;
		}
		if (r == 0 && n == 0 && !(flags & NGHTTP2_HD_INFLATE_EMIT))
			break;
	}
	return (0);
}

/* One frame from metad (hd its 9-byte header, p its payload). */
static int
h2_client_frame(struct proxy_tcp *t, const uint8_t *hd, const uint8_t *p,
    size_t n)
{
	uint8_t		 type = hd[3], flags = hd[4];
	int32_t		 id = (int32_t)((uint32_t)(hd[5] & 0x7f) << 24 |
			    (uint32_t)hd[6] << 16 | (uint32_t)hd[7] << 8 |
			    hd[8]);
	struct h2_call	*c;
	size_t		 pad = 0;

	if ((type == 0 || type == 1) && (flags & 0x8)) {	/* PADDED */
		if (n < 1 || (pad = p[0]) + 1 > n)
			return (-1);
		p++;
		n -= pad + 1;
	}
	if (type == 1 && (flags & 0x20)) {			/* PRIORITY */
		if (n < 5)
			return (-1);
		p += 5;
		n -= 5;
	}
	if (type == 3) {				/* RST_STREAM */
		for (pad = 0; pad < t->ncalls; pad++) {
			if (t->calls[pad].id == id) {
				evbuffer_free(t->calls[pad].body);
				t->calls[pad] = t->calls[--t->ncalls];
				break;
			}
		}
		return (0);
	}
	if (type == 1 || type == 9) {		/* HEADERS, CONTINUATION */
		if (h2_headers(t, id, p, n, (flags & 0x4) != 0) != 0)
			return (-1);
	} else if (type == 0 && (c = h2_call(t, id)) != NULL && c->txn)
		evbuffer_add(c->body, p, n);
	if ((type == 0 || type == 1) && (flags & 0x1) &&	/* END_STREAM */
	    (c = h2_call(t, id)) != NULL)
		h2_call_end(t, c);
	return (0);
}

static void
h2_now(struct timespec *ts)
{
	if (clock_gettime(CLOCK_MONOTONIC, ts) == -1) {
		perror("dropproxy: clock_gettime");
		exit(1);
	}
}

/* Arm the timer for the first frames held back (if any). */
static void
h2_later_arm(struct proxy_tcp *t)
{
	struct h2_later	*hl;
	struct timespec	 now;
	struct timeval	 tv = { 0, 0 };
	long long	 ns;

	if ((hl = TAILQ_FIRST(&t->later)) == NULL)
		return;
	h2_now(&now);
	ns = (long long)(hl->due.tv_sec - now.tv_sec) * 1000000000LL +
	    (hl->due.tv_nsec - now.tv_nsec);
	if (ns > 0) {
		tv.tv_sec = (time_t)(ns / 1000000000LL);
		tv.tv_usec = (suseconds_t)(ns % 1000000000LL / 1000);
	}
	evtimer_add(t->later_ev, &tv);
}

/* Relay the frames whose time came, in order. */
static void
h2_later_fire(evutil_socket_t fd, short what, void *arg)
{
	struct proxy_tcp	*t = arg;
	struct h2_later		*hl;
	struct timespec		 now;

	h2_now(&now);
	while ((hl = TAILQ_FIRST(&t->later)) != NULL &&
	    (hl->due.tv_sec < now.tv_sec || (hl->due.tv_sec == now.tv_sec &&
	    hl->due.tv_nsec <= now.tv_nsec))) {
		TAILQ_REMOVE(&t->later, hl, entry);
		bufferevent_write_buffer(t->cl, hl->buf);
		evbuffer_free(hl->buf);
		free(hl);
	}
	h2_later_arm(t);
}

/* Hold n bytes of in (whole frames from etcd) back for -d MS. */
static int
h2_later_add(struct proxy_tcp *t, struct evbuffer *in, size_t n)
{
	struct h2_later	*hl;
	long		 ms = t->px->delay_ms;

	if (t->later_ev == NULL && (t->later_ev = evtimer_new(t->px->base,
	    h2_later_fire, t)) == NULL)
		return (-1);
	if ((hl = calloc(1, sizeof *hl)) == NULL ||
	    (hl->buf = evbuffer_new()) == NULL) {
		free(hl);
		return (-1);
	}
	h2_now(&hl->due);
	hl->due.tv_sec += ms / 1000;
	hl->due.tv_nsec += (ms % 1000) * 1000000L;
	if (hl->due.tv_nsec >= 1000000000L) {
		hl->due.tv_sec++;
		hl->due.tv_nsec -= 1000000000L;
	}
	evbuffer_remove_buffer(in, hl->buf, n);
	TAILQ_INSERT_TAIL(&t->later, hl, entry);
	if (TAILQ_FIRST(&t->later) == hl)
		h2_later_arm(t);
	return (0);
}

/*
 * The complete frames in from's input, to the other side; each seen by fn
 * first (frames from metad), or checked for the doomed answer's end.
 */
static int
h2_relay(struct proxy_tcp *t, struct bufferevent *from, int client)
{
	struct evbuffer	*in = bufferevent_get_input(from);
	struct bufferevent *to = client ? t->up : t->cl;
	uint8_t		*f;
	size_t		 len;

	if (client && !t->preface) {
		if (evbuffer_get_length(in) < H2_PREFACE_LEN)
			return (0);
		evbuffer_remove_buffer(in, bufferevent_get_output(to),
		    H2_PREFACE_LEN);
		t->preface = 1;
	}
	while ((len = evbuffer_get_length(in)) >= 9) {
		f = evbuffer_pullup(in, 9);
		len = (size_t)f[0] << 16 | (size_t)f[1] << 8 | f[2];
		if (evbuffer_get_length(in) < 9 + len)
			break;
		f = evbuffer_pullup(in, (ssize_t)(9 + len));
		if (client && h2_client_frame(t, f, f + 9, len) != 0)
			return (-1);
		if (!client && t->doomed != 0 && (f[3] == 0 || f[3] == 1) &&
		    (f[4] & 0x1) && ((uint32_t)(f[5] & 0x7f) << 24 |
		    (uint32_t)f[6] << 16 | (uint32_t)f[7] << 8 | f[8]) ==
		    (uint32_t)t->doomed) {
			fprintf(stderr, "dropproxy: dropped the reply to POST "
			    "%s (gRPC stream %d: its connection closed)\n",
			    t->px->method, (int)t->doomed);
			return (-1);
		}
		if (!client && t->delayed) {
			if (h2_later_add(t, in, 9 + len) != 0)
				return (-1);
		} else
			evbuffer_remove_buffer(in, bufferevent_get_output(to),
			    9 + len);
	}
	return (0);
}

static void
tcp_drained_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_tcp	*t = arg;

	if (evbuffer_get_length(bufferevent_get_output(bev)) == 0)
		proxy_tcp_free(t);
}

/* One side ended: the other gets what is left, then both close. */
static void
tcp_close(struct proxy_tcp *t, struct bufferevent *gone)
{
	struct bufferevent	*other = gone == t->cl ? t->up : t->cl;

	if (other == NULL || t->closing ||
	    evbuffer_get_length(bufferevent_get_output(other)) == 0) {
		proxy_tcp_free(t);
		return;
	}
	t->closing = 1;
	bufferevent_disable(gone, EV_READ);
	bufferevent_disable(other, EV_READ);
	bufferevent_setcb(other, NULL, tcp_drained_cb, NULL, t);
}

static void	tcp_read_cb(struct bufferevent *, void *);

static void
tcp_event_cb(struct bufferevent *bev, short what, void *arg)
{
	if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR))
		tcp_close(arg, bev);
}

/* Undecided: HTTP/2's preface, or not; then the upstream is connected. */
static int
tcp_decide(struct proxy_tcp *t)
{
	struct evbuffer		*in = bufferevent_get_input(t->cl);
	size_t			 n = evbuffer_get_length(in);
	struct sockaddr_in	 sin;
	uint8_t			*p;

	if (n > H2_PREFACE_LEN)
		n = H2_PREFACE_LEN;
	p = evbuffer_pullup(in, (ssize_t)n);
	if (memcmp(p, H2_PREFACE, n) == 0 && n < H2_PREFACE_LEN)
		return (0);	/* more to come */
	if (memcmp(p, H2_PREFACE, n) != 0)
		return (-1);	/* not HTTP/2: closed */
	t->mode = 2;
	if (nghttp2_hd_inflate_new(&t->hd) != 0)
		return (-1);
	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(t->px->up_port);
	if ((t->up = bufferevent_socket_new(t->px->base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL)
		return (-1);
	bufferevent_setcb(t->up, tcp_read_cb, NULL, tcp_event_cb, t);
	if (bufferevent_enable(t->up, EV_READ | EV_WRITE) != 0 ||
	    bufferevent_socket_connect(t->up, (struct sockaddr *)&sin,
	    sizeof sin) != 0)
		return (-1);
	return (0);
}

static void
tcp_read_cb(struct bufferevent *bev, void *arg)
{
	struct proxy_tcp	*t = arg;
	int			 client = bev == t->cl;

	if (t->mode == 0 && (tcp_decide(t) != 0)) {
		proxy_tcp_free(t);
		return;
	}
	if (t->mode == 2 && h2_relay(t, bev, client) != 0)
		proxy_tcp_free(t);
}

static void
tcp_accept_cb(struct evconnlistener *l, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct proxy		*px = arg;
	struct proxy_tcp	*t;

	if ((t = calloc(1, sizeof *t)) == NULL) {
		evutil_closesocket(fd);
		return;
	}
	t->px = px;
	TAILQ_INIT(&t->later);
	TAILQ_INSERT_TAIL(&px->tcps, t, entry);
	if ((t->cl = bufferevent_socket_new(px->base, fd,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		evutil_closesocket(fd);
		proxy_tcp_free(t);
		return;
	}
	bufferevent_setcb(t->cl, tcp_read_cb, NULL, tcp_event_cb, t);
	bufferevent_enable(t->cl, EV_READ | EV_WRITE);
}

int
proxy_tcp_listen(struct proxy *px)
{
	struct sockaddr_in	 sin;

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons(px->port);
	px->lst = evconnlistener_new_bind(px->base, tcp_accept_cb, px,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
	    (struct sockaddr *)&sin, sizeof sin);
	return (px->lst != NULL ? 0 : -1);
}
