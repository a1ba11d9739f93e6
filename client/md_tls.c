/*
 * A handle's TLS connection (tls://HOST:PORT, metad(8), --listen): a
 * non-blocking TCP connect and OpenSSL handshake bounded by the handle's
 * timeout, the daemon's certificate checked against the CA file and the
 * host named, and this client's certificate shown when it has one.  Then
 * md_sock_read() and md_sock_write() (md_io.c's only I/O) go through the
 * SSL.  No libevent here: blocking calls over poll(), as on the socket.
 */
#include <sys/socket.h>
#include <sys/types.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "md_int.h"
#include "tlsaddr.h"

void
md_set_tls(struct md_client *h, const char *cacert, const char *cert,
    const char *key)
{
	free(h->tls_cacert);
	free(h->tls_cert);
	free(h->tls_key);
	h->tls_cacert = cacert != NULL ? xstrdup(cacert) : NULL;
	h->tls_cert = cert != NULL ? xstrdup(cert) : NULL;
	h->tls_key = key != NULL ? xstrdup(key) : NULL;
}

/* The file set on the handle, else the environment's, else NULL. */
static const char *
md_tls_file(const char *set, const char *env)
{
	const char	*v;

	if (set != NULL)
		return (set);
	if ((v = getenv(env)) != NULL && *v != '\0')
		return (v);
	return (NULL);
}

/* OpenSSL's last error as text (or what), the queue cleared. */
static const char *
md_tls_why(char *buf, size_t len, const char *what)
{
	unsigned long	 e = ERR_peek_last_error();

	if (e == 0)
		snprintf(buf, len, "%s", what);
	else
		ERR_error_string_n(e, buf, len);
	ERR_clear_error();
	return (buf);
}

/* The context: TLS 1.2 or later, the daemon checked against the CA. */
static SSL_CTX *
md_tls_ctx(struct md_client *h)
{
	const char	*ca, *cert, *key;
	SSL_CTX		*ctx;
	char		 why[256];

	ca = md_tls_file(h->tls_cacert, "METACTL_CACERT");
	cert = md_tls_file(h->tls_cert, "METACTL_CERT");
	key = md_tls_file(h->tls_key, "METACTL_KEY");
	ERR_clear_error();
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		abort();
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* An end without close_notify is an end: each line is whole. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF |
	    SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* A record in one read, not its header and then its body; what is
	 * read ahead is seen by SSL_has_pending() (md_tls_pending()). */
	SSL_CTX_set_read_ahead(ctx, 1);
	if (ca != NULL && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		md_seterr(h, MD_E_CONNECT, "the CA file %s: %s", ca,
		    md_tls_why(why, sizeof why, "no PEM certificate in it"));
		goto fail;
	}
	if (ca == NULL)
		SSL_CTX_set_default_verify_paths(ctx);
	if (key != NULL && cert == NULL) {
		md_seterr(h, MD_E_CONNECT, "a key (%s) but no certificate",
		    key);
		goto fail;
	}
	if (cert != NULL &&
	    SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		md_seterr(h, MD_E_CONNECT, "the certificate file %s: %s", cert,
		    md_tls_why(why, sizeof why, "no PEM certificate in it"));
		goto fail;
	}
	if (cert != NULL && (SSL_CTX_use_PrivateKey_file(ctx, key != NULL ?
	    key : cert, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1)) {
		md_seterr(h, MD_E_CONNECT, "the key file %s: %s", key != NULL ?
		    key : cert, md_tls_why(why, sizeof why, "not the key of "
		    "the certificate"));
		goto fail;
	}
	return (ctx);
fail:
	SSL_CTX_free(ctx);
	return (NULL);
}

/* A non-blocking connect to one address, bounded by deadline. */
static int
md_tls_tcp(struct md_client *h, const struct addrinfo *ai, int64_t deadline,
    int *error)
{
	socklen_t	 len = sizeof *error;
	int		 fd, on = 1, rc;

	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, ai->ai_protocol);
	if (fd == -1) {
		*error = errno;
		return (-1);
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
	if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
		return (fd);
	if (errno != EINPROGRESS) {
		*error = errno;
		close(fd);
		return (-1);
	}
	h->fd = fd;
	rc = md_wait(h, POLLOUT, deadline);
	if (rc == -1)
		return (-2);	/* interrupted, or poll failed: set */
	h->fd = -1;
	if (rc == -2)
		*error = ETIMEDOUT;
	else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, error, &len) != 0)
		*error = errno;
	if (rc == 0 && *error == 0)
		return (fd);
	close(fd);
	return (-1);
}

