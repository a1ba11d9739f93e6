/*
 * The etcd backend's reads outside a batch: from the view of the prefix
 * when it is on (store_etcd_view.c), else ranges answered on the daemon's
 * loop (and always at a past rev), and status (the key count, the database size, each endpoint's
 * health) from calls made side by side.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/etcd/store_etcd.h"
#include "store/store_range.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* Where a store_range starts and ends in etcd (base64, malloc'd). */
static void
etcd_range_bounds(struct store_etcd *e, const struct store_range *r,
    char **beg64, char **end64)
{
	struct store_span	 sp;
	char			*k;

	store_range_span(r, &sp);
	k = xmalloc(e->prefix_len + sp.lo_len + 1);
	memcpy(k, e->prefix, e->prefix_len);
	memcpy(k + e->prefix_len, sp.lo, sp.lo_len);
	*beg64 = etcd_b64(k, e->prefix_len + sp.lo_len);
	free(k);
	if (sp.hi != NULL) {
		k = xmalloc(e->prefix_len + sp.hi_len + 1);
		memcpy(k, e->prefix, e->prefix_len);
		memcpy(k + e->prefix_len, sp.hi, sp.hi_len);
		*end64 = etcd_b64(k, e->prefix_len + sp.hi_len);
		free(k);
	} else
		*end64 = etcd_prefix_end64(e->prefix, e->prefix_len);
	store_span_free(&sp);
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
	struct store_err	 fut;
	struct etcd_evs		 evs;
	struct store_kv		*kvs;
	size_t			 i;
	int			 more;

	if (reply == NULL) {
		if (strstr(err->msg, "future revision") != NULL) {
			store_err_set(&fut, STORE_ERR_FUTURE, "rev is above "
			    "the current rev (%s)", err->msg);
			err = &fut;
		}
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
    uint64_t rev, uint64_t limit, int keys_only, int reverse,
    store_read_done done, void *arg)
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
	etcd_range_body(&b, beg64, end64, rev, end64 != NULL ? limit + 1 : 0,
	    keys_only);
	if (reverse) {	/* descending by key: in place of the closing brace */
		b.len--;
		buf_addstr(&b, ",\"sort_order\":\"DESCEND\","
		    "\"sort_target\":\"KEY\"}");
	}
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&b),
	    etcd_aread_cb, ar, &err) != 0)
		etcd_aread_cb(ar, NULL, &err);
	buf_free(&b);
}

/* A get or a range that etcd answers (not the view). */
void
etcd_read_get_direct(struct store_etcd *e, const char *key, size_t len,
    uint64_t rev, store_read_done done, void *arg)
{
	char	*k64;

	k64 = etcd_key64(e, key, len);
	etcd_aread(e, k64, NULL, rev, 1, 0, 0, done, arg);
	free(k64);
}

void
etcd_read_range_direct(struct store_etcd *e, const struct store_range *r,
    store_read_done done, void *arg)
{
	char	*beg64, *end64;

	etcd_range_bounds(e, r, &beg64, &end64);
	etcd_aread(e, beg64, end64, r->rev, r->limit, r->keys_only ? 1 : 0,
	    r->reverse, done, arg);
	free(beg64);
	free(end64);
}

void
store_etcd_read_get(struct store *st, const char *key, size_t len,
    uint64_t rev, int serializable, store_read_done done, void *arg)
{
	if (rev == 0 && etcd_view_on(E(st))) {
		if (serializable)
			etcd_view_get(E(st), key, len, done, arg);
		else
			etcd_lin_get(E(st), key, len, done, arg);
		return;
	}
	etcd_read_get_direct(E(st), key, len, rev, done, arg);
}

