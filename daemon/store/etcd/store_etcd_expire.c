/*
 * Punctual expiry of etcd leases (metad-protocol(7), LEASES: no earlier
 * than ttl_ms after the last grant or keepalive, no later than 1 s after).
 * etcd's TTLs are whole seconds, at least its minimum (2 s with its default
 * flags), and its lessor looks for expired leases every 500 ms: left to
 * etcd, a lease of 1000 ms lives 2.0 to 2.5 s.  So a lease whose etcd TTL
 * would be too late is "stamped" (etcd_lease_stamped(), decided once at its
 * grant and written in its record): each keepalive made through any metad
 * also puts its record, PREFIX "l/" ID, again (store_etcd_lease.c), and
 * every daemon on that prefix times the lease itself:
 *
 * - it knows each lease of the prefix from its record: read at start (one
 *   range at the revision the watch stream starts after), then from the
 *   stream's puts and deletes of records;
 * - a stamped lease is due ttl_ms after the daemon saw its latest record
 *   put (grant or keepalive): seen after it was committed, so never early;
 *   at start, and when the stream lost events to a compaction, every
 *   stamped lease is due ttl_ms from now;
 * - when one is due, the daemon reads its record (linearizable): a newer
 *   put than the one seen (the stream is late, or was down) makes it due
 *   ttl_ms from now; no record, it is gone; else it revokes the lease in
 *   etcd (not found is fine: another daemon did), which deletes its keys
 *   at one revision like an expiry of etcd's own.
 *
 * Every daemon on the prefix does so, the first one revokes; if none runs,
 * etcd's own TTL still expires the lease, later.  Each known lease costs a
 * hash entry, a stamped one a libevent timer (its min-heap): nothing per
 * tick.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd.h"
#include "store/store_hash.h"
#include "u64map.h"

/* A due lease whose record could not be read is looked at again after: */
#define ETCD_EXPIRY_RETRY_MS	250
/* Records read at once, at start. */
#define ETCD_EXPIRY_PAGE	10000

struct etcd_expiry {
	struct u64map		 known;		/* struct etcd_known, by id */
	unsigned		 gen;		/* of the last reload */
};

int
etcd_lease_stamped(uint64_t ttl_ms, uint64_t etcd_ttl_s)
{
	return (etcd_ttl_s * 1000 + ETCD_LESSOR_CHECK_MS +
	    ETCD_EXPIRY_MARGIN_MS > ttl_ms + ETCD_EXPIRY_LATE_MS);
}

void
etcd_lease_value(struct buf *b, uint64_t ttl_ms, int stamp)
{
	buf_printf(b, "{\"ttl_ms\":%" PRIu64 ",\"stamp\":%s}", ttl_ms,
	    stamp ? "true" : "false");
}

void
etcd_lease_value_revoked(struct buf *b, uint64_t ttl_ms, int stamp)
{
	buf_printf(b, "{\"ttl_ms\":%" PRIu64 ",\"stamp\":%s,\"revoked\":true}",
	    ttl_ms, stamp ? "true" : "false");
}

int
etcd_record_revoked(const unsigned char *v, size_t len)
{
	cJSON	*o = cJSON_ParseWithLength((const char *)v, len);
	int	 revoked;

	revoked = o != NULL && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o,
	    "revoked"));
	cJSON_Delete(o);
	return (revoked);
}

struct etcd_known *
etcd_known_find(struct store_etcd *e, uint64_t id)
{
	if (e->expiry == NULL)
		return (NULL);
	return (u64map_find(&e->expiry->known, id));
}

size_t
store_etcd_lease_count(struct store *st)
{
	struct store_etcd	*e = st->impl;

	return (e->expiry != NULL ? e->expiry->known.n : 0);
}

static void
etcd_known_free(struct etcd_known *k)
{
	if (k->timer != NULL)
		event_free(k->timer);
	free(k);
}

static void
etcd_known_forget(struct store_etcd *e, uint64_t id)
{
	struct etcd_known	*k;

	if ((k = u64map_find(&e->expiry->known, id)) == NULL)
		return;
	u64map_del(&e->expiry->known, k);
	if (k->busy)
		k->gone = 1;	/* freed by its call */
	else
		etcd_known_free(k);
}

