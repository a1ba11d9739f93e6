/*
 * Watch fan-out: --clients watchers each watch the prefix BENCH_WATCH_PREFIX
 * on their own connection; one writer puts under it, at --rate puts a second
 * (0: the next as soon as the last is answered).  The value of event i starts
 * with "T<i>:", so each delivery's latency is counted from the moment the
 * writer sent that put: per delivery (b->lat), and until the last watcher
 * had it (b->lat_all).  One thread, one epoll loop.
 */
#include <sys/epoll.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metabench.h"

#define WATCH_EVENTS	256
#define WATCH_ACK_S	30.0	/* to set up every watch */
#define WATCH_POLL_MS	10

struct watch_ev {
	uint64_t	 t_sent;
	uint32_t	 delivered;
};

struct watch {
	struct bench	*b;
	int		 epfd;
	struct bconn	*w;
	unsigned	 nw;
	unsigned	 acks;
	struct bconn	 writer;
	struct watch_ev	*ev;
	uint64_t	 nev;
	uint64_t	 sent;
	uint64_t	 acked;
	uint64_t	 delivered;
	char		*cause;
};

static int
watch_add(struct watch *ws, struct bconn *bc)
{
	struct epoll_event	 ev;

	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = bc;
	if (epoll_ctl(ws->epfd, EPOLL_CTL_ADD, bc->fd, &ev) == -1) {
		xasprintf(&ws->cause, "epoll_ctl: %s", strerror(errno));
		return (-1);
	}
	return (0);
}

/* Connect every watcher and the writer, and send the watch requests. */
static int
watch_connect(struct watch *ws)
{
	struct bench	*b = ws->b;
	unsigned	 i;

	ws->w = xcalloc(b->o.clients, sizeof *ws->w);
	for (i = 0; i < b->o.clients; i++) {
		if (bconn_open(&ws->w[i], b->o.socket, i, 1, &ws->cause) != 0)
			return (-1);
		ws->nw++;
		if (watch_add(ws, &ws->w[i]) != 0)
			return (-1);
		buf_addstr(&ws->w[i].out, "{\"op\":\"watch\",\"prefix\":\""
		    BENCH_WATCH_PREFIX "\"}\n");
		if (bconn_flush(&ws->w[i]) != 0) {
			xasprintf(&ws->cause, "watch request: %s",
			    strerror(errno));
			return (-1);
		}
	}
	if (bconn_open(&ws->writer, b->o.socket, i, 1, &ws->cause) != 0)
		return (-1);
	return (watch_add(ws, &ws->writer));
}

static void
watch_line(struct watch *ws, struct bconn *bc, const char *line,
    uint64_t now)
{
	struct bench	*b = ws->b;
	struct watch_ev	*e;
	const char	*p;
	uint64_t	 i;

	if (bc == &ws->writer) {
		ws->acked++;
		if (strncmp(line, "{\"ok\":true", 10) != 0)
			b->c.errors++;
		return;
	}
	if (strncmp(line, "{\"ok\":true", 10) == 0) {
		ws->acks++;
		return;
	}
	b->c.requests++;
	if ((p = strstr(line, "\"value\":\"T")) == NULL) {
		b->c.errors++;		/* cancelled, or not ours */
		return;
	}
	i = strtoull(p + 10, NULL, 10);
	if (i >= ws->sent) {
		b->c.errors++;
		return;
	}
	e = &ws->ev[i];
	ws->delivered++;
	hist_add(&b->lat, now - e->t_sent);
	if (++e->delivered == ws->nw)
		hist_add(&b->lat_all, now - e->t_sent);
}

static int
watch_read(struct watch *ws, struct bconn *bc)
{
	char		*line;
	size_t		 len;
	uint64_t	 now;
	int		 rc;

	if ((rc = bconn_fill(bc)) == -1) {
		xasprintf(&ws->cause, "read: %s", strerror(errno));
		return (-1);
	}
	now = (uint64_t)mono_ns();
	while ((line = bconn_line(bc, &len)) != NULL)
		watch_line(ws, bc, line, now);
	if (rc == 0) {
		xasprintf(&ws->cause, "the server closed a connection");
		return (-1);
	}
	return (0);
}

static int
watch_poll(struct watch *ws, int timeout_ms)
{
	struct epoll_event	 evs[WATCH_EVENTS];
	int			 i, n;

	n = epoll_wait(ws->epfd, evs, WATCH_EVENTS, timeout_ms);
	if (n == -1 && errno != EINTR) {
		xasprintf(&ws->cause, "epoll_wait: %s", strerror(errno));
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if (watch_read(ws, evs[i].data.ptr) != 0)
			return (-1);
	}
	return (0);
}

