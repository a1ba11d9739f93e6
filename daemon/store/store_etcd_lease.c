/*
 * The etcd backend's leases (SPEC 9): etcd leases, through the JSON
 * gateway's /v3/lease/{grant,keepalive,timetolive,leases,revoke}.  etcd
 * keeps them and their deadlines, so they are shared by every daemon on
 * that etcd and expire by etcd's clock whether a daemon runs or not; etcd
 * deletes an expired or revoked lease's keys at one revision, and the watch
 * stream delivers the deletes like any other write.
 *
 * Ids: metad picks them, at random below 2^53 (they travel as JSON
 * numbers), with bit 52 set for a session lease: that is how any daemon
 * tells one (etcd keeps no flag).  etcd's TTLs are whole seconds: a TTL in
 * ms is rounded up, and etcd may raise it to its minimum (about 1.5 times
 * its election timeout); what it granted is answered.
 *
 * etcd's leases are not under a prefix: each metad lease has a key of its
 * own, PREFIX "l/" ID, attached to it (so it goes with the lease), that
 * scopes it to the daemons of that prefix: lease_list reads those keys,
 * and info and revoke answer not found for a lease without one.  (A
 * keepalive or a put names any lease etcd has.)  Like the slots, the key
 * is outside PREFIX "k/": no client sees it.
 *
 * A put naming a lease carries it in its txn (store_etcd_txn.c); etcd
 * refuses a txn naming a lease it lacks, as STORE_ERR_NO_LEASE
 * (etcd_http.c).  A lease's keys are those etcd attached to it under the
 * prefix; they come back as keys only (timetolive tells no more).
 */
#include <sys/random.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "enc.h"
#include "store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

#define ETCD_LEASE_SESSION	(UINT64_C(1) << 52)
#define ETCD_LEASE_ID_MAX	((UINT64_C(1) << 53) - 1)
/* Grants tried with fresh ids when etcd already has one. */
#define ETCD_GRANT_TRIES	4

/* One lease call out. */
struct etcd_lcall {
	LIST_ENTRY(etcd_lcall)	 entry;		/* e->lcalls */
	struct store		*st;
	uint64_t		 id, ttl_ms;
	int			 session;
	int			 tries;
	store_lease_done	 done;
	store_revoke_done	 rdone;
	store_leases_done	 ldone;
	store_read_done		 kdone;
	void			*arg;
	/* revoke: keys counted first */
	uint64_t		 nkeys;
	/* read_leases: ids to ask, records so far */
	uint64_t		*ids;
	size_t			 nids, next;
	struct store_lease	*v;
	size_t			 nv;
	int			 marker;	/* found: its key too */
	/* read_lease_keys */
	char			*after;
	size_t			 after_len;
	uint64_t		 limit;
};

static struct etcd_lcall *
etcd_lcall_new(struct store *st, uint64_t id, void *arg)
{
	struct etcd_lcall	*c = xcalloc(1, sizeof *c);

	c->st = st;
	c->id = id;
	c->arg = arg;
	LIST_INSERT_HEAD(&E(st)->lcalls, c, entry);
	return (c);
}

static void
etcd_lcall_free(struct etcd_lcall *c)
{
	LIST_REMOVE(c, entry);
	free(c->ids);
	free(c->v);
	free(c->after);
	free(c);
}

static void
etcd_lease_state(uint64_t id, const cJSON *o, const char *ttl,
    struct store_lease_state *ls)
{
	memset(ls, 0, sizeof *ls);
	ls->id = id;
	ls->session = (id & ETCD_LEASE_SESSION) != 0;
	ls->remaining_ms = etcd_u64(o, ttl) * 1000;
	ls->ttl_ms = etcd_u64(o, "grantedTTL") * 1000;
	if (ls->ttl_ms == 0)
		ls->ttl_ms = ls->remaining_ms;
	ls->found = ls->ttl_ms > 0;
}

