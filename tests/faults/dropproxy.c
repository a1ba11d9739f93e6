/*
 * dropproxy: a fault injector for the etcd backend's tests.  An HTTP/1.1
 * proxy on loopback in front of etcd's JSON gateway that lets a write commit
 * and then loses its answer: for a request whose body contains MATCH it
 * forwards the request, waits for etcd's complete answer, then closes the
 * client's connection without a reply (the first N such requests; -n -1:
 * all).  Every other request is relayed, its answer chunk by chunk as it
 * comes (a /v3/watch stream stays open until either side closes).  With
 * -d MS, each piece of the answer to a /v3/watch request (an event stream)
 * is relayed MS milliseconds (at most 10000) after it came, in order, and
 * its end after its last piece; so is what etcd sends on an HTTP/2
 * connection that carries a gRPC Watch call (dropproxy_h2.c: metad's
 * event stream, on a connection of its own): the streams lag, other calls
 * do not.
 *
 *   dropproxy -l PORT -u http://127.0.0.1:ETCDPORT [-n N]
 *       [-m MATCH | -k KEY] [-r METHOD] [-d MS] [-p PIDFILE]
 * -k KEY: MATCH is KEY's base64 (and KEY's bytes in a gRPC call, whose
 * answer dropproxy_h2.c drops by closing the connection).  -r METHOD: the
 * gRPC calls whose answers are lost are METHOD's, not KV/Txn's.
 *
 * One line on stderr per dropped reply; PIDFILE is written once listening
 * (and removed on exit); SIGTERM or SIGINT stops it.  Exit: 0 stopped by a
 * signal, 1 runtime error (cannot listen), 2 usage error.
 *
 * Memory: a struct proxy_req per request in flight, on the proxy's list,
 * with an upstream connection of its own.  When its client goes away, both
 * are freed at once; when its answer ends (or its client is closed for
 * falling behind), it moves to the dead list, which the loop frees on its
 * next turn (not inside the upstream request's own callback).  On exit,
 * whatever is on either list is freed.  A delayed stream's pieces wait in
 * its struct proxy_later list, counted against PROXY_MAX_PENDING with what
 * its client has not read; they go with their request.
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

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "dropproxy.h"
#include "enc.h"

static void proxy_usage(void) __attribute__((noreturn));
static void proxy_req_free(struct proxy_req *);

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
			px->match = px->match_b64;
			b64_encode(optarg, strlen(optarg), px->match_b64);
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

static const char *
proxy_method_name(enum evhttp_cmd_type cmd)
{
	return (cmd == EVHTTP_REQ_GET ? "GET" : "POST");
}

/* The client's connection, unless the client went away. */
static struct evhttp_connection *
proxy_client_conn(struct proxy_req *pr)
{
	return (evhttp_request_get_connection(pr->client));
}

/* The reply is ours to finish: the client's close no longer concerns us. */
static void
proxy_client_detach(struct proxy_req *pr)
{
	struct evhttp_connection	*conn = proxy_client_conn(pr);

	if (conn != NULL)
		evhttp_connection_set_closecb(conn, NULL, NULL);
}

/*
 * Close the client's connection without a (further) reply.  A request
 * whose client already went away was left to us by libevent: free it.
 */
static void
proxy_client_close(struct proxy_req *pr)
{
	struct evhttp_connection	*conn = proxy_client_conn(pr);

	proxy_client_detach(pr);
	if (conn != NULL)
		evhttp_connection_free(conn);
	else
		evhttp_request_free(pr->client);
	pr->client = NULL;
}

/* The client went away: stop the upstream request and forget it. */
static void
proxy_client_gone(struct evhttp_connection *conn, void *arg)
{
	struct proxy_req	*pr = arg;

	if (proxy_client_conn(pr) == NULL)
		evhttp_request_free(pr->client);
	pr->client = NULL;
	evhttp_connection_free(pr->up_conn);
	pr->up_conn = NULL;
	proxy_req_free(pr);
}

static void
proxy_req_free(struct proxy_req *pr)
{
	TAILQ_REMOVE(&pr->px->reqs, pr, entry);
	proxy_later_free(pr);
	free(pr);
}