static int
watch_wait_acks(struct watch *ws)
{
	uint64_t	 end = (uint64_t)mono_ns() + (uint64_t)(WATCH_ACK_S * 1e9);

	while (ws->acks < ws->nw) {
		if ((uint64_t)mono_ns() >= end) {
			xasprintf(&ws->cause, "only %u of %u watches were "
			    "answered in %.0f s", ws->acks, ws->nw, WATCH_ACK_S);
			return (-1);
		}
		if (watch_poll(ws, 100) != 0)
			return (-1);
	}
	return (0);
}

/* Send event ws->sent now; the value carries its number. */
static int
watch_send(struct watch *ws, uint64_t now)
{
	struct bench	*b = ws->b;
	struct buf	*o = &ws->writer.out;
	size_t		 start;

	buf_addstr(o, "{\"op\":\"put\",\"key\":\"");
	bench_key(o, BENCH_WATCH_PREFIX, ws->sent % b->o.keys);
	buf_addstr(o, "\",\"value\":\"");
	start = o->len;
	buf_printf(o, "T%llu:", (unsigned long long)ws->sent);
	if (o->len - start < b->o.value_size)
		buf_add(o, b->value, b->o.value_size - (o->len - start));
	buf_add(o, "\"}\n", 3);
	ws->ev[ws->sent].t_sent = now;
	ws->sent++;
	if (bconn_flush(&ws->writer) != 0) {
		xasprintf(&ws->cause, "writer: %s", strerror(errno));
		return (-1);
	}
	return (0);
}

/* When event i is due (ns after start); 0 with no --rate. */
static uint64_t
watch_due(struct watch *ws, uint64_t i)
{
	if (ws->b->o.rate <= 0)
		return (0);
	return ((uint64_t)((double)i * 1e9 / ws->b->o.rate));
}

static int
watch_timeout(struct watch *ws, uint64_t now)
{
	uint64_t	 due;

	if (ws->sent == ws->nev || ws->sent > ws->acked)
		return (WATCH_POLL_MS);
	due = ws->b->t_start + watch_due(ws, ws->sent);
	if (due <= now)
		return (0);
	return ((int)((due - now) / 1000000));
}

static int
watch_loop(struct watch *ws)
{
	struct bench	*b = ws->b;
	uint64_t	 now;

	b->t_start = (uint64_t)mono_ns();
	b->t_stop = b->t_start + (uint64_t)(b->o.duration * 1e9);
	b->t_end = b->t_stop + (uint64_t)(BENCH_DRAIN_S * 1e9);
	for (;;) {
		now = (uint64_t)mono_ns();
		if (now >= b->t_stop && ws->sent < ws->nev)
			ws->nev = ws->sent;	/* out of time */
		if (ws->sent == ws->nev && ws->acked == ws->sent &&
		    ws->delivered == ws->sent * ws->nw)
			break;
		if (now >= b->t_end)
			break;
		if (ws->sent < ws->nev && ws->acked == ws->sent &&
		    now >= b->t_start + watch_due(ws, ws->sent) &&
		    watch_send(ws, now) != 0)
			return (-1);
		if (watch_poll(ws, watch_timeout(ws, (uint64_t)mono_ns())) != 0)
			return (-1);
	}
	b->t_end = (uint64_t)mono_ns();
	b->events = ws->sent;
	b->c.ops = ws->sent;
	b->c.lost = ws->sent * ws->nw - ws->delivered;
	return (0);
}

int
run_watch(struct bench *b, char **cause)
{
	struct watch	 ws;
	unsigned	 i;
	int		 rc;

	memset(&ws, 0, sizeof ws);
	ws.b = b;
	ws.writer.fd = -1;
	ws.nev = b->o.requests;
	if (ws.nev == 0 || ws.nev > BENCH_EVENTS_MAX)
		ws.nev = BENCH_EVENTS_MAX;
	ws.ev = xcalloc(ws.nev, sizeof *ws.ev);
	if ((ws.epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		xasprintf(&ws.cause, "epoll_create1: %s", strerror(errno));
	rc = ws.epfd == -1 || watch_connect(&ws) != 0 ||
	    watch_wait_acks(&ws) != 0 || watch_loop(&ws) != 0 ? -1 : 0;
	if (rc != 0)
		*cause = ws.cause;
	else
		free(ws.cause);
	for (i = 0; i < ws.nw; i++)
		bconn_close(&ws.w[i]);
	free(ws.w);
	if (ws.writer.fd != -1)
		bconn_close(&ws.writer);
	if (ws.epfd != -1)
		close(ws.epfd);
	free(ws.ev);
	return (rc);
}
