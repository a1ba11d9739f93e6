/*
 * A TLS connection's side of conn.c: its bufferevent (bufferevent_openssl,
 * made by net/tls.c) reads into and writes from the connection's buffers,
 * which are the bufferevent's, and tells conn.c of what came, of the
 * output that went out and of the end of the stream.
 */
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>

#include <openssl/ssl.h>

#include "log.h"
#include "metad.h"
#include "net/conn.h"

static void	conn_bev_read_cb(struct bufferevent *, void *);
static void	conn_bev_write_cb(struct bufferevent *, void *);
static void	conn_bev_event_cb(struct bufferevent *, short, void *);

/* A TLS connection: its bufferevent's buffers, read and written by it. */
void
conn_bev_create(struct conn *c, struct bufferevent *bev)
{
	c->bev = bev;
	c->in = bufferevent_get_input(bev);
	c->out = bufferevent_get_output(bev);
	bufferevent_setcb(bev, conn_bev_read_cb, conn_bev_write_cb,
	    conn_bev_event_cb, c);
	bufferevent_set_timeouts(bev, NULL, NULL);
	bufferevent_setwatermark(bev, EV_READ | EV_WRITE, 0, 0);
	bufferevent_enable(bev, EV_WRITE);
}

/*
 * The peer is told now (close_notify, then the end of the stream); the
 * bufferevent, which owns the descriptor, goes with the connection.
 */
void
conn_bev_close(struct conn *c)
{
	bufferevent_setcb(c->bev, NULL, NULL, NULL, NULL);
	bufferevent_disable(c->bev, EV_READ | EV_WRITE);
	SSL_shutdown(bufferevent_openssl_get_ssl(c->bev));
	shutdown(c->fd, SHUT_RDWR);
}

void
conn_bev_free(struct conn *c)
{
	bufferevent_free(c->bev);
	c->bev = NULL;
}

static void
conn_bev_read_cb(struct bufferevent *bev, void *arg)
{
	struct conn	*c = arg;

	if (c->nreqs > 0 &&
	    evbuffer_get_length(c->in) > c->md->cfg.max_request_bytes)
		conn_reading(c, 0);	/* enough queued; resumed later */
	conn_process(c);
}

/* The output went out (the low watermark is 0). */
static void
conn_bev_write_cb(struct bufferevent *bev, void *arg)
{
	conn_drained(arg);
}

/*
 * The client's end of stream (close_notify, or only the TCP's: a client
 * that shuts down its side is answered as on the socket); any other
 * event is an error, and the connection ends.
 */
static void
conn_bev_event_cb(struct bufferevent *bev, short what, void *arg)
{
	struct conn	*c = arg;

	if ((what & BEV_EVENT_EOF) && (what & BEV_EVENT_READING)) {
		conn_eof(c);
		/* bufferevent_openssl stops writing at EOF: go on. */
		if (!c->dead)
			bufferevent_enable(bev, EV_WRITE);
		return;
	}
	log_debug("connection %s: %s", c->peer.who,
	    (what & BEV_EVENT_TIMEOUT) ? "timed out" : "TLS error or reset");
	conn_close(c);
}
