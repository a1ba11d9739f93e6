/*
 * The handle's I/O: a non-blocking Unix socket (or TLS connection,
 * md_tls.c) waited on with poll() (or
 * ppoll() with the caller's signal mask), lines cut from the input buffer,
 * and the dispatch of each line in request order: the blocking call's
 * response, or the watch or view's (an event, or the answer to a request it
 * sent itself).
 */
#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "md_int.h"
#include "proto.h"

int64_t
md_deadline(const struct md_client *h)
{
	if (h->timeout_ms == 0)
		return (-1);
	return (mono_ms() + (int64_t)h->timeout_ms);
}

int
md_timed_out(struct md_client *h)
{
	char	 t[32];

	format_ms(h->timeout_ms, t, sizeof t);
	return (md_fail(h, MD_E_DEADLINE, "no answer from metad on %s within "
	    "%s", h->path, t));
}

/* A quiet stream: the same error, the connection kept. */
static int
md_quiet(struct md_client *h, int64_t timeout_ms)
{
	char	 t[32];

	format_ms((uint64_t)timeout_ms, t, sizeof t);
	return (md_seterr(h, MD_E_DEADLINE, "no answer from metad on %s "
	    "within %s", h->path, t));
}

int
md_wait(struct md_client *h, short events, int64_t deadline)
{
	struct pollfd	 pfd;
	struct timespec	 ts;
	int64_t		 left;
	int		 n;

	for (;;) {
		left = -1;
		if (deadline != -1) {
			left = deadline - mono_ms();
			if (left < 0)
				left = 0;
			if (left > INT_MAX)
				left = INT_MAX;
		}
		if (h->intr != NULL && *h->intr)
			return (md_fail(h, MD_E_INTERRUPTED, "interrupted"));
		pfd.fd = h->fd;
		pfd.events = events;
		pfd.revents = 0;
		if (h->intr_mask == NULL)
			n = poll(&pfd, 1, (int)left);
		else {
			ts.tv_sec = (time_t)(left / 1000);
			ts.tv_nsec = (long)(left % 1000) * 1000000;
			n = ppoll(&pfd, 1, left == -1 ? NULL : &ts,
			    h->intr_mask);
		}
		if (n > 0)
			return (0);
		if (n == 0)
			return (-2);
		if (errno != EINTR)
			return (md_fail(h, MD_E_CONNECT, "poll: %s",
			    strerror(errno)));
	}
}

/* Not connected, or interrupted: -1 with the error set; else 0. */
static int
md_usable(struct md_client *h)
{
	if (h->fd == -1)
		return (md_seterr(h, MD_E_CONNECT, "not connected to metad"));
	if (h->intr != NULL && *h->intr)
		return (md_fail(h, MD_E_INTERRUPTED, "interrupted"));
	return (0);
}

/* Writes all: 0, -1 (error set), -2 deadline, -3 peer gone (not set). */
static int
md_write_raw(struct md_client *h, const char *p, size_t len,
    int64_t deadline, int *error)
{
	size_t	 off = 0;
	ssize_t	 n;
	short	 want;
	int	 rc;

	if (md_usable(h) != 0)
		return (-1);
	while (off < len) {
		n = md_sock_write(h, p + off, len - off, &want);
		if (n >= 0) {
			off += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			*error = errno;
			return (-3);
		}
		if ((rc = md_wait(h, want, deadline)) != 0)
			return (rc);
	}
	return (0);
}

int
md_write_all(struct md_client *h, const char *p, size_t len,
    int64_t deadline)
{
	int	 rc, error = 0;

	if ((rc = md_write_raw(h, p, len, deadline, &error)) == -3)
		return (md_fail(h, MD_E_CONNECT, "lost the connection to "
		    "metad on %s: %s", h->path, md_sock_error(h, error)));
	return (rc);
}

