/*
 * The etcd backend's lease listings: the leases of the prefix (lease_list)
 * and a lease's keys (lease_info).  The leases are those with a record,
 * PREFIX "l/" ID (store_etcd_lease.c): one range reads them all, with the
 * ttl_ms each was granted for; etcd's timetolive of each says it still
 * lives and its time left, ETCD_LS_WINDOW calls out at once.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "store/etcd/store_etcd.h"
#include "store/etcd/store_etcd_lease.h"

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
struct store_kv *
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

void
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

/* read_leases: the records, then each one's timetolive. */
struct etcd_lsub {
	struct etcd_lcall	*c;
	size_t			 i;
};

static void	etcd_leases_fill(struct etcd_lcall *);

static void
etcd_leases_ttl_cb(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct etcd_lsub		*sub = arg;
	struct etcd_lcall		*c = sub->c;
	struct store_lease_state	 ls;
	struct store_lease		*l = &c->v[sub->i];

	c->out--;
	if (reply == NULL) {
		if (!c->failed)
			c->lerr = *err;
		c->failed = 1;
	} else {
		etcd_lease_state(c->ids[sub->i], reply, "TTL", &ls);
		etcd_state_known(E(c->st), &ls);
		if (ls.found) {		/* else it expired meanwhile */
			l->id = ls.id;
			l->ttl_ms = ls.ttl_ms;
			l->session = ls.session;
			l->remaining_ms = ls.remaining_ms;
		}
	}
	etcd_leases_fill(c);
}

/* Keep ETCD_LS_WINDOW timetolives out; answer once all are in. */
static void
etcd_leases_fill(struct etcd_lcall *c)
{
	struct store_etcd	*e = E(c->st);
	struct etcd_lsub	*subs = c->subs;
	struct store_err	 err;
	char			 body[64];
	size_t			 i, n = 0;

	while (!c->failed && c->out < ETCD_LS_WINDOW && c->next < c->nids) {
		i = c->next++;
		subs[i].c = c;
		subs[i].i = i;
		snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\"}",
		    c->ids[i]);
		if (etcd_call_async(&e->client, "/v3/lease/timetolive",
		    body, etcd_leases_ttl_cb, &subs[i], &err) != 0) {
			c->lerr = err;
			c->failed = 1;
		} else
			c->out++;
	}
	if (c->out > 0)
		return;
	if (c->failed)
		c->ldone(c->arg, -1, NULL, &c->lerr);
	else {
		for (i = 0; i < c->nids; i++) {
			if (c->v[i].id != 0)
				c->v[n++] = c->v[i];
		}
		c->ldone(c->arg, (long)n, c->v, NULL);
	}
	etcd_lcall_free(c);
}

static int
etcd_u64_cmp(const void *a, const void *b)
{
	uint64_t	 x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x < y ? -1 : x > y);
}

/* The records (learnt: their ttl_ms), PREFIX "l/" ID each. */
static void
etcd_leases_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	const cJSON		*kvs, *kv;
	uint64_t		 id;
	size_t			 n;

	if (reply == NULL) {
		c->ldone(c->arg, -1, NULL, err);
		etcd_lcall_free(c);
		return;
	}
	kvs = cJSON_GetObjectItemCaseSensitive(reply, "kvs");
	n = (size_t)cJSON_GetArraySize(kvs) + 1;
	c->ids = xcalloc(n, sizeof *c->ids);
	c->v = xcalloc(n, sizeof *c->v);
	c->subs = xcalloc(n, sizeof (struct etcd_lsub));
	cJSON_ArrayForEach(kv, kvs) {
		if ((id = etcd_expiry_kv(E(c->st), kv, 0)) != 0)
			c->ids[c->nids++] = id;
	}
	qsort(c->ids, c->nids, sizeof *c->ids, etcd_u64_cmp);
	etcd_leases_fill(c);
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
	etcd_range_body(&b, k64, end64, 0, 0, 0);
	free(k64);
	free(end64);
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&b),
	    etcd_leases_cb, c, &err) != 0)
		etcd_leases_cb(c, NULL, &err);
	buf_free(&b);
}