void
store_etcd_read_range(struct store *st, const struct store_range *r,
    store_read_done done, void *arg)
{
	if (r->rev == 0 && etcd_view_on(E(st))) {
		if (r->serializable)
			etcd_view_range(E(st), r, done, arg);
		else
			etcd_lin_range(E(st), r, done, arg);
		return;
	}
	etcd_read_range_direct(E(st), r, done, arg);
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
	as->out = 1 + e->client.nep + 1;	/* + 1: until all are sent */
	as->ss.nendpoints = e->client.nep;
	etcd_view_stats(e, &as->ss);
	for (i = 0; i < e->client.nep; i++) {
		snprintf(as->ss.endpoint[i].url,
		    sizeof as->ss.endpoint[i].url, "%s", e->client.ep[i].url);
		p = xcalloc(1, sizeof *p);
		p->as = as;
		p->ep = i;
		if (etcd_call_at(&e->client, i, "/v3/maintenance/status",
		    "{}", etcd_astats_probe, p, &err) != 0)
			etcd_astats_probe(p, NULL, &err);
	}
	buf_init(&b);
	etcd_range_body(&b, e->kbeg64, e->kend64, 0, 0, 2);
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&b),
	    etcd_astats_count, as, &err) != 0)
		etcd_astats_count(as, NULL, &err);
	buf_free(&b);
	etcd_astats_end(as);
}

/*
 * One key's history: the prefix's history (store_etcd_read_history(), from
 * the cache or replayed from etcd) read a chunk at a time and filtered,
 * until limit events (whole revisions) or the end.
 */
struct etcd_khist {
	struct store		*st;
	char			*key;
	size_t			 key_len;
	size_t			 limit;
	uint64_t		 next;		/* the next chunk's from */
	struct store_evbuf	 b;
	int			 more;		/* of the key's events */
	int			 inside;	/* in the history call */
	int			 got;		/* its answer came */
	int			 end;
	struct store_err	 err;
	int			 failed;
	store_history_done	 done;
	void			*arg;
};

static void	etcd_khist_step(struct etcd_khist *);

static void
etcd_khist_end(struct etcd_khist *kh)
{
	if (kh->failed)
		kh->done(kh->arg, -1, NULL, 0, &kh->err);
	else
		kh->done(kh->arg, (long)kh->b.n, kh->b.v, kh->more, NULL);
	store_evbuf_free(&kh->b);
	free(kh->key);
	free(kh);
}

static void
etcd_khist_cb(void *arg, long n, const struct store_event *evs, int more,
    const struct store_err *err)
{
	struct etcd_khist	*kh = arg;
	const struct store_event *ev;
	long			 i;

	kh->got = 1;
	if (n < 0) {
		kh->err = *err;
		kh->failed = kh->end = 1;
	}
	for (i = 0; i < n && !kh->end; i++) {
		ev = &evs[i];
		kh->next = ev->rev + 1;
		if (ev->kv.key_len != kh->key_len ||
		    memcmp(ev->kv.key, kh->key, kh->key_len) != 0)
			continue;
		if (kh->b.n >= kh->limit && ev->rev != kh->b.v[kh->b.n - 1].rev) {
			kh->more = kh->end = 1;
			break;
		}
		store_evbuf_add(&kh->b, ev);
	}
	if (n >= 0 && (!more || n == 0))
		kh->end = 1;
	if (!kh->inside) {
		if (kh->end)
			etcd_khist_end(kh);
		else
			etcd_khist_step(kh);
	}
}

/* Chunks answered at once are read in this loop, the others from the cb. */
static void
etcd_khist_step(struct etcd_khist *kh)
{
	for (;;) {
		kh->got = 0;
		kh->inside = 1;
		store_etcd_read_history(kh->st, kh->next, ETCD_HISTORY_CHUNK,
		    etcd_khist_cb, kh);
		kh->inside = 0;
		if (!kh->got)
			return;
		if (kh->end) {
			etcd_khist_end(kh);
			return;
		}
	}
}

void
store_etcd_read_key_history(struct store *st, const char *key, size_t len,
    uint64_t from, size_t limit, store_history_done done, void *arg)
{
	struct etcd_khist	*kh;

	kh = xcalloc(1, sizeof *kh);
	kh->st = st;
	kh->key = xmemdup(key, len);
	kh->key_len = len;
	kh->limit = limit;
	kh->next = from;
	kh->done = done;
	kh->arg = arg;
	etcd_khist_step(kh);
}
