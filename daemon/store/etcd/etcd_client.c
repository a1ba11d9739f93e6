#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "enc.h"
#include "store/etcd/etcd_client.h"
#include "store/etcd/etcd_client_int.h"
#include "log.h"
#include "util.h"

static void	etcd_client_probe_cb(evutil_socket_t, short, void *);

int
etcd_client_init(struct etcd_client *h, const char *urls,
    const struct store_options *opts, struct store *st, struct store_err *err)
{
	struct event_base	*main = opts->base;
	const char		*p = urls, *comma;
	size_t			 len;
	int			 https;

	memset(h, 0, sizeof *h);
	h->st = st;
	LIST_INIT(&h->acalls);
	LIST_INIT(&h->renewals);
	while (*p != '\0') {
		comma = strchr(p, ',');
		len = comma != NULL ? (size_t)(comma - p) : strlen(p);
		if (h->nep == STORE_ENDPOINTS_MAX)
			return (store_err_set(err, STORE_ERR_INTERNAL, "more "
			    "than %d etcd endpoints", STORE_ENDPOINTS_MAX));
		if (etcd_client_parse_url(&h->ep[h->nep], p, len, &https,
		    err) != 0)
			return (-1);
		if (https)
			h->cred.https |= 1u << h->nep;
		h->nep++;
		p += len;
		if (*p == ',')
			p++;
	}
	if (h->nep == 0)
		return (store_err_set(err, STORE_ERR_INTERNAL, "no etcd "
		    "endpoint given (etcd:http://HOST:PORT[,...])"));
	if (etcd_auth_open(h, opts, err) != 0)
		return (-1);
	if ((h->base = event_base_new()) == NULL ||
	    etcd_grpc_init(&h->sync, h->base, ETCD_REPLY_MAX_BYTES,
	    &h->cred) != 0)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "event_base_new failed"));
	h->main = main;
	if (main != NULL && ((h->probe_timer = evtimer_new(main,
	    etcd_client_probe_cb, h)) == NULL || etcd_grpc_init(&h->grpc, main,
	    ETCD_REPLY_MAX_BYTES, &h->cred) != 0))
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "evtimer_new failed"));
	return (etcd_auth_login(h, err));
}

void
etcd_client_close(struct etcd_client *h)
{
	etcd_grpc_close(&h->grpc);
	etcd_grpc_close(&h->sync);
	etcd_client_acalls_free(h);
	if (h->probe_timer != NULL)
		event_free(h->probe_timer);
	if (h->base != NULL)
		event_base_free(h->base);
	etcd_auth_close(h);
	memset(h, 0, sizeof *h);
}

struct etcd_call {
	int			 done;
	int			 status;	/* 0: no answer */
	struct buf		 body;		/* an error's */
	cJSON			*reply;
};

static void
etcd_client_sync_done(void *arg, int status, struct buf *body, cJSON *reply)
{
	struct etcd_call	*c = arg;

	c->done = 1;
	c->status = status;
	c->reply = reply;
	c->body = *body;	/* taken */
	buf_init(body);
}

/*
 * One attempt on the current endpoint, over gRPC on the private base (the
 * loop runs until it is answered or timed out): the status, 0 if none.
 */
static int
etcd_client_try(struct etcd_client *h, enum etcd_pb_rpc rpc, const struct buf *pb,
    struct etcd_call *c)
{
	struct etcd_endpoint	*ep = &h->ep[h->cur];
	struct store_err	 err;

	memset(c, 0, sizeof *c);
	buf_init(&c->body);
	if (etcd_grpc_call(&h->sync, h->cur, 0, ep->host, ep->port, rpc,
	    pb->data, pb->len, 0, ETCD_CALL_TIMEOUT_S * 1000,
	    etcd_client_sync_done, c, &err) != 0)
		return (0);
	while (!c->done) {
		if (event_base_loop(h->base, EVLOOP_ONCE) != 0)
			break;
	}
	if (!c->done) {
		/* The loop failed: the call is dropped, its cb never runs. */
		etcd_grpc_close(&h->sync);
		(void)etcd_grpc_init(&h->sync, h->base, ETCD_REPLY_MAX_BYTES,
		    &h->cred);
	}
	return (c->status);
}

static int
etcd_client_fail(const struct buf *b, int status, const char *path,
    struct store_err *err)
{
	enum store_errcode	 code = STORE_ERR_INTERNAL;
	const char		*msg = b->len > 0 ? b->data : "";