/* Reads more: 0 on progress, -1 on EOF or error, -2 at the deadline. */
static int
md_read_more(struct md_client *h, int64_t deadline)
{
	ssize_t	 n;
	short	 want;
	int	 rc;

	for (;;) {
		buf_reserve(&h->in, MD_READ_MIN);
		n = md_sock_read(h, h->in.data + h->in.len,
		    h->in.cap - h->in.len - 1, &want);
		if (n > 0) {
			h->in.len += (size_t)n;
			return (0);
		}
		if (n == 0)
			return (md_fail(h, MD_E_CONNECT, "metad on %s closed "
			    "the connection", h->path));
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return (md_fail(h, MD_E_CONNECT, "lost the connection "
			    "to metad on %s: %s", h->path,
			    md_sock_error(h, errno)));
		if ((rc = md_wait(h, want, deadline)) != 0)
			return (rc);
	}
}

static void
md_compact_in(struct md_client *h)
{
	if (h->in_off == 0)
		return;
	memmove(h->in.data, h->in.data + h->in_off, h->in.len - h->in_off);
	h->in.len -= h->in_off;
	h->in_off = 0;
}

/* The next line, NUL-terminated in place; 0, -1 or -2 (deadline). */
int
md_read_line(struct md_client *h, int64_t deadline, const char **line,
    size_t *len)
{
	char	*p;
	size_t	 scanned = 0;
	int	 rc;

	if (md_usable(h) != 0)
		return (-1);
	for (;;) {
		p = NULL;
		if (h->in.len > h->in_off + scanned)
			p = memchr(h->in.data + h->in_off + scanned, '\n',
			    h->in.len - h->in_off - scanned);
		if (p != NULL) {
			*p = '\0';
			*line = h->in.data + h->in_off;
			*len = (size_t)(p - *line);
			h->in_off += *len + 1;
			return (0);
		}
		scanned = h->in.len - h->in_off;
		if (scanned > MD_LINE_MAX)
			return (md_fail(h, MD_E_PROTOCOL, "metad sent a line "
			    "longer than %zu bytes", (size_t)MD_LINE_MAX));
		md_compact_in(h);
		if ((rc = md_read_more(h, deadline)) != 0)
			return (rc);
	}
}

int
md_stale(struct md_client *h)
{
	struct pollfd	 pfd;
	ssize_t		 n;
	char		 ch;

	if (h->fd == -1)
		return (0);
	if (h->in.len > h->in_off || md_tls_pending(h))
		return (1);
	pfd.fd = h->fd;
	pfd.events = POLLIN;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) <= 0)
		return (0);
	if (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))
		return (1);
	if (h->ssl != NULL)
		return (md_tls_stale(h));
	n = recv(h->fd, &ch, 1, MSG_PEEK | MSG_DONTWAIT);
	return (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK &&
	    errno != EINTR));
}

/* --- Dispatch. --- */

static int
md_pend_push(struct md_client *h, enum md_pend p)
{
	if (h->pend_len == MD_PEND_MAX)
		return (md_seterr(h, MD_E_INVALID, "more than %d requests in "
		    "flight on one handle", MD_PEND_MAX));
	h->pend[(h->pend_head + h->pend_len) % MD_PEND_MAX] = p;
	h->pend_len++;
	return (0);
}

static enum md_pend
md_pend_pop(struct md_client *h)
{
	enum md_pend	 p;

	if (h->pend_len == 0)
		return (0);
	p = h->pend[h->pend_head];
	h->pend_head = (h->pend_head + 1) % MD_PEND_MAX;
	h->pend_len--;
	return (p);
}

/*
 * A line while a sub is registered: an event or the sub's answer is handed
 * to it; *is_user says the line is the caller's response (left alone).
 */
