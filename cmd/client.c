#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <metad/client.h>

#include "client.h"
#include "proto.h"

void
client_init(struct client *c)
{
	memset(c, 0, sizeof *c);
	c->fd = -1;
}

/* c->fd follows the handle's socket, which a failure closes. */
static int
client_sync(struct client *c, int rc)
{
	c->fd = c->md != NULL ? md_fd(c->md) : -1;
	return (rc);
}

int
client_connected(const struct client *c)
{
	return (c->md != NULL && md_connected(c->md));
}

/* Closes the connection; an interruptible command's intr stays set. */
void
client_close(struct client *c)
{
	const volatile sig_atomic_t	*intr = c->intr;
	const sigset_t			*intr_mask = c->intr_mask;

	md_free(c->md);
	free(c->path);
	client_init(c);
	c->intr = intr;
	c->intr_mask = intr_mask;
}

int
client_stale(struct client *c)
{
	return (c->md != NULL && md_stale(c->md));
}



int64_t
client_deadline(const struct client *c)
{
	if (c->timeout_ms == 0)
		return (-1);
	return (mono_ms() + (int64_t)c->timeout_ms);
}

/* The library's error as metactl's failure kind and message. */
static int
client_failed(struct client *c, char **cause)
{
	enum md_err	 e = md_errcode(c->md);

	if (e == MD_E_PROTOCOL)
		c->fail = CLIENT_FAIL_PROTOCOL;
	else if (e == MD_E_INTERRUPTED)
		c->fail = CLIENT_FAIL_INTERRUPTED;
	else
		c->fail = CLIENT_FAIL_UNREACHABLE;
	xasprintf(cause, "%s%s", md_errmsg(c->md), e == MD_E_DEADLINE ?
	    " (--timeout)" : "");
	return (-1);
}

/* The handle takes the settings the caller may have changed in c. */
static int
client_ready(struct client *c, char **cause)
{
	if (c->md == NULL) {
		c->fail = CLIENT_FAIL_UNREACHABLE;
		xasprintf(cause, "not connected to metad");
		return (-1);
	}
	md_set_timeout(c->md, c->timeout_ms);
	md_set_interrupt(c->md, c->intr, c->intr_mask);
	return (0);
}

int
client_connect(struct client *c, const char *path, uint64_t timeout_ms,
    char **cause)
{
	const char	*ca = c->tls_cacert, *cert = c->tls_cert;
	const char	*key = c->tls_key;

	client_close(c);
	c->path = xstrdup(path);
	c->timeout_ms = timeout_ms;
	c->tls_cacert = ca;
	c->tls_cert = cert;
	c->tls_key = key;
	c->md = md_new();
	md_set_interrupt(c->md, c->intr, c->intr_mask);
	md_set_tls(c->md, ca, cert, key);
	if (md_connect(c->md, path, timeout_ms) != 0)
		return (client_sync(c, client_failed(c, cause)));
	return (client_sync(c, 0));
}

int
client_send(struct client *c, struct buf *req, int64_t deadline,
    char **cause)
{
	int64_t	 left;

	if (client_ready(c, cause) != 0)
		return (-1);
	if (deadline != -1) {
		left = deadline - mono_ms();
		md_set_timeout(c->md, left > 0 ? (uint64_t)left : 1);
	}
	if (md_send(c->md, req->data, req->len) != 0)
		return (client_sync(c, client_failed(c, cause)));
	return (client_sync(c, 0));
}

int
client_read_line(struct client *c, int64_t deadline, const char **line,
    size_t *len, char **cause)
{
	int64_t	 left = -1;

	if (client_ready(c, cause) != 0)
		return (-1);
	if (deadline != -1) {
		left = deadline - mono_ms();
		if (left < 0)
			left = 0;
	}
	if (md_recv(c->md, left, line, len) != 0)
		return (client_sync(c, client_failed(c, cause)));
	return (client_sync(c, 0));
}

int
client_request(struct client *c, struct buf *req, cJSON **resp,
    char **cause)
{
	struct proto_err	 e;
	const char		*line;
	size_t			 len;

	*resp = NULL;
	if (client_ready(c, cause) != 0)
		return (-1);
	if (md_request(c->md, req->data, req->len, &line, &len) != 0)
		return (client_sync(c, client_failed(c, cause)));
	if ((*resp = proto_parse(line, len, &e)) == NULL) {
		c->fail = CLIENT_FAIL_PROTOCOL;
		xasprintf(cause, "metad sent a response line that is not one "
		    "JSON object");
		return (-1);
	}
	return (0);
}
