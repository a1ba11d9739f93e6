/*
 * The TLS listeners (--listen tls://HOST:PORT, metad(8), TLS): TCP
 * sockets whose clients must present a certificate signed by
 * --tls-client-ca, TLS 1.2 or later, through libevent's bufferevent_openssl.
 * Once the handshake is done the client's identity is its certificate's
 * subject CN (net/access.h), and the server admits it as it does a Unix
 * socket's peer (server_admit): the connection is then a struct conn like
 * any other, on the bufferevent.
 *
 * The certificate, key and CA are read (net/tls_ctx.c) at tls_create() and
 * again at tls_reload() (SIGHUP) into a new SSL_CTX for the connections that come
 * next; a connection keeps the one it began with.  struct tls owns its
 * listening sockets and the handshakes in progress.
 */
#ifndef METAD_TLS_H
#define METAD_TLS_H

struct metad;
struct tls;

/* Reads the files and listens on every --listen address; NULL and *cause. */
struct tls	*tls_create(struct metad *, char **cause);
/* SIGHUP: the files again; on an error the current ones stay (logged). */
void		 tls_reload(struct tls *);
/* Stop accepting (SIGTERM); connections already made go on. */
void		 tls_stop_listening(struct tls *);
void		 tls_free(struct tls *);

#endif
