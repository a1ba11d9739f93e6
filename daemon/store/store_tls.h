/*
 * TLS to a remote store (etcd's https:// endpoints, etcd_grpc_conn.c; the
 * metad a remote backend uses, remote/): one context for a client, from
 * --store-cacert (else the system's CAs) and, for a server that asks for
 * one (etcd's --client-cert-auth, metad's --tls-client-ca), --store-cert
 * with --store-key; each connection's SSL checks the server's certificate
 * against the CA and the endpoint's host name or IP address, asks for TLS
 * 1.2 or later and offers the ALPN it is given (etcd: "h2", gRPC over
 * HTTP/2).  A handshake that fails is said in words that name what was
 * wrong: the server's certificate (not signed by the CA, or not for that
 * host), metad's certificate refused by the server, or TLS itself.
 *
 * Ownership: store_tls_open() gives a context the caller frees with
 * store_tls_free(); store_tls_bev() a bufferevent the caller frees, which
 * frees its SSL and socket.
 */
#ifndef METAD_STORE_TLS_H
#define METAD_STORE_TLS_H

#include <stddef.h>

#include "store/store_backend.h"

struct bufferevent;
struct event_base;
struct ssl_st;
struct store_tls;

/*
 * peer names the server in messages ("etcd"); alpn: the protocols to
 * offer, in ALPN's wire form ("\x02h2"), or NULL; ca may be NULL (the
 * system's CAs); cert and key both or neither.
 */
struct store_tls	*store_tls_open(const char *peer, const char *alpn,
		    const char *ca, const char *cert, const char *key,
		    struct store_err *);
void		 store_tls_free(struct store_tls *);
/*
 * A bufferevent over TLS to host (a name or an IP address, no brackets),
 * not yet connected (bufferevent_socket_connect), its SSL in *ssl (the
 * bufferevent frees it); NULL if none could be made.
 */
struct bufferevent *store_tls_bev(struct store_tls *, struct event_base *,
		    const char *host, struct ssl_st **ssl);
/*
 * Why bev's TLS connection failed, into why[n]: from the OpenSSL errors it
 * saw and an alert from the server still unread, else errno's (sys, 0: none);
 * mute: the handshake was done and nothing came after it (etcd refuses a
 * certificate so, when its alert is lost).  1 if TLS itself failed (a
 * certificate not verified or refused, no TLS there), 0 if the
 * connection did (errno's, a close).
 */
int		 store_tls_failed(const struct store_tls *, struct bufferevent *,
		    int sys, int mute, char *why, size_t n);

#endif
