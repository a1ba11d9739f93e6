/*
 * Connections on raw events and evbuffers.  Answers are appended to the
 * output buffer and written once per turn of the loop (server flush), so a
 * pipelined burst costs one writev, and the write event is armed only while
 * the kernel's buffer is full.  A TLS connection's buffers are its
 * bufferevent's, which reads and writes them itself (conn_bev.c).
 */
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "net/conn.h"
#include "log.h"
#include "metad.h"
#include "metrics/metrics.h"
#include "core/wait.h"
#include "lease/lease.h"
#include "ops/ops.h"
#include "ops/snapshot.h"
#include "proto.h"
#include "core/reply.h"
#include "net/server.h"

/* Bytes read from a socket in one callback, so no client starves others. */
#define CONN_READ_CHUNK		(4 * 1024)
#define CONN_READ_PER_CB	(256 * 1024)

static void	conn_read_cb(evutil_socket_t, short, void *);
static void	conn_write_cb(evutil_socket_t, short, void *);

/* The connection as its watches' peer (watch.h). */
static void
conn_peer_send(void *arg, const void *data, size_t len)
{
	conn_send(arg, data, len);
}

static int
conn_peer_full(void *arg)
{
	return (conn_output_full(arg));
}

void
conn_id_name(const struct conn_id *id, char *out, size_t len)
{
	if (id->cn != NULL)
		snprintf(out, len, "CN \"%s\"", id->cn);
	else if (id->by_group)
		snprintf(out, len, "gid %ld", (long)id->group);
	else
		snprintf(out, len, "uid %ld", (long)id->uid);
}

struct conn *
conn_create(struct metad *md, int fd, struct bufferevent *bev,
    const struct conn_id *id, enum conn_access access)
{
	struct conn	*c;

	c = xcalloc(1, sizeof *c);
	c->md = md;
	c->fd = fd;
	c->uid = id->uid;
	c->gid = id->gid;
	c->pid = id->pid;
	c->cn = id->cn != NULL ? xstrdup(id->cn) : NULL;
	/* A CN is at most 255 bytes (tls.c): the identity holds it whole. */
	if (id->cn != NULL)
		c->identity_len = (size_t)snprintf(c->identity,
		    sizeof c->identity, "cn:%s", id->cn);
	else
		c->identity_len = (size_t)snprintf(c->identity,
		    sizeof c->identity, "uid:%lu", (unsigned long)id->uid);
	c->access = access;
	TAILQ_INIT(&c->peer.watches);
	c->peer.md = md;
	c->peer.uid = id->cn != NULL ? -1 : (long)id->uid;
	c->peer.pid = id->cn != NULL ? -1 : (long)id->pid;
	conn_id_name(id, c->peer.who, sizeof c->peer.who);
	c->peer.arg = c;
	c->peer.send = conn_peer_send;
	c->peer.full = conn_peer_full;
	TAILQ_INIT(&c->reqs);
	if (bev != NULL)
		conn_bev_create(c, bev);
	else {
		c->in = evbuffer_new();
		c->out = evbuffer_new();
		c->rev = event_new(md->base, fd, EV_READ | EV_PERSIST,
		    conn_read_cb, c);
		c->wev = event_new(md->base, fd, EV_WRITE | EV_PERSIST,
		    conn_write_cb, c);
	}
	if (c->in == NULL || c->out == NULL || (bev == NULL &&
	    (c->rev == NULL || c->wev == NULL)))
		fatalx("conn_create: out of memory");
	conn_reading(c, 1);
	return (c);
}

void
conn_reading(struct conn *c, int on)
{
	if (on && c->md->stopping)
		on = 0;		/* SIGTERM: what came is answered, no more */
	if (c->dead || on == c->reading)
		return;
	if (c->bev != NULL && on)
		bufferevent_enable(c->bev, EV_READ);
	else if (c->bev != NULL)
		bufferevent_disable(c->bev, EV_READ);
	else if (on)
		event_add(c->rev, NULL);
	else
		event_del(c->rev);
	c->reading = on;
}

/* The raw events' only: a bufferevent writes its output itself. */
static void
conn_writing(struct conn *c, int on)
{
	if (c->dead || c->bev != NULL || on == c->writing)
		return;
	if (on)
		event_add(c->wev, NULL);
	else
		event_del(c->wev);
	c->writing = on;
}

