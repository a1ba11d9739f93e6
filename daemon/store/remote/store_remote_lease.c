/*
 * The remote backend's leases (store_remote.h): the metad used keeps and
 * times them, so every call is one of its lease ops.  A grant is never a
 * session there: a session lease granted here is a lease with a TTL there,
 * kept alive by this daemon while its client's connection lives and
 * revoked when it closes (ops_lease_remote.c), and it expires by its TTL
 * there if this daemon dies.  A call with a token goes with the token
 * made from it (store_forward_token()): the metad used keeps the record,
 * and answers a call sent again as it answered the first.  The keys of a
 * lease are the replica's.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/remote/remote_conn.h"
#include "store/remote/store_remote.h"
#include "proto.h"
#include "util.h"

#define R(st)	((struct store_remote *)(st)->impl)

struct remote_lcall {
	uint64_t		 id;
	int			 session;
	store_lease_done	 done;
	store_revoke_done	 revoked;
	store_leases_done	 listed;
	void			*arg;
};

/* The answer as JSON, ok or not, or NULL and err. */
static cJSON *
remote_lease_answer(const char *line, size_t len, const struct store_err *se,
    struct store_err *err, int *ok)
{
	cJSON	*j;

	*ok = 0;
	if ((j = remote_answer(line, len, se, err)) == NULL)
		return (NULL);
	*ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"));
	if (!*ok)
		remote_answer_error(j, err);
	return (j);
}

static void
remote_lease_state_got(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct remote_lcall		*c = arg;
	struct store_lease_state	 ls;
	struct store_err		 err;
	cJSON				*j;
	int				 ok, rc;

	memset(&ls, 0, sizeof ls);
	ls.id = c->id;
	ls.session = c->session;
	j = remote_lease_answer(line, len, se, &err, &ok);
	if (ok) {
		rc = proto_get_u64(j, "lease", 0, &ls.id, NULL) == 1 &&
		    proto_get_u64(j, "ttl_ms", 0, &ls.ttl_ms, NULL) == 1;
		ls.remaining_ms = ls.ttl_ms;
		if (proto_get_u64(j, "remaining_ms", 0, &ls.remaining_ms,
		    NULL) < 0)
			rc = 0;
		ls.found = 1;
		if (rc)
			c->done(c->arg, &ls, NULL);
		else {
			store_err_set(&err, STORE_ERR_INTERNAL, "the metad "
			    "used answered a lease op with no lease");
			c->done(c->arg, NULL, &err);
		}
	} else if (j != NULL && err.code == STORE_ERR_NO_LEASE)
		c->done(c->arg, &ls, NULL);	/* found 0 */
	else
		c->done(c->arg, NULL, &err);
	cJSON_Delete(j);
	free(c);
}

/* {"op":OP,"lease":ID or "ttl_ms":TTL,"idem":TOKEN} */
static void
remote_lease_send(struct store *st, const char *op, const char *field,
    uint64_t n, const struct store_lease_idem *idem, rconn_done done,
    struct remote_lcall *c)
{
	char	 line[256], tok[STORE_FORWARD_TOKEN_MAX];
	int	 len;

	store_forward_token(tok, idem != NULL ? idem->tok : NULL,
	    idem != NULL ? idem->len : 0);
	len = snprintf(line, sizeof line, "{\"op\":\"%s\",\"%s\":%" PRIu64
	    ",\"idem\":\"%s\"}", op, field, n, tok);
	rconn_call(R(st)->conn, line, (size_t)len, RCONN_RETRY | RCONN_WRITE,
	    done, c);
}

void
remote_lease_grant(struct store *st, uint64_t ttl_ms, int session,
    const struct store_lease_idem *idem, store_lease_done done, void *arg)
{
	struct remote_lcall	*c = xcalloc(1, sizeof *c);

	c->session = session;
	c->done = done;
	c->arg = arg;
	remote_lease_send(st, "lease_grant", "ttl_ms", ttl_ms, idem,
	    remote_lease_state_got, c);
}

/* {"op":OP,"lease":ID}: a read, or a keepalive, sent again if lost. */
static void
remote_lease_ask(struct store *st, const char *op, uint64_t lease,
    rconn_done done, void *c)
{
	char	 line[96];
	int	 len;

	len = snprintf(line, sizeof line, "{\"op\":\"%s\",\"lease\":%" PRIu64
	    "}", op, lease);
	rconn_call(R(st)->conn, line, (size_t)len, RCONN_RETRY, done, c);
}

static struct remote_lcall *
remote_lcall_new(uint64_t lease, store_lease_done done, void *arg)
{
	struct remote_lcall	*c = xcalloc(1, sizeof *c);

	c->id = lease;
	c->done = done;
	c->arg = arg;
	return (c);
}

void
remote_lease_keepalive(struct store *st, uint64_t lease,
    store_lease_done done, void *arg)
{
	remote_lease_ask(st, "lease_keepalive", lease, remote_lease_state_got,
	    remote_lcall_new(lease, done, arg));
}

void
remote_lease_get(struct store *st, uint64_t lease, store_lease_done done,
    void *arg)
{
	remote_lease_ask(st, "lease_info", lease, remote_lease_state_got,
	    remote_lcall_new(lease, done, arg));
}

