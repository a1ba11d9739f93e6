/*
 * dropproxy (tests/faults/dropproxy.c): what its two files share;
 * dropproxy_later.c has -d, the pieces of a stream's answer held back.
 */
#ifndef DROPPROXY_H
#define DROPPROXY_H

#include <sys/queue.h>

#include <stddef.h>
#include <time.h>

#include <event2/event.h>
#include <event2/http.h>

#define PROXY_HOST		"127.0.0.1"
#define PROXY_URL_PREFIX	"http://" PROXY_HOST ":"
#define PROXY_MAX_BODY		(64 * 1024 * 1024)	/* request or answer */
#define PROXY_MAX_HEADERS	(64 * 1024)
#define PROXY_MAX_PENDING	(64 * 1024 * 1024)	/* unsent to a client */
#define PROXY_IDLE_TIMEOUT_S	3600	/* a quiet watch stream lives on */
#define PROXY_MATCH_DEFAULT	"\"compare\""
#define PROXY_METHOD_DEFAULT	"/etcdserverpb.KV/Txn"	/* -r */
#define PROXY_PATH_MAX		4096
#define PROXY_DELAY_MAX_MS	10000
#define PROXY_DELAY_PATH	"/v3/watch"	/* the streams -d delays */

#define STR_(x)			#x
#define STR(x)			STR_(x)

struct proxy;
struct proxy_tcp;
struct evconnlistener;

/* A piece of a delayed answer, relayed once its time comes. */
struct proxy_later {
	struct evbuffer			*buf;
	struct timespec			 due;	/* CLOCK_MONOTONIC */
	TAILQ_ENTRY(proxy_later)	 entry;
};

struct proxy_req {
	struct proxy			*px;
	struct evhttp_request		*client;
	struct evhttp_connection	*up_conn;
	int				 drop;
	int				 started;	/* reply begun */
	int				 finished;	/* on the dead list */
	int				 held;		/* end after the later */
	int				 held_ok;
	struct event			*later_ev;	/* NULL: not delayed */
	TAILQ_HEAD(, proxy_later)	 later;
	size_t				 later_bytes;
	char				 method[8];
	char				 path[PROXY_PATH_MAX];
	TAILQ_ENTRY(proxy_req)		 entry;
};

struct proxy {
	struct event_base		*base;
	struct evhttp			*http;
	unsigned short			 port;
	unsigned short			 up_port;
	long				 drops_left;	/* -1: no end */
	long				 delay_ms;	/* 0: none */
	const char			*match;
	const char			*match_raw;	/* -k KEY */
	const char			*method;	/* -r: a gRPC call's */
	char				 match_b64[5472];	/* its base64 */
	unsigned short			 http_port;	/* dropproxy.c's */
	struct evconnlistener		*lst;		/* the front door */
	TAILQ_HEAD(, proxy_tcp)		 tcps;
	const char			*pidfile;
	struct event			*reap;
	TAILQ_HEAD(, proxy_req)		 reqs;
	TAILQ_HEAD(, proxy_req)		 dead;	/* upstream to free */
};

/* dropproxy.c */
int	proxy_client_behind(struct proxy_req *);
void	proxy_reply_end(struct proxy_req *, struct evhttp_request *, int);

/* dropproxy_h2.c */
int	proxy_tcp_listen(struct proxy *);
void	proxy_tcp_free(struct proxy_tcp *);

/* dropproxy_later.c */
void	proxy_later_add(struct proxy_req *, struct evbuffer *);
void	proxy_later_clear(struct proxy_req *);
void	proxy_later_free(struct proxy_req *);
int	proxy_later_init(struct proxy_req *);

#endif