/* Done with the upstream request: free it and its connection soon. */
static void
proxy_req_finish(struct proxy_req *pr)
{
	struct proxy	*px = pr->px;

	pr->finished = 1;
	proxy_later_clear(pr);
	TAILQ_REMOVE(&px->reqs, pr, entry);
	TAILQ_INSERT_TAIL(&px->dead, pr, entry);
	event_active(px->reap, EV_TIMEOUT, 0);
}

static void
proxy_reap(evutil_socket_t fd, short what, void *arg)
{
	struct proxy		*px = arg;
	struct proxy_req	*pr;

	while ((pr = TAILQ_FIRST(&px->dead)) != NULL) {
		TAILQ_REMOVE(&px->dead, pr, entry);
		evhttp_connection_free(pr->up_conn);
		proxy_later_free(pr);
		free(pr);
	}
}

static void
proxy_copy_header(struct evkeyvalq *from, struct evkeyvalq *to,
    const char *name)
{
	const char	*v;

	if ((v = evhttp_find_header(from, name)) != NULL)
		evhttp_add_header(to, name, v);
}

static void
proxy_reply_start(struct proxy_req *pr, struct evhttp_request *up)
{
	if (pr->started)
		return;
	pr->started = 1;
	proxy_copy_header(evhttp_request_get_input_headers(up),
	    evhttp_request_get_output_headers(pr->client), "Content-Type");
	evhttp_send_reply_start(pr->client,
	    evhttp_request_get_response_code(up),
	    evhttp_request_get_response_code_line(up));
}

/* Upstream's headers are in: begin the client's reply (unless dropping). */
static int
proxy_up_header(struct evhttp_request *up, void *arg)
{
	struct proxy_req	*pr = arg;

	if (!pr->drop)
		proxy_reply_start(pr, up);
	return (0);
}

/*
 * Is the client over PROXY_MAX_PENDING bytes behind (unread, or waiting
 * to be relayed)?  Then it is closed, and its request finished.
 */
int
proxy_client_behind(struct proxy_req *pr)
{
	struct evhttp_connection *conn;
	struct evbuffer		*out;

	if ((conn = proxy_client_conn(pr)) == NULL)
		return (0);
	out = bufferevent_get_output(evhttp_connection_get_bufferevent(conn));
	if (evbuffer_get_length(out) + pr->later_bytes <= PROXY_MAX_PENDING)
		return (0);
	fprintf(stderr, "dropproxy: %s %s: the client is over %d "
	    "bytes behind: closed\n", pr->method, pr->path,
	    PROXY_MAX_PENDING);
	proxy_client_close(pr);
	proxy_req_finish(pr);
	return (1);
}

/* A piece of upstream's answer: relay it, or drop it with the answer. */
static void
proxy_up_chunk(struct evhttp_request *up, void *arg)
{
	struct proxy_req	*pr = arg;

	if (pr->drop || pr->finished)
		return;
	proxy_reply_start(pr, up);
	if (pr->later_ev != NULL)
		proxy_later_add(pr, evhttp_request_get_input_buffer(up));
	else
		evhttp_send_reply_chunk(pr->client,
		    evhttp_request_get_input_buffer(up));
	(void)proxy_client_behind(pr);
}

/* Upstream's answer is complete (up != NULL, a status) or failed. */
static void
proxy_up_done(struct evhttp_request *up, void *arg)
{
	struct proxy_req	*pr = arg;
	int			 ok;

	if (pr->finished)
		return;	/* closed for falling behind */
	ok = up != NULL && evhttp_request_get_response_code(up) != 0;
	if (!TAILQ_EMPTY(&pr->later)) {
		pr->held = 1;	/* after the pieces still waiting */
		pr->held_ok = ok;
		return;
	}
	proxy_reply_end(pr, up, ok);
}

/*
 * The end of upstream's answer (ok: complete), relayed.  up is NULL when
 * it is relayed late (-d): the reply was begun by then.
 */
