/*
 * The inside of etcd_client.c (the answers, the failing fast) shared with
 * etcd_client_async.c (the asynchronous calls).  Nothing else includes it.
 */
#ifndef METAD_ETCD_CLIENT_INT_H
#define METAD_ETCD_CLIENT_INT_H

#include "store/etcd/etcd_client.h"

/* etcd is thought down: the error, at once. */
int	etcd_client_down_err(struct store_err *);
/* No endpoint answered: fail at once until the probe finds one that does. */
int	etcd_client_unreachable(struct etcd_client *, struct store_err *);
/* An answer of etcd (status, body b) as *out, or an error. */
int	etcd_client_parse(struct buf *, int status, const char *path, cJSON **,
	    struct store_err *);
/* At close: the calls still out are dropped, their cb never runs. */
void	etcd_client_acalls_free(struct etcd_client *);
/*
 * TLS and authentication (etcd_auth.c): the options checked, the files
 * read (etcd_auth_open, before the endpoints are used); the first token,
 * or a new one, blocking (etcd_auth_login); all of it freed.
 */
int	etcd_auth_open(struct etcd_client *, const struct store_options *,
	    struct store_err *);
int	etcd_auth_login(struct etcd_client *, struct store_err *);
void	etcd_auth_close(struct etcd_client *);

#endif
