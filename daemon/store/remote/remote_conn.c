/*
 * The remote backend's connection (remote_conn.h): URLs, connecting in
 * turn with a backoff, request lines out and answers back in order, the
 * calls kept across a reconnect.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include "store/remote/remote_conn.h"
#include "store/store_tls.h"
#include "log.h"
#include "tlsaddr.h"
#include "util.h"

/* How long a connection may take to come up (TLS's handshake included). */
#define RCONN_CONNECT_MS	3000

/*
 * One allocation a call: the caller's state (rconn_call_with), then the
 * line.
 */
struct rcall {
	TAILQ_ENTRY(rcall)	 entry;
	char			*line;	/* with its LF, in room */
	size_t			 len;
	int			 flags;
	int64_t			 lost_ms;	/* kept since, 0: sent */
	rconn_done		 done;
	void			*arg;
	_Alignas(max_align_t) unsigned char room[];
};
TAILQ_HEAD(rcall_queue, rcall);

struct rurl {
	int		 tls;
	char		 path[sizeof ((struct sockaddr_un *)0)->sun_path];
	struct tlsaddr	 addr;
	char		 text[128];
	int		 healthy;
	int		 tls_failed;	/* its last try: TLS itself failed */
};

enum rconn_state {
	RCONN_DOWN,		/* waiting to try the next URL */
	RCONN_CONNECTING,
	RCONN_UP
};

struct rconn {
	struct event_base	*base;
	struct rurl		 url[STORE_ENDPOINTS_MAX];
	unsigned		 nurl, cur;
	struct store_tls	*tls;
	struct bufferevent	*bev;
	enum rconn_state	 state;
	struct rcall_queue	 sent;	/* in the order sent */
	struct rcall_queue	 kept;	/* lost, to send again */
	struct event		*timer;	/* the next try; a connect's end */
	unsigned		 backoff_ms;	/* reset by a connection's answer */
	int			 answered;	/* this connection answered */
	struct rconn_cbs	 cbs;
	char			 why[256];
	int			 freeing;
};

static void	rconn_try(struct rconn *);

static int
rconn_parse_url(struct rurl *u, const char *s, size_t len,
    struct store_err *err)
{
	char	 text[sizeof u->text], *why;

	if (len >= sizeof text)
		return (store_err_set(err, STORE_ERR_INTERNAL, "URL too long: "
		    "%.*s...", 40, s));
	memcpy(text, s, len);
	text[len] = '\0';
	memcpy(u->text, text, len + 1);
	if (strncmp(text, "unix:", 5) == 0) {
		if (text[5] == '\0' || strlen(text + 5) >= sizeof u->path)
			return (store_err_set(err, STORE_ERR_INTERNAL, "%s: a "
			    "socket path of 1 to %zu bytes is needed", text,
			    sizeof u->path - 1));
		memcpy(u->path, text + 5, strlen(text + 5) + 1);
		return (0);
	}
	if (!tlsaddr_is(text))
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s: expected "
		    "unix:PATH or tls://HOST:PORT", text));
	if (tlsaddr_parse(text, &u->addr, &why) != 0) {
		store_err_set(err, STORE_ERR_INTERNAL, "%s: %s", text, why);
		free(why);
		return (-1);
	}
	u->tls = 1;
	return (0);
}

static void
rconn_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct rconn	*h = arg;

	if (h->state == RCONN_CONNECTING) {
		snprintf(h->why, sizeof h->why, "%s: no connection in %d ms",
		    h->url[h->cur].text, RCONN_CONNECT_MS);
		bufferevent_free(h->bev);
		h->bev = NULL;
		h->url[h->cur].healthy = 0;
		h->state = RCONN_DOWN;
		h->cur = (h->cur + 1) % h->nurl;
	}
	rconn_try(h);
}

struct rconn *
rconn_open(struct event_base *base, const char *urls,
    const struct rconn_tls *tls, const struct rconn_cbs *cbs,
    struct store_err *err)
{
	struct rconn	*h = xcalloc(1, sizeof *h);
	const char	*p = urls, *comma;
	size_t		 len;
	unsigned	 i, ntls = 0;