int
md_dispatch_sub(struct md_client *h, const char *line, size_t len,
    int *is_user)
{
	struct proto_err	 e;
	cJSON			*j;
	int			 rc = 0;

	*is_user = 0;
	if ((j = proto_parse(line, len, &e)) == NULL)
		return (md_fail(h, MD_E_PROTOCOL, "metad sent a line that is "
		    "not one JSON object"));
	if (cJSON_GetObjectItemCaseSensitive(j, "ok") != NULL) {
		if (h->pend_len > 0 && h->pend[h->pend_head] == MD_PEND_USER) {
			*is_user = 1;
			md_pend_pop(h);
		} else if (h->pend_len == 0)
			rc = md_fail(h, MD_E_PROTOCOL, "metad sent a response "
			    "nobody asked for");
		else if (md_pend_pop(h) == MD_PEND_SUB && h->sub != NULL)
			rc = h->sub->resp(h->sub, j);
		/* else: the answer to a watch or view closed since. */
	} else if (cJSON_GetObjectItemCaseSensitive(j, "event") != NULL) {
		if (h->sub != NULL && h->sub->watch_id != 0 &&
		    md_u64(j, "watch") == h->sub->watch_id)
			rc = h->sub->event(h->sub, j);
	} else
		rc = md_fail(h, MD_E_PROTOCOL, "metad sent a line that is "
		    "neither a response nor an event");
	cJSON_Delete(j);
	return (rc);
}

/*
 * The next line that answers the caller's request, dispatching the rest;
 * -2 at the deadline (nothing set, the connection kept).
 */
static int
md_read_user(struct md_client *h, int64_t deadline, const char **line,
    size_t *len)
{
	int	 rc, is_user;

	for (;;) {
		if ((rc = md_read_line(h, deadline, line, len)) != 0)
			return (rc);
		if (h->sub == NULL)
			return (0);
		if (md_dispatch_sub(h, *line, *len, &is_user) != 0)
			return (-1);
		if (is_user)
			return (0);
	}
}

/* Sends req and '\n' in one write: 0, -1 (set), -2, -3 as md_write_raw. */
static int
md_send_user(struct md_client *h, const char *req, size_t len,
    int64_t deadline, int *error)
{
	if (md_usable(h) != 0)
		return (-1);
	if (h->sub != NULL && md_pend_push(h, MD_PEND_USER) != 0)
		return (-1);
	buf_reset(&h->out);
	h->out_off = 0;
	buf_add(&h->out, req, len);
	buf_addc(&h->out, '\n');
	return (md_write_raw(h, h->out.data, h->out.len, deadline, error));
}

int
md_request(struct md_client *h, const char *req, size_t len,
    const char **resp, size_t *resp_len)
{
	int64_t	 deadline = md_deadline(h);
	int	 rc, error = 0;

	md_clearerr(h);
	rc = md_send_user(h, req, len, deadline, &error);
	if (rc == -3) {
		/* A daemon refusing us may have answered before closing. */
		if (md_read_user(h, deadline, resp, resp_len) == 0)
			return (0);
		return (md_fail(h, MD_E_CONNECT, "lost the connection to "
		    "metad on %s: %s", h->path, md_sock_error(h, error)));
	}
	if (rc == 0)
		rc = md_read_user(h, deadline, resp, resp_len);
	if (rc == -2)
		return (md_timed_out(h));
	return (rc);
}

int
md_send(struct md_client *h, const char *req, size_t len)
{
	int	 rc, error = 0;

	md_clearerr(h);
	rc = md_send_user(h, req, len, md_deadline(h), &error);
	if (rc == -3)
		return (md_fail(h, MD_E_CONNECT, "lost the connection to "
		    "metad on %s: %s", h->path, md_sock_error(h, error)));
	if (rc == -2)
		return (md_timed_out(h));
	return (rc);
}

int
md_recv(struct md_client *h, int64_t timeout_ms, const char **line,
    size_t *len)
{
	int64_t	 deadline = -1;
	int	 rc;

	md_clearerr(h);
	if (timeout_ms >= 0)
		deadline = mono_ms() + timeout_ms;
	if ((rc = md_read_user(h, deadline, line, len)) == -2)
		return (md_quiet(h, timeout_ms));
	return (rc);
}