/* POST body to path for c, cb its answer; fails c at once if it cannot. */
static void
etcd_lcall_send(struct etcd_lcall *c, const char *path, int once,
    etcd_http_cb cb)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	char			 body[160];
	int			 rc;

	if (strcmp(path, "/v3/lease/grant") == 0)
		snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\","
		    "\"TTL\":\"%" PRIu64 "\"}", c->id,
		    (c->ttl_ms + 999) / 1000);
	else if (strcmp(path, "/v3/lease/leases") == 0)
		snprintf(body, sizeof body, "{}");
	else
		snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\"%s}",
		    c->id, strcmp(path, "/v3/lease/timetolive") == 0 &&
		    (c->rdone != NULL || c->kdone != NULL || c->marker) ?
		    ",\"keys\":true" : "");
	rc = once ? etcd_http_call_once(&e->http, path, body, cb, c, &err) :
	    etcd_http_call_async(&e->http, path, body, cb, c, &err);
	if (rc != 0)
		cb(c, NULL, &err);
}

/* The base64 of PREFIX "l/" ID (e->prefix is PREFIX "k/"). */
static char *
etcd_lease_marker64(struct store_etcd *e, uint64_t id)
{
	char	 k[ETCD_PREFIX_MAX + 32];
	int	 n;

	n = snprintf(k, sizeof k, "%.*sl/%" PRIu64, (int)e->prefix_len - 2,
	    e->prefix, id);
	return (etcd_b64(k, (size_t)n));
}

/* 1 if a timetolive answer's keys hold the lease's own key. */
static int
etcd_lease_marked(struct store_etcd *e, uint64_t id, const cJSON *reply)
{
	const cJSON	*k;
	char		*m = etcd_lease_marker64(e, id);
	int		 found = 0;

	cJSON_ArrayForEach(k, cJSON_GetObjectItemCaseSensitive(reply,
	    "keys")) {
		if (cJSON_IsString(k) && strcmp(k->valuestring, m) == 0)
			found = 1;
	}
	free(m);
	return (found);
}

static uint64_t
etcd_lease_new_id(int session)
{
	uint64_t	 id = 0;

	if (getrandom(&id, sizeof id, 0) != sizeof id)
		id = (uint64_t)getpid() << 20 ^ (uint64_t)time(NULL) ^
		    (uint64_t)random();
	id &= ETCD_LEASE_SESSION - 1;
	if (id == 0)
		id = 1;
	return (session ? id | ETCD_LEASE_SESSION : id);
}

static void	etcd_lease_mark(struct etcd_lcall *);

static void
etcd_grant_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;

	if (reply == NULL && strstr(err->msg, "lease already exists") !=
	    NULL && ++c->tries < ETCD_GRANT_TRIES) {
		c->id = etcd_lease_new_id(c->session);
		etcd_lcall_send(c, "/v3/lease/grant", 1, etcd_grant_cb);
		return;
	}
	if (reply == NULL) {
		c->done(c->arg, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &ls);
	c->ttl_ms = ls.remaining_ms;	/* as granted */
	etcd_lease_mark(c);
}

/* The lease's own key is put: the grant is answered. */
static void
etcd_mark_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;

	if (reply == NULL)	/* the lease expires unmarked, by its TTL */
		c->done(c->arg, NULL, err);
	else {
		memset(&ls, 0, sizeof ls);
		ls.id = c->id;
		ls.ttl_ms = ls.remaining_ms = c->ttl_ms;
		ls.session = c->session;
		ls.found = 1;
		c->done(c->arg, &ls, NULL);
	}
	etcd_lcall_free(c);
}

static void
etcd_lease_mark(struct etcd_lcall *c)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	struct buf		 b;
	char			*m = etcd_lease_marker64(e, c->id);

	buf_init(&b);
	buf_printf(&b, "{\"key\":\"%s\",\"value\":\"\",\"lease\":\"%"
	    PRIu64 "\"}", m, c->id);
	free(m);
	if (etcd_http_call_once(&e->http, "/v3/kv/put", buf_cstr(&b),
	    etcd_mark_cb, c, &err) != 0)
		etcd_mark_cb(c, NULL, &err);
	buf_free(&b);
}

