/* The listener's OpenSSL contexts and what a certificate says (tls_ctx.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include "log.h"
#include "metad.h"
#include "net/tls_ctx.h"
#include "util.h"

/* OpenSSL's last error, or what if there is none. */
static const char *
tls_error(const char *what)
{
	static char	 buf[256];
	unsigned long	 e = ERR_peek_last_error();

	if (e == 0)
		return (what);
	ERR_error_string_n(e, buf, sizeof buf);
	ERR_clear_error();
	return (buf);
}

/* A file OpenSSL will read: its own errors do not say "no such file". */
static int
tls_readable(const char *opt, const char *path, char **cause)
{
	FILE	*f;

	if ((f = fopen(path, "re")) == NULL) {
		xasprintf(cause, "%s %s: %s", opt, path, strerror(errno));
		return (-1);
	}
	fclose(f);
	return (0);
}

/* A context from the files: every client must show a cert the CA signed. */
SSL_CTX *
tls_ctx_new(const struct metad_config *cfg, char **cause)
{
	STACK_OF(X509_NAME)	*cas;
	SSL_CTX			*ctx;

	if (tls_readable("--tls-cert", cfg->tls_cert, cause) != 0 ||
	    tls_readable("--tls-key", cfg->tls_key, cause) != 0 ||
	    tls_readable("--tls-client-ca", cfg->tls_client_ca, cause) != 0)
		return (NULL);
	ERR_clear_error();
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL)
		fatalx("SSL_CTX_new: %s", tls_error("out of memory"));
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* No tickets or cache: every connection shows its certificate. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_NO_RENEGOTIATION);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->tls_cert) != 1) {
		xasprintf(cause, "--tls-cert %s: no PEM certificate (%s)",
		    cfg->tls_cert, tls_error("unreadable"));
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->tls_key,
	    SSL_FILETYPE_PEM) != 1) {
		xasprintf(cause, "--tls-key %s: no PEM private key, or not the "
		    "key of --tls-cert %s (%s)", cfg->tls_key, cfg->tls_cert,
		    tls_error("unreadable"));
		goto fail;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		xasprintf(cause, "--tls-key %s is not the key of --tls-cert %s",
		    cfg->tls_key, cfg->tls_cert);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, cfg->tls_client_ca,
	    NULL) != 1 ||
	    (cas = SSL_load_client_CA_file(cfg->tls_client_ca)) == NULL) {
		xasprintf(cause, "--tls-client-ca %s: no PEM CA certificate "
		    "(%s)", cfg->tls_client_ca, tls_error("none in the file"));
		goto fail;
	}
	SSL_CTX_set_client_CA_list(ctx, cas);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
	    SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	ERR_clear_error();
	return (ctx);
fail:
	SSL_CTX_free(ctx);
	ERR_clear_error();
	return (NULL);
}

/* The certificate's one subject CN, in UTF-8 without NUL; -1 if none. */
int
tls_ctx_peer_cn(SSL *ssl, char *out, size_t len)
{
	X509		*x;
	X509_NAME	*name;
	unsigned char	*u = NULL;
	int		 i, n = -1;

	if ((x = SSL_get1_peer_certificate(ssl)) == NULL)
		return (-1);
	name = X509_get_subject_name(x);
	i = X509_NAME_get_index_by_NID(name, NID_commonName, -1);
	if (i >= 0 && X509_NAME_get_index_by_NID(name, NID_commonName,
	    i) < 0)
		n = ASN1_STRING_to_UTF8(&u, X509_NAME_ENTRY_get_data(
		    X509_NAME_get_entry(name, i)));
	X509_free(x);
	if (n <= 0 || (size_t)n >= len || memchr(u, '\0', (size_t)n)) {
		OPENSSL_free(u);
		return (-1);
	}
	memcpy(out, u, (size_t)n);
	out[n] = '\0';
	OPENSSL_free(u);
	return (0);
}