void
conn_send(struct conn *c, const void *p, size_t n)
{
	if (c->dead || n == 0)
		return;
	if (evbuffer_add(c->out, p, n) != 0)
		fatalx("conn_send: out of memory");
	if (!c->writing)
		server_conn_dirty(c->md->server, c);
}

size_t
conn_output_len(struct conn *c)
{
	if (c->dead)
		return (0);
	return (evbuffer_get_length(c->out) + c->held);
}

/* Too much unsent output: stop reading until the client catches up. */
int
conn_output_full(struct conn *c)
{
	return (c->dead || conn_output_len(c) > c->md->cfg.max_pending_bytes);
}

/* Skip the rest of an over-long line; 1 once its end was found. */
static int
conn_skip(struct conn *c)
{
	struct evbuffer_ptr	 eol;
	size_t			 eol_len;

	eol = evbuffer_search_eol(c->in, NULL, &eol_len, EVBUFFER_EOL_LF);
	if (eol.pos < 0) {
		evbuffer_drain(c->in, evbuffer_get_length(c->in));
		return (0);
	}
	evbuffer_drain(c->in, (size_t)eol.pos + eol_len);
	c->skipping = 0;
	return (1);
}

static void
conn_too_large(struct conn *c, size_t len)
{
	struct buf	 b;
	char		 msg[PROTO_MSG_MAX];

	snprintf(msg, sizeof msg, "request line is %s%zu bytes, the limit is "
	    "%zu (--max-request-bytes)", c->skipping ? "over " : "", len,
	    c->md->cfg.max_request_bytes);
	buf_init(&b);
	reply_raw_error(&b, NULL, 0, PROTO_REQUEST_TOO_LARGE, msg);
	conn_send(c, b.data, b.len);
	buf_free(&b);
	metrics_request(&c->md->metrics, metrics_op_unknown,
	    PROTO_REQUEST_TOO_LARGE, 0);
}

/*
 * What became of a line (as tmux's CMD_RETURN_*): taken (answered, or
 * started and answered in its turn), or it must wait for the answers
 * owed before it and stays in the input until conn_req_done() resumes.
 */
enum conn_line {
	CONN_LINE_TAKEN,
	CONN_LINE_WAIT,
};

/*
 * CONN_LINE_WAIT if answers to earlier requests are still owed: a
 * request_too_large answer waits for them (answers go in request order)
 * and the line stays until conn_req_done() takes the next one.
 */
static enum conn_line
conn_owes(struct conn *c)
{
	if (c->nreqs == 0)
		return (CONN_LINE_TAKEN);
	c->blocked = 1;
	return (CONN_LINE_WAIT);
}

static int
conn_blank(const char *line, size_t len)
{
	size_t	 i;

	for (i = 0; i < len; i++) {
		if (line[i] != ' ' && line[i] != '\t' && line[i] != '\r')
			return (0);
	}
	return (1);
}

/*
 * Admit a request line: a write may start behind writes of its connection
 * (the group commit keeps their order); anything else only once
 * everything before it is answered (else CONN_LINE_WAIT).
 */
static enum conn_line
conn_handle(struct conn *c, const char *line, size_t len)
{
	struct req		*r;
	struct proto_err	 e;
	int			 rc;

	if (conn_blank(line, len))
		return (CONN_LINE_TAKEN);
	if (c->nother > 0)
		return (CONN_LINE_WAIT);
	/* malloc, not calloc: glibc's calloc skips its per-thread cache */
	r = xmalloc(sizeof *r + OPS_FAST_ROOM(len));
	memset(r, 0, sizeof *r);
	r->start_ns = mono_ns();
	r->md = c->md;
	r->conn = c;
	r->access = c->access;
	r->on_done = conn_req_done;
	r->order = &c->order;
	r->peer = &c->peer;
	r->conn_dead = &c->dead;
	r->identity = c->identity;
	r->identity_len = c->identity_len;
	buf_init(&r->resp);
	rc = ops_parse(r, line, len, &e);
	r->op_name = r->op != NULL ? r->op->name : metrics_op_unknown;
	/* A write that reads (a txn's gets) may make an answer of
	 * --max-answer-bytes: one such at a time, started as a read is
	 * (conn.h). */
	if (rc == 0 && req_writes(r) && !(req_does(r) & REQ_READS)) {
		conn_enqueue(c, r);
		ops_start(r, line, len, rc, &e);
		return (CONN_LINE_TAKEN);
	}
	if (c->nreqs > 0) {
		req_free(r);
		c->blocked = 1;		/* not parsed again until then */
		return (CONN_LINE_WAIT);
	}
	r->op = rc == 0 ? r->op : NULL;
	conn_enqueue(c, r);
	ops_start(r, line, len, rc, &e);
	return (CONN_LINE_TAKEN);
}

