/*
 * A gRPC connection to an etcd endpoint (etcd_grpc_int.h): the address
 * resolved, the bufferevent connected (over TLS to an https endpoint,
 * store_tls.c), the HTTP/2 session made with etcd_grpc.c's callbacks, and
 * why a connection failed, kept for the messages.
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
#include "store/store_tls.h"
#include "log.h"
#include "util.h"

/* The flow-control windows offered to etcd: a big answer flows at once. */
#define ETCD_GRPC_WINDOW	(16 << 20)

/* Why c failed (what: the bufferevent's event), into g->why. */
static void
etcd_gconn_why(struct etcd_gconn *c, short what, int sys)
{
	struct etcd_grpc	*g = c->g;
	char			 why[ETCD_GRPC_WHY_MAX];

	if (c->tls != NULL)
		store_tls_failed(g->cred->tls, c->bev, (what & BEV_EVENT_EOF) ?
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
		if ((c->bev = store_tls_bev(g->cred->tls, g->base, host,
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
	etcd_gconn_callbacks(cbs);
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