static void
remote_lease_revoked(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct remote_lcall	*c = arg;
	struct store_err	 err;
	uint64_t		 rev = 0, n = 0;
	cJSON			*j;
	int			 ok;

	j = remote_lease_answer(line, len, se, &err, &ok);
	if (ok && proto_get_u64(j, "rev", 0, &rev, NULL) == 1 &&
	    proto_get_u64(j, "deleted", 0, &n, NULL) == 1)
		c->revoked(c->arg, 1, rev, n, NULL);
	else if (ok) {
		store_err_set(&err, STORE_ERR_INTERNAL, "the metad used "
		    "answered a revoke without its rev");
		c->revoked(c->arg, 0, 0, 0, &err);
	} else if (j != NULL && err.code == STORE_ERR_NO_LEASE)
		c->revoked(c->arg, 0, 0, 0, NULL);
	else
		c->revoked(c->arg, 0, 0, 0, &err);
	cJSON_Delete(j);
	free(c);
}

void
remote_lease_revoke_now(struct store *st, uint64_t lease, int asked,
    const struct store_lease_idem *idem, store_revoke_done done, void *arg)
{
	struct remote_lcall	*c = xcalloc(1, sizeof *c);

	(void)asked;
	c->id = lease;
	c->revoked = done;
	c->arg = arg;
	remote_lease_send(st, "lease_revoke", "lease", lease, idem,
	    remote_lease_revoked, c);
}

/* The records are the metad used's: none is read here, the call goes
 * with its token and that daemon answers it. */
void
remote_lease_idem_get(struct store *st, const void *tok, size_t len,
    store_idem_done done, void *arg)
{
	struct store_idem	 none;

	(void)st;
	(void)tok;
	(void)len;
	memset(&none, 0, sizeof none);
	done(arg, 0, &none, NULL);
}

static void
remote_leases_got(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct remote_lcall	*c = arg;
	struct store_lease	*v = NULL;
	struct store_err	 err;
	const cJSON		*ls, *l;
	cJSON			*j;
	long			 n = 0;
	int			 ok, s;

	j = remote_lease_answer(line, len, se, &err, &ok);
	if (!ok) {
		c->listed(c->arg, -1, NULL, &err);
		goto out;
	}
	ls = cJSON_GetObjectItemCaseSensitive(j, "leases");
	v = xcalloc((size_t)cJSON_GetArraySize(ls) + 1, sizeof *v);
	cJSON_ArrayForEach(l, ls) {
		if (proto_get_u64(l, "lease", 0, &v[n].id, NULL) != 1 ||
		    proto_get_u64(l, "ttl_ms", 0, &v[n].ttl_ms, NULL) != 1 ||
		    proto_get_u64(l, "remaining_ms", 0, &v[n].remaining_ms,
		    NULL) < 0)
			continue;
		if (proto_get_bool(l, "session", 0, &s, NULL) == 1)
			v[n].session = s;
		n++;
	}
	c->listed(c->arg, n, v, NULL);
out:
	free(v);
	cJSON_Delete(j);
	free(c);
}

void
remote_read_leases(struct store *st, store_leases_done done, void *arg)
{
	static const char	 line[] = "{\"op\":\"lease_list\"}";
	struct remote_lcall	*c = xcalloc(1, sizeof *c);

	c->listed = done;
	c->arg = arg;
	rconn_call(R(st)->conn, line, sizeof line - 1, RCONN_RETRY,
	    remote_leases_got, c);
}

/* The metad used counts its leases against its own --max-leases. */
size_t
remote_lease_count(struct store *st)
{
	(void)st;
	return (0);
}

struct remote_lkeys {
	char			*after;
	size_t			 after_len;
	uint64_t		 limit;
	store_read_done		 done;
	void			*arg;
};

/* The keys of a lease, as the metad used's lease_info lists them. */
static void
remote_lease_keys_got(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct remote_lkeys	*c = arg;
	struct store_kv		*v = NULL;
	struct store_err	 err;
	const cJSON		*ks, *k;
	cJSON			*j;
	long			 n = 0;
	int			 ok, more;

	j = remote_lease_answer(line, len, se, &err, &ok);
	if (!ok) {
		if (j != NULL && err.code == STORE_ERR_NO_LEASE)
			c->done(c->arg, 0, NULL, 0, NULL);
		else
			c->done(c->arg, -1, NULL, 0, &err);
		goto out;
	}
	ks = cJSON_GetObjectItemCaseSensitive(j, "keys");
	more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "more"));
	v = xcalloc((size_t)cJSON_GetArraySize(ks) + 1, sizeof *v);
	cJSON_ArrayForEach(k, ks) {
		if (!cJSON_IsString(k))
			continue;
		if (c->after != NULL && strcmp(k->valuestring, c->after) <= 0)
			continue;
		if ((uint64_t)n == c->limit) {
			more = 1;
			break;
		}
		v[n].key = k->valuestring;
		v[n].key_len = strlen(k->valuestring);
		n++;
	}
	c->done(c->arg, n, v, more, NULL);
out:
	free(v);
	cJSON_Delete(j);
	free(c->after);
	free(c);
}

void
remote_read_lease_keys(struct store *st, uint64_t lease, const char *after,
    size_t after_len, uint64_t limit, store_read_done done, void *arg)
{
	struct remote_lkeys	*c = xcalloc(1, sizeof *c);

	if (after != NULL) {
		c->after = xmalloc(after_len + 1);
		memcpy(c->after, after, after_len);
		c->after[after_len] = '\0';
	}
	c->limit = limit;
	c->done = done;
	c->arg = arg;
	remote_lease_ask(st, "lease_info", lease, remote_lease_keys_got, c);
}
