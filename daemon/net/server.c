#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "net/access.h"
#include "net/conn.h"
#include "log.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"
#include "net/server.h"
#include "core/wait.h"

/* How long accepting pauses when the process is out of descriptors. */
#define SERVER_EMFILE_PAUSE_MS	200

TAILQ_HEAD(conn_list, conn);

/*
 * A peer other than root and metad's own uid (those are bound only by the
 * daemon-wide limits), while it has a connection: what it holds, against
 * --max-connections-per-peer and --max-watches-per-peer.  A peer is the
 * identity that let it in (metad(8), ACCESS): on the socket its uid when a
 * uid list did, else the group whose list did, shared by every uid it lets
 * in; over TLS its certificate's CN.  Few: one per uid or gid the access
 * lists name, and one per CN.
 */
struct server_peer {
	int			 group;		/* id is a gid */
	unsigned long		 id;		/* a uid or that gid */
	char			*cn;		/* TLS; NULL: a uid or gid */
	unsigned		 conns;
	unsigned		 watches;	/* its watch_peers' count */
	LIST_ENTRY(server_peer)	 entry;
};

struct server {
	struct metad		*md;
	LIST_HEAD(, server_peer) peers;
	int			 fd;
	struct event		*accept_ev;
	struct event		*resume_ev;
	struct event		*reap_ev;
	struct event		*flush_ev;
	struct conn_list	 conns;
	TAILQ_HEAD(, conn)	 dirty;		/* output to write */
	struct conn_list	 dead;
	char			*path;
	int			 activated;	/* the socket is systemd's */
};

static void	server_accept_cb(evutil_socket_t, short, void *);
static void	server_resume_cb(evutil_socket_t, short, void *);
static void	server_reap_cb(evutil_socket_t, short, void *);
static void	server_flush_cb(evutil_socket_t, short, void *);

/* 1 if a daemon answers on path. */
static int
server_is_live(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, live;

	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return (0);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path);
	live = connect(fd, (struct sockaddr *)&sun, sizeof sun) == 0;
	close(fd);
	return (live);
}

static int
server_listen(const char *path, mode_t mode, char **cause)
{
	struct sockaddr_un	 sun;
	struct stat		 sb;
	mode_t			 old;
	int			 fd;

	if (server_is_live(path)) {
		xasprintf(cause, "another metad is already running on %s",
		    path);
		return (-1);
	}
	if (lstat(path, &sb) == 0) {
		if (!S_ISSOCK(sb.st_mode)) {
			xasprintf(cause, "%s exists and is not a socket", path);
			return (-1);
		}
		log_info("removing stale socket %s", path);
		unlink(path);
	}
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path) >=
	    (int)sizeof sun.sun_path) {
		xasprintf(cause, "socket path too long: %s", path);
		return (-1);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return (-1);
	}
	old = umask(0777 & ~mode);
	if (bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1) {
		umask(old);
		xasprintf(cause, "bind %s: %s", path, strerror(errno));
		close(fd);
		return (-1);
	}
	umask(old);
	if (chmod(path, mode) == -1 || listen(fd, 512) == -1) {
		xasprintf(cause, "listen %s: %s", path, strerror(errno));
		close(fd);
		unlink(path);
		return (-1);
	}
	return (fd);
}

/* The path a passed socket is bound to, for the log and the config. */
static char *
server_bound_path(int fd)
{
	struct sockaddr_un	 sun;
	socklen_t		 len = sizeof sun;

	memset(&sun, 0, sizeof sun);
	if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    len <= offsetof(struct sockaddr_un, sun_path) ||
	    sun.sun_path[0] == '\0')
		return (xstrdup("(socket from systemd)"));
	sun.sun_path[sizeof sun.sun_path - 1] = '\0';
	return (xstrdup(sun.sun_path));
}

/*
 * Listens on the configured path, or, when fd is not -1, serves that
 * socket (from systemd): it is neither created nor removed here.
 */
struct server *
server_create(struct metad *md, int fd, char **cause)
{
	struct server	*s;
	int		 activated = fd != -1;

	if (!activated) {
		fd = server_listen(md->cfg.socket_path, md->cfg.socket_mode,
		    cause);
		if (fd == -1)
			return (NULL);
	}
	s = xcalloc(1, sizeof *s);
	s->md = md;
	s->fd = fd;
	s->activated = activated;
	if (activated) {
		free(md->cfg.socket_path);
		md->cfg.socket_path = server_bound_path(fd);
	}
	s->path = xstrdup(md->cfg.socket_path);
	TAILQ_INIT(&s->conns);
	LIST_INIT(&s->peers);
	TAILQ_INIT(&s->dead);
	TAILQ_INIT(&s->dirty);
	s->accept_ev = event_new(md->base, fd, EV_READ | EV_PERSIST,
	    server_accept_cb, s);
	s->resume_ev = evtimer_new(md->base, server_resume_cb, s);
	s->reap_ev = event_new(md->base, -1, 0, server_reap_cb, s);
	s->flush_ev = event_new(md->base, -1, 0, server_flush_cb, s);
	if (s->accept_ev == NULL || s->resume_ev == NULL ||
	    s->reap_ev == NULL || s->flush_ev == NULL)
		fatalx("event_new");
	event_add(s->accept_ev, NULL);
	return (s);
}