/* Handle the next whole line; 0 when there is none or we must wait. */
static int
conn_next(struct conn *c)
{
	struct evbuffer_ptr	 eol;
	size_t			 eol_len, len, max = c->md->cfg.max_request_bytes;
	const char		*line;

	if (c->blocked || (c->skipping && !conn_skip(c)))
		return (0);
	eol = evbuffer_search_eol(c->in, NULL, &eol_len, EVBUFFER_EOL_LF);
	/* A CR before the LF is not the request's: one byte over the limit
	 * may be it. */
	if (eol.pos < 0) {
		if (evbuffer_get_length(c->in) > max + 1) {
			if (conn_owes(c) == CONN_LINE_WAIT)
				return (0);
			c->skipping = 1;
			conn_too_large(c, evbuffer_get_length(c->in));
			evbuffer_drain(c->in, evbuffer_get_length(c->in));
		}
		return (0);
	}
	len = (size_t)eol.pos;
	line = len > max + 1 ? NULL :
	    (const char *)evbuffer_pullup(c->in, (ssize_t)(len + eol_len));
	if (len > max && (line == NULL || line[len - 1] != '\r')) {
		if (conn_owes(c) == CONN_LINE_WAIT)
			return (0);
		conn_too_large(c, len);
		evbuffer_drain(c->in, len + eol_len);
		return (1);
	}
	if (conn_handle(c, line, len) == CONN_LINE_WAIT)
		return (0);	/* the line stays */
	evbuffer_drain(c->in, len + eol_len);
	return (!c->dead);
}

/* The client sent EOF and everything is answered: close once flushed. */
static void
conn_finish(struct conn *c)
{
	c->closing = 1;
	if (evbuffer_get_length(c->out) == 0)
		conn_close(c);
	/* else conn_flush() closes it once the output is written. */
}

void
conn_process(struct conn *c)
{
	if (c->dead || c->closing || c->processing)
		return;
	c->processing = 1;
	while (!c->dead) {
		if (conn_output_full(c)) {
			/* conn_flush() resumes once the output drains. */
			c->stalled = 1;
			conn_reading(c, 0);
			c->processing = 0;
			return;
		}
		if (!conn_next(c))
			break;
	}
	c->processing = 0;
	if (c->dead || c->nreqs > 0)
		return;		/* conn_req_done() resumes */
	if (c->eof)
		conn_finish(c);
	else
		conn_reading(c, 1);
}

void
conn_enqueue(struct conn *c, struct req *r)
{
	TAILQ_INSERT_TAIL(&c->reqs, r, conn_entry);
	c->nreqs++;
	c->refs++;
	if (!req_writes(r))
		c->nother++;
}

static void
conn_dequeue(struct conn *c, struct req *r)
{
	TAILQ_REMOVE(&c->reqs, r, conn_entry);
	c->nreqs--;
	if (!req_writes(r))
		c->nother--;
	req_free(r);
	server_conn_unref(c->md->server, c);
}

/*
 * Send the answers at the head of the queue that are done, then take the
 * next requests if nothing is owed any more.
 */
void
conn_req_done(struct req *r)
{
	struct conn	*c = r->conn;

	metrics_request(&c->md->metrics, r->op_name, r->code,
	    (double)(mono_ns() - r->start_ns) / 1e9);
	if (c->dead) {
		conn_dequeue(c, r);
		return;
	}
	c->held += r->resp.len;
	while ((r = TAILQ_FIRST(&c->reqs)) != NULL && r->done) {
		c->held -= r->resp.len;
		conn_send(c, r->resp.data, r->resp.len);
		conn_dequeue(c, r);
	}
	if (c->nreqs == 0)
		c->blocked = 0;
	if (!c->blocked && c->nother == 0)
		conn_process(c);
}

/* The peer closed its side: answer what came before, then close. */
void
conn_eof(struct conn *c)
{
	c->eof = 1;
	conn_reading(c, 0);
	if (evbuffer_get_length(c->in) > 0 && !c->skipping)
		evbuffer_add(c->in, "\n", 1);	/* an unterminated last line */
	conn_process(c);
}

