/*
 * TLS and etcd's authentication for a client (etcd_client.h): the options
 * checked and the files read at init; Authenticate's token, got at init
 * (blocking) and again on the daemon's loop when etcd refuses it, for the
 * calls and streams that wait for it (struct etcd_renewal).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "store/etcd/etcd_client.h"
#include "store/etcd/etcd_client_int.h"
#include "store/store_tls.h"
#include "log.h"
#include "util.h"

#define ETCD_TOKEN_MAX		4096

int
etcd_auth_refused(int status, const char *msg, size_t len)
{
	static const char *const refusals[] = {
		"invalid auth token",		/* expired; etcd restarted */
		"revision of auth store is old",
		/* etcd 3.4 cancels a watch so for an invalid token too */
		"permission denied",
	};
	size_t	 i, n = sizeof refusals / sizeof refusals[0];

	if (status == 200 || msg == NULL)
		return (0);
	if (status != 0)
		n--;	/* a call's "permission denied" is one */
	for (i = 0; i < n; i++) {
		if (memmem(msg, len, refusals[i], strlen(refusals[i])) != NULL)
			return (1);
	}
	return (0);
}

/* The one line of file, without its newline, as *out. */
static int
etcd_auth_password(const char *file, char **out, struct store_err *err)
{
	char	 b[ETCD_PASSWORD_MAX + 2];
	FILE	*fp;
	size_t	 n;
	int	 rc = -1;

	if ((fp = fopen(file, "r")) == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "--store-password-file %s: %s", file, strerror(errno)));
	n = fread(b, 1, sizeof b, fp);
	if (n > 0 && b[n - 1] == '\n')
		n--;	/* not the password's */
	if (ferror(fp))
		store_err_set(err, STORE_ERR_INTERNAL, "--store-password-file "
		    "%s: %s", file, strerror(errno));
	else if (n > ETCD_PASSWORD_MAX)
		store_err_set(err, STORE_ERR_INTERNAL, "--store-password-file "
		    "%s: longer than %d bytes", file, ETCD_PASSWORD_MAX);
	else if (memchr(b, '\n', n) != NULL || memchr(b, '\0', n) != NULL)
		store_err_set(err, STORE_ERR_INTERNAL, "--store-password-file "
		    "%s: more than one line (the password is its one line)",
		    file);
	else if (n == 0)
		store_err_set(err, STORE_ERR_INTERNAL, "--store-password-file "
		    "%s: empty", file);
	else {
		*out = xmalloc(n + 1);
		memcpy(*out, b, n);
		(*out)[n] = '\0';
		rc = 0;
	}
	fclose(fp);
	explicit_bzero(b, sizeof b);
	return (rc);
}

int
etcd_auth_open(struct etcd_client *h, const struct store_options *opts,
    struct store_err *err)
{
	if ((opts->cert == NULL) != (opts->key == NULL))
		return (store_err_set(err, STORE_ERR_INTERNAL, "--store-cert "
		    "and --store-key go together"));
	if ((opts->user == NULL) != (opts->password_file == NULL))
		return (store_err_set(err, STORE_ERR_INTERNAL, "--store-user "
		    "and --store-password-file go together"));
	if (h->cred.https == 0 && (opts->cacert != NULL || opts->cert != NULL))
		return (store_err_set(err, STORE_ERR_INTERNAL, "--store-cacert, "
		    "--store-cert and --store-key are for https:// endpoints, "
		    "and --store has none"));
	if (h->cred.https != 0 && (h->cred.tls = store_tls_open("etcd",
	    "\x02h2", opts->cacert, opts->cert, opts->key, err)) == NULL)
		return (-1);
	if (opts->user != NULL) {
		if (etcd_auth_password(opts->password_file, &h->password,
		    err) != 0)
			return (-1);
		h->user = xstrdup(opts->user);
	}
	return (0);
}

void
etcd_auth_close(struct etcd_client *h)
{
	store_tls_free(h->cred.tls);
	free(h->cred.token);
	if (h->password != NULL) {
		explicit_bzero(h->password, strlen(h->password));
		free(h->password);
	}
	free(h->user);
	if (h->renew_ev != NULL)
		event_free(h->renew_ev);
	LIST_INIT(&h->renewals);	/* their owners are gone */
}

/* Authenticate's request: the JSON of the user and password. */
static char *
etcd_auth_body(const struct etcd_client *h)
{
	cJSON	*j = cJSON_CreateObject();
	char	*s;

	cJSON_AddStringToObject(j, "name", h->user);
	cJSON_AddStringToObject(j, "password", h->password);
	s = cJSON_PrintUnformatted(j);
	explicit_bzero(cJSON_GetObjectItemCaseSensitive(j,
	    "password")->valuestring, strlen(h->password));
	cJSON_Delete(j);
	if (s == NULL)
		fatalx("etcd_auth_body: out of memory");
	return (s);
}

