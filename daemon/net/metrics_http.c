/*
 * GET /metrics on evhttp (metrics_http.h).  A scrape asks for the text as
 * the metrics op does and answers when it comes: at once on a local
 * store, when a remote one answers its stats otherwise (evhttp keeps the
 * request meanwhile, and drops the answer if the client has gone).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "log.h"
#include "metad.h"
#include "net/metrics_http.h"
#include "ops/ops.h"

struct metrics_http {
	struct metad	*md;
	struct evhttp	*http;
	unsigned	 pending;	/* scrapes waiting for their text */
};

struct metrics_scrape {
	struct metrics_http	*mh;
	struct evhttp_request	*req;
};

static void
metrics_http_answer(void *arg, const struct buf *text)
{
	struct metrics_scrape	*sc = arg;
	struct evbuffer		*out = evhttp_request_get_output_buffer(sc->req);

	sc->mh->pending--;
	evhttp_add_header(evhttp_request_get_output_headers(sc->req),
	    "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
	if (evbuffer_add(out, text->data, text->len) != 0)
		evhttp_send_error(sc->req, HTTP_INTERNAL, NULL);
	else
		evhttp_send_reply(sc->req, HTTP_OK, "OK", NULL);
	free(sc);
}

static void
metrics_http_cb(struct evhttp_request *req, void *arg)
{
	struct metrics_http	*mh = arg;
	struct metrics_scrape	*sc;
	const char		*path;

	path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	if (path == NULL || strcmp(path, "/metrics") != 0) {
		evhttp_send_error(req, HTTP_NOTFOUND, "only /metrics is here");
		return;
	}
	if (mh->pending >= METRICS_HTTP_PENDING_MAX) {
		evhttp_send_error(req, HTTP_SERVUNAVAIL, "too many scrapes "
		    "at once");
		return;
	}
	sc = xmalloc(sizeof *sc);
	sc->mh = mh;
	sc->req = req;
	mh->pending++;
	ops_metrics_text(mh->md, metrics_http_answer, sc);
}

struct metrics_http *
metrics_http_start(struct metad *md, char **cause)
{
	struct metrics_http	*mh = xcalloc(1, sizeof *mh);
	const char		*host = md->cfg.metrics_host;
	unsigned		 port = md->cfg.metrics_port;

	mh->md = md;
	if ((mh->http = evhttp_new(md->base)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_max_headers_size(mh->http, METRICS_HTTP_HEADERS_MAX);
	evhttp_set_max_body_size(mh->http, METRICS_HTTP_BODY_MAX);
	evhttp_set_timeout(mh->http, METRICS_HTTP_TIMEOUT_S);
	evhttp_set_allowed_methods(mh->http, EVHTTP_REQ_GET |
	    EVHTTP_REQ_HEAD);
	evhttp_set_gencb(mh->http, metrics_http_cb, mh);
	if (evhttp_bind_socket_with_handle(mh->http, host,
	    (ev_uint16_t)port) == NULL) {
		xasprintf(cause, "--metrics-listen %s:%u: cannot listen "
		    "there: %s", host, port, strerror(errno));
		evhttp_free(mh->http);
		free(mh);
		return (NULL);
	}
	log_info("metrics on http://%s%s%s:%u/metrics", strchr(host, ':') !=
	    NULL ? "[" : "", host, strchr(host, ':') != NULL ? "]" : "", port);
	return (mh);
}

void
metrics_http_free(struct metrics_http *mh)
{
	if (mh == NULL)
		return;
	evhttp_free(mh->http);
	free(mh);
}
