/*
 * etcd's gRPC API, for the KV calls of etcd_http.c's asynchronous calls:
 * HTTP/2 without TLS, with prior knowledge (etcd serves gRPC on its client
 * URLs), with libnghttp2 on a libevent bufferevent, one connection per
 * endpoint with many calls (streams) on it at once (and one more for the
 * copies of writes whose answer was lost).  The gateway's JSON
 * goes in and comes out (etcd_pb.c converts), so that a call answers as
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

#include "etcd_pb.h"
#include "store.h"
#include "util.h"

struct event_base;
struct event;
struct etcd_gconn;
struct etcd_gstream;

/*
 * status 0 (no answer), -1 (an answer over max bytes), 200 (reply, the
 * cb's to keep, or NULL) or the gateway's error status and body.
 */
typedef void (*etcd_grpc_cb)(void *arg, int status, struct buf *body,
		    cJSON *reply);

struct etcd_grpc {
	struct event_base	*base;
	/* Per endpoint: the calls' connection, and the copies' (lane 1). */
	struct etcd_gconn	*conn[STORE_ENDPOINTS_MAX][2];
	TAILQ_HEAD(, etcd_gstream) done;	/* answered, cb to run */
	struct event		*fire;
	size_t			 max_bytes;	/* of an answer */
};

int	 etcd_grpc_init(struct etcd_grpc *, struct event_base *,
	    size_t max_bytes);
/* The calls still out are dropped: their cb never runs. */
void	 etcd_grpc_close(struct etcd_grpc *);
/*
 * Call rpc at endpoint ep (host:port) with the gateway's request json, on
 * the endpoint's connection for lane (0, or 1: the copies of writes whose
 * answer was lost, whose short timeout gives up only their own
 * connection); cb runs later, once.  -1 (err set, cb never runs) if json
 * is not such a request or no connection could be made.
 */
int	 etcd_grpc_call(struct etcd_grpc *, unsigned ep, int lane,
	    const char *host,
	    unsigned short port, enum etcd_pb_rpc, const char *json,
	    unsigned timeout_ms, etcd_grpc_cb, void *arg, struct store_err *);
/* The gateway's HTTP status for a gRPC status code. */
int	 etcd_grpc_http_status(int code);

#endif