void
proxy_reply_end(struct proxy_req *pr, struct evhttp_request *up, int ok)
{
	if (pr->drop && ok) {
		proxy_client_close(pr);
		fprintf(stderr, "dropproxy: dropped the reply to %s %s\n",
		    pr->method, pr->path);
	} else if (!ok && pr->started) {
		fprintf(stderr, "dropproxy: %s %s: upstream failed in the "
		    "answer: closed\n", pr->method, pr->path);
		proxy_client_close(pr);
	} else if (!ok) {
		proxy_client_detach(pr);
		evhttp_send_error(pr->client, 502, "upstream failed");
	} else {
		if (up != NULL)
			proxy_reply_start(pr, up);
		proxy_client_detach(pr);
		evhttp_send_reply_end(pr->client);
	}
	proxy_req_finish(pr);
}

/* Is this request one whose reply is dropped?  Counts it if so. */
static int
proxy_should_drop(struct proxy *px, struct evbuffer *body)
{
	struct evbuffer_ptr	 p;

	if (px->drops_left == 0)
		return (0);
	p = evbuffer_search(body, px->match, strlen(px->match), NULL);
	if (p.pos == -1)
		return (0);
	if (px->drops_left > 0)
		px->drops_left--;
	return (1);
}

static struct evhttp_request *
proxy_up_request(struct proxy_req *pr, struct evhttp_request *req)
{
	struct evhttp_request	*up;
	struct evkeyvalq	*in, *out;
	char			 host[32];

	if ((up = evhttp_request_new(proxy_up_done, pr)) == NULL)
		return (NULL);
	evhttp_request_set_header_cb(up, proxy_up_header);
	evhttp_request_set_chunked_cb(up, proxy_up_chunk);
	in = evhttp_request_get_input_headers(req);
	out = evhttp_request_get_output_headers(up);
	snprintf(host, sizeof host, "%s:%u", PROXY_HOST, pr->px->up_port);
	if (evhttp_find_header(in, "Host") != NULL)
		proxy_copy_header(in, out, "Host");
	else
		evhttp_add_header(out, "Host", host);
	proxy_copy_header(in, out, "Content-Type");
	evbuffer_add_buffer(evhttp_request_get_output_buffer(up),
	    evhttp_request_get_input_buffer(req));
	return (up);
}

static struct evhttp_connection *
proxy_up_connect(struct proxy *px)
{
	struct evhttp_connection	*conn;
	struct timeval			 tv = { PROXY_IDLE_TIMEOUT_S, 0 };

	conn = evhttp_connection_base_new(px->base, NULL, PROXY_HOST,
	    px->up_port);
	if (conn == NULL)
		return (NULL);
	evhttp_connection_set_timeout_tv(conn, &tv);
	evhttp_connection_set_max_body_size(conn, PROXY_MAX_BODY);
	evhttp_connection_set_max_headers_size(conn, PROXY_MAX_HEADERS);
	return (conn);
}

static struct proxy_req *
proxy_req_new(struct proxy *px, struct evhttp_request *req)
{
	struct proxy_req	*pr;

	if ((pr = calloc(1, sizeof *pr)) == NULL)
		return (NULL);
	pr->px = px;
	pr->client = req;
	TAILQ_INIT(&pr->later);
	snprintf(pr->method, sizeof pr->method, "%s",
	    proxy_method_name(evhttp_request_get_command(req)));
	snprintf(pr->path, sizeof pr->path, "%s", evhttp_request_get_uri(req));
	TAILQ_INSERT_TAIL(&px->reqs, pr, entry);
	return (pr);
}