/* Arm k's timer for its deadline. */
static void
etcd_known_arm(struct etcd_known *k)
{
	struct timeval	 tv;
	uint64_t	 now = (uint64_t)mono_ms();
	uint64_t	 wait = k->deadline > now ? k->deadline - now : 0;

	tv.tv_sec = (time_t)(wait / 1000);
	tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
	evtimer_add(k->timer, &tv);
}

static void	etcd_known_due(evutil_socket_t, short, void *);

void
etcd_expiry_learn(struct store_etcd *e, uint64_t id, uint64_t ttl_ms,
    int stamp, uint64_t rev)
{
	struct etcd_expiry	*x = e->expiry;
	struct etcd_known	*k;

	if (x == NULL)
		return;
	if ((k = etcd_known_find(e, id)) == NULL) {
		k = xcalloc(1, sizeof *k);
		k->e = e;
		k->id = id;
		u64map_add(&x->known, k);
	}
	if (rev <= k->seen_rev)
		return;		/* a put seen already (or older) */
	k->seen_rev = rev;
	k->ttl_ms = ttl_ms;
	k->stamp = stamp;
	if (!stamp || e->opts.base == NULL)
		return;
	if (k->timer == NULL && (k->timer = evtimer_new(e->opts.base,
	    etcd_known_due, k)) == NULL)
		fatalx("evtimer_new");
	k->deadline = (uint64_t)mono_ms() + ttl_ms;
	etcd_known_arm(k);
}

uint64_t
etcd_record_id(struct store_etcd *e, const unsigned char *key, size_t len)
{
	size_t		 pl = e->prefix_len;	/* PREFIX "l/" as long */
	char		 num[24];
	uint64_t	 id;

	if (len <= pl || len - pl >= sizeof num ||
	    memcmp(key, e->prefix, pl - 2) != 0 ||
	    memcmp(key + pl - 2, "l/", 2) != 0)
		return (0);
	memcpy(num, key + pl, len - pl);
	num[len - pl] = '\0';
	if (parse_u64(num, &id) != 0 || id > ETCD_LEASE_ID_MAX)
		return (0);
	return (id);
}

/* A record's value: its ttl_ms and stamp; 0 ttl_ms if it has none. */
static void
etcd_record_value(const unsigned char *v, size_t len, uint64_t *ttl_ms,
    int *stamp)
{
	cJSON	*o = cJSON_ParseWithLength((const char *)v, len);

	*ttl_ms = 0;
	*stamp = 0;
	if (o == NULL)
		return;		/* an older metad's: no value */
	*ttl_ms = etcd_u64(o, "ttl_ms");
	*stamp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "stamp"));
	cJSON_Delete(o);
}

uint64_t
etcd_expiry_of(struct store_etcd *e, const struct etcd_pb_kv *kv,
    int deleted)
{
	uint64_t	 id, ttl_ms;
	int		 stamp;

	id = etcd_record_id(e, kv->key, kv->key_len);
	if (id != 0 && deleted)
		etcd_lease_ended(e, id, kv->mod_rev);
	if (id == 0 || e->expiry == NULL)
		return (id);
	if (deleted) {
		etcd_known_forget(e, id);
		return (id);
	}
	etcd_record_value(kv->value, kv->value_len, &ttl_ms, &stamp);
	etcd_expiry_learn(e, id, ttl_ms, stamp && ttl_ms > 0, kv->mod_rev);
	return (id);
}

uint64_t
etcd_expiry_kv(struct store_etcd *e, const cJSON *kv, int deleted)
{
	struct etcd_jkv	 j;
	uint64_t	 id;

	etcd_jkv_of(&j, kv);
	id = etcd_expiry_of(e, &j.kv, deleted);
	etcd_jkv_free(&j);
	return (id);
}