static void
etcd_auth_body_free(char *s)
{
	explicit_bzero(s, strlen(s));
	free(s);
}

/* Authenticate's error e, in words that name what was wrong. */
static int
etcd_auth_fail(const struct etcd_client *h, const struct store_err *e,
    struct store_err *err)
{
	if (strstr(e->msg, "authentication failed") != NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd refused "
		    "--store-user %.64s with the password of "
		    "--store-password-file (invalid user ID or password)",
		    h->user));
	if (strstr(e->msg, "authentication is not enabled") != NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd has "
		    "authentication disabled, yet --store-user %.64s is given",
		    h->user));
	return (store_err_set(err, e->code, "etcd: authenticating as %.64s: "
	    "%s", h->user, e->msg));
}

/* The token of Authenticate's answer in, one generation on. */
static int
etcd_auth_token(struct etcd_client *h, const cJSON *reply,
    struct store_err *err)
{
	const cJSON	*t = cJSON_GetObjectItemCaseSensitive(reply, "token");
	const char	*p;

	if (!cJSON_IsString(t) || t->valuestring[0] == '\0' ||
	    strlen(t->valuestring) > ETCD_TOKEN_MAX)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd: "
		    "Authenticate answered no token"));
	for (p = t->valuestring; *p != '\0'; p++) {
		if (*p < 0x21 || *p > 0x7e)
			return (store_err_set(err, STORE_ERR_INTERNAL, "etcd: "
			    "Authenticate answered a token that cannot be "
			    "sent"));
	}
	free(h->cred.token);
	h->cred.token = xstrdup(t->valuestring);
	h->cred.gen++;
	return (0);
}

int
etcd_auth_login(struct etcd_client *h, struct store_err *err)
{
	struct store_err	 e;
	cJSON			*reply;
	char			*body;
	int			 rc;

	if (h->user == NULL)
		return (0);
	body = etcd_auth_body(h);
	rc = etcd_call_sync(h, "/v3/auth/authenticate", body, &reply, &e);
	etcd_auth_body_free(body);
	if (rc != 0)
		return (etcd_auth_fail(h, &e, err));
	rc = etcd_auth_token(h, reply, err);
	cJSON_Delete(reply);
	return (rc);
}

/* What the renewal came to (NULL: a new token), to each that waits. */
static void
etcd_auth_deliver(struct etcd_client *h, const struct store_err *err)
{
	struct etcd_renewal	*w;

	h->authing = 0;
	while ((w = LIST_FIRST(&h->renewals)) != NULL) {
		LIST_REMOVE(w, entry);
		w->waiting = 0;
		w->cb(w->arg, err);
	}
}

static void
etcd_auth_answer(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_client	*h = arg;
	struct store_err	 e;

	if (err != NULL)
		etcd_auth_fail(h, err, &e);
	if (err != NULL || etcd_auth_token(h, reply, &e) != 0) {
		log_warnx("%s", e.msg);
		etcd_auth_deliver(h, &e);
		return;
	}
	log_info("etcd: authenticated again as %s (etcd refused the token)",
	    h->user);
	etcd_auth_deliver(h, NULL);
}

/* An Authenticate that could not be sent: said from the loop. */
static void
etcd_auth_unsent(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_client	*h = arg;

	log_warnx("%s", h->renew_err.msg);
	etcd_auth_deliver(h, &h->renew_err);
}

int
etcd_client_renew(struct etcd_client *h, unsigned gen, struct etcd_renewal *w)
{
	struct store_err	 e;
	char			*body;
	int			 rc;

	if (h->user == NULL || h->main == NULL)
		return (-1);
	if (gen != h->cred.gen)
		return (1);
	if (!w->waiting) {
		LIST_INSERT_HEAD(&h->renewals, w, entry);
		w->waiting = 1;
	}
	if (h->authing)
		return (0);
	h->authing = 1;
	body = etcd_auth_body(h);
	rc = etcd_call_async(h, "/v3/auth/authenticate", body,
	    etcd_auth_answer, h, &e);
	etcd_auth_body_free(body);
	if (rc != 0) {
		etcd_auth_fail(h, &e, &h->renew_err);
		if (h->renew_ev == NULL && (h->renew_ev = event_new(h->main,
		    -1, 0, etcd_auth_unsent, h)) == NULL)
			fatalx("etcd_client_renew: out of memory");
		event_active(h->renew_ev, 0, 0);
	}
	return (0);
}

void
etcd_renewal_cancel(struct etcd_renewal *w)
{
	if (!w->waiting)
		return;
	LIST_REMOVE(w, entry);
	w->waiting = 0;
}
