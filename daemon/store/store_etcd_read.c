/*
 * The etcd backend's reads outside a batch: ranges answered on the daemon's
 * loop, and status (the key count, the database size, each endpoint's
 * health) from calls made side by side.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* Bytewise order; a is read as its first alen - 1 bytes plus a NUL. */
static int
etcd_bytes_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	size_t	 i, n = alen < blen ? alen : blen;
	int	 ca, cb;

	for (i = 0; i < n; i++) {
		ca = i == alen - 1 ? 0 : (unsigned char)a[i];
		cb = (unsigned char)b[i];
		if (ca != cb)
			return (ca - cb);
	}
	return (alen < blen ? -1 : alen > blen);
}

/* Where a store_range starts and ends in etcd (base64, malloc'd). */
static void
etcd_range_bounds(struct store_etcd *e, const struct store_range *r,
    char **beg64, char **end64)
{
	char	*pfx;
	size_t	 plen = e->prefix_len + r->prefix_len;

	pfx = xmalloc(plen + 1);
	memcpy(pfx, e->prefix, e->prefix_len);
	memcpy(pfx + e->prefix_len, r->prefix, r->prefix_len);
	*end64 = etcd_prefix_end64(pfx, plen);
	if (r->after != NULL && etcd_bytes_cmp(r->after, r->after_len + 1,
	    r->prefix, r->prefix_len) > 0) {
		/* Just after "after": after + "\0". */
		char *a = xcalloc(1, e->prefix_len + r->after_len + 1);

		memcpy(a, e->prefix, e->prefix_len);
		memcpy(a + e->prefix_len, r->after, r->after_len);
		*beg64 = etcd_b64(a, e->prefix_len + r->after_len + 1);
		free(a);
	} else
		*beg64 = etcd_b64(pfx, plen);
	free(pfx);
}

/* An asynchronous get or range. */
struct etcd_aread {
	struct store_etcd	*e;
	uint64_t		 limit;
	int			 keys_only;
	store_read_done		 done;
	void			*arg;
};

static void
etcd_aread_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_aread	*ar = arg;
	struct etcd_evs		 evs;
	struct store_kv		*kvs;
	size_t			 i;
	int			 more;

	if (reply == NULL) {
		ar->done(ar->arg, -1, NULL, 0, err);
		free(ar);
		return;
	}
	(void)etcd_header_rev(ar->e, reply);
	memset(&evs, 0, sizeof evs);
	etcd_reply_kvs(ar->e, reply, ar->limit, &evs, &more);
	kvs = xcalloc(evs.n + 1, sizeof *kvs);
	for (i = 0; i < evs.n; i++)
		etcd_kv_of(&evs.v[i], &kvs[i], !ar->keys_only);
	ar->done(ar->arg, (long)evs.n, kvs, more, NULL);
	free(kvs);
	etcd_evs_free(&evs);
	free(ar);
}

static void
etcd_aread(struct store_etcd *e, const char *beg64, const char *end64,
    uint64_t limit, int keys_only, store_read_done done, void *arg)
{
	struct etcd_aread	*ar;
	struct store_err	 err;
	struct buf		 b;

	ar = xcalloc(1, sizeof *ar);
	ar->e = e;
	ar->limit = limit;
	ar->keys_only = keys_only;
	ar->done = done;
	ar->arg = arg;
	buf_init(&b);
	etcd_range_body(&b, beg64, end64, 0, end64 != NULL ? limit + 1 : 0,
	    keys_only);
	if (etcd_http_call_async(&e->http, "/v3/kv/range", buf_cstr(&b),
	    etcd_aread_cb, ar, &err) != 0)
		etcd_aread_cb(ar, NULL, &err);
	buf_free(&b);
}

void
store_etcd_read_get(struct store *st, const char *key, size_t len,
    store_read_done done, void *arg)
{
	char	*k64;

	k64 = etcd_key64(E(st), key, len);
	etcd_aread(E(st), k64, NULL, 1, 0, done, arg);
	free(k64);
}

void
store_etcd_read_range(struct store *st, const struct store_range *r,
    store_read_done done, void *arg)
{
	char	*beg64, *end64;

	etcd_range_bounds(E(st), r, &beg64, &end64);
	etcd_aread(E(st), beg64, end64, r->limit, r->keys_only ? 1 : 0, done,
	    arg);
	free(beg64);
	free(end64);
}

/*
 * status: the key count and the database size, and a status call to each
 * endpoint for its health, all out at once; answered when the last is in.
 */
struct etcd_astats {
	struct store_etcd	*e;
	struct store_stats	 ss;
	unsigned		 out;
	struct store_err	 err;
	int			 failed;
	store_stats_done	 done;
	void			*arg;
};

static void
etcd_astats_end(struct etcd_astats *as)
{
	if (--as->out > 0)
		return;
	as->done(as->arg, as->failed ? NULL : &as->ss,
	    as->failed ? &as->err : NULL);
	free(as);
}

static void
etcd_astats_fail(struct etcd_astats *as, const struct store_err *err)
{
	if (!as->failed)
		as->err = *err;
	as->failed = 1;
}

static void
etcd_astats_count(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_astats	*as = arg;

	if (reply == NULL)
		etcd_astats_fail(as, err);
	else
		as->ss.keys = etcd_u64(reply, "count");
	etcd_astats_end(as);
}

/* An endpoint's status: its health, and the first to answer, the size. */
struct etcd_aprobe {
	struct etcd_astats	*as;
	unsigned		 ep;
};

static void
etcd_astats_probe(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_aprobe	*p = arg;
	struct etcd_astats	*as = p->as;

	as->ss.endpoint[p->ep].healthy = reply != NULL;
	if (reply != NULL && as->ss.db_bytes == 0)
		as->ss.db_bytes = etcd_u64(reply, "dbSize");
	free(p);
	etcd_astats_end(as);
}

void
store_etcd_read_stats(struct store *st, store_stats_done done, void *arg)
{
	struct store_etcd	*e = E(st);
	struct etcd_astats	*as;
	struct etcd_aprobe	*p;
	struct store_err	 err;
	struct buf		 b;
	unsigned		 i;

	as = xcalloc(1, sizeof *as);
	as->e = e;
	as->done = done;
	as->arg = arg;
	as->out = 1 + e->http.nep + 1;	/* + 1: until all are sent */
	as->ss.nendpoints = e->http.nep;
	for (i = 0; i < e->http.nep; i++) {
		snprintf(as->ss.endpoint[i].url,
		    sizeof as->ss.endpoint[i].url, "%s", e->http.ep[i].url);
		p = xcalloc(1, sizeof *p);
		p->as = as;
		p->ep = i;
		if (etcd_http_call_at(&e->http, i, "/v3/maintenance/status",
		    "{}", etcd_astats_probe, p, &err) != 0)
			etcd_astats_probe(p, NULL, &err);
	}
	buf_init(&b);
	etcd_range_body(&b, e->kbeg64, e->kend64, 0, 0, 2);
	if (etcd_http_call_async(&e->http, "/v3/kv/range", buf_cstr(&b),
	    etcd_astats_count, as, &err) != 0)
		etcd_astats_count(as, NULL, &err);
	buf_free(&b);
	etcd_astats_end(as);
}