	h->base = base;
	h->cbs = *cbs;
	TAILQ_INIT(&h->sent);
	TAILQ_INIT(&h->kept);
	while (*p != '\0') {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (h->nurl == STORE_ENDPOINTS_MAX) {
			store_err_set(err, STORE_ERR_INTERNAL, "more than %d "
			    "URLs", STORE_ENDPOINTS_MAX);
			goto fail;
		}
		if (rconn_parse_url(&h->url[h->nurl], p, len, err) != 0)
			goto fail;
		ntls += h->url[h->nurl].tls;
		h->nurl++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (h->nurl == 0) {
		store_err_set(err, STORE_ERR_INTERNAL, "no URL given "
		    "(metad:unix:PATH or metad:tls://HOST:PORT[,...])");
		goto fail;
	}
	if (ntls == 0 && (tls->cacert != NULL || tls->cert != NULL)) {
		store_err_set(err, STORE_ERR_INTERNAL, "--store-cacert, "
		    "--store-cert and --store-key are for tls:// URLs, and "
		    "--store has none");
		goto fail;
	}
	if ((tls->cert == NULL) != (tls->key == NULL)) {
		store_err_set(err, STORE_ERR_INTERNAL, "--store-cert and "
		    "--store-key go together");
		goto fail;
	}
	if (ntls > 0 && (h->tls = store_tls_open("the metad used", NULL,
	    tls->cacert, tls->cert, tls->key, err)) == NULL)
		goto fail;
	if ((h->timer = evtimer_new(base, rconn_timer_cb, h)) == NULL) {
		store_err_set(err, STORE_ERR_INTERNAL, "evtimer_new failed");
		goto fail;
	}
	for (i = 0; i < h->nurl; i++)
		h->url[i].healthy = 1;
	return (h);
fail:
	store_tls_free(h->tls);
	free(h);
	return (NULL);
}

static void
rconn_call_end(struct rcall *c, const char *line, size_t len,
    const struct store_err *err)
{
	c->done(c->arg, line, len, err);
	free(c);
}

static void
rconn_call_fail(struct rcall *c, enum store_errcode code, const char *why)
{
	struct store_err	 e;

	store_err_set(&e, code, "%s", why);
	rconn_call_end(c, NULL, 0, &e);
}

/* The kept calls lost for longer than RCONN_RETAIN_MS fail. */
static void
rconn_expire_kept(struct rconn *h, int all)
{
	struct rcall	*c;
	int64_t		 now = mono_ms();
	char		 why[320];

	while ((c = TAILQ_FIRST(&h->kept)) != NULL &&
	    (all || c->lost_ms + RCONN_RETAIN_MS <= now)) {
		TAILQ_REMOVE(&h->kept, c, entry);
		if (c->flags & RCONN_WRITE) {
			snprintf(why, sizeof why, "the metad used went away "
			    "with this write's answer and was not back in %d "
			    "ms (%.80s): it may or may not have landed",
			    RCONN_RETAIN_MS, h->why);
			rconn_call_fail(c, STORE_ERR_UNKNOWN, why);
		} else {
			snprintf(why, sizeof why, "the metad used is "
			    "unreachable (%.200s)", h->why);
			rconn_call_fail(c, STORE_ERR_UNAVAILABLE, why);
		}
	}
}

/* The connection went: its calls sent are kept or fail, and we try again. */
static void
rconn_lost(struct rconn *h, const char *why)
{
	struct rcall	*c;
	int64_t		 now = mono_ms();
	int		 was_up = h->state == RCONN_UP;

	if (why != NULL)
		snprintf(h->why, sizeof h->why, "%s: %.120s",
		    h->url[h->cur].text, why);
	if (was_up)
		log_warnx("store: %s", h->why);
	if (h->bev != NULL)
		bufferevent_free(h->bev);
	h->bev = NULL;
	h->url[h->cur].healthy = 0;
	h->state = RCONN_DOWN;
	h->cur = (h->cur + 1) % h->nurl;
	/* Kept ones go first: they were sent before these. */
	while ((c = TAILQ_FIRST(&h->sent)) != NULL) {
		TAILQ_REMOVE(&h->sent, c, entry);
		if (c->flags & RCONN_RETRY) {
			c->lost_ms = now;
			TAILQ_INSERT_TAIL(&h->kept, c, entry);
		} else if (c->flags & RCONN_WRITE)
			rconn_call_fail(c, STORE_ERR_UNKNOWN, "the metad used "
			    "went away with this write's answer: it may or "
			    "may not have landed");
		else
			rconn_call_fail(c, STORE_ERR_UNAVAILABLE, "the metad "
			    "used went away before it answered");
	}
	if (was_up && h->cbs.down != NULL)
		h->cbs.down(h->cbs.arg);
	if (!h->freeing) {
		struct timeval	 tv;

		tv.tv_sec = h->backoff_ms / 1000;
		tv.tv_usec = (h->backoff_ms % 1000) * 1000;
		evtimer_add(h->timer, &tv);
		h->backoff_ms = h->backoff_ms == 0 ? RCONN_BACKOFF_MIN_MS :
		    h->backoff_ms * 2 > RCONN_BACKOFF_MAX_MS ?
		    RCONN_BACKOFF_MAX_MS : h->backoff_ms * 2;
	}
}

static void
rconn_send(struct rconn *h, struct rcall *c)
{
	c->lost_ms = 0;
	TAILQ_INSERT_TAIL(&h->sent, c, entry);
	bufferevent_write(h->bev, c->line, c->len);
}

static void
rconn_read_cb(struct bufferevent *bev, void *arg)
{
	struct rconn		*h = arg;
	struct evbuffer		*in = bufferevent_get_input(bev);
	struct evbuffer_ptr	 eol;
	struct rcall		*c;
	size_t			 eol_len, len;
	char			*line;

	while (h->state == RCONN_UP) {
		eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
		if (eol.pos < 0) {
			if (evbuffer_get_length(in) > RCONN_LINE_MAX)
				rconn_lost(h, "a line over the limit came");
			return;
		}
		len = (size_t)eol.pos;
		line = (char *)evbuffer_pullup(in, (ssize_t)(len + eol_len));
		if (len > 0 && line[len - 1] == '\r')
			len--;
		/* Answers carry no id (none was sent): "ok" comes first. */
		if (len >= 5 && memcmp(line, "{\"ok\"", 5) == 0) {
			if ((c = TAILQ_FIRST(&h->sent)) == NULL) {
				rconn_lost(h, "an answer to no request came");
				return;
			}
			h->answered = 1;
			h->backoff_ms = 0;
			if (h->cbs.answer != NULL)
				h->cbs.answer(h->cbs.arg);
			TAILQ_REMOVE(&h->sent, c, entry);
			rconn_call_end(c, line, len, NULL);
		} else if (h->cbs.line(h->cbs.arg, line, len) != 0) {
			rconn_lost(h, "a line that is neither an answer nor "
			    "an event came");
			return;
		}
		if (h->bev == bev)
			evbuffer_drain(in, (size_t)eol.pos + eol_len);
		else
			return;
	}
}

static void
rconn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct rconn	*h = arg;
	struct rcall	*c;
	char		 why[256];
	int		 sys = EVUTIL_SOCKET_ERROR();