/*
 * One read(2) (evbuffer_read() asks the kernel with FIONREAD first, a
 * second system call for every request), into the stack: what came is
 * then added to the buffer, whose chain is sized for it (a request or
 * two fit one of 1 KiB, from malloc's per-thread cache), where a chain
 * reserved for CONN_READ_CHUNK bytes would be a large allocation, made
 * and freed for every request.
 */
static int
conn_read_some(struct evbuffer *in, evutil_socket_t fd)
{
	char		 tmp[CONN_READ_CHUNK];
	ssize_t		 n;

	if ((n = read(fd, tmp, sizeof tmp)) <= 0)
		return ((int)n);
	if (evbuffer_add(in, tmp, (size_t)n) != 0) {
		errno = ENOMEM;
		return (-1);
	}
	return ((int)n);
}

static void
conn_read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;
	size_t		 total = 0;
	int		 n;

	while (total < CONN_READ_PER_CB) {
		n = conn_read_some(c->in, fd);
		if (n > 0) {
			total += (size_t)n;
			c->md->metrics.bytes_received += (uint64_t)n;
			/* Short: the socket is empty (the next wake-up tells). */
			if (n < CONN_READ_CHUNK)
				break;
			continue;
		}
		if (n == 0) {
			conn_eof(c);
			return;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			break;
		log_debug("connection uid %ld: read: %s", (long)c->uid,
		    strerror(errno));
		conn_close(c);
		return;
	}
	if (c->nreqs > 0 &&
	    evbuffer_get_length(c->in) > c->md->cfg.max_request_bytes)
		conn_reading(c, 0);	/* enough queued; resumed later */
	conn_process(c);
}

/* The output drained: go on with what waited for room. */
void
conn_drained(struct conn *c)
{
	if (c->closing) {
		conn_close(c);
		return;
	}
	if (!TAILQ_EMPTY(&c->peer.watches))
		watch_peer_drained(&c->peer);
	if (c->stalled && !c->dead) {
		c->stalled = 0;
		conn_process(c);
	}
}

void
conn_flush(struct conn *c)
{
	int	 n;

	if (c->dead)
		return;
	if (c->bev != NULL) {
		/* What is there is on its way: conn_bev_write_cb() says when
		 * it is out. */
		if (evbuffer_get_length(c->out) == 0)
			conn_drained(c);
		return;
	}
	while (evbuffer_get_length(c->out) > 0) {
		n = evbuffer_write(c->out, c->fd);
		if (n > 0) {
			c->md->metrics.bytes_sent += (uint64_t)n;
			continue;
		}
		if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n == -1 && errno == EINTR)
			continue;
		log_debug("connection uid %ld: write: %s", (long)c->uid,
		    strerror(errno));
		conn_close(c);
		return;
	}
	if (evbuffer_get_length(c->out) > 0) {
		conn_writing(c, 1);
		return;
	}
	conn_writing(c, 0);
	conn_drained(c);
}

static void
conn_write_cb(evutil_socket_t fd, short what, void *arg)
{
	conn_flush(arg);
}

void
conn_close(struct conn *c)
{
	struct req	*r, *next;

	if (c->dead)
		return;
	conn_reading(c, 0);
	conn_writing(c, 0);
	c->dead = 1;
	/* Answers nobody will read: what still runs ends in req_done(). */
	for (r = TAILQ_FIRST(&c->reqs); r != NULL; r = next) {
		next = TAILQ_NEXT(r, conn_entry);
		if (r->done)
			conn_dequeue(c, r);
	}
	watch_peer_closed(&c->peer);
	wait_conn_closed(c->md->waits, c);
	lease_conn_closed(c->md->leases, c);
	snapshots_conn_closed(c->md->snapshots, c);
	if (c->bev != NULL)
		conn_bev_close(c);
	else {
		close(c->fd);
		c->fd = -1;
	}
	server_conn_closed(c->md->server, c);
}

void
conn_free(struct conn *c)
{
	if (c->bev != NULL)
		conn_bev_free(c);		/* its buffers and descriptor */
	else {
		if (c->fd != -1)
			close(c->fd);
		event_free(c->rev);
		event_free(c->wev);
		evbuffer_free(c->in);
		evbuffer_free(c->out);
	}
	free(c->cn);
	free(c);
}