void
store_etcd_lease_grant(struct store *st, uint64_t ttl_ms, int session,
    store_lease_done done, void *arg)
{
	struct etcd_lcall	*c;

	c = etcd_lcall_new(st, etcd_lease_new_id(session), arg);
	c->ttl_ms = ttl_ms;
	c->session = session;
	c->done = done;
	etcd_lcall_send(c, "/v3/lease/grant", 1, etcd_grant_cb);
}

/* An answer that is a lease_state: keepalive's (in "result") or ttl's. */
static void
etcd_state_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;
	const cJSON			*res;

	if (reply == NULL) {
		if (strstr(err->msg, "requested lease not found") != NULL ||
		    err->code == STORE_ERR_NO_LEASE) {
			memset(&ls, 0, sizeof ls);
			ls.id = c->id;
			c->done(c->arg, &ls, NULL);
		} else
			c->done(c->arg, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	res = cJSON_GetObjectItemCaseSensitive(reply, "result");
	if (res != NULL) {		/* keepalive: TTL is the whole TTL */
		etcd_lease_state(c->id, res, "TTL", &ls);
		ls.remaining_ms = ls.ttl_ms;
	} else {
		etcd_lease_state(c->id, reply, "TTL", &ls);
		if (c->marker && !etcd_lease_marked(E(c->st), c->id, reply))
			ls.found = 0;	/* another prefix's, or no metad's */
	}
	c->done(c->arg, &ls, NULL);
	etcd_lcall_free(c);
}

void
store_etcd_lease_keepalive(struct store *st, uint64_t id,
    store_lease_done done, void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, id, arg);

	c->done = done;
	etcd_lcall_send(c, "/v3/lease/keepalive", 0, etcd_state_cb);
}

void
store_etcd_lease_get(struct store *st, uint64_t id, store_lease_done done,
    void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, id, arg);

	c->done = done;
	c->marker = 1;
	etcd_lcall_send(c, "/v3/lease/timetolive", 0, etcd_state_cb);
}

static int
etcd_key_cmp(const void *a, const void *b)
{
	const struct store_kv	*x = a, *y = b;
	size_t			 n = x->key_len < y->key_len ? x->key_len :
				    y->key_len;
	int			 c = memcmp(x->key, y->key, n);

	if (c != 0)
		return (c);
	return (x->key_len < y->key_len ? -1 : x->key_len > y->key_len);
}

/*
 * The keys of a timetolive answer under the prefix, sorted, as kvs whose
 * keys the caller frees; *n of them.
 */
static struct store_kv *
etcd_lease_keys(struct store_etcd *e, uint64_t lease, const cJSON *reply,
    size_t *n)
{
	const cJSON	*keys, *k;
	struct store_kv	*v;
	unsigned char	*raw;
	size_t		 len;
	long		 r;

	keys = cJSON_GetObjectItemCaseSensitive(reply, "keys");
	*n = 0;
	v = xcalloc((size_t)cJSON_GetArraySize(keys) + 1, sizeof *v);
	cJSON_ArrayForEach(k, keys) {
		if (!cJSON_IsString(k))
			continue;
		len = strlen(k->valuestring);
		raw = xmalloc(len / 4 * 3 + 1);
		r = b64_decode(k->valuestring, len, raw);
		len = r < 0 ? 0 : (size_t)r;
		if (len <= e->prefix_len ||
		    memcmp(raw, e->prefix, e->prefix_len) != 0) {
			free(raw);
			continue;
		}
		v[*n].key = xmemdup(raw + e->prefix_len, len - e->prefix_len);
		v[*n].key_len = len - e->prefix_len;
		v[*n].lease = lease;
		(*n)++;
		free(raw);
	}
	qsort(v, *n, sizeof *v, etcd_key_cmp);
	return (v);
}

