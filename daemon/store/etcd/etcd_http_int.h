/*
 * The inside of etcd_http.c (the answers, the failing fast) shared with
 * etcd_http_async.c (the asynchronous calls).  Nothing else includes it.
 */
#ifndef METAD_ETCD_HTTP_INT_H
#define METAD_ETCD_HTTP_INT_H

#include "store/etcd/etcd_http.h"

struct evhttp_request;

/*
 * The HTTP status of an answer (0: none came), its body appended to b;
 * -1 for a body over ETCD_REPLY_MAX_BYTES.
 */
int	etcd_http_take(struct evhttp_request *, struct buf *);
/* etcd is thought down: the error, at once. */
int	etcd_http_down_err(struct store_err *);
/* No endpoint answered: fail at once until the probe finds one that does. */
int	etcd_http_unreachable(struct etcd_http *, struct store_err *);
/* An answer of etcd (status, body b) as *out, or an error. */
int	etcd_http_parse(struct buf *, int status, const char *path, cJSON **,
	    struct store_err *);
/* At close: the calls still out are dropped, their cb never runs. */
void	etcd_http_acalls_free(struct etcd_http *);

#endif
