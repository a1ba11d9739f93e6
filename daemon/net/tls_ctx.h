/*
 * The TLS listener's OpenSSL side (net/tls.c uses it): a server context
 * made from --tls-cert, --tls-key and --tls-client-ca (TLS 1.2 or later,
 * a client certificate that CA signed required, no session resumption),
 * and the subject CN of a client's verified certificate.
 */
#ifndef METAD_TLS_CTX_H
#define METAD_TLS_CTX_H

#include <stddef.h>

#include <openssl/ssl.h>

struct metad_config;

/* A new context (the caller's reference), or NULL and *cause. */
SSL_CTX	*tls_ctx_new(const struct metad_config *, char **cause);
/* The peer certificate's one subject CN, UTF-8 without NUL; -1 if none. */
int	 tls_ctx_peer_cn(SSL *, char *, size_t);

#endif