	if (strstr(msg, "compacted") != NULL)
		code = STORE_ERR_COMPACTED;
	else if (strstr(msg, "too many operations in txn") != NULL)
		return (store_err_set(err, code, "etcd refused a txn of more "
		    "operations than its --max-txn-ops (metad's fit 128, "
		    "etcd's default; see metad(8))"));
	else if (strstr(msg, "request is too large") != NULL ||
	    strstr(msg, "larger than max") != NULL)
		return (store_err_set(err, STORE_ERR_TOO_LARGE, "etcd refused "
		    "the write as too large for its --max-request-bytes (1.5 "
		    "MiB by default; see metad(8)); nothing written"));
	else if (strstr(msg, "requested lease not found") != NULL)
		return (store_err_set(err, STORE_ERR_NO_LEASE, "lease not "
		    "found (unknown, expired or revoked); nothing written"));
	else if (strstr(msg, "user name is empty") != NULL)
		return (store_err_set(err, code, "etcd has authentication "
		    "enabled: give --store-user and --store-password-file "
		    "(metad(8))"));
	else if (strstr(msg, "permission denied") != NULL)
		return (store_err_set(err, code, "etcd %s: permission denied "
		    "(the --store-user needs readwrite on the prefix; see "
		    "metad(8))", path));
	else if (status >= 500 || strstr(msg, "\"code\":14") != NULL)
		code = STORE_ERR_UNAVAILABLE;
	return (store_err_set(err, code, "etcd %s: HTTP %d %.160s", path,
	    status, msg));
}

static void
etcd_client_probe_schedule(struct etcd_client *h)
{
	struct timeval	 tv = { 0, ETCD_PROBE_MS * 1000 };

	evtimer_add(h->probe_timer, &tv);
}

static void
etcd_client_probe_done(void *arg, int status, struct buf *body, cJSON *reply)
{
	struct etcd_client	*h = arg;
	struct etcd_endpoint	*ep = &h->ep[h->probe_ep];

	cJSON_Delete(reply);
	if (status == 200) {
		log_info("etcd: %s answers again", ep->url);
		ep->healthy = 1;
		h->cur = h->probe_ep;
		h->down = 0;
		return;
	}
	ep->healthy = 0;
	h->probe_ep = (h->probe_ep + 1) % h->nep;
	etcd_client_probe_schedule(h);
}

/*
 * Ask the next endpoint, on the daemon's loop, whether etcd is back: its
 * Maintenance.Status over gRPC (an empty request; the answer, in
 * protobuf, is only checked).
 */
static void
etcd_client_probe_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_client	*h = arg;
	struct etcd_endpoint	*ep = &h->ep[h->probe_ep];
	struct store_err	 err;

	if (etcd_grpc_call(&h->grpc, h->probe_ep, 0, ep->host, ep->port,
	    ETCD_PB_STATUS, "", 0, 1, ETCD_CALL_TIMEOUT_S * 1000,
	    etcd_client_probe_done, h, &err) != 0)
		etcd_client_probe_schedule(h);
}

int
etcd_client_down_err(struct store_err *err)
{
	return (store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd is "
	    "unreachable (no endpoint answered; retrying every %d ms)",
	    ETCD_PROBE_MS));
}

/* No endpoint answered: fail at once until the probe finds one that does. */
int
etcd_client_unreachable(struct etcd_client *h, struct store_err *err)
{
	/* The last connection that failed, on either gRPC client. */
	const char	*why = h->grpc.why[0] != '\0' ? h->grpc.why :
			    h->sync.why;

	if (h->main != NULL && !h->down) {
		log_warnx("etcd: no endpoint answers%s%s%s; requests fail "
		    "at once until one does", why[0] != '\0' ? " (" : "", why,
		    why[0] != '\0' ? ")" : "");
		h->down = 1;
		h->probe_ep = h->cur;
		etcd_client_probe_schedule(h);
	}
	return (store_err_set(err, STORE_ERR_UNAVAILABLE, "etcd is "
	    "unreachable (%u endpoint%s tried)%s%s", h->nep,
	    h->nep == 1 ? "" : "s", why[0] != '\0' ? ": " : "", why));
}

/* An answer of etcd (status, body b) as *out, or an error. */
int
etcd_client_parse(struct buf *b, int status, const char *path, cJSON **out,
    struct store_err *err)
{
	*out = NULL;
	buf_cstr(b);
	if (status == -1)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: a "
		    "reply over %u bytes", path, ETCD_REPLY_MAX_BYTES));
	if (status != 200)
		return (etcd_client_fail(b, status, path, err));
	*out = cJSON_ParseWithLengthOpts(b->data, b->len + 1, NULL, 1);
	if (*out == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: the "
		    "reply is not JSON", path));
	return (0);
}

