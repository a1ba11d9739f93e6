/*
 * --metrics-listen (metad(8), METRICS): GET /metrics over HTTP, libevent's
 * evhttp on the daemon's loop, answering the text the metrics op answers
 * (ops_metrics_text()); 404 for any other path.  Bounded: a request's
 * headers and body, its time, and the scrapes waiting for a remote
 * store's stats at once (503 past that).  Whoever can connect can read
 * the metrics: it listens on loopback unless told otherwise.
 *
 * Ownership: the daemon's (struct metad); freed after the store closed.
 */
#ifndef METAD_METRICS_HTTP_H
#define METAD_METRICS_HTTP_H

#define METRICS_HTTP_HEADERS_MAX	8192
#define METRICS_HTTP_BODY_MAX		1024
#define METRICS_HTTP_TIMEOUT_S		10
#define METRICS_HTTP_PENDING_MAX	16

struct metad;
struct metrics_http;

/* Listen on md->cfg.metrics_host and _port: NULL and *cause if not. */
struct metrics_http	*metrics_http_start(struct metad *, char **cause);
void			 metrics_http_free(struct metrics_http *);

#endif