	if (what & BEV_EVENT_CONNECTED) {
		evtimer_del(h->timer);
		h->url[h->cur].tls_failed = 0;
		h->state = RCONN_UP;
		h->answered = 0;
		h->url[h->cur].healthy = 1;
		h->why[0] = '\0';
		log_info("store: connected to %s", h->url[h->cur].text);
		if (h->cbs.up != NULL)
			h->cbs.up(h->cbs.arg);
		while (h->state == RCONN_UP &&
		    (c = TAILQ_FIRST(&h->kept)) != NULL) {
			TAILQ_REMOVE(&h->kept, c, entry);
			rconn_send(h, c);
		}
		return;
	}
	evtimer_del(h->timer);
	if (h->url[h->cur].tls)
		/* TLS 1.3 refuses a client's certificate after the
		 * handshake: before any answer, it is TLS's failure too. */
		h->url[h->cur].tls_failed = store_tls_failed(h->tls, bev,
		    (what & BEV_EVENT_EOF) ? 0 : sys, h->state == RCONN_UP &&
		    (what & BEV_EVENT_EOF), why, sizeof why) &&
		    (h->state == RCONN_CONNECTING || !h->answered);
	else if (what & BEV_EVENT_EOF)
		snprintf(why, sizeof why, "the connection was closed");
	else
		snprintf(why, sizeof why, "%s", evutil_socket_error_to_string(
		    sys));
	rconn_lost(h, why);
}

/* Connect to the current URL. */
static void
rconn_try(struct rconn *h)
{
	struct rurl		*u = &h->url[h->cur];
	struct sockaddr_un	 sun;
	struct addrinfo		 hints, *ai = NULL;
	struct timeval		 tv = { RCONN_CONNECT_MS / 1000,
				    (RCONN_CONNECT_MS % 1000) * 1000 };
	struct ssl_st		*ssl;
	int			 rc, fd = -1;

	rconn_expire_kept(h, 0);
	h->state = RCONN_CONNECTING;
	if (!u->tls) {
		/* A Unix socket connects at once, or says why not. */
		memset(&sun, 0, sizeof sun);
		sun.sun_family = AF_UNIX;
		memcpy(sun.sun_path, u->path, strlen(u->path) + 1);
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0)) == -1 || connect(fd,
		    (struct sockaddr *)&sun, sizeof sun) == -1) {
			snprintf(h->why, sizeof h->why, "%s: %s", u->text,
			    strerror(errno));
			if (fd != -1)
				close(fd);
			h->bev = NULL;
			rconn_lost(h, NULL);
			return;
		}
		if ((h->bev = bufferevent_socket_new(h->base, fd,
		    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
			close(fd);
			rconn_lost(h, "no connection could be made");
			return;
		}
		bufferevent_setcb(h->bev, rconn_read_cb, NULL, rconn_event_cb,
		    h);
		bufferevent_enable(h->bev, EV_READ | EV_WRITE);
		rconn_event_cb(h->bev, BEV_EVENT_CONNECTED, h);
		return;
	} else {
		memset(&hints, 0, sizeof hints);
		hints.ai_family = AF_UNSPEC;
		hints.ai_socktype = SOCK_STREAM;
		/* Names are resolved on the loop: give an address where
		 * that matters. */
		if ((rc = getaddrinfo(u->addr.host, u->addr.port, &hints,
		    &ai)) != 0) {
			snprintf(h->why, sizeof h->why, "%s: %s", u->text,
			    gai_strerror(rc));
			h->bev = NULL;
			rconn_lost(h, NULL);
			return;
		}
		h->bev = store_tls_bev(h->tls, h->base, u->addr.host, &ssl);
		rc = h->bev == NULL ? -1 : bufferevent_socket_connect(h->bev,
		    ai->ai_addr, (int)ai->ai_addrlen);
		freeaddrinfo(ai);
	}
	if (h->bev == NULL) {
		rconn_lost(h, "no connection could be made");
		return;
	}
	bufferevent_setcb(h->bev, rconn_read_cb, NULL, rconn_event_cb, h);
	if (rc != 0) {
		rconn_lost(h, strerror(errno));
		return;
	}
	bufferevent_enable(h->bev, EV_READ | EV_WRITE);
	evtimer_add(h->timer, &tv);
}

