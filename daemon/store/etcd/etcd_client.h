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
 * https:// endpoints are reached over TLS (store_tls.h).  With a user
 * (--store-user), the client authenticates at init and sends the token on
 * every call (etcd_auth.c); a call etcd answers "invalid auth token" (it
 * expired, or etcd restarted) waits for a new one and is sent again, once:
 * etcd checks the token before it does anything, so a write refused so was
 * not done.
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

/* A password file's line, at most (etcd_auth.c). */
#define ETCD_PASSWORD_MAX	1024

struct etcd_acall;

/*
 * A wait for a new token (etcd_client_renew): cb runs once, from the loop,
 * with NULL (the new token is in: send again) or why none could be had.
 */
struct etcd_renewal {
	LIST_ENTRY(etcd_renewal) entry;		/* h->renewals */
	int			 waiting;
	void			(*cb)(void *, const struct store_err *);
	void			*arg;
};

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
	/* TLS and etcd's authentication (etcd_auth.c). */
	struct etcd_grpc_cred	 cred;		/* both gRPC clients' */
	char			*user;		/* NULL: no authentication */
	char			*password;
	int			 authing;	/* an Authenticate out on main */
	LIST_HEAD(, etcd_renewal) renewals;	/* waiting for it */
	struct event		*renew_ev;	/* it could not be sent: */
	struct store_err	 renew_err;	/* why, from the loop */
};

/* The answer of an asynchronous call: reply (deleted after), or err. */
typedef void (*etcd_call_cb)(void *arg, const cJSON *reply,
		    const struct store_err *err);

/*
 * opts: base, the loop the recovery probe runs on (NULL: none), and the
 * TLS and authentication (store.h); st: the store each call is reported
 * to as it ends (STORE_REPORT_CALL, named by its gRPC method: "Range",
 * "Txn"...), or NULL.
 */
int	 etcd_client_init(struct etcd_client *, const char *urls,
	    const struct store_options *, struct store *st, struct store_err *);
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
/*
 * "http://HOST:PORT" or "https://HOST:PORT" (len bytes of url; HOST a
 * name, an IPv4 address or an IPv6 one in brackets) into ep, without the
 * brackets; *https set for https.
 */
int	 etcd_client_parse_url(struct etcd_endpoint *, const char *url,
	    size_t len, int *https, struct store_err *);
/*
 * etcd refused the token of generation gen (etcd_auth_refused): 1 if a
 * newer one is in (send again now), 0 if w waits for one (its cb runs
 * later), -1 if there is no user to authenticate as.
 */
int	 etcd_client_renew(struct etcd_client *, unsigned gen,
	    struct etcd_renewal *);
/* w no longer waits: its cb will not run. */
void	 etcd_renewal_cancel(struct etcd_renewal *);
/*
 * An answer (status, error body b, or a watch's cancel reason with
 * status 0) saying that etcd refused the token: invalid or expired, or
 * older than a change of its users and roles.
 */
int	 etcd_auth_refused(int status, const char *msg, size_t len);

#endif