/* The revoke of a due lease was answered. */
static void
etcd_known_revoked(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_known	*k = arg;

	k->busy = 0;
	if (k->gone) {
		etcd_known_free(k);
		return;
	}
	if (reply == NULL && err->code != STORE_ERR_NO_LEASE &&
	    strstr(err->msg, "requested lease not found") == NULL) {
		log_warnx("lease %" PRIu64 ": revoke failed: %s", k->id,
		    err->msg);
		k->deadline = (uint64_t)mono_ms() + ETCD_EXPIRY_RETRY_MS;
		etcd_known_arm(k);
		return;
	}
	log_debug("lease %" PRIu64 " expired (metad's clock)", k->id);
	etcd_known_forget(k->e, k->id);
}

/* The record of a due lease, read again. */
static void
etcd_known_checked(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_known	*k = arg;
	struct store_etcd	*e = k->e;
	struct store_err	 e2;
	const cJSON		*kvs;
	uint64_t		 rev, now = (uint64_t)mono_ms();
	char			 body[64];

	k->busy = 0;
	if (k->gone) {
		etcd_known_free(k);
		return;
	}
	if (reply == NULL) {	/* etcd's own TTL still runs */
		k->deadline = now + ETCD_EXPIRY_RETRY_MS;
		etcd_known_arm(k);
		return;
	}
	kvs = cJSON_GetObjectItemCaseSensitive(reply, "kvs");
	if (cJSON_GetArraySize(kvs) == 0) {	/* revoked or expired */
		etcd_known_forget(e, k->id);
		return;
	}
	rev = etcd_u64(cJSON_GetArrayItem(kvs, 0), "mod_revision");
	if (rev > k->seen_rev) {
		/* Put after the one seen: when is unknown, but not after now. */
		k->seen_rev = rev;
		k->deadline = now + k->ttl_ms;
	}
	if (k->deadline > now) {	/* kept alive meanwhile */
		etcd_known_arm(k);
		return;
	}
	k->busy = 1;
	snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\"}", k->id);
	if (etcd_call_async(&e->client, "/v3/lease/revoke", body,
	    etcd_known_revoked, k, &e2) != 0)
		etcd_known_revoked(k, NULL, &e2);
}

static void
etcd_known_due(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_known	*k = arg;
	struct store_etcd	*e = k->e;
	struct store_err	 err;
	struct buf		 b;
	char			*k64;
	char			 key[ETCD_PREFIX_MAX + 32];
	int			 n;

	(void)fd;
	(void)what;
	if (k->busy)
		return;
	n = snprintf(key, sizeof key, "%.*sl/%" PRIu64,
	    (int)e->prefix_len - 2, e->prefix, k->id);
	k64 = etcd_b64(key, (size_t)n);
	buf_init(&b);
	etcd_range_body(&b, k64, NULL, 0, 0, 1);
	free(k64);
	k->busy = 1;
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&b),
	    etcd_known_checked, k, &err) != 0)
		etcd_known_checked(k, NULL, &err);
	buf_free(&b);
}

/*
 * Learn the records of a range reply; *more if it was cut at its limit,
 * then *last its last key (to free).
 */
static void
etcd_expiry_records(struct store_etcd *e, const cJSON *reply, int *more,
    unsigned char **last, size_t *last_len)
{
	const cJSON	*kv, *lkv = NULL;

	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(reply,
	    "kvs")) {
		(void)etcd_expiry_kv(e, kv, 0);
		lkv = kv;
	}
	*more = lkv != NULL && cJSON_IsTrue(
	    cJSON_GetObjectItemCaseSensitive(reply, "more"));
	if (last != NULL && last_len != NULL)
		*last = *more ? etcd_unb64(lkv, "key", last_len) : NULL;
}

/* The range of every record, from its start or after key last. */
static void
etcd_records_body(struct store_etcd *e, struct buf *b,
    const unsigned char *last, size_t last_len, uint64_t rev)
{
	char	 k[ETCD_PREFIX_MAX + 4];
	char	*k64, *end64, *a;
	int	 n;

	n = snprintf(k, sizeof k, "%.*sl/", (int)e->prefix_len - 2,
	    e->prefix);
	end64 = etcd_prefix_end64(k, (size_t)n);
	if (last != NULL) {	/* just after it: last "\0" */
		a = xcalloc(1, last_len + 1);
		memcpy(a, last, last_len);
		k64 = etcd_b64(a, last_len + 1);
		free(a);
	} else
		k64 = etcd_b64(k, (size_t)n);
	etcd_range_body(b, k64, end64, rev, ETCD_EXPIRY_PAGE, 0);
	free(k64);
	free(end64);
}

