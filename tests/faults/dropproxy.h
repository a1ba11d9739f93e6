/*
 * dropproxy (tests/faults/dropproxy.c): what its two files share;
 * dropproxy_h2.c relays the connections.
 */
#ifndef DROPPROXY_H
#define DROPPROXY_H

#include <sys/queue.h>

#include <stddef.h>
#include <time.h>

#include <event2/event.h>

#define PROXY_HOST		"127.0.0.1"
#define PROXY_URL_PREFIX	"http://" PROXY_HOST ":"
#define PROXY_MATCH_DEFAULT	"\"compare\""
#define PROXY_METHOD_DEFAULT	"/etcdserverpb.KV/Txn"	/* -r */
#define PROXY_DELAY_MAX_MS	10000

struct proxy;
struct proxy_tcp;
struct evconnlistener;

struct proxy {
	struct event_base		*base;
	unsigned short			 port;
	unsigned short			 up_port;
	long				 drops_left;	/* -1: no end */
	long				 delay_ms;	/* 0: none */
	const char			*match;
	const char			*match_raw;	/* -k KEY */
	const char			*method;	/* -r: a gRPC call's */
	struct evconnlistener		*lst;		/* the front door */
	TAILQ_HEAD(, proxy_tcp)		 tcps;
	const char			*pidfile;
};

/* dropproxy_h2.c */
int	proxy_tcp_listen(struct proxy *);
void	proxy_tcp_free(struct proxy_tcp *);

#endif
