/*
 * TLS listeners, contexts and handshakes (tls.h).  A handshake gets
 * TLS_HANDSHAKE_MS; at most --max-connections are in progress at once.
 * A client refused once its certificate is known (its CN not let in, or a
 * limit) is answered one error line, as on the socket, then closed.
 */
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "log.h"
#include "metad.h"
#include "net/access.h"
#include "net/conn.h"
#include "net/server.h"
#include "net/tls.h"
#include "net/tls_ctx.h"
#include "core/reply.h"
#include "tlsaddr.h"

/* How long a client has to finish its handshake, or to read a refusal. */
#define TLS_HANDSHAKE_MS	10000
#define TLS_REFUSE_MS		5000
/* How long a refused client's socket stays half-open (tls_linger()). */
#define TLS_LINGER_MS		2000
/* How long accepting pauses when the process is out of descriptors. */
#define TLS_EMFILE_PAUSE_MS	200

struct tls_listener {
	struct tls		*t;
	int			 fd;
	struct event		*ev;
	char			*url;
};

/* A client between accept and admission, or being refused. */
struct tls_client {
	struct tls		*t;
	struct bufferevent	*bev;
	int			 fd;
	char			 addr[80];
	TAILQ_ENTRY(tls_client)	 entry;
};

/*
 * A refused client's socket, closed for writing once the alert or the
 * refusal is out, read and dropped until the client closes it (or
 * TLS_LINGER_MS): closed at once with its request unread, it would be
 * reset, and the client would lose what it was told.
 */
struct tls_linger {
	struct tls		*t;
	int			 fd;
	struct event		*ev;
	TAILQ_ENTRY(tls_linger)	 entry;
};

struct tls {
	struct metad		*md;
	SSL_CTX			*ctx;		/* for the next connections */
	struct tls_listener	*ls;
	unsigned		 nls;
	TAILQ_HEAD(, tls_client) clients;
	unsigned		 nclients;
	TAILQ_HEAD(, tls_linger) lingers;
	unsigned		 nlingers;	/* --max-connections at most */
	struct event		*resume_ev;
};

static void	tls_accept_cb(evutil_socket_t, short, void *);

/* Every address url names, bound and listening. */
static int
tls_listen(struct tls *t, const char *url, char **cause)
{
	struct addrinfo	 hints, *res, *ai;
	struct tlsaddr	 a;
	char		*why = NULL;
	int		 fd, on = 1, rc;

	if (tlsaddr_parse(url, &a, &why) != 0) {
		xasprintf(cause, "--listen %s: %s", url, why);
		free(why);
		return (-1);
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
	if ((rc = getaddrinfo(a.host, a.port, &hints, &res)) != 0) {
		xasprintf(cause, "--listen %s: %s", url, gai_strerror(rc));
		return (-1);
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, ai->ai_protocol);
		if (fd == -1) {
			xasprintf(cause, "--listen %s: socket: %s", url,
			    strerror(errno));
			break;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
		if (ai->ai_family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on,
			    sizeof on);
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 ||
		    listen(fd, 512) == -1) {
			xasprintf(cause, "--listen %s: %s", url,
			    strerror(errno));
			close(fd);
			break;
		}
		t->ls = xrealloc(t->ls, (t->nls + 1) * sizeof *t->ls);
		t->ls[t->nls].t = t;
		t->ls[t->nls].fd = fd;
		t->ls[t->nls].url = xstrdup(url);
		t->ls[t->nls].ev = NULL;
		t->nls++;
	}
	freeaddrinfo(res);
	return (ai == NULL ? 0 : -1);
}