/* Answer one error line on a socket we will not serve, then close it. */
static void
server_refuse(int fd, enum proto_code code, const char *msg)
{
	struct buf	 b;
	ssize_t		 n;

	buf_init(&b);
	reply_raw_error(&b, NULL, 0, code, msg);
	n = write(fd, b.data, b.len);
	(void)n;
	buf_free(&b);
	close(fd);
}

/*
 * The peer's record, made if need be; NULL for root and metad's own uid
 * on the socket.
 */
static struct server_peer *
server_peer_get(struct server *s, const struct conn_id *id)
{
	struct server_peer	*p;
	unsigned long		 pid = id->by_group ? (unsigned long)id->group :
				    (unsigned long)id->uid;

	if (id->cn == NULL && !id->by_group && (id->uid == 0 ||
	    id->uid == geteuid()))
		return (NULL);
	LIST_FOREACH(p, &s->peers, entry) {
		if (id->cn != NULL ? p->cn != NULL && strcmp(p->cn, id->cn) == 0
		    : p->cn == NULL && p->group == id->by_group && p->id == pid)
			return (p);
	}
	p = xcalloc(1, sizeof *p);
	p->group = id->by_group;
	p->id = pid;
	p->cn = id->cn != NULL ? xstrdup(id->cn) : NULL;
	LIST_INSERT_HEAD(&s->peers, p, entry);
	return (p);
}

/* A record that holds nothing any more goes. */
static void
server_peer_put(struct server_peer *p)
{
	if (p->conns == 0 && p->watches == 0) {
		LIST_REMOVE(p, entry);
		free(p->cn);
		free(p);
	}
}

/*
 * Serve the peer, or refuse it: no access, or at --max-connections or its
 * --max-connections-per-peer.
 */
struct conn *
server_admit(struct server *s, int fd, struct bufferevent *bev,
    const struct conn_id *id, enum conn_access access, enum proto_code *code,
    char *msg, size_t len)
{
	struct metad		*md = s->md;
	struct server_peer	*p;
	struct conn		*c;
	char			 who[WATCH_PEER_WHO_MAX];

	conn_id_name(id, who, sizeof who);
	if (access == CONN_ACCESS_NONE) {
		if (id->cn != NULL)
			log_info("refused %s", who);
		else
			log_info("refused uid %ld gid %ld pid %ld",
			    (long)id->uid, (long)id->gid, (long)id->pid);
		snprintf(msg, len, "%s may not use this metad", who);
		*code = PROTO_PERMISSION_DENIED;
		return (NULL);
	}
	if (md->nconns >= md->cfg.max_connections) {
		snprintf(msg, len, "too many connections (the limit is %u, "
		    "--max-connections)", md->cfg.max_connections);
		*code = PROTO_UNAVAILABLE;
		return (NULL);
	}
	if ((p = server_peer_get(s, id)) != NULL &&
	    p->conns >= md->cfg.max_conns_per_peer) {
		snprintf(msg, len, "%s has %u connections, the limit is %u "
		    "(--max-connections-per-peer)", who, p->conns,
		    md->cfg.max_conns_per_peer);
		server_peer_put(p);
		*code = PROTO_RESOURCE_EXHAUSTED;
		return (NULL);
	}
	c = conn_create(md, fd, bev, id, access);
	if ((c->server_peer = p) != NULL) {
		p->conns++;
		c->peer.peer_watches = &p->watches;
	}
	TAILQ_INSERT_TAIL(&s->conns, c, entry);
	md->nconns++;
	if (id->cn != NULL)
		log_debug("connection from %s", who);
	else
		log_debug("connection from uid %ld pid %ld", (long)id->uid,
		    (long)id->pid);
	return (c);
}

