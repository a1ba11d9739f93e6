/*
 * etcd's gRPC API, for every call of etcd_client.c and the watch streams:
 * HTTP/2 with prior knowledge (etcd serves gRPC on its client URLs), or
 * over TLS with ALPN "h2" to an https endpoint (store_tls.h), with the
 * token of etcd's authentication on every call but Authenticate's (struct
 * etcd_grpc_cred), with libnghttp2 on a libevent bufferevent, one connection per
 * endpoint with many calls (streams) on it at once (and one more for the
 * copies of writes whose answer was lost).  A call's request goes in
 * protobuf, its answer comes out as the gateway's JSON (etcd_pb.c converts;
 * a stream's messages come in protobuf, read in place), so that a call answers as
 * the gateway would: an HTTP-like status (200, or the status the gateway
 * gives the gRPC error, with the gateway's error body), or 0 for no answer
 * (the connection failed or closed, or the call timed out: it may have been
 * done; the caller finds out).  A call that times out is reset; when
 * nothing at all came on its connection since it was sent, the connection
 * is given up, and every call on it answers 0, as when a member dies.
 *
 * Answers run from the loop, never inside etcd_grpc_call().
 */
#ifndef METAD_ETCD_GRPC_H
#define METAD_ETCD_GRPC_H

#include <sys/queue.h>

#include <cjson/cJSON.h>

#include "store/etcd/etcd_pb.h"
#include "store/store_backend.h"
#include "util.h"

struct event_base;
struct event;
struct etcd_gconn;
struct etcd_gstream;

/*
 * status 0 (no answer), -1 (an answer over max bytes), 200 (reply, the
 * cb's to keep; for a raw call, NULL and the answer in protobuf in body,
 * checked) or the gateway's error status and body.
 */
typedef void (*etcd_grpc_cb)(void *arg, int status, struct buf *body,
		    cJSON *reply);
/*
 * A message of a stream, in protobuf (p[0..n), the cb reads it in place):
 * 0, or -1 if it is malformed (the stream is reset, and ends).
 */
typedef int (*etcd_grpc_msg_cb)(void *arg, const uint8_t *p, size_t n);

struct store_tls;

/*
 * What the calls of a client's gRPC clients carry (its etcd_client owns
 * it, and may change the token between calls): TLS to the endpoints whose
 * bit is set in https, and the token etcd's Authenticate gave, or NULL.
 */
struct etcd_grpc_cred {
	struct store_tls		*tls;		/* NULL: no https endpoint */
	unsigned		 https;		/* bit ep: endpoint ep's */
	char			*token;		/* NULL: none */
	unsigned		 gen;		/* one more each new token */
};

/* Why the last connection failed, for the messages. */
#define ETCD_GRPC_WHY_MAX	160

/* The connections of an endpoint: calls, copies, streams. */
#define ETCD_GRPC_LANES		3
#define ETCD_GRPC_LANE_STREAMS	2

struct etcd_grpc {
	struct event_base	*base;
	/*
	 * Per endpoint: the calls' connection, the copies' (lane 1), and
	 * the streams' (lane 2: a quiet stream never gives up the calls).
	 */
	struct etcd_gconn	*conn[STORE_ENDPOINTS_MAX][ETCD_GRPC_LANES];
	TAILQ_HEAD(, etcd_gstream) done;	/* answered, cb to run */
	struct event		*fire;
	/* Sends the requests of a loop turn at once (etcd_grpc_call.c). */
	struct event		*flush;
	size_t			 max_bytes;	/* of an answer */
	const struct etcd_grpc_cred *cred;	/* or NULL: plain, no token */
	/* The last connection that failed: "host:port: why", or "". */
	char			 why[ETCD_GRPC_WHY_MAX];
};

int	 etcd_grpc_init(struct etcd_grpc *, struct event_base *,
	    size_t max_bytes, const struct etcd_grpc_cred *);
/* The calls still out are dropped: their cb never runs. */
void	 etcd_grpc_close(struct etcd_grpc *);
/*
 * Call rpc at endpoint ep (host, without an IPv6 literal's brackets, and
 * port) with its request in protobuf
 * (pb[0..n): etcd_pb_encode of the gateway's JSON, or written directly), on
 * the endpoint's connection for lane (0, or 1: the copies of writes whose
 * answer was lost, whose short timeout gives up only their own
 * connection); cb runs later, once, with the answer as the gateway's
 * JSON, or (raw) in protobuf.  -1 (err set, cb never runs) if no
 * connection could be made.
 */
int	 etcd_grpc_call(struct etcd_grpc *, unsigned ep, int lane,
	    const char *host,
	    unsigned short port, enum etcd_pb_rpc, const void *pb, size_t n,
	    int raw, unsigned timeout_ms, etcd_grpc_cb, void *arg,
	    struct store_err *);
/*
 * A streaming call (Watch) with its one request (the gateway's JSON), on
 * the endpoint's streams connection: each message that comes goes to mcb (from inside
 * the connection's read: mcb must not drop the stream); when the stream
 * ends (etcd ended it, the connection failed, or nothing came for
 * idle_ms) end runs later, once, with status 0.  NULL (err set, no
 * callback) if it could not start.
 */
struct etcd_gstream *etcd_grpc_stream(struct etcd_grpc *, unsigned ep,
	    const char *host, unsigned short port, enum etcd_pb_rpc,
	    const char *json, unsigned idle_ms, etcd_grpc_msg_cb,
	    etcd_grpc_cb end, void *arg, struct store_err *);
/* Stop a stream (not from its mcb): no callback of it runs after. */
void	 etcd_grpc_stream_drop(struct etcd_gstream *);
/* The gateway's HTTP status for a gRPC status code. */
int	 etcd_grpc_http_status(int code);

#endif