static void
etcd_lease_keys_free(struct store_kv *v, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++)
		free((char *)v[i].key);
	free(v);
}

static void
etcd_keys_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_kv		*v;
	struct store_kv		 a;
	size_t			 n = 0, i = 0;

	if (reply == NULL) {
		c->kdone(c->arg, -1, NULL, 0, err);
		etcd_lcall_free(c);
		return;
	}
	v = etcd_lease_keys(E(c->st), c->id, reply, &n);
	if (c->after != NULL) {
		a.key = c->after;
		a.key_len = c->after_len;
		while (i < n && etcd_key_cmp(&v[i], &a) <= 0)
			i++;
	}
	c->kdone(c->arg, (long)(n - i > c->limit ? c->limit : n - i), v + i,
	    n - i > c->limit, NULL);
	etcd_lease_keys_free(v, n);
	etcd_lcall_free(c);
}

void
store_etcd_read_lease_keys(struct store *st, uint64_t lease,
    const char *after, size_t after_len, uint64_t limit,
    store_read_done done, void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, lease, arg);

	c->kdone = done;
	c->limit = limit;
	if (after != NULL) {
		c->after = xmemdup(after, after_len);
		c->after_len = after_len;
	}
	etcd_lcall_send(c, "/v3/lease/timetolive", 0, etcd_keys_cb);
}

static void
etcd_revoke_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;

	if (reply == NULL && err->code == STORE_ERR_NO_LEASE)
		c->rdone(c->arg, 0, 0, 0, NULL);	/* expired meanwhile */
	else if (reply == NULL)
		c->rdone(c->arg, 0, 0, 0, err);
	else
		c->rdone(c->arg, 1, etcd_header_rev(E(c->st), reply),
		    c->nkeys, NULL);
	etcd_lcall_free(c);
}

/* The keys first (to count them), then the revoke, sent once. */
static void
etcd_revoke_keys_cb(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;
	struct store_kv			*v;
	size_t				 n;

	if (reply == NULL) {
		c->rdone(c->arg, 0, 0, 0, err);
		etcd_lcall_free(c);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &ls);
	if (!ls.found || !etcd_lease_marked(E(c->st), c->id, reply)) {
		c->rdone(c->arg, 0, 0, 0, NULL);
		etcd_lcall_free(c);
		return;
	}
	v = etcd_lease_keys(E(c->st), c->id, reply, &n);
	etcd_lease_keys_free(v, n);
	c->nkeys = n;
	etcd_lcall_send(c, "/v3/lease/revoke", 1, etcd_revoke_cb);
}

void
store_etcd_lease_revoke_now(struct store *st, uint64_t id,
    store_revoke_done done, void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, id, arg);

	c->rdone = done;
	etcd_lcall_send(c, "/v3/lease/timetolive", 0, etcd_revoke_keys_cb);
}

/* read_leases: each id's timetolive in turn, then the records. */
static void
etcd_leases_next(struct etcd_lcall *c);