struct tls *
tls_create(struct metad *md, char **cause)
{
	struct tls	*t;
	unsigned	 i;

	t = xcalloc(1, sizeof *t);
	t->md = md;
	TAILQ_INIT(&t->clients);
	TAILQ_INIT(&t->lingers);
	if ((t->ctx = tls_ctx_new(&md->cfg, cause)) == NULL) {
		tls_free(t);
		return (NULL);
	}
	for (i = 0; i < md->cfg.nlisten; i++) {
		if (tls_listen(t, md->cfg.listen[i], cause) != 0) {
			tls_free(t);
			return (NULL);
		}
	}
	for (i = 0; i < t->nls; i++) {
		t->ls[i].ev = event_new(md->base, t->ls[i].fd,
		    EV_READ | EV_PERSIST, tls_accept_cb, &t->ls[i]);
		if (t->ls[i].ev == NULL)
			fatalx("event_new");
		event_add(t->ls[i].ev, NULL);
	}
	for (i = 0; i < md->cfg.nlisten; i++)
		log_info("listening on %s", md->cfg.listen[i]);
	if (md->cfg.allow_cn.n == 0 && md->cfg.ro_cn.n == 0)
		log_warnx("no --allow-cn or --read-only-cn: every TLS client "
		    "is refused");
	return (t);
}

void
tls_reload(struct tls *t)
{
	SSL_CTX	*ctx;
	char	*cause = NULL;

	if ((ctx = tls_ctx_new(&t->md->cfg, &cause)) == NULL) {
		log_warnx("SIGHUP: keeping the TLS certificates: %s", cause);
		free(cause);
		return;
	}
	SSL_CTX_free(t->ctx);	/* open connections hold their own ref */
	t->ctx = ctx;
	log_info("SIGHUP: TLS certificate, key and CA reloaded");
}

static void
tls_linger_free(struct tls_linger *lg)
{
	TAILQ_REMOVE(&lg->t->lingers, lg, entry);
	lg->t->nlingers--;
	event_free(lg->ev);
	close(lg->fd);
	free(lg);
}

static void
tls_linger_cb(evutil_socket_t fd, short what, void *arg)
{
	char	 buf[4096];
	ssize_t	 n;

	while ((n = read(fd, buf, sizeof buf)) > 0)
		;
	if (n == -1 && (errno == EAGAIN || errno == EINTR) &&
	    !(what & EV_TIMEOUT))
		return;
	tls_linger_free(arg);	/* the client's end, an error or time */
}

/* The client's socket, half-closed a while before it goes. */
static void
tls_linger(struct tls *t, int fd)
{
	struct timeval		 tv = { TLS_LINGER_MS / 1000,
	    (TLS_LINGER_MS % 1000) * 1000 };
	struct tls_linger	*lg;

	if (fd == -1)
		return;
	if (t->nlingers >= t->md->cfg.max_connections ||
	    shutdown(fd, SHUT_WR) == -1) {
		close(fd);
		return;
	}
	lg = xcalloc(1, sizeof *lg);
	lg->t = t;
	lg->fd = fd;
	if ((lg->ev = event_new(t->md->base, fd, EV_READ | EV_PERSIST,
	    tls_linger_cb, lg)) == NULL)
		fatalx("event_new");
	TAILQ_INSERT_TAIL(&t->lingers, lg, entry);
	t->nlingers++;
	event_add(lg->ev, &tv);
}

/* The client goes; refused, its socket lingers (tls_linger). */
static void
tls_client_free(struct tls_client *cl, int refused)
{
	int	 fd = -1;

	TAILQ_REMOVE(&cl->t->clients, cl, entry);
	cl->t->nclients--;
	if (refused && cl->bev != NULL)
		fd = dup(cl->fd);
	if (cl->bev != NULL)
		bufferevent_free(cl->bev);	/* the SSL and the socket */
	tls_linger(cl->t, fd);
	free(cl);
}

/* A refusal was read (or the client went, or took too long). */
static void
tls_refused_cb(struct bufferevent *bev, void *arg)
{
	struct tls_client	*cl = arg;

	SSL_shutdown(bufferevent_openssl_get_ssl(bev));
	tls_client_free(cl, 1);
}