/*
 * The socket BIO's write, with MSG_NOSIGNAL: a daemon gone is an EPIPE,
 * never a SIGPIPE in the caller's process (the library leaves signals
 * alone).
 */
static int
md_bio_write(BIO *b, const char *p, int len)
{
	ssize_t	 n;
	int	 fd = -1;

	BIO_get_fd(b, &fd);
	errno = 0;
	n = send(fd, p, (size_t)len, MSG_NOSIGNAL);
	BIO_clear_retry_flags(b);
	if (n <= 0 && BIO_sock_should_retry((int)n))
		BIO_set_retry_write(b);
	return ((int)n);
}

/* The handshake's socket BIO: the socket BIO's but for its writes. */
static int
md_tls_bio(struct md_client *h, int fd)
{
	const BIO_METHOD	*sock = BIO_s_socket();
	BIO			*b;

	h->tls_bio = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK |
	    BIO_TYPE_DESCRIPTOR, "metad client socket");
	if (h->tls_bio == NULL ||
	    BIO_meth_set_write(h->tls_bio, md_bio_write) != 1 ||
	    BIO_meth_set_read(h->tls_bio, BIO_meth_get_read(sock)) != 1 ||
	    BIO_meth_set_ctrl(h->tls_bio, BIO_meth_get_ctrl(sock)) != 1 ||
	    BIO_meth_set_create(h->tls_bio, BIO_meth_get_create(sock)) != 1 ||
	    BIO_meth_set_destroy(h->tls_bio,
	    BIO_meth_get_destroy(sock)) != 1 ||
	    (b = BIO_new(h->tls_bio)) == NULL)
		return (-1);
	BIO_set_fd(b, fd, BIO_NOCLOSE);
	SSL_set_bio(h->ssl, b, b);
	return (0);
}

/* The handshake, over h->fd, until done or the deadline. */
static int
md_tls_handshake(struct md_client *h, const char *host, int64_t deadline)
{
	char	 why[256];
	long	 v;
	int	 rc, e;

	for (;;) {
		ERR_clear_error();
		if ((rc = SSL_connect(h->ssl)) == 1)
			return (0);
		e = SSL_get_error(h->ssl, rc);
		if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) {
			rc = md_wait(h, e == SSL_ERROR_WANT_READ ? POLLIN :
			    POLLOUT, deadline);
			if (rc == -2)
				return (md_fail(h, MD_E_DEADLINE, "cannot "
				    "connect to %s: no TLS handshake within "
				    "the timeout", h->path));
			if (rc != 0)
				return (-1);
			continue;
		}
		if ((v = SSL_get_verify_result(h->ssl)) != X509_V_OK)
			return (md_fail(h, MD_E_CONNECT, "cannot connect to "
			    "%s: the daemon's certificate is not trusted for "
			    "%s: %s (check the CA file)", h->path, host,
			    X509_verify_cert_error_string(v)));
		return (md_fail(h, MD_E_CONNECT, "cannot connect to %s: TLS "
		    "handshake failed: %s", h->path, md_tls_why(why,
		    sizeof why, e == SSL_ERROR_SYSCALL && errno != 0 ?
		    strerror(errno) : "the daemon closed the connection")));
	}
}

int
md_tls_connect(struct md_client *h, int64_t deadline)
{
	struct addrinfo		 hints, *res, *ai;
	struct tlsaddr		 a;
	struct in6_addr		 ip;
	SSL_CTX			*ctx;
	char			*why = NULL;
	int			 fd = -1, rc, error = 0;

	if (tlsaddr_parse(h->path, &a, &why) != 0) {
		md_seterr(h, MD_E_CONNECT, "cannot connect to %s: %s",
		    h->path, why);
		free(why);
		return (-1);
	}
	if ((ctx = md_tls_ctx(h)) == NULL)
		return (-1);
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((rc = getaddrinfo(a.host, a.port, &hints, &res)) != 0) {
		SSL_CTX_free(ctx);
		return (md_seterr(h, MD_E_CONNECT, "cannot connect to %s: %s",
		    h->path, gai_strerror(rc)));
	}
	for (ai = res; ai != NULL && fd < 0 && fd != -2; ai = ai->ai_next)
		fd = md_tls_tcp(h, ai, deadline, &error);
	freeaddrinfo(res);
	if (fd == -2) {
		SSL_CTX_free(ctx);
		return (-1);
	}
	if (fd == -1) {
		SSL_CTX_free(ctx);
		if (error == ETIMEDOUT)
			return (md_seterr(h, MD_E_DEADLINE, "cannot connect "
			    "to %s: no answer within the timeout", h->path));
		return (md_seterr(h, MD_E_CONNECT, "cannot connect to %s: %s "
		    "(is metad listening there? metad --listen %s)", h->path,
		    strerror(error), h->path));
	}
	h->fd = fd;
	h->ssl = SSL_new(ctx);
	SSL_CTX_free(ctx);		/* the SSL holds it */
	if (h->ssl == NULL || md_tls_bio(h, fd) != 0)
		abort();
	/* The daemon's certificate must name the host asked for. */
	if (inet_pton(AF_INET, a.host, &ip) == 1 ||
	    inet_pton(AF_INET6, a.host, &ip) == 1)
		X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(h->ssl), a.host);
	else {
		SSL_set_tlsext_host_name(h->ssl, a.host);
		SSL_set1_host(h->ssl, a.host);
	}
	return (md_tls_handshake(h, a.host, deadline));
}