int
md_call(struct md_client *h, struct buf *req, cJSON **resp)
{
	struct proto_err	 e;
	const char		*line;
	size_t			 len;

	*resp = NULL;
	if (md_request(h, req->data, req->len, &line, &len) != 0)
		return (-1);
	if ((*resp = proto_parse(line, len, &e)) == NULL ||
	    !cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(*resp, "ok"))) {
		cJSON_Delete(*resp);
		*resp = NULL;
		return (md_fail(h, MD_E_PROTOCOL, "metad sent a response line "
		    "that is not one JSON object with \"ok\""));
	}
	return (0);
}

int
md_call_ok(struct md_client *h, struct buf *req, cJSON **resp)
{
	if (md_call(h, req, resp) != 0)
		return (-1);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*resp, "ok")))
		return (0);
	md_response_error(h, *resp);
	cJSON_Delete(*resp);
	*resp = NULL;
	return (-1);
}

int
md_sub_send(struct md_client *h, struct buf *req)
{
	int	 rc;

	if (md_usable(h) != 0)
		return (-1);
	if (md_pend_push(h, MD_PEND_SUB) != 0)
		return (-1);
	buf_addc(req, '\n');
	rc = md_write_all(h, req->data, req->len, md_deadline(h));
	if (rc == -2)
		return (md_timed_out(h));
	return (rc);
}

int
md_pump(struct md_client *h, int64_t deadline, int (*stop)(void *),
    void *arg)
{
	const char	*line;
	size_t		 len;
	int		 rc, is_user;

	while (!stop(arg)) {
		if ((rc = md_read_line(h, deadline, &line, &len)) != 0)
			return (rc);
		if (md_dispatch_sub(h, line, len, &is_user) != 0)
			return (-1);
		if (is_user)
			return (md_fail(h, MD_E_PROTOCOL, "a response to a "
			    "call that is no longer waiting"));
	}
	return (0);
}

/* --- Non-blocking use. --- */

void
md_queue(struct md_client *h, const char *req, size_t len)
{
	buf_add(&h->out, req, len);
}

int
md_flush(struct md_client *h)
{
	ssize_t	 n;
	short	 want;

	while (h->out_off < h->out.len) {
		n = md_sock_write(h, h->out.data + h->out_off,
		    h->out.len - h->out_off, &want);
		if (n == -1) {
			if (errno == EAGAIN)
				return (1);
			if (errno == EINTR)
				continue;
			return (md_seterr(h, MD_E_CONNECT, "write: %s",
			    md_sock_error(h, errno)));
		}
		h->out_off += (size_t)n;
	}
	h->out_off = 0;
	buf_reset(&h->out);
	return (0);
}

int
md_fill(struct md_client *h)
{
	ssize_t	 n;
	size_t	 total = 0;
	short	 want;

	md_compact_in(h);
	for (;;) {
		buf_reserve(&h->in, MD_READ_MIN);
		n = md_sock_read(h, h->in.data + h->in.len,
		    h->in.cap - h->in.len - 1, &want);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return (1);
			return (md_seterr(h, MD_E_CONNECT, "read: %s",
			    md_sock_error(h, errno)));
		}
		if (n == 0)
			return (total > 0 ? 1 : 0);
		h->in.len += (size_t)n;
		total += (size_t)n;
		/* Over TLS a read is one record: the rest waits in the SSL,
		 * where the caller's poll would not see it. */
		if (md_tls_pending(h) || (h->ssl != NULL &&
		    total < MD_READ_MAX))
			continue;
		if (h->in.len + 1 < h->in.cap || total >= MD_READ_MAX)
			return (1);	/* short read: nothing more now */
	}
}

char *
md_next_line(struct md_client *h, size_t *len)
{
	char	*p, *nl;

	if (h->in_off >= h->in.len)
		return (NULL);
	p = h->in.data + h->in_off;
	nl = memchr(p, '\n', h->in.len - h->in_off);
	if (nl == NULL)
		return (NULL);
	*nl = '\0';
	*len = (size_t)(nl - p);
	h->in_off += *len + 1;
	return (p);
}