static void
tls_refused_event_cb(struct bufferevent *bev, short what, void *arg)
{
	tls_client_free(arg, 0);
}

/* One error line to the client, then close (as server_refuse on the
 * socket). */
static void
tls_refuse(struct tls_client *cl, enum proto_code code, const char *msg)
{
	struct timeval	 tv = { TLS_REFUSE_MS / 1000, 0 };
	struct buf	 b;

	buf_init(&b);
	reply_raw_error(&b, NULL, 0, code, msg);
	bufferevent_setcb(cl->bev, NULL, tls_refused_cb, tls_refused_event_cb,
	    cl);
	bufferevent_set_timeouts(cl->bev, &tv, &tv);
	bufferevent_disable(cl->bev, EV_READ);
	bufferevent_enable(cl->bev, EV_WRITE);
	bufferevent_write(cl->bev, b.data, b.len);
	buf_free(&b);
}

/* The handshake is done: the client is admitted as its CN, or refused. */
static void
tls_handshake_done(struct tls_client *cl)
{
	struct bufferevent	*bev = cl->bev;
	SSL			*ssl = bufferevent_openssl_get_ssl(bev);
	struct conn_id		 id;
	struct conn		*c;
	enum proto_code		 code;
	char			 cn[256], msg[PROTO_MSG_MAX];

	if (SSL_get_verify_result(ssl) != X509_V_OK ||
	    tls_ctx_peer_cn(ssl, cn, sizeof cn) != 0) {
		log_info("refused TLS client %s: no single subject CN in its "
		    "certificate", cl->addr);
		tls_refuse(cl, PROTO_PERMISSION_DENIED, "the client "
		    "certificate has no single subject CN");
		return;
	}
	id.uid = (uid_t)-1;
	id.gid = (gid_t)-1;
	id.pid = -1;
	id.cn = cn;
	id.by_group = 0;
	id.group = 0;
	c = server_admit(cl->t->md->server, cl->fd, bev, &id,
	    access_cn(&cl->t->md->cfg, cn), &code, msg, sizeof msg);
	if (c == NULL) {
		tls_refuse(cl, code, msg);
		return;
	}
	cl->bev = NULL;		/* the connection's now */
	tls_client_free(cl, 0);
	/* What came with the handshake's last flight. */
	if (evbuffer_get_length(c->in) > 0)
		conn_process(c);
}

static void
tls_handshake_cb(struct bufferevent *bev, short what, void *arg)
{
	struct tls_client	*cl = arg;
	unsigned long		 e;
	long			 v;
	char			 why[256] = "closed";

	if (what & BEV_EVENT_CONNECTED) {
		tls_handshake_done(cl);
		return;
	}
	if (what & BEV_EVENT_TIMEOUT)
		snprintf(why, sizeof why, "no handshake within %d ms",
		    TLS_HANDSHAKE_MS);
	else if ((e = bufferevent_get_openssl_error(bev)) != 0)
		ERR_error_string_n(e, why, sizeof why);
	v = SSL_get_verify_result(bufferevent_openssl_get_ssl(bev));
	if (v != X509_V_OK)
		log_info("TLS handshake with %s failed: %s (its certificate: "
		    "%s)", cl->addr, why, X509_verify_cert_error_string(v));
	else
		log_info("TLS handshake with %s failed: %s", cl->addr, why);
	/* Its alert is out: the client reads it before the end. */
	tls_client_free(cl, !(what & BEV_EVENT_TIMEOUT));
}

static void
tls_addr(const struct sockaddr_storage *ss, char *out, size_t len)
{
	char	 host[INET6_ADDRSTRLEN], port[8];

	if (getnameinfo((const struct sockaddr *)ss, sizeof *ss, host,
	    sizeof host, port, sizeof port, NI_NUMERICHOST |
	    NI_NUMERICSERV) != 0)
		snprintf(out, len, "?");
	else if (ss->ss_family == AF_INET6)
		snprintf(out, len, "[%s]:%s", host, port);
	else
		snprintf(out, len, "%s:%s", host, port);
}