int
etcd_call_sync(struct etcd_client *h, const char *path, const char *body,
    cJSON **out, struct store_err *err)
{
	enum etcd_pb_rpc	 rpc = etcd_pb_rpc_of(path);
	struct etcd_call	 c;
	struct buf		 pb;
	const char		*why;
	unsigned		 tries;
	int			 status = 0, rc = 0, renewed = 0;
	int64_t			 t0 = mono_us();

	*out = NULL;
	if (h->down)
		return (etcd_client_down_err(err));
	buf_init(&pb);
	if (etcd_pb_encode(rpc, body, &pb, &why) != 0) {
		buf_free(&pb);
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd %s: %s",
		    path, why));
	}
again:
	for (tries = 0; tries < h->nep; tries++) {
		if ((status = etcd_client_try(h, rpc, &pb, &c)) != 0)
			break;
		buf_free(&c.body);
		h->ep[h->cur].healthy = 0;
		h->cur = (h->cur + 1) % h->nep;
	}
	if (status == 0) {
		buf_free(&pb);
		rc = etcd_client_unreachable(h, err);
		etcd_client_report(h, rpc, t0, err);
		return (rc);
	}
	h->ep[h->cur].healthy = 1;
	if (status != 200 && !renewed && rpc != ETCD_PB_AUTH &&
	    h->user != NULL && etcd_auth_refused(status, c.body.data,
	    c.body.len)) {
		/* Refused before it was done: again, with a new token. */
		renewed = 1;
		buf_free(&c.body);
		if (etcd_auth_login(h, err) != 0) {
			buf_free(&pb);
			return (-1);
		}
		goto again;
	}
	buf_free(&pb);
	if (status == 200 && c.reply != NULL)
		*out = c.reply;
	else
		rc = etcd_client_parse(&c.body, status, path, out, err);
	buf_free(&c.body);
	etcd_client_report(h, rpc, t0, rc == 0 ? NULL : err);
	return (rc);
}

void
etcd_client_report(struct etcd_client *h, enum etcd_pb_rpc rpc, int64_t t0,
    const struct store_err *err)
{
	const char	*m = etcd_pb_method(rpc), *call;

	if (h->st == NULL || m == NULL)
		return;
	call = strrchr(m, '/') != NULL ? strrchr(m, '/') + 1 : m;
	store_report(h->st, STORE_REPORT_CALL, call, err != NULL ? err->code :
	    STORE_ERR_NONE, (double)(mono_us() - t0) / 1e6);
}

int
etcd_client_parse_url(struct etcd_endpoint *ep, const char *url, size_t len,
    int *https, struct store_err *err)
{
	const char	*hp, *hend, *colon;
	char		*end;
	unsigned long	 port;
	size_t		 skip;

	*https = len > 8 && strncmp(url, "https://", 8) == 0;
	skip = *https ? 8 : 7;
	if (len >= sizeof ep->url || len <= skip || (!*https &&
	    strncmp(url, "http://", 7) != 0))
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd endpoint "
		    "\"%.*s\": expected http://HOST:PORT or https://HOST:PORT",
		    (int)(len > 64 ? 64 : len), url));
	memcpy(ep->url, url, len);
	ep->url[len] = '\0';
	if (ep->url[len - 1] == '/')
		ep->url[len - 1] = '\0';
	hp = ep->url + skip;
	if (*hp == '[') {
		/* An IPv6 literal: its brackets go before getaddrinfo. */
		hp++;
		if ((hend = strchr(hp, ']')) == NULL || hend[1] != ':')
			return (store_err_set(err, STORE_ERR_INTERNAL, "etcd "
			    "endpoint \"%s\": expected [IPV6]:PORT", ep->url));
		colon = hend + 1;
	} else {
		colon = strrchr(hp, ':');
		hend = colon;
		if (colon != NULL && memchr(hp, ':', colon - hp) != NULL)
			return (store_err_set(err, STORE_ERR_INTERNAL, "etcd "
			    "endpoint \"%s\": an IPv6 address goes in brackets "
			    "([::1]:2379)", ep->url));
	}
	if (colon == NULL || (size_t)(hend - hp) >= sizeof ep->host ||
	    hend == hp)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd endpoint "
		    "\"%s\": expected %s://HOST:PORT", ep->url, *https ?
		    "https" : "http"));
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > 65535 ||
	    !isdigit((unsigned char)colon[1]))
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd endpoint "
		    "\"%s\": bad port", ep->url));
	memcpy(ep->host, hp, hend - hp);
	ep->host[hend - hp] = '\0';
	ep->port = (unsigned short)port;
	ep->healthy = 1;
	return (0);
}
