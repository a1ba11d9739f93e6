/*
 * The client driver: --clients connections split over --threads threads,
 * each thread one epoll loop that keeps --pipeline operations in flight per
 * connection until the budget (--requests) or the clock (--duration) says
 * stop, then waits at most BENCH_DRAIN_S for the answers still due.
 */
#include <sys/epoll.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metabench.h"

#define RUN_EVENTS	256
#define RUN_POLL_MS	50

static int
run_watch_out(struct bthread *th, struct bconn *bc, int want)
{
	struct epoll_event	 ev;

	if (bc->want_out == want)
		return (0);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN | (want ? EPOLLOUT : 0);
	ev.data.ptr = bc;
	bc->want_out = want;
	return (epoll_ctl(th->epfd, EPOLL_CTL_MOD, bc->fd, &ev));
}

static int
run_send(struct bthread *th, struct bconn *bc)
{
	int	 rc;

	if ((rc = bconn_flush(bc)) == -1)
		return (-1);
	return (run_watch_out(th, bc, rc == 1));
}

/* Keep the pipeline full; 1 once no more operations may start. */
static int
run_refill(struct bench *b, struct bconn *bc, uint64_t now, int stopping)
{
	uint64_t	 ticket;

	while (!stopping && bc->qlen < b->o.pipeline) {
		if (!load_take(b, &ticket))
			return (1);
		load_start(b, bc, ticket, now);
	}
	return (stopping);
}

static int
run_read(struct bench *b, struct bthread *th, struct bconn *bc)
{
	char		*line;
	size_t		 len;
	uint64_t	 now;
	int		 rc;

	if ((rc = bconn_fill(bc)) == -1) {
		xasprintf(&th->cause, "read: %s", strerror(errno));
		return (-1);
	}
	now = (uint64_t)mono_ns();
	while ((line = bconn_line(bc, &len)) != NULL)
		load_answer(b, th, bc, line, len, now);
	if (rc == 0) {
		xasprintf(&th->cause, "the server closed connection %u",
		    bc->index);
		return (-1);
	}
	return (0);
}

static unsigned
run_inflight(struct bthread *th)
{
	unsigned	 i, n = 0;

	for (i = 0; i < th->nconns; i++)
		n += th->conns[i].qlen;
	return (n);
}

static int
run_events(struct bench *b, struct bthread *th, int stopping)
{
	struct epoll_event	 evs[RUN_EVENTS];
	struct bconn		*bc;
	int			 i, n;

	n = epoll_wait(th->epfd, evs, RUN_EVENTS, RUN_POLL_MS);
	if (n == -1 && errno != EINTR) {
		xasprintf(&th->cause, "epoll_wait: %s", strerror(errno));
		return (-1);
	}
	for (i = 0; i < n; i++) {
		bc = evs[i].data.ptr;
		if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) &&
		    run_read(b, th, bc) != 0)
			return (-1);
		if (run_refill(b, bc, (uint64_t)mono_ns(), stopping))
			stopping = 1;
		if (run_send(th, bc) != 0) {
			xasprintf(&th->cause, "write: %s", strerror(errno));
			return (-1);
		}
	}
	return (stopping);
}

static void *
run_thread(void *arg)
{
	struct bthread	*th = arg;
	struct bench	*b = th->b;
	uint64_t	 now;
	unsigned	 i;
	int		 stopping = 0, rc;

	now = (uint64_t)mono_ns();
	for (i = 0; i < th->nconns; i++) {
		stopping |= run_refill(b, &th->conns[i], now, stopping);
		if (run_send(th, &th->conns[i]) != 0) {
			xasprintf(&th->cause, "write: %s", strerror(errno));
			return (NULL);
		}
	}
	for (;;) {
		now = (uint64_t)mono_ns();
		if (now >= b->t_stop)
			stopping = 1;
		if (stopping && run_inflight(th) == 0)
			break;
		if (now >= b->t_end) {
			th->c.lost += run_inflight(th);
			break;
		}
		if ((rc = run_events(b, th, stopping)) == -1)
			break;
		stopping |= rc;
	}
	return (NULL);
}

static int
run_setup(struct bench *b, struct bthread *th, unsigned first, unsigned n,
    char **cause)
{
	struct epoll_event	 ev;
	unsigned		 i;

	th->b = b;
	hist_init(&th->lat);
	th->conns = xcalloc(n, sizeof *th->conns);
	if ((th->epfd = epoll_create1(EPOLL_CLOEXEC)) == -1) {
		xasprintf(cause, "epoll_create1: %s", strerror(errno));
		return (-1);
	}
	for (i = 0; i < n; i++) {
		if (bconn_open(&th->conns[i], b->o.socket, first + i,
		    b->o.pipeline, cause) != 0)
			return (-1);
		th->nconns++;
		memset(&ev, 0, sizeof ev);
		ev.events = EPOLLIN;
		ev.data.ptr = &th->conns[i];
		if (epoll_ctl(th->epfd, EPOLL_CTL_ADD, th->conns[i].fd,
		    &ev) == -1) {
			xasprintf(cause, "epoll_ctl: %s", strerror(errno));
			return (-1);
		}
	}
	return (0);
}

static void
run_teardown(struct bthread *th)
{
	unsigned	 i;

	for (i = 0; i < th->nconns; i++)
		bconn_close(&th->conns[i]);
	free(th->conns);
	if (th->epfd != -1)
		close(th->epfd);
	free(th->cause);
}

static int
run_collect(struct bench *b, char **cause)
{
	struct bthread	*th;
	unsigned	 i;
	int		 rc = 0;

	for (i = 0; i < b->nth; i++) {
		th = &b->th[i];
		if (th->cause != NULL && rc == 0) {
			*cause = xstrdup(th->cause);
			rc = -1;
		}
		b->c.ops += th->c.ops;
		b->c.requests += th->c.requests;
		b->c.errors += th->c.errors;
		b->c.misses += th->c.misses;
		b->c.conflicts += th->c.conflicts;
		b->c.lost += th->c.lost;
		hist_merge(&b->lat, &th->lat);
		run_teardown(th);
	}
	free(b->th);
	b->th = NULL;
	return (rc);
}

int
run_clients(struct bench *b, char **cause)
{
	unsigned	 i, first = 0, n;
	int		 rc = 0;

	b->nth = b->o.threads;
	b->th = xcalloc(b->nth, sizeof *b->th);
	for (i = 0; i < b->nth; i++)
		b->th[i].epfd = -1;
	for (i = 0; i < b->nth && rc == 0; i++) {
		n = b->o.clients / b->nth + (i < b->o.clients % b->nth);
		rc = run_setup(b, &b->th[i], first, n, cause);
		first += n;
	}
	if (rc == 0) {
		b->t_start = (uint64_t)mono_ns();
		b->t_stop = b->t_start + (uint64_t)(b->o.duration * 1e9);
		b->t_end = b->t_stop + (uint64_t)(BENCH_DRAIN_S * 1e9);
		for (i = 1; i < b->nth; i++) {
			if (pthread_create(&b->th[i].tid, NULL, run_thread,
			    &b->th[i]) != 0)
				abort();
		}
		run_thread(&b->th[0]);
		for (i = 1; i < b->nth; i++)
			pthread_join(b->th[i].tid, NULL);
		b->t_end = (uint64_t)mono_ns();
	}
	if (run_collect(b, cause) != 0)
		rc = -1;
	return (rc);
}
