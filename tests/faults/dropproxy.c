/*
 * dropproxy: a fault injector for the etcd backend's tests.  A proxy on
 * loopback in front of etcd's gRPC API (HTTP/2 with prior knowledge, as
 * metad speaks it) that lets a write commit and then loses its answer: a
 * call to /etcdserverpb.KV/Txn (-r: to METHOD) whose request matches is
 * let through to etcd; when etcd's answer to it ends, both connections are
 * closed without relaying it (the first N such calls; -n -1: all).  Every
 * other call is relayed, frame by frame, streams included.  With -d MS,
 * what etcd sends on a connection that carries a Watch call (metad's event
 * stream and history replays, on a connection of their own) is relayed MS
 * milliseconds (at most 10000) after it came, in order: the streams lag,
 * other calls do not.  A connection that is not HTTP/2 is closed at once.
 * The relay: dropproxy_h2.c.
 *
 *   dropproxy -l PORT -u http://127.0.0.1:ETCDPORT [-n N]
 *       [-m MATCH | -k KEY] [-r METHOD] [-d MS] [-p PIDFILE]
 * The request matches when it holds MATCH (-m), names KEY (-k), or else
 * has its field 1 (a Txn's compare, as metad's writes have; a Compact's
 * revision; a LeaseGrant's TTL; a LeaseRevoke's ID).
 *
 * One line on stderr per dropped reply; PIDFILE is written once listening
 * (and removed on exit); SIGTERM or SIGINT stops it.  Exit: 0 stopped by a
 * signal, 1 runtime error (cannot listen), 2 usage error.
 */
#include <sys/queue.h>
#include <sys/socket.h>

#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "dropproxy.h"

static void proxy_usage(void) __attribute__((noreturn));

static void
proxy_usage(void)
{
	fprintf(stderr, "usage: dropproxy -l PORT -u http://%s:ETCDPORT "
	    "[-n N] [-m MATCH | -k KEY] [-r METHOD] [-d MS] [-p PIDFILE]\n",
	    PROXY_HOST);
	exit(2);
}

static int
proxy_parse_long(const char *s, long min, long max, long *out)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return (-1);
	*out = v;
	return (0);
}

static int
proxy_parse_url(const char *url, unsigned short *port)
{
	size_t	 plen = strlen(PROXY_URL_PREFIX), len;
	char	 buf[8];
	long	 v;

	if (strncmp(url, PROXY_URL_PREFIX, plen) != 0)
		return (-1);
	len = strlen(url + plen);
	if (len > 0 && url[plen + len - 1] == '/')
		len--;
	if (len == 0 || len >= sizeof buf)
		return (-1);
	memcpy(buf, url + plen, len);
	buf[len] = '\0';
	if (proxy_parse_long(buf, 1, 65535, &v) == -1)
		return (-1);
	*port = (unsigned short)v;
	return (0);
}

static void
proxy_parse_args(struct proxy *px, int argc, char **argv)
{
	long	 v;
	int	 ch, have_l = 0, have_u = 0;

	px->drops_left = 1;
	px->match = PROXY_MATCH_DEFAULT;
	px->method = PROXY_METHOD_DEFAULT;
	while ((ch = getopt(argc, argv, "l:u:n:m:k:r:d:p:")) != -1) {
		switch (ch) {
		case 'l':
			if (proxy_parse_long(optarg, 1, 65535, &v) == -1)
				proxy_usage();
			px->port = (unsigned short)v;
			have_l = 1;
			break;
		case 'u':
			if (proxy_parse_url(optarg, &px->up_port) == -1)
				proxy_usage();
			have_u = 1;
			break;
		case 'n':
			if (proxy_parse_long(optarg, -1, LONG_MAX, &v) == -1)
				proxy_usage();
			px->drops_left = v;
			break;
		case 'm':
			if (*optarg == '\0')
				proxy_usage();
			px->match = optarg;
			break;
		case 'k':
			if (*optarg == '\0' || strlen(optarg) > 4096)
				proxy_usage();
			px->match_raw = optarg;
			break;
		case 'r':
			if (strncmp(optarg, "/etcdserverpb.", 14) != 0)
				proxy_usage();
			px->method = optarg;
			break;
		case 'd':
			if (proxy_parse_long(optarg, 0, PROXY_DELAY_MAX_MS,
			    &v) == -1)
				proxy_usage();
			px->delay_ms = v;
			break;
		case 'p':
			px->pidfile = optarg;
			break;
		default:
			proxy_usage();
		}
	}
	if (optind != argc || !have_l || !have_u)
		proxy_usage();
}

static void
proxy_stop(evutil_socket_t sig, short what, void *arg)
{
	struct proxy	*px = arg;

	event_base_loopbreak(px->base);
}

static int
proxy_write_pidfile(const char *path)
{
	char	 tmp[PATH_MAX];
	FILE	*f;
	int	 n;

	n = snprintf(tmp, sizeof tmp, "%s.tmp", path);
	if (n < 0 || (size_t)n >= sizeof tmp)
		return (-1);
	if ((f = fopen(tmp, "w")) == NULL)
		return (-1);
	fprintf(f, "%ld\n", (long)getpid());
	if (fclose(f) != 0 || rename(tmp, path) == -1) {
		unlink(tmp);
		return (-1);
	}
	return (0);
}

static int
proxy_listen(struct proxy *px)
{
	if (proxy_tcp_listen(px) != 0) {
		fprintf(stderr, "dropproxy: cannot listen on %s:%u\n",
		    PROXY_HOST, px->port);
		return (-1);
	}
	return (0);
}

/* On exit: drop what is in flight, then the listener. */
static void
proxy_shutdown(struct proxy *px)
{
	while (!TAILQ_EMPTY(&px->tcps))
		proxy_tcp_free(TAILQ_FIRST(&px->tcps));
	if (px->lst != NULL)
		evconnlistener_free(px->lst);
	if (px->pidfile != NULL)
		unlink(px->pidfile);
}

int
main(int argc, char **argv)
{
	struct proxy	 px;
	struct event	*ev_term, *ev_int;
	int		 rc = 0;

	memset(&px, 0, sizeof px);
	TAILQ_INIT(&px.tcps);
	proxy_parse_args(&px, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if ((px.base = event_base_new()) == NULL) {
		fprintf(stderr, "dropproxy: event_base_new failed\n");
		return (1);
	}
	ev_term = evsignal_new(px.base, SIGTERM, proxy_stop, &px);
	ev_int = evsignal_new(px.base, SIGINT, proxy_stop, &px);
	if (ev_term == NULL || ev_int == NULL ||
	    evsignal_add(ev_term, NULL) == -1 ||
	    evsignal_add(ev_int, NULL) == -1 || proxy_listen(&px) == -1)
		rc = 1;
	else if (px.pidfile != NULL && proxy_write_pidfile(px.pidfile) == -1) {
		fprintf(stderr, "dropproxy: %s: %s\n", px.pidfile,
		    strerror(errno));
		px.pidfile = NULL;
		rc = 1;
	} else
		event_base_dispatch(px.base);
	proxy_shutdown(&px);
	if (ev_term != NULL)
		event_free(ev_term);
	if (ev_int != NULL)
		event_free(ev_int);
	event_base_free(px.base);
	return (rc);
}
