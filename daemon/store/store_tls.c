/*
 * TLS to a remote store (store_tls.h): the client's context, each
 * connection's SSL, and the words for a handshake that failed.
 */
#include <arpa/inet.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "store/store_tls.h"
#include "util.h"

struct store_tls {
	SSL_CTX		*ctx;
	int		 ca;		/* --store-cacert given */
	int		 cert;		/* --store-cert given */
	char		 peer[32];	/* "etcd", "the metad": in messages */
};

/* The reason of OpenSSL's last error (the queue is cleared), or "?". */
static const char *
store_tls_reason(void)
{
	unsigned long	 e = ERR_peek_last_error();
	const char	*r = e != 0 ? ERR_reason_error_string(e) : NULL;

	ERR_clear_error();
	return (r != NULL ? r : "?");
}

/* File f of option opt can be read, else err says why. */
static int
store_tls_readable(const char *opt, const char *f, struct store_err *err)
{
	FILE	*fp;

	if ((fp = fopen(f, "r")) == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s %s: %s",
		    opt, f, strerror(errno)));
	fclose(fp);
	return (0);
}

struct store_tls *
store_tls_open(const char *peer, const char *alpn, const char *ca,
    const char *cert, const char *key, struct store_err *err)
{
	struct store_tls	*t = xcalloc(1, sizeof *t);
	int		 rc = -1;

	ERR_clear_error();
	t->ca = ca != NULL;
	t->cert = cert != NULL;
	snprintf(t->peer, sizeof t->peer, "%s", peer);
	if ((t->ctx = SSL_CTX_new(TLS_client_method())) == NULL) {
		store_err_set(err, STORE_ERR_INTERNAL, "TLS: %s",
		    store_tls_reason());
		goto out;
	}
	SSL_CTX_set_min_proto_version(t->ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	/* A zero from set_alpn_protos is success. */
	if (alpn != NULL && SSL_CTX_set_alpn_protos(t->ctx,
	    (const unsigned char *)alpn, strlen(alpn)) != 0) {
		store_err_set(err, STORE_ERR_INTERNAL, "TLS: ALPN: %s",
		    store_tls_reason());
		goto out;
	}
	if (ca != NULL) {
		if (store_tls_readable("--store-cacert", ca, err) != 0)
			goto out;
		if (SSL_CTX_load_verify_locations(t->ctx, ca, NULL) != 1) {
			store_err_set(err, STORE_ERR_INTERNAL, "--store-cacert "
			    "%s: no CA certificate read (%s)", ca,
			    store_tls_reason());
			goto out;
		}
	} else if (SSL_CTX_set_default_verify_paths(t->ctx) != 1) {
		store_err_set(err, STORE_ERR_INTERNAL, "TLS: the system's CA "
		    "certificates: %s", store_tls_reason());
		goto out;
	}
	if (cert != NULL) {
		if (store_tls_readable("--store-cert", cert, err) != 0 ||
		    store_tls_readable("--store-key", key, err) != 0)
			goto out;
		if (SSL_CTX_use_certificate_chain_file(t->ctx, cert) != 1) {
			store_err_set(err, STORE_ERR_INTERNAL, "--store-cert "
			    "%s: no certificate read (%s)", cert,
			    store_tls_reason());
			goto out;
		}
		if (SSL_CTX_use_PrivateKey_file(t->ctx, key,
		    SSL_FILETYPE_PEM) != 1 &&
		    ERR_GET_REASON(ERR_peek_last_error()) !=
		    X509_R_KEY_VALUES_MISMATCH) {
			store_err_set(err, STORE_ERR_INTERNAL, "--store-key "
			    "%s: %s", key, store_tls_reason());
			goto out;
		}
		if (SSL_CTX_check_private_key(t->ctx) != 1) {
			store_err_set(err, STORE_ERR_INTERNAL, "--store-key %s "
			    "is not the key of --store-cert %s", key, cert);
			goto out;
		}
	}
	rc = 0;
out:
	if (rc != 0) {
		ERR_clear_error();
		store_tls_free(t);
		return (NULL);
	}
	return (t);
}

void
store_tls_free(struct store_tls *t)
{
	if (t == NULL)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

/* A client SSL for host, checked against its name or IP address. */
static SSL *
store_tls_ssl(struct store_tls *t, const char *host)
{
	unsigned char	 a[16];
	SSL		*ssl;
	int		 ip;

	if ((ssl = SSL_new(t->ctx)) == NULL)
		return (NULL);
	ip = inet_pton(AF_INET, host, a) == 1 ||
	    inet_pton(AF_INET6, host, a) == 1;
	/* An IP address is checked against the certificate's IP SANs. */
	if (ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
	    host) != 1 : SSL_set_tlsext_host_name(ssl, host) != 1 ||
	    SSL_set1_host(ssl, host) != 1) {
		SSL_free(ssl);
		return (NULL);
	}
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return (ssl);
}

struct bufferevent *
store_tls_bev(struct store_tls *t, struct event_base *base, const char *host,
    struct ssl_st **ssl)
{
	struct bufferevent	*bev;

	if ((*ssl = store_tls_ssl(t, host)) == NULL)
		return (NULL);
	if ((bev = bufferevent_openssl_socket_new(base, -1, *ssl,
	    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(*ssl);
		*ssl = NULL;
		return (NULL);
	}
	/* A close without close_notify is an end, not an error. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return (bev);
}

/* An alert the server sent about metad's certificate (or its lack of one). */
static int
store_tls_cert_alert(int reason)
{
	switch (reason - SSL_AD_REASON_OFFSET) {
	case SSL_AD_BAD_CERTIFICATE:
	case SSL_AD_UNSUPPORTED_CERTIFICATE:
	case SSL_AD_CERTIFICATE_REVOKED:
	case SSL_AD_CERTIFICATE_EXPIRED:
	case SSL_AD_CERTIFICATE_UNKNOWN:
	case SSL_AD_UNKNOWN_CA:
	case SSL_AD_ACCESS_DENIED:
	case SSL_AD_CERTIFICATE_REQUIRED:
		return (1);
	}
	return (0);
}

/* Why, from the errors errs[0..nerr) of ssl (NULL: none made). */
static int
store_tls_why(const struct store_tls *t, SSL *ssl, const unsigned long *errs,
    size_t nerr, int sys, int mute, char *why, size_t n)
{
	const char	*r;
	size_t		 i;
	long		 v;
	int		 reason;

	for (i = 0; i < nerr; i++) {
		if (ERR_GET_LIB(errs[i]) != ERR_LIB_SSL)
			continue;
		reason = ERR_GET_REASON(errs[i]);
		r = ERR_reason_error_string(errs[i]);
		if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED && ssl != NULL) {
			v = SSL_get_verify_result(ssl);
			if (v == X509_V_ERR_HOSTNAME_MISMATCH ||
			    v == X509_V_ERR_IP_ADDRESS_MISMATCH)
				snprintf(why, n, "%s's certificate is not "
				    "for the host of its URL (%s)", t->peer,
				    X509_verify_cert_error_string(v));
			else
				snprintf(why, n, "%s's certificate did not "
				    "verify against %s: %s", t->peer, t->ca ?
				    "--store-cacert" : "the system's CAs (no "
				    "--store-cacert)",
				    X509_verify_cert_error_string(v));
			return (1);
		}
		if (store_tls_cert_alert(reason)) {
			snprintf(why, n, t->cert ? "%s refused metad's "
			    "client certificate (--store-cert): %s" :
			    "%s asks for a client certificate "
			    "(--store-cert, --store-key): %s", t->peer,
			    r != NULL ? r : "?");
			return (1);
		}
		if (reason == SSL_R_WRONG_VERSION_NUMBER ||
		    reason == SSL_R_PACKET_LENGTH_TOO_LONG) {
			snprintf(why, n, "TLS: %s (does %s serve TLS "
			    "there?)", r != NULL ? r : "?", t->peer);
			return (1);
		}
	}
	/* libevent's list holds SSL_get_error()'s codes too (library 0). */
	for (i = 0, r = NULL; i < nerr && r == NULL; i++)
		r = ERR_GET_LIB(errs[i]) != 0 ?
		    ERR_reason_error_string(errs[i]) : NULL;
	if (r != NULL) {
		snprintf(why, n, "TLS: %s", r);
		return (1);
	}
	if (mute) {
		snprintf(why, n, "%s closed the connection after the TLS "
		    "handshake (%s?)", t->peer, t->cert ? "it refused metad's "
		    "client certificate, --store-cert" : "does it ask for a "
		    "client certificate, --store-cert");
		return (1);
	}
	if (sys != 0)
		snprintf(why, n, "%s", strerror(sys));
	else
		snprintf(why, n, "%s closed the TLS connection", t->peer);
	return (0);
}

int
store_tls_failed(const struct store_tls *t, struct bufferevent *bev, int sys,
    int mute, char *why, size_t n)
{
	SSL		*ssl = bufferevent_openssl_get_ssl(bev);
	unsigned long	 errs[8], e;
	size_t		 nerr = 0;
	char		 b[512];

	while ((e = bufferevent_get_openssl_error(bev)) != 0) {
		if (nerr < sizeof errs / sizeof errs[0])
			errs[nerr++] = e;
	}
	/*
	 * After a TLS 1.3 handshake a server refuses a certificate with an
	 * alert, and closes: a write of ours may have failed first, the
	 * alert still unread.
	 */
	ERR_clear_error();
	if (ssl != NULL && SSL_read(ssl, b, sizeof b) <= 0) {
		while ((e = ERR_get_error()) != 0) {
			if (nerr < sizeof errs / sizeof errs[0])
				errs[nerr++] = e;
		}
	}
	ERR_clear_error();
	return (store_tls_why(t, ssl, errs, nerr, sys, mute, why, n));
}
