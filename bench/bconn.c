/*
 * One client connection: a non-blocking Unix socket with an input buffer cut
 * into lines, an output buffer written in one call per loop turn, and the
 * FIFO of requests in flight (answers come back in request order).
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metabench.h"

#define BCONN_READ_MIN	(64 * 1024)
#define BCONN_READ_MAX	(1024 * 1024)	/* per call, the rest next turn */

int
bconn_open(struct bconn *bc, const char *path, unsigned index,
    unsigned depth, char **cause)
{
	struct sockaddr_un	 sun;

	memset(bc, 0, sizeof *bc);
	bc->fd = -1;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path) >=
	    (int)sizeof sun.sun_path) {
		xasprintf(cause, "socket path too long: %s", path);
		return (-1);
	}
	if ((bc->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		xasprintf(cause, "socket: %s", strerror(errno));
		return (-1);
	}
	if (connect(bc->fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    fcntl(bc->fd, F_SETFL, O_NONBLOCK) == -1) {
		xasprintf(cause, "connect %s: %s", path, strerror(errno));
		close(bc->fd);
		bc->fd = -1;
		return (-1);
	}
	bc->index = index;
	bc->rng = 0x9e3779b97f4a7c15ULL * (index + 1);
	bc->qcap = depth;
	bc->q = xcalloc(depth, sizeof *bc->q);
	buf_init(&bc->in);
	buf_init(&bc->out);
	return (0);
}

void
bconn_close(struct bconn *bc)
{
	if (bc->fd != -1)
		close(bc->fd);
	bc->fd = -1;
	buf_free(&bc->in);
	buf_free(&bc->out);
	free(bc->q);
	bc->q = NULL;
}

/* Write what is buffered: 1 if some is left (want EPOLLOUT), 0, -1. */
int
bconn_flush(struct bconn *bc)
{
	ssize_t	 n;

	while (bc->out_off < bc->out.len) {
		n = write(bc->fd, bc->out.data + bc->out_off,
		    bc->out.len - bc->out_off);
		if (n == -1) {
			if (errno == EAGAIN)
				return (1);
			if (errno == EINTR)
				continue;
			return (-1);
		}
		bc->out_off += (size_t)n;
	}
	bc->out_off = 0;
	buf_reset(&bc->out);
	return (0);
}

/* Read what is there: 1, or 0 at EOF (sets eof), -1 on error. */
int
bconn_fill(struct bconn *bc)
{
	ssize_t	 n;
	size_t	 total = 0;

	if (bc->in_off > 0) {
		memmove(bc->in.data, bc->in.data + bc->in_off,
		    bc->in.len - bc->in_off);
		bc->in.len -= bc->in_off;
		bc->in_off = 0;
	}
	for (;;) {
		buf_reserve(&bc->in, BCONN_READ_MIN);
		n = read(bc->fd, bc->in.data + bc->in.len,
		    bc->in.cap - bc->in.len - 1);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return (1);
			return (-1);
		}
		if (n == 0) {
			bc->eof = 1;
			return (total > 0 ? 1 : 0);
		}
		bc->in.len += (size_t)n;
		total += (size_t)n;
		if (bc->in.len + 1 < bc->in.cap || total >= BCONN_READ_MAX)
			return (1);	/* short read: nothing more now */
	}
}

/* The next whole line, NUL-terminated in place, or NULL. */
char *
bconn_line(struct bconn *bc, size_t *len)
{
	char	*p, *nl;

	if (bc->in_off >= bc->in.len)
		return (NULL);
	p = bc->in.data + bc->in_off;
	nl = memchr(p, '\n', bc->in.len - bc->in_off);
	if (nl == NULL)
		return (NULL);
	*nl = '\0';
	*len = (size_t)(nl - p);
	bc->in_off += *len + 1;
	return (p);
}

struct inflight *
bconn_push(struct bconn *bc)
{
	struct inflight	*f;

	if (bc->qlen == bc->qcap)
		return (NULL);
	f = &bc->q[(bc->qhead + bc->qlen) % bc->qcap];
	bc->qlen++;
	memset(f, 0, sizeof *f);
	return (f);
}

struct inflight *
bconn_head(struct bconn *bc)
{
	return (bc->qlen > 0 ? &bc->q[bc->qhead] : NULL);
}

void
bconn_pop(struct bconn *bc)
{
	if (bc->qlen == 0)
		return;
	bc->qhead = (bc->qhead + 1) % bc->qcap;
	bc->qlen--;
}

/* xorshift64*: cheap, and each connection has its own stream. */
uint64_t
bconn_rand(struct bconn *bc)
{
	bc->rng ^= bc->rng >> 12;
	bc->rng ^= bc->rng << 25;
	bc->rng ^= bc->rng >> 27;
	return (bc->rng * 0x2545f4914f6cdd1dULL);
}