static void
etcd_leases_ttl_cb(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct etcd_lcall		*c = arg;
	struct store_lease_state	 ls;

	if (reply == NULL) {
		c->ldone(c->arg, -1, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	etcd_lease_state(c->id, reply, "TTL", &ls);
	if (ls.found) {		/* else it expired meanwhile */
		c->v[c->nv].id = ls.id;
		c->v[c->nv].ttl_ms = ls.ttl_ms;
		c->v[c->nv].session = ls.session;
		c->v[c->nv].remaining_ms = ls.remaining_ms;
		c->nv++;
	}
	etcd_leases_next(c);
}

static void
etcd_leases_next(struct etcd_lcall *c)
{
	if (c->next == c->nids) {
		c->ldone(c->arg, (long)c->nv, c->v, NULL);
		etcd_lcall_free(c);
		return;
	}
	c->id = c->ids[c->next++];
	etcd_lcall_send(c, "/v3/lease/timetolive", 0, etcd_leases_ttl_cb);
}

static int
etcd_u64_cmp(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* The markers' keys: PREFIX "l/" ID each. */
static void
etcd_leases_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_etcd	*e = E(c->st);
	const cJSON		*kvs, *kv;
	unsigned char		*k;
	size_t			 klen, pl = e->prefix_len - 2 + 2;
	uint64_t		 id;
	char			 num[24];

	if (reply == NULL) {
		c->ldone(c->arg, -1, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	kvs = cJSON_GetObjectItemCaseSensitive(reply, "kvs");
	c->ids = xcalloc((size_t)cJSON_GetArraySize(kvs) + 1, sizeof *c->ids);
	c->v = xcalloc((size_t)cJSON_GetArraySize(kvs) + 1, sizeof *c->v);
	cJSON_ArrayForEach(kv, kvs) {
		k = etcd_unb64(kv, "key", &klen);
		if (klen > pl && klen - pl < sizeof num) {
			memcpy(num, k + pl, klen - pl);
			num[klen - pl] = '\0';
			if (parse_u64(num, &id) == 0 && id != 0 &&
			    id <= ETCD_LEASE_ID_MAX)
				c->ids[c->nids++] = id;
		}
		free(k);
	}
	qsort(c->ids, c->nids, sizeof *c->ids, etcd_u64_cmp);
	etcd_leases_next(c);
}

void
store_etcd_read_leases(struct store *st, store_leases_done done, void *arg)
{
	struct etcd_lcall	*c = etcd_lcall_new(st, 0, arg);
	struct store_etcd	*e = E(st);
	struct store_err	 err;
	struct buf		 b;
	char			 k[ETCD_PREFIX_MAX + 4];
	char			*k64, *end64;
	int			 n;

	c->ldone = done;
	n = snprintf(k, sizeof k, "%.*sl/", (int)e->prefix_len - 2,
	    e->prefix);
	k64 = etcd_b64(k, (size_t)n);
	end64 = etcd_prefix_end64(k, (size_t)n);
	buf_init(&b);
	buf_printf(&b, "{\"key\":\"%s\",\"range_end\":\"%s\","
	    "\"keys_only\":true}", k64, end64);
	free(k64);
	free(end64);
	if (etcd_http_call_async(&e->http, "/v3/kv/range", buf_cstr(&b),
	    etcd_leases_cb, c, &err) != 0)
		etcd_leases_cb(c, NULL, &err);
	buf_free(&b);
}

/* The key just put into the batch carries lease in its txn. */
int
store_etcd_lease_attach(struct store *st, const char *key, size_t len,
    uint64_t lease, struct store_err *err)
{
	struct etcd_evs	*o = &E(st)->overlay;

	(void)key;
	(void)len;
	if (o->n == o->head)
		return (store_err_set(err, STORE_ERR_INTERNAL, "lease attach "
		    "with no put before it"));
	o->v[o->n - 1].lease = lease;
	return (0);
}

void
store_etcd_leases_free(struct store_etcd *e)
{
	while (!LIST_EMPTY(&e->lcalls))
		etcd_lcall_free(LIST_FIRST(&e->lcalls));
}

void
etcd_lease_err(const char *body, struct store_err *err)
{
	const char	*p = body != NULL ? strstr(body, "\"lease\":\"") : NULL;
	uint64_t	 id = 0, other = 0, v;

	for (; p != NULL; p = strstr(p, "\"lease\":\"")) {
		p += strlen("\"lease\":\"");
		v = strtoull(p, NULL, 10);
		if (id == 0)
			id = v;
		else if (v != id)
			other = v;
	}
	if (other != 0)
		store_err_set(err, STORE_ERR_NO_LEASE, "lease %" PRIu64 " or %"
		    PRIu64 " not found (unknown, expired or revoked); nothing "
		    "written", id, other);
	else
		store_err_set(err, STORE_ERR_NO_LEASE, "lease %" PRIu64 " not "
		    "found (unknown, expired or revoked); nothing written", id);
}
