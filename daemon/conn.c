#include <sys/types.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>

#include "conn.h"
#include "log.h"
#include "metad.h"
#include "ops.h"
#include "proto.h"
#include "server.h"
#include "wait.h"
#include "watch.h"

static void	conn_read_cb(struct bufferevent *, void *);
static void	conn_write_cb(struct bufferevent *, void *);
static void	conn_event_cb(struct bufferevent *, short, void *);

struct conn *
conn_create(struct metad *md, int fd, uid_t uid, gid_t gid, pid_t pid,
    enum conn_access access)
{
	struct conn	*c;

	c = xcalloc(1, sizeof *c);
	c->md = md;
	c->uid = uid;
	c->gid = gid;
	c->pid = pid;
	c->access = access;
	TAILQ_INIT(&c->watches);
	c->bev = bufferevent_socket_new(md->base, fd, BEV_OPT_CLOSE_ON_FREE);
	if (c->bev == NULL)
		fatalx("bufferevent_socket_new");
	bufferevent_setcb(c->bev, conn_read_cb, conn_write_cb, conn_event_cb,
	    c);
	bufferevent_enable(c->bev, EV_READ | EV_WRITE);
	return (c);
}

const char *
conn_access_name(enum conn_access a)
{
	switch (a) {
	case CONN_ACCESS_RW:
		return ("rw");
	case CONN_ACCESS_RO:
		return ("ro");
	default:
		return ("none");
	}
}

void
conn_send(struct conn *c, const void *p, size_t n)
{
	if (c->dead)
		return;
	bufferevent_write(c->bev, p, n);
}

size_t
conn_output_len(struct conn *c)
{
	if (c->dead)
		return (0);
	return (evbuffer_get_length(bufferevent_get_output(c->bev)));
}

/* Too much unsent output: stop reading until the client catches up. */
int
conn_output_full(struct conn *c)
{
	return (c->dead || conn_output_len(c) > c->md->cfg.max_pending_bytes);
}

/* Skip the rest of an over-long line; 1 once its end was found. */
static int
conn_skip(struct conn *c, struct evbuffer *in)
{
	struct evbuffer_ptr	 eol;
	size_t			 eol_len;

	eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
	if (eol.pos < 0) {
		evbuffer_drain(in, evbuffer_get_length(in));
		return (0);
	}
	evbuffer_drain(in, (size_t)eol.pos + eol_len);
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
}

/* Handle the next whole line; 0 when there is none or we must wait. */
static int
conn_next(struct conn *c, struct evbuffer *in)
{
	struct evbuffer_ptr	 eol;
	size_t			 eol_len, len, max = c->md->cfg.max_request_bytes;
	const char		*line;

	if (c->skipping && !conn_skip(c, in))
		return (0);
	eol = evbuffer_search_eol(in, NULL, &eol_len, EVBUFFER_EOL_LF);
	if (eol.pos < 0) {
		if (evbuffer_get_length(in) > max) {
			c->skipping = 1;
			conn_too_large(c, evbuffer_get_length(in));
			evbuffer_drain(in, evbuffer_get_length(in));
		}
		return (0);
	}
	len = (size_t)eol.pos;
	if (len > max) {
		conn_too_large(c, len);
		evbuffer_drain(in, len + eol_len);
		return (1);
	}
	line = (const char *)evbuffer_pullup(in, (ssize_t)(len + eol_len));
	if (ops_handle(c, line, len) != 0)
		return (0);	/* must wait for a commit: line stays */
	evbuffer_drain(in, len + eol_len);
	return (!c->dead);
}

/* The client sent EOF and everything is answered: close once flushed. */
static void
conn_finish(struct conn *c)
{
	if (evbuffer_get_length(bufferevent_get_output(c->bev)) == 0)
		conn_close(c);
	else
		c->closing = 1;		/* conn_write_cb closes it */
}

void
conn_process(struct conn *c)
{
	struct evbuffer	*in;

	if (c->dead || c->closing)
		return;
	in = bufferevent_get_input(c->bev);
	while (!c->dead) {
		if (conn_output_full(c)) {
			/* conn_write_cb resumes once the output drains. */
			bufferevent_disable(c->bev, EV_READ);
			return;
		}
		if (!conn_next(c, in))
			break;
	}
	if (c->dead)
		return;
	if (c->pending > 0)
		bufferevent_disable(c->bev, EV_READ);
	else if (c->eof)
		conn_finish(c);
	else
		bufferevent_enable(c->bev, EV_READ);
}

void
conn_write_done(struct conn *c)
{
	if (c->pending == 0)
		fatalx("conn_write_done: no pending write");
	if (--c->pending == 0 && !c->dead)
		conn_process(c);
}

static void
conn_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	if (c->pending == 0)
		conn_process(c);
}

static void
conn_write_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	/* The output has drained. */
	if (c->closing) {
		conn_close(c);
		return;
	}
	watch_conn_drained(c);
	if (c->pending == 0)
		conn_process(c);
}

static void
conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	struct evbuffer	*in;

	if ((what & BEV_EVENT_EOF) && !(what & BEV_EVENT_ERROR) && !c->eof) {
		/* Answer what was sent before the EOF, then close. */
		c->eof = 1;
		in = bufferevent_get_input(c->bev);
		if (evbuffer_get_length(in) > 0 && !c->skipping) {
			/*
			 * An unterminated last line.  The input is frozen
			 * except while libevent itself reads into it.
			 */
			evbuffer_unfreeze(in, 0);
			evbuffer_add(in, "\n", 1);
			evbuffer_freeze(in, 0);
		}
		if (c->pending == 0)
			conn_process(c);
		return;
	}
	if (what & BEV_EVENT_ERROR)
		log_debug("connection uid %ld: %s", (long)c->uid,
		    strerror(errno));
	conn_close(c);
}

void
conn_close(struct conn *c)
{
	if (c->dead)
		return;
	c->dead = 1;
	watch_conn_closed(c);
	wait_conn_closed(c->md->waits, c);
	bufferevent_free(c->bev);
	c->bev = NULL;
	server_conn_closed(c->md->server, c);
}

void
conn_free(struct conn *c)
{
	if (c->bev != NULL)
		bufferevent_free(c->bev);
	free(c);
}
