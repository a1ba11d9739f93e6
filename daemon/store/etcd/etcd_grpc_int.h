/*
 * The inside of etcd_grpc.c (the connections, the framing) shared with
 * etcd_grpc_call.c (the calls and streams that use them).  Nothing else
 * includes it.
 */
#ifndef METAD_ETCD_GRPC_INT_H
#define METAD_ETCD_GRPC_INT_H

#include <sys/queue.h>
#include <sys/time.h>

#include <event2/bufferevent.h>
#include <event2/util.h>
#include <nghttp2/nghttp2.h>

#include "store/etcd/etcd_grpc.h"

struct ssl_st;

struct etcd_gstream {
	struct etcd_grpc	*g;
	struct etcd_gconn	*c;		/* NULL once answered */
	TAILQ_ENTRY(etcd_gstream) entry;	/* c->streams or g->done */
	int32_t			 id;
	enum etcd_pb_rpc	 rpc;
	struct buf		 out;		/* prefix + protobuf */
	size_t			 off;		/* of out, sent */
	struct buf		 in;		/* DATA received */
	size_t			 held;		/* of in, counted in c->held */
	size_t			 hdr_bytes;	/* of its header blocks */
	int			 http;		/* :status */
	int			 code;		/* grpc-status, -1: none */
	char			*msg;		/* grpc-message */
	int			 status;	/* the answer's */
	cJSON			*reply;
	int			 raw;		/* answer in protobuf (in) */
	struct event		*timer;
	struct timeval		 sent;
	etcd_grpc_cb		 cb;
	etcd_grpc_msg_cb	 mcb;		/* a stream's, else NULL */
	unsigned		 idle_ms;	/* a stream's */
	void			*arg;
};

struct etcd_gconn {
	struct etcd_grpc	*g;
	unsigned		 ep;
	int			 lane;
	char			 authority[128];
	struct bufferevent	*bev;
	struct ssl_st		*tls;		/* bev's, or NULL: plain */
	int			 shaken;	/* connected (TLS: handshake) */
	nghttp2_session		*s;
	TAILQ_HEAD(, etcd_gstream) streams;
	struct timeval		 last_read;
	int			 goaway;
	int			 unsent;	/* requests for g->flush */
	size_t			 held;		/* its streams' DATA kept */
};

void	etcd_gstream_free(struct etcd_gstream *);
/* The answer of st is status: its cb runs from the loop. */
void	etcd_gstream_finish(struct etcd_gstream *, int);
/* The loop runs the callbacks of the calls answered. */
void	etcd_grpc_fire(evutil_socket_t, short, void *);
/* The connection is lost: no call on it will be answered. */
void	etcd_gconn_fail(struct etcd_gconn *);
/* What comes on a connection (etcd_grpc.c): its bufferevent's read
 * callback, and the HTTP/2 session's callbacks (etcd_grpc_conn.c makes
 * both). */
struct bufferevent;
void	etcd_gconn_read_cb(struct bufferevent *, void *);
void	etcd_gconn_callbacks(nghttp2_session_callbacks *);
/* Send what the session has to send; -1: the connection failed. */
int	etcd_gconn_flush(struct etcd_gconn *);
/* The data provider of a call's request. */
ssize_t	etcd_gstream_read_cb(nghttp2_session *, int32_t, uint8_t *, size_t,
	    uint32_t *, nghttp2_data_source *, void *);
/* A connection to endpoint ep for lane (g->conn[ep][lane]), or NULL. */
struct etcd_gconn *etcd_gconn_new(struct etcd_grpc *, unsigned, int,
	    const char *, unsigned short);

#endif
