#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "proto.h"

void
client_init(struct client *c)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
	buf_init(&c->in);
}

int
client_connected(const struct client *c)
{
	return (c->fd != -1);
}

/* Closes the connection; an interruptible command's intr stays set. */
void
client_close(struct client *c)
{
	const volatile sig_atomic_t	*intr = c->intr;
	const sigset_t			*intr_mask = c->intr_mask;

	if (c->fd != -1)
		close(c->fd);
	free(c->path);
	buf_free(&c->in);
	client_init(c);
	c->intr = intr;
	c->intr_mask = intr_mask;
}

int
client_stale(struct client *c)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	char		 ch;

	if (c->fd == -1)
		return (0);
	if (c->in.len > c->in_off)
		return (1);
	pfd.fd = c->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) <= 0)
		return (0);
	if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
		return (1);
	n = recv(c->fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
	return (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR));
}

void
client_format_ms(uint64_t ms, char *out, size_t len)
{
	if (ms % 60000 == 0 && ms != 0)
		snprintf(out, len, "%" PRIu64 "m", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(out, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(out, len, "%" PRIu64 "ms", ms);
}

static int64_t
client_now(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int64_t
client_deadline(const struct client *c)
{
	if (c->timeout_ms == 0)
		return (-1);
	return (client_now() + (int64_t)c->timeout_ms);
}

static void
client_timed_out(struct client *c, char **cause)
{
	char	 t[32];

	client_format_ms(c->timeout_ms, t, sizeof t);
	c->fail = CLIENT_FAIL_UNREACHABLE;
	xasprintf(cause, "no answer from metad on %s within %s (--timeout)",
	    c->path, t);
}

/* poll(), or ppoll() with the mask that lets SIGINT in (intr.c). */
static int
client_poll(struct client *c, struct pollfd *pfd, int64_t left)
{
	struct timespec	 ts;

	if (c->intr_mask == NULL)
		return (poll(pfd, 1, (int)left));
	ts.tv_sec = (time_t)(left / 1000);
	ts.tv_nsec = (long)(left % 1000) * 1000000;
	return (ppoll(pfd, 1, left == -1 ? NULL : &ts, c->intr_mask));
}

/* Waits for events on the socket; 0 when ready, -1 at the deadline. */
static int
client_wait(struct client *c, short events, int64_t deadline, char **cause)
{
	struct pollfd	 pfd;
	int64_t		 left;
	int		 n;

	for (;;) {
		left = -1;
		if (deadline != -1) {
			left = deadline - client_now();
			if (left < 0)
				left = 0;
			if (left > INT_MAX)
				left = INT_MAX;
		}
		pfd.fd = c->fd;
		pfd.events = events;
		pfd.revents = 0;
		if (c->intr != NULL && *c->intr) {
			c->fail = CLIENT_FAIL_INTERRUPTED;
			xasprintf(cause, "interrupted");
			return (-1);
		}
		n = client_poll(c, &pfd, left);
		if (n > 0)
			return (0);
		if (n == 0) {
			client_timed_out(c, cause);
			return (-1);
		}
		if (errno != EINTR) {
			c->fail = CLIENT_FAIL_UNREACHABLE;
			xasprintf(cause, "poll: %s", strerror(errno));
			return (-1);
		}
	}
}

static int
client_connect_error(struct client *c, int error, char **cause)
{
	char	 t[32];

	c->fail = CLIENT_FAIL_UNREACHABLE;
	if (error == EAGAIN || error == EWOULDBLOCK || error == ETIMEDOUT) {
		client_format_ms(c->timeout_ms, t, sizeof t);
		xasprintf(cause, "cannot connect to %s: metad did not accept "
		    "the connection within %s (--timeout)", c->path, t);
	} else
		xasprintf(cause, "cannot connect to %s: %s (is metad running? "
		    "start it with: metad --socket %s)", c->path,
		    strerror(error), c->path);
	return (-1);
}

/*
 * A blocking connect bounded by SO_SNDTIMEO (a Unix socket waits there when
 * the listener's backlog is full), then non-blocking I/O with poll().
 */
int
client_connect(struct client *c, const char *path, uint64_t timeout_ms,
    char **cause)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv;
	int			 fd, error;

	client_close(c);
	c->path = xstrdup(path);
	c->timeout_ms = timeout_ms;
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path) {
		c->fail = CLIENT_FAIL_UNREACHABLE;
		xasprintf(cause, "socket path too long: %s (the limit is %zu "
		    "bytes)", path, sizeof sun.sun_path - 1);
		return (-1);
	}
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (client_connect_error(c, errno, cause));
	if (timeout_ms > 0) {
		tv.tv_sec = (time_t)(timeout_ms / 1000);
		tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	while (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		if (errno == EINTR)
			continue;
		error = errno;
		close(fd);
		return (client_connect_error(c, error, cause));
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1) {
		error = errno;
		close(fd);
		return (client_connect_error(c, error, cause));
	}
	c->fd = fd;
	c->fail = CLIENT_FAIL_NONE;
	return (0);
}

int
client_send(struct client *c, struct buf *req, int64_t deadline,
    char **cause)
{
	size_t	 off = 0;
	ssize_t	 n;

	buf_addc(req, '\n');
	while (off < req->len) {
		n = send(c->fd, req->data + off, req->len - off, MSG_NOSIGNAL);
		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			c->fail = CLIENT_FAIL_UNREACHABLE;
			xasprintf(cause, "lost the connection to metad on %s: "
			    "%s", c->path, strerror(errno));
			return (-1);
		}
		if (client_wait(c, POLLOUT, deadline, cause) != 0)
			return (-1);
	}
	return (0);
}

/* Reads more input; 0 on progress, -1 on EOF, error or timeout. */
static int
client_fill(struct client *c, int64_t deadline, char **cause)
{
	ssize_t	 n;

	for (;;) {
		buf_reserve(&c->in, CLIENT_READ_CHUNK);
		n = read(c->fd, c->in.data + c->in.len, CLIENT_READ_CHUNK);
		if (n > 0) {
			c->in.len += (size_t)n;
			return (0);
		}
		c->fail = CLIENT_FAIL_UNREACHABLE;
		if (n == 0) {
			xasprintf(cause, "metad on %s closed the connection",
			    c->path);
			return (-1);
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			xasprintf(cause, "lost the connection to metad on %s: "
			    "%s", c->path, strerror(errno));
			return (-1);
		}
		if (client_wait(c, POLLIN, deadline, cause) != 0)
			return (-1);
	}
}

int
client_read_line(struct client *c, int64_t deadline, const char **line,
    size_t *len, char **cause)
{
	size_t	 scanned = 0;
	char	*nl;

	if (c->in_off > 0) {
		memmove(c->in.data, c->in.data + c->in_off,
		    c->in.len - c->in_off);
		c->in.len -= c->in_off;
		c->in_off = 0;
	}
	for (;;) {
		nl = NULL;
		if (c->in.len > scanned)
			nl = memchr(c->in.data + scanned, '\n',
			    c->in.len - scanned);
		if (nl != NULL) {
			*line = c->in.data;
			*len = (size_t)(nl - c->in.data);
			c->in_off = *len + 1;
			return (0);
		}
		scanned = c->in.len;
		if (c->in.len > CLIENT_LINE_MAX_BYTES) {
			c->fail = CLIENT_FAIL_PROTOCOL;
			xasprintf(cause, "metad sent a line longer than %zu "
			    "bytes", (size_t)CLIENT_LINE_MAX_BYTES);
			return (-1);
		}
		if (client_fill(c, deadline, cause) != 0)
			return (-1);
	}
}

int
client_request(struct client *c, struct buf *req, cJSON **resp,
    char **cause)
{
	struct proto_err	 e;
	const char		*line;
	size_t			 len;
	int64_t			 deadline;
	char			*ignored = NULL;

	*resp = NULL;
	deadline = client_deadline(c);
	if (client_send(c, req, deadline, cause) != 0) {
		/* A daemon refusing us may have answered before closing. */
		if (client_read_line(c, deadline, &line, &len, &ignored) != 0) {
			free(ignored);
			return (-1);
		}
		free(*cause);
		*cause = NULL;
	} else if (client_read_line(c, deadline, &line, &len, cause) != 0)
		return (-1);
	if ((*resp = proto_parse(line, len, &e)) == NULL) {
		c->fail = CLIENT_FAIL_PROTOCOL;
		xasprintf(cause, "metad sent a response line that is not one "
		    "JSON object");
		return (-1);
	}
	return (0);
}