void
md_tls_close(struct md_client *h)
{
	if (h->ssl == NULL) {
		BIO_meth_free(h->tls_bio);
		h->tls_bio = NULL;
		return;
	}
	if (SSL_is_init_finished(h->ssl))
		SSL_shutdown(h->ssl);	/* close_notify, if the socket takes it */
	ERR_clear_error();
	SSL_free(h->ssl);
	h->ssl = NULL;
	BIO_meth_free(h->tls_bio);	/* after the BIO that used it */
	h->tls_bio = NULL;
}

/* What an SSL call's failure means: EAGAIN with *want, or an end. */
static ssize_t
md_tls_result(struct md_client *h, int rc, short *want)
{
	int	 e = SSL_get_error(h->ssl, rc), saved = errno;

	switch (e) {
	case SSL_ERROR_WANT_READ:
		*want = POLLIN;
		errno = EAGAIN;
		return (-1);
	case SSL_ERROR_WANT_WRITE:
		*want = POLLOUT;
		errno = EAGAIN;
		return (-1);
	case SSL_ERROR_ZERO_RETURN:
		ERR_clear_error();
		return (0);
	case SSL_ERROR_SYSCALL:
		if (ERR_peek_last_error() == 0) {
			errno = saved != 0 ? saved : ECONNRESET;
			return (-1);
		}
		/* FALLTHROUGH */
	default:
		md_tls_why(h->tls_why, sizeof h->tls_why, "TLS error");
		errno = EPROTO;
		return (-1);
	}
}

ssize_t
md_sock_read(struct md_client *h, void *p, size_t len, short *want)
{
	int	 rc;

	*want = POLLIN;
	if (h->ssl == NULL)
		return (read(h->fd, p, len));
	ERR_clear_error();
	errno = 0;
	if ((rc = SSL_read(h->ssl, p, len > INT32_MAX ? INT32_MAX :
	    (int)len)) > 0)
		return (rc);
	return (md_tls_result(h, rc, want));
}

ssize_t
md_sock_write(struct md_client *h, const void *p, size_t len, short *want)
{
	int	 rc;

	*want = POLLOUT;
	if (h->ssl == NULL)
		return (send(h->fd, p, len, MSG_NOSIGNAL));
	ERR_clear_error();
	errno = 0;
	if ((rc = SSL_write(h->ssl, p, len > INT32_MAX ? INT32_MAX :
	    (int)len)) > 0)
		return (rc);
	if (md_tls_result(h, rc, want) == 0)
		errno = EPIPE;
	return (-1);
}

const char *
md_sock_error(const struct md_client *h, int error)
{
	if (h->ssl != NULL && error == EPROTO && h->tls_why[0] != '\0')
		return (h->tls_why);
	return (strerror(error));
}

int
md_tls_pending(const struct md_client *h)
{
	return (h->ssl != NULL && SSL_has_pending(h->ssl));
}

/* An idle TLS connection with something to read is done (md_stale). */
int
md_tls_stale(struct md_client *h)
{
	char	 ch;
	int	 rc, e;

	if (SSL_pending(h->ssl) > 0)
		return (1);
	ERR_clear_error();
	if ((rc = SSL_peek(h->ssl, &ch, 1)) > 0)
		return (1);
	e = SSL_get_error(h->ssl, rc);
	ERR_clear_error();
	return (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE);
}