/* A client's request: forward it on an upstream connection of its own. */
static void
proxy_request(struct evhttp_request *req, void *arg)
{
	struct proxy		*px = arg;
	struct proxy_req	*pr;
	struct evhttp_request	*up;

	if (strlen(evhttp_request_get_uri(req)) >= PROXY_PATH_MAX) {
		evhttp_send_error(req, 414, "URI over " STR(PROXY_PATH_MAX)
		    " bytes");
		return;
	}
	if ((pr = proxy_req_new(px, req)) == NULL) {
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	pr->drop = proxy_should_drop(px, evhttp_request_get_input_buffer(req));
	if (px->delay_ms > 0 && !pr->drop && strncmp(pr->path,
	    PROXY_DELAY_PATH, strlen(PROXY_DELAY_PATH)) == 0 &&
	    proxy_later_init(pr) == -1) {
		proxy_req_free(pr);
		evhttp_send_error(req, 500, "out of memory");
		return;
	}
	if ((pr->up_conn = proxy_up_connect(px)) == NULL ||
	    (up = proxy_up_request(pr, req)) == NULL) {
		if (pr->up_conn != NULL)
			evhttp_connection_free(pr->up_conn);
		proxy_req_free(pr);
		evhttp_send_error(req, 502, "cannot reach upstream");
		return;
	}
	if (evhttp_make_request(pr->up_conn, up, evhttp_request_get_command(req),
	    pr->path) == -1) {
		/* libevent freed the request */
		evhttp_connection_free(pr->up_conn);
		proxy_req_free(pr);
		evhttp_send_error(req, 502, "cannot reach upstream");
		return;
	}
	evhttp_connection_set_closecb(evhttp_request_get_connection(req),
	    proxy_client_gone, pr);
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

/*
 * The HTTP side on a port of its own, behind the front door
 * (dropproxy_h2.c) on PORT, which relays it every HTTP/1.1 connection.
 */
static int
proxy_listen(struct proxy *px)
{
	struct evhttp_bound_socket	*bs;
	struct sockaddr_in		 sin;
	socklen_t			 len = sizeof sin;

	if ((px->http = evhttp_new(px->base)) == NULL)
		return (-1);
	evhttp_set_allowed_methods(px->http, EVHTTP_REQ_GET | EVHTTP_REQ_POST);
	evhttp_set_max_body_size(px->http, PROXY_MAX_BODY);
	evhttp_set_max_headers_size(px->http, PROXY_MAX_HEADERS);
	evhttp_set_timeout(px->http, PROXY_IDLE_TIMEOUT_S);
	evhttp_set_gencb(px->http, proxy_request, px);
	if ((bs = evhttp_bind_socket_with_handle(px->http, PROXY_HOST,
	    0)) == NULL || getsockname(evhttp_bound_socket_get_fd(bs),
	    (struct sockaddr *)&sin, &len) != 0 ||
	    proxy_tcp_listen(px) != 0) {
		fprintf(stderr, "dropproxy: cannot listen on %s:%u\n",
		    PROXY_HOST, px->port);
		return (-1);
	}
	px->http_port = ntohs(sin.sin_port);
	return (0);
}

/* On exit: drop what is in flight, then free the server. */
static void
proxy_shutdown(struct proxy *px)
{
	struct proxy_req	*pr;

	proxy_reap(-1, 0, px);
	while ((pr = TAILQ_FIRST(&px->reqs)) != NULL) {
		if (pr->up_conn != NULL)
			evhttp_connection_free(pr->up_conn);
		if (pr->client != NULL)
			proxy_client_close(pr);
		proxy_req_free(pr);
	}
	while (!TAILQ_EMPTY(&px->tcps))
		proxy_tcp_free(TAILQ_FIRST(&px->tcps));
	if (px->lst != NULL)
		evconnlistener_free(px->lst);
	if (px->http != NULL)
		evhttp_free(px->http);
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
	TAILQ_INIT(&px.reqs);
	TAILQ_INIT(&px.dead);
	TAILQ_INIT(&px.tcps);
	proxy_parse_args(&px, argc, argv);
	signal(SIGPIPE, SIG_IGN);
	if ((px.base = event_base_new()) == NULL) {
		fprintf(stderr, "dropproxy: event_base_new failed\n");
		return (1);
	}
	ev_term = evsignal_new(px.base, SIGTERM, proxy_stop, &px);
	ev_int = evsignal_new(px.base, SIGINT, proxy_stop, &px);
	px.reap = event_new(px.base, -1, 0, proxy_reap, &px);
	if (ev_term == NULL || ev_int == NULL || px.reap == NULL ||
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
	if (px.reap != NULL)
		event_free(px.reap);
	event_base_free(px.base);
	return (rc);
}