static void
tls_accept_one(struct tls *t, int fd, const struct sockaddr_storage *ss)
{
	struct timeval		 tv = { TLS_HANDSHAKE_MS / 1000, 0 };
	struct tls_client	*cl;
	SSL			*ssl;
	int			 on = 1;

	if (t->nclients >= t->md->cfg.max_connections) {
		log_warnx("TLS: %u handshakes in progress (--max-connections):"
		    " closing a new one", t->nclients);
		close(fd);
		return;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
	if ((ssl = SSL_new(t->ctx)) == NULL)
		fatalx("SSL_new: out of memory");
	cl = xcalloc(1, sizeof *cl);
	cl->t = t;
	cl->fd = fd;
	tls_addr(ss, cl->addr, sizeof cl->addr);
	cl->bev = bufferevent_openssl_socket_new(t->md->base, fd, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (cl->bev == NULL)
		fatalx("bufferevent_openssl_socket_new");
	bufferevent_openssl_set_allow_dirty_shutdown(cl->bev, 1);
	TAILQ_INSERT_TAIL(&t->clients, cl, entry);
	t->nclients++;
	bufferevent_setcb(cl->bev, NULL, NULL, tls_handshake_cb, cl);
	bufferevent_set_timeouts(cl->bev, &tv, &tv);
	bufferevent_enable(cl->bev, EV_READ | EV_WRITE);
}

static void
tls_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct tls	*t = arg;
	unsigned	 i;

	for (i = 0; i < t->nls; i++) {
		if (t->ls[i].fd != -1)
			event_add(t->ls[i].ev, NULL);
	}
}

/* Out of descriptors: every listener pauses a while. */
static void
tls_pause(struct tls *t)
{
	struct timeval	 tv = { 0, TLS_EMFILE_PAUSE_MS * 1000 };
	unsigned	 i;

	log_warn("accept (TLS): pausing");
	for (i = 0; i < t->nls; i++)
		event_del(t->ls[i].ev);
	if (t->resume_ev == NULL &&
	    (t->resume_ev = evtimer_new(t->md->base, tls_resume_cb, t)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(t->resume_ev, &tv);
}

static void
tls_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct tls_listener	*l = arg;
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	int			 fd, i;

	for (i = 0; i < 64; i++) {
		len = sizeof ss;
		fd = accept4(lfd, (struct sockaddr *)&ss, &len,
		    SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE)
				tls_pause(l->t);
			else if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept (TLS)");
			return;
		}
		tls_accept_one(l->t, fd, &ss);
	}
}

void
tls_stop_listening(struct tls *t)
{
	unsigned	 i;

	if (t == NULL)
		return;
	if (t->resume_ev != NULL)
		event_del(t->resume_ev);
	for (i = 0; i < t->nls; i++) {
		if (t->ls[i].fd == -1)
			continue;
		if (t->ls[i].ev != NULL)
			event_del(t->ls[i].ev);
		close(t->ls[i].fd);
		t->ls[i].fd = -1;
	}
}

void
tls_free(struct tls *t)
{
	unsigned	 i;

	if (t == NULL)
		return;
	tls_stop_listening(t);
	while (!TAILQ_EMPTY(&t->clients))
		tls_client_free(TAILQ_FIRST(&t->clients), 0);
	while (!TAILQ_EMPTY(&t->lingers))
		tls_linger_free(TAILQ_FIRST(&t->lingers));
	for (i = 0; i < t->nls; i++) {
		if (t->ls[i].ev != NULL)
			event_free(t->ls[i].ev);
		free(t->ls[i].url);
	}
	free(t->ls);
	if (t->resume_ev != NULL)
		event_free(t->resume_ev);
	SSL_CTX_free(t->ctx);
	free(t);
}
