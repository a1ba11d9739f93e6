/*
 * TLS to etcd, for its https:// endpoints (etcd_grpc.c's connections): one
 * context for a client, from --store-cacert (else the system's CAs) and,
 * for etcd's --client-cert-auth, --store-cert with --store-key; each
 * connection's SSL checks the server's certificate against the CA and the
 * endpoint's host name or IP address, asks for TLS 1.2 or later and offers
 * ALPN "h2" (etcd serves gRPC over HTTP/2).  A handshake that fails is
 * said in words that name what was wrong: etcd's certificate (not signed
 * by the CA, or not for that host), metad's certificate refused by etcd,
 * or TLS itself.
 *
 * Ownership: etcd_tls_open() gives a context the caller frees with
 * etcd_tls_free(); etcd_tls_ssl() a new SSL, which the bufferevent that
 * carries it frees.
 */
#ifndef METAD_ETCD_TLS_H
#define METAD_ETCD_TLS_H

#include <stddef.h>

#include "store/store_backend.h"

struct ssl_st;
struct etcd_tls;

/* ca may be NULL (the system's CAs); cert and key both or neither. */
struct etcd_tls	*etcd_tls_open(const char *ca, const char *cert,
		    const char *key, struct store_err *);
void		 etcd_tls_free(struct etcd_tls *);
/* A client SSL for host (a name or an IP address, no brackets), or NULL. */
struct ssl_st	*etcd_tls_ssl(struct etcd_tls *, const char *host);
/*
 * Why a TLS connection failed, into why[n]: ssl (NULL: none was made), the
 * OpenSSL errors the bufferevent saw (errs[0..nerr)), errno's (sys, 0:
 * none); mute: the handshake was done and nothing came after it (etcd
 * refuses a certificate so, when its alert is lost).
 */
void		 etcd_tls_why(const struct etcd_tls *, struct ssl_st *,
		    const unsigned long *errs, size_t nerr, int sys, int mute,
		    char *why, size_t n);

#endif
