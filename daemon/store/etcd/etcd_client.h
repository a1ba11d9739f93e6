/*
 * metad's client of etcd, over etcd's gRPC API (etcd_grpc.h) on one of
 * several endpoints: calls whose requests and answers keep the shape of
 * etcd's JSON gateway (etcd_pb.h converts; or in protobuf), blocking (each
 * with a timeout, on a private event base with a gRPC client of its own)
 * or answered on the daemon's loop; on a connection failure or a call
 * with no answer the next endpoint is tried (a call sent once is not: it
 * may have been done).  The watch stream (store_etcd_watch.c) uses the
 * same endpoints and the loop's gRPC client.
 *
 * When no endpoint answers, a call has blocked the daemon for up to
 * ETCD_CALL_TIMEOUT_S per endpoint; so that a whole queue of requests does
 * not do the same, calls then fail at once (unavailable) while a probe on
 * the daemon's own loop asks the endpoints in turn (Maintenance.Status),
 * every ETCD_PROBE_MS, until one answers.
 *
 * Ownership: etcd_call_sync() hands the caller a cJSON tree to delete.
 */
#ifndef METAD_ETCD_CLIENT_H
#define METAD_ETCD_CLIENT_H

#include <sys/queue.h>

#include <stddef.h>

#include <cjson/cJSON.h>

#include "store/etcd/etcd_grpc.h"
#include "store/store_backend.h"

#define ETCD_CALL_TIMEOUT_S	2
#define ETCD_PROBE_MS		250
#define ETCD_REPLY_MAX_BYTES	(64u << 20)
/*
 * A copy of a write whose answer was lost waits this long for its own
 * (on a connection of its own to each endpoint): only one copy can land,
 * so the next one may go soon, and a member that holds it during an
 * election does not hold the write for a whole ETCD_CALL_TIMEOUT_S.
 */
#define ETCD_COPY_TIMEOUT_MS	500
/*
 * A call that may be repeated (a read), answered "unavailable" by etcd
 * (a leader change, no leader yet), is made again after a pause, this many
 * times at most: an election takes a second or two.
 */
#define ETCD_BUSY_TRIES		20
#define ETCD_BUSY_PAUSE_MS	100

struct etcd_acall;

struct etcd_endpoint {
	char			 url[128];
	char			 host[96];
	unsigned short		 port;
	int			 healthy;
};

struct etcd_client {
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
	/* Calls answered on main (etcd_call_async), over grpc. */
	LIST_HEAD(, etcd_acall)	 acalls;	/* in flight */
	struct etcd_grpc	 grpc;
	/* Each call's end is reported to it (store_report()), or NULL. */
	struct store		*st;
};

/* The answer of an asynchronous call: reply (deleted after), or err. */
typedef void (*etcd_call_cb)(void *arg, const cJSON *reply,
		    const struct store_err *err);

/*
 * main: the loop the recovery probe runs on, or NULL for none; st: the
 * store each call is reported to as it ends (STORE_REPORT_CALL, named by
 * its gRPC method: "Range", "Txn"...), or NULL.
 */
int	 etcd_client_init(struct etcd_client *, const char *urls,
	    struct event_base *main, struct store *st, struct store_err *);
/* A call of rpc ended, begun at t0 (mono_us()): err NULL if answered. */
void	 etcd_client_report(struct etcd_client *, enum etcd_pb_rpc,
	    int64_t t0, const struct store_err *);
void	 etcd_client_close(struct etcd_client *);
/*
 * The call of gateway path (etcd_pb_rpc_of) with its JSON body, blocking;
 * *out the answer.  Errors: unavailable, etc.
 */
int	 etcd_call_sync(struct etcd_client *, const char *path, const char *body,
	    cJSON **out, struct store_err *);
/*
 * The same, without blocking: cb runs later on main, never before this
 * returns.  -1 (err filled, cb never runs) if it failed at once.
 */
int	 etcd_call_async(struct etcd_client *, const char *path,
	    const char *body, etcd_call_cb cb, void *arg, struct store_err *);
/*
 * The same, sent once: when no answer comes, it is not sent to another
 * endpoint (it may have been done), and cb gets STORE_ERR_UNKNOWN.  For
 * writes, whose caller finds out what happened.
 */
int	 etcd_call_once(struct etcd_client *, const char *path,
	    const char *body, etcd_call_cb cb, void *arg, struct store_err *);
/*
 * The same, to endpoint ep only (no failover, whether or not etcd is
 * thought down): the health of each endpoint, for status.
 */
int	 etcd_call_at(struct etcd_client *, unsigned ep, const char *path,
	    const char *body, etcd_call_cb cb, void *arg, struct store_err *);
/*
 * One of those (how: ETCD_CALL_ONCE, | ETCD_CALL_COPY for a copy of such
 * a write, whose answer waits ETCD_COPY_TIMEOUT_MS, or 0 for async) with
 * the request already in protobuf (etcd_pb.h),
 * and its answer in protobuf (checked well-formed), or NULL and err.
 * The call takes pb's bytes (pb is left empty), sent or not.
 */
typedef void (*etcd_call_pb_cb)(void *arg, const struct buf *answer,
		    const struct store_err *err);
#define ETCD_CALL_PINNED	0x1
#define ETCD_CALL_ONCE		0x2
#define ETCD_CALL_COPY		0x4
int	 etcd_call_pb(struct etcd_client *, int how, const char *path,
	    struct buf *pb, etcd_call_pb_cb cb, void *arg,
	    struct store_err *);
/* "http://HOST:PORT" (len bytes of url) into ep. */
int	 etcd_client_parse_url(struct etcd_endpoint *, const char *url,
	    size_t len, struct store_err *);

#endif