static void
server_accept_one(struct server *s, int fd)
{
	struct ucred		 cred;
	socklen_t		 len = sizeof cred;
	struct conn_id		 id;
	enum conn_access	 access;
	enum proto_code		 code;
	char			 msg[PROTO_MSG_MAX];

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1) {
		log_warn("getsockopt SO_PEERCRED");
		close(fd);
		return;
	}
	memset(&id, 0, sizeof id);
	id.uid = cred.uid;
	id.gid = cred.gid;
	id.pid = cred.pid;
	access = access_uid(&s->md->cfg, fd, &cred, &id.by_group, &id.group);
	if (server_admit(s, fd, NULL, &id, access, &code, msg,
	    sizeof msg) == NULL)
		server_refuse(fd, code, msg);
}

static void
server_accept_cb(evutil_socket_t lfd, short what, void *arg)
{
	struct server	*s = arg;
	struct timeval	 tv = { 0, SERVER_EMFILE_PAUSE_MS * 1000 };
	int		 fd, i;

	for (i = 0; i < 64; i++) {
		fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd == -1) {
			if (errno == EMFILE || errno == ENFILE) {
				log_warn("accept: pausing");
				event_del(s->accept_ev);
				evtimer_add(s->resume_ev, &tv);
			} else if (errno != EAGAIN && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn("accept");
			return;
		}
		server_accept_one(s, fd);
	}
}

static void
server_resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;

	if (s->fd != -1)
		event_add(s->accept_ev, NULL);
}

/*
 * c has output to write: it is written once this turn's other callbacks
 * (reads, the commit) have added theirs.
 */
void
server_conn_dirty(struct server *s, struct conn *c)
{
	if (c->dirty)
		return;
	c->dirty = 1;
	TAILQ_INSERT_TAIL(&s->dirty, c, dirty_entry);
	event_active(s->flush_ev, 0, 0);
}

static void
server_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;
	struct conn	*c;

	while ((c = TAILQ_FIRST(&s->dirty)) != NULL) {
		TAILQ_REMOVE(&s->dirty, c, dirty_entry);
		c->dirty = 0;
		conn_flush(c);
	}
}

void
server_conn_closed(struct server *s, struct conn *c)
{
	if (c->dirty) {
		TAILQ_REMOVE(&s->dirty, c, dirty_entry);
		c->dirty = 0;
	}
	TAILQ_REMOVE(&s->conns, c, entry);
	TAILQ_INSERT_TAIL(&s->dead, c, entry);
	s->md->nconns--;
	if (c->server_peer != NULL) {
		c->server_peer->conns--;
		server_peer_put(c->server_peer);
		c->server_peer = NULL;
		c->peer.peer_watches = NULL;
	}
	event_active(s->reap_ev, 0, 0);
}

void
server_conn_unref(struct server *s, struct conn *c)
{
	if (c->refs == 0)
		fatalx("server_conn_unref: no reference");
	if (--c->refs == 0 && c->dead)
		event_active(s->reap_ev, 0, 0);
}

static void
server_reap_cb(evutil_socket_t fd, short what, void *arg)
{
	struct server	*s = arg;
	struct conn	*c, *next;

	for (c = TAILQ_FIRST(&s->dead); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		if (c->refs != 0)
			continue;
		TAILQ_REMOVE(&s->dead, c, entry);
		conn_free(c);
	}
}

void
server_stop_listening(struct server *s)
{
	if (s->fd == -1)
		return;
	event_del(s->accept_ev);
	event_del(s->resume_ev);
	close(s->fd);
	s->fd = -1;
	if (!s->activated)
		unlink(s->path);
}

/* At SIGTERM: no new requests; those already read are answered. */
void
server_stop_reading(struct server *s)
{
	struct conn	*c;

	TAILQ_FOREACH(c, &s->conns, entry)
		conn_reading(c, 0);
}

unsigned long
server_pending_output(struct server *s)
{
	struct conn	*c;
	unsigned long	 n = 0;

	TAILQ_FOREACH(c, &s->conns, entry)
		n += conn_output_len(c);
	return (n);
}

/* Requests not answered yet, but for waits (a wait may last a day). */
unsigned
server_pending_requests(struct server *s)
{
	struct conn	*c;
	unsigned	 n = 0;

	TAILQ_FOREACH(c, &s->conns, entry)
		n += c->nreqs;
	return (n - wait_count(s->md->waits));
}

/* What was answered is written first, as far as the peer reads it. */
void
server_close_all(struct server *s)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&s->conns)) != NULL) {
		conn_flush(c);
		conn_close(c);
	}
	server_reap_cb(-1, 0, s);
}

void
server_free(struct server *s)
{
	server_stop_listening(s);
	server_close_all(s);
	event_free(s->accept_ev);
	event_free(s->resume_ev);
	event_free(s->reap_ev);
	event_free(s->flush_ev);
	free(s->path);
	free(s);
}