/* At open: every record as of st->rev, stamped leases due ttl_ms from now. */
int
etcd_expiry_open(struct store_etcd *e, struct store_err *err)
{
	struct etcd_expiry	*x;
	struct buf		 b;
	cJSON			*reply;
	unsigned char		*last = NULL;
	size_t			 last_len = 0;
	int			 more = 1, rc;

	x = xcalloc(1, sizeof *x);
	/* Keyed: another etcd client may grant a lease of an id it chose. */
	u64map_init(&x->known, offsetof(struct etcd_known, id),
	    offsetof(struct etcd_known, hnext), store_hash_u64);
	e->expiry = x;
	while (more) {
		buf_init(&b);
		etcd_records_body(e, &b, last, last_len, e->st->head.rev);
		free(last);
		last = NULL;
		rc = etcd_call_sync(&e->client, "/v3/kv/range", buf_cstr(&b),
		    &reply, err);
		buf_free(&b);
		if (rc != 0)
			return (-1);
		etcd_expiry_records(e, reply, &more, &last, &last_len);
		cJSON_Delete(reply);
	}
	return (0);
}

/*
 * The records read again: those missed are learnt; and if they all came,
 * a lease known from before the read and without a record is gone.
 */
static void
etcd_expiry_reloaded(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct store_etcd	*e = arg;
	struct etcd_expiry	*x = e->expiry;
	struct etcd_known	*k, *next;
	const cJSON		*kv;
	uint64_t		 rev, id;
	size_t			 b = 0;
	int			 more;

	if (reply == NULL) {
		log_warnx("lease records could not be read again: %s "
		    "(leases granted meanwhile expire by etcd's TTL)",
		    err->msg);
		return;
	}
	etcd_expiry_records(e, reply, &more, NULL, NULL);
	if (more)
		return;
	rev = etcd_u64(cJSON_GetObjectItemCaseSensitive(reply, "header"),
	    "revision");
	x->gen++;
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(reply,
	    "kvs")) {
		if ((id = etcd_expiry_kv(e, kv, 0)) != 0 &&
		    (k = etcd_known_find(e, id)) != NULL)
			k->gen = x->gen;
	}
	for (k = u64map_next(&x->known, &b, NULL); k != NULL; k = next) {
		next = u64map_next(&x->known, &b, k);
		if (k->gen != x->gen && k->seen_rev <= rev)
			etcd_known_forget(e, k->id);
	}
}

void
etcd_expiry_reload(struct store_etcd *e)
{
	struct etcd_expiry	*x = e->expiry;
	struct etcd_known	*k;
	struct store_err	 err;
	struct buf		 b;
	uint64_t		 now = (uint64_t)mono_ms();
	size_t			 i = 0;

	if (x == NULL)
		return;
	for (k = u64map_next(&x->known, &i, NULL); k != NULL;
	    k = u64map_next(&x->known, &i, k)) {
		if (k->stamp && k->timer != NULL) {
			k->deadline = now + k->ttl_ms;
			etcd_known_arm(k);
		}
	}
	/* Leases granted meanwhile (one page: the rest by etcd's TTL). */
	buf_init(&b);
	etcd_records_body(e, &b, NULL, 0, 0);
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&b),
	    etcd_expiry_reloaded, e, &err) != 0)
		etcd_expiry_reloaded(e, NULL, &err);
	buf_free(&b);
}

uint64_t
etcd_known_remaining(const struct etcd_known *k)
{
	uint64_t	 now = (uint64_t)mono_ms();

	return (k->deadline > now ? k->deadline - now : 0);
}

void
etcd_expiry_close(struct store_etcd *e)
{
	struct etcd_expiry	*x = e->expiry;
	struct etcd_known	*k, *next;
	size_t			 i = 0;

	if (x == NULL)
		return;
	for (k = u64map_next(&x->known, &i, NULL); k != NULL; k = next) {
		next = u64map_next(&x->known, &i, k);
		etcd_known_free(k);
	}
	u64map_free(&x->known);
	free(x);
	e->expiry = NULL;
}
