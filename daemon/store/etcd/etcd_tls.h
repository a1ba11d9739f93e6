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
 * etcd_tls_free(); etcd_tls_bev() a bufferevent the caller frees, which
 * frees its SSL and socket.
 */
#ifndef METAD_ETCD_TLS_H
#define METAD_ETCD_TLS_H

#include <stddef.h>

#include "store/store_backend.h"

struct bufferevent;
struct event_base;
struct ssl_st;
struct etcd_tls;

/* ca may be NULL (the system's CAs); cert and key both or neither. */
struct etcd_tls	*etcd_tls_open(const char *ca, const char *cert,
		    const char *key, struct store_err *);
void		 etcd_tls_free(struct etcd_tls *);
/*
 * A bufferevent over TLS to host (a name or an IP address, no brackets),
 * not yet connected (bufferevent_socket_connect), its SSL in *ssl (the
 * bufferevent frees it); NULL if none could be made.
 */
struct bufferevent *etcd_tls_bev(struct etcd_tls *, struct event_base *,
		    const char *host, struct ssl_st **ssl);
/*
 * Why bev's TLS connection failed, into why[n]: from the OpenSSL errors it
 * saw and an alert from etcd still unread, else errno's (sys, 0: none);
 * mute: the handshake was done and nothing came after it (etcd refuses a
 * certificate so, when its alert is lost).
 */
void		 etcd_tls_failed(const struct etcd_tls *, struct bufferevent *,
		    int sys, int mute, char *why, size_t n);

#endif
