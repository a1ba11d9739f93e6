/*
 * One client connection: a libmetad-client handle driven without blocking
 * (md_queue/md_flush/md_fill/md_next_line), the requests built here before
 * they are queued, and the FIFO of requests in flight (answers come back in
 * request order).
 */
#include <stdlib.h>
#include <string.h>

#include <metad/client.h>

#include "metabench.h"

int
bconn_open(struct bconn *bc, const char *path, unsigned index,
    unsigned depth, char **cause)
{
	memset(bc, 0, sizeof *bc);
	bc->fd = -1;
	bc->md = md_new();
	if (md_connect(bc->md, path, 0) != 0) {
		xasprintf(cause, "%s", md_errmsg(bc->md));
		md_free(bc->md);
		bc->md = NULL;
		return (-1);
	}
	bc->fd = md_fd(bc->md);
	bc->index = index;
	bc->rng = 0x9e3779b97f4a7c15ULL * (index + 1);
	bc->qcap = depth;
	bc->q = xcalloc(depth, sizeof *bc->q);
	buf_init(&bc->out);
	return (0);
}

void
bconn_close(struct bconn *bc)
{
	md_free(bc->md);
	bc->md = NULL;
	bc->fd = -1;
	buf_free(&bc->out);
	free(bc->q);
	bc->q = NULL;
}

/* Write what is buffered: 1 if some is left (want EPOLLOUT), 0, -1. */
int
bconn_flush(struct bconn *bc)
{
	if (bc->out.len > 0) {
		md_queue(bc->md, bc->out.data, bc->out.len);
		buf_reset(&bc->out);
	}
	return (md_flush(bc->md));
}

/* Read what is there: 1, or 0 at EOF, -1 on error. */
int
bconn_fill(struct bconn *bc)
{
	return (md_fill(bc->md));
}

/* The next whole line, NUL-terminated in place, or NULL. */
char *
bconn_line(struct bconn *bc, size_t *len)
{
	return (md_next_line(bc->md, len));
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