void
rconn_start(struct rconn *h)
{
	rconn_try(h);
}

void
rconn_free(struct rconn *h)
{
	struct rcall	*c;

	if (h == NULL)
		return;
	h->freeing = 1;
	evtimer_del(h->timer);
	if (h->bev != NULL)
		bufferevent_free(h->bev);
	h->bev = NULL;
	/* A write sent may have landed: its answer says so. */
	while ((c = TAILQ_FIRST(&h->sent)) != NULL ||
	    (c = TAILQ_FIRST(&h->kept)) != NULL) {
		TAILQ_REMOVE(c->lost_ms == 0 ? &h->sent : &h->kept, c, entry);
		if (c->flags & RCONN_WRITE)
			rconn_call_fail(c, STORE_ERR_UNKNOWN, "the daemon "
			    "stopped with this write's answer owed by the "
			    "metad used: it may or may not have landed");
		else
			rconn_call_fail(c, STORE_ERR_UNAVAILABLE, "the store "
			    "closed");
	}
	event_free(h->timer);
	store_tls_free(h->tls);
	free(h);
}

int
rconn_is_up(const struct rconn *h)
{
	return (h->state == RCONN_UP);
}

int
rconn_refused(const struct rconn *h)
{
	unsigned	 i;

	for (i = 0; i < h->nurl; i++) {
		if (!h->url[i].tls_failed)
			return (0);
	}
	return (1);
}

const char *
rconn_why(const struct rconn *h)
{
	return (h->why);
}

void
rconn_call_with(struct rconn *h, const char *line, size_t len, int flags,
    rconn_done done, const void *state, size_t size)
{
	struct rcall	*c;
	size_t		 at = (size + _Alignof(max_align_t) - 1) &
			    ~(_Alignof(max_align_t) - 1);
	char		 why[320];

	if (h->state != RCONN_UP) {
		struct store_err	 e;

		snprintf(why, sizeof why, "the metad used is unreachable%s%s%s",
		    h->why[0] != '\0' ? " (" : "", h->why,
		    h->why[0] != '\0' ? ")" : "");
		store_err_set(&e, STORE_ERR_UNAVAILABLE, "%s", why);
		done((void *)(uintptr_t)state, NULL, 0, &e);
		return;
	}
	/* malloc, not calloc: glibc's calloc skips its per-thread cache */
	c = xmalloc(sizeof *c + at + len + 1);
	memset(c, 0, sizeof *c);
	if (size > 0)
		memcpy(c->room, state, size);
	c->line = (char *)c->room + at;
	memcpy(c->line, line, len);
	c->line[len] = '\n';
	c->len = len + 1;
	c->flags = flags;
	c->done = done;
	c->arg = size > 0 ? c->room : (void *)(uintptr_t)state;
	rconn_send(h, c);
}

void
rconn_call(struct rconn *h, const char *line, size_t len, int flags,
    rconn_done done, void *arg)
{
	rconn_call_with(h, line, len, flags, done, arg, 0);
}

unsigned
rconn_endpoints(const struct rconn *h, struct store_endpoint *ep,
    unsigned max)
{
	unsigned	 i;

	for (i = 0; i < h->nurl && i < max; i++) {
		snprintf(ep[i].url, sizeof ep[i].url, "%s", h->url[i].text);
		ep[i].healthy = h->url[i].healthy;
	}
	return (i);
}
