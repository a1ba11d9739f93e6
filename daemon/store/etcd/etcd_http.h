/*
 * A small client for etcd's JSON gateway: POSTs of JSON bodies, blocking
 * (each with a timeout, run on a private event base with libevent's evhttp,
 * so keep-alive, chunked replies and timeouts are evhttp's) or answered on
 * the daemon's loop (a pool of connections per endpoint), over one of
 * several endpoints: on a connection or I/O failure the next endpoint is
 * tried.  The watch stream (store_etcd_watch.c) uses the same endpoints.
 * The KV calls answered on the loop (txn, range, put, deleterange) go
 * over etcd's gRPC API instead (etcd_grpc.h), with the same JSON in and
 * out, the same failover, timeouts and "no answer".
 *
 * When no endpoint answers, a call has blocked the daemon for up to
 * ETCD_HTTP_TIMEOUT_S per endpoint; so that a whole queue of requests does
 * not do the same, calls then fail at once (unavailable) while a probe on
 * the daemon's own loop asks the endpoints in turn, every ETCD_PROBE_MS,
 * until one answers.
 *
 * Ownership: etcd_http_call() hands the caller a cJSON tree to delete.
 */
#ifndef METAD_ETCD_HTTP_H
#define METAD_ETCD_HTTP_H

#include <sys/queue.h>

#include <stddef.h>

#include <cjson/cJSON.h>

#include "store/etcd/etcd_grpc.h"
#include "store/store.h"

#define ETCD_HTTP_TIMEOUT_S	2
#define ETCD_PROBE_MS		250
/*
 * Connections per endpoint for calls on main: a call goes on an idle one
 * (HTTP/1.1: one request at a time each), so this many are out at once.
 */
#define ETCD_ASYNC_CONNS	80
#define ETCD_REPLY_MAX_BYTES	(64u << 20)
/*
 * A copy of a write whose answer was lost waits this long for its own
 * (on a connection of its own to each endpoint): only one copy can land,
 * so the next one may go soon, and a member that holds it during an
 * election does not hold the write for a whole ETCD_HTTP_TIMEOUT_S.
 */
#define ETCD_COPY_TIMEOUT_MS	500
/*
 * A call that may be repeated (a read), answered "unavailable" by etcd
 * (a leader change, no leader yet), is made again after a pause, this many
 * times at most: an election takes a second or two.
 */
#define ETCD_BUSY_TRIES		20
#define ETCD_BUSY_PAUSE_MS	100

struct evhttp_request;
struct etcd_acall;

struct etcd_endpoint {
	char			 url[128];
	char			 host[96];
	unsigned short		 port;
	int			 healthy;
};

struct etcd_http {
	struct event_base	*base;		/* private, for blocking calls */
	struct etcd_grpc	 sync;		/* their gRPC, on base */
	struct etcd_endpoint	 ep[STORE_ENDPOINTS_MAX];
	unsigned		 nep;
	unsigned		 cur;		/* the endpoint in use */
	/* Failing fast (main: the daemon's loop, NULL: never). */
	struct event_base	*main;
	int			 down;
	struct event		*probe_timer;
	unsigned		 probe_ep;	/* asked over gRPC */
	/* Calls answered on main (etcd_http_call_async). */
	struct evhttp_connection *aconn[STORE_ENDPOINTS_MAX][ETCD_ASYNC_CONNS];
	unsigned		 abusy[STORE_ENDPOINTS_MAX][ETCD_ASYNC_CONNS];
	struct evhttp_connection *cconn[STORE_ENDPOINTS_MAX];	/* copies */
	LIST_HEAD(, etcd_acall)	 acalls;	/* in flight */
	/* The KV calls answered on main go over gRPC. */
	struct etcd_grpc	 grpc;
};

/* The answer of an asynchronous call: reply (deleted after), or err. */
typedef void (*etcd_http_cb)(void *arg, const cJSON *reply,
		    const struct store_err *err);

/* main: the loop the recovery probe runs on, or NULL for none. */
int	 etcd_http_init(struct etcd_http *, const char *urls,
	    struct event_base *main, struct store_err *);
void	 etcd_http_close(struct etcd_http *);
/* POST body to path; *out the parsed reply.  Errors: unavailable, etc. */
int	 etcd_http_call(struct etcd_http *, const char *path, const char *body,
	    cJSON **out, struct store_err *);
/*
 * The same, without blocking: cb runs later on main, never before this
 * returns.  -1 (err filled, cb never runs) if it failed at once.
 */
int	 etcd_http_call_async(struct etcd_http *, const char *path,
	    const char *body, etcd_http_cb cb, void *arg, struct store_err *);
/*
 * The same, sent once: when no answer comes, it is not sent to another
 * endpoint (it may have been done), and cb gets STORE_ERR_UNKNOWN.  For
 * writes, whose caller finds out what happened.
 */
int	 etcd_http_call_once(struct etcd_http *, const char *path,
	    const char *body, etcd_http_cb cb, void *arg, struct store_err *);
/* The same for a copy of such a write: ETCD_COPY_TIMEOUT_MS. */
int	 etcd_http_call_copy(struct etcd_http *, const char *path,
	    const char *body, etcd_http_cb cb, void *arg, struct store_err *);
/*
 * The same, to endpoint ep only (no failover, whether or not etcd is
 * thought down): the health of each endpoint, for status.
 */
int	 etcd_http_call_at(struct etcd_http *, unsigned ep, const char *path,
	    const char *body, etcd_http_cb cb, void *arg, struct store_err *);
/*
 * One of those (how: ETCD_CALL_ONCE, | ETCD_CALL_COPY for a copy, or 0
 * for async) with a KV call's request already in protobuf (etcd_pb.h),
 * and its answer in protobuf (checked well-formed), or NULL and err.
 * The call takes pb's bytes (pb is left empty), sent or not.
 */
typedef void (*etcd_http_pb_cb)(void *arg, const struct buf *answer,
		    const struct store_err *err);
#define ETCD_CALL_PINNED	0x1
#define ETCD_CALL_ONCE		0x2
#define ETCD_CALL_COPY		0x4
int	 etcd_http_call_pb(struct etcd_http *, int how, const char *path,
	    struct buf *pb, etcd_http_pb_cb cb, void *arg,
	    struct store_err *);
/* Build a request for path with a JSON body on conn. */
struct evhttp_request *etcd_http_request(struct evhttp_connection *,
	    const struct etcd_endpoint *, const char *path, const char *body,
	    void (*)(struct evhttp_request *, void *), void *);

char	*etcd_prefix_end64(const char *, size_t);
/* "http://HOST:PORT" (len bytes of url) into ep. */
int	 etcd_http_parse_url(struct etcd_endpoint *, const char *url,
	    size_t len, struct store_err *);

/* The gateway's encodings. */
char	*etcd_b64(const void *, size_t);
/* Decodes a base64 field of obj (absent: empty); malloc'd, *len set. */
unsigned char *etcd_unb64(const cJSON *obj, const char *name, size_t *len);
/* An int64-as-string (or number) field; 0 when absent. */
uint64_t etcd_u64(const cJSON *obj, const char *name);

#endif
