/*
 * The etcd backend's view: the user keys of its prefix in memory, filled
 * once when the store opens (ranges at the revision the event stream
 * starts after) and kept current by that stream (etcd_view_apply()), so
 * that reads need no round trip to etcd:
 *
 * - a serializable read is answered from the view at once;
 * - a linearizable read waits for one probe of etcd, then for the view to
 *   reach the revision it learnt (store_etcd_lin.c).
 * A write to the prefix made outside metad (etcdctl) shows once its event
 * arrives.
 *
 * The view holds at most --view-max-bytes (keys, values and per-key
 * overhead); past that, or when events were compacted before the stream
 * read them, it is dropped and reads go to etcd as ranges again; status
 * says which.  Keys are kept in the skip list of skiplist.h, as the memory
 * backend's (for ranges, and to link and unlink keys), and in a hash
 * index of the same nodes (gets, and the puts of keys already there).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd.h"
#include "store/etcd/store_etcd_view.h"
#include "store/store_hash.h"
#include "store/store_range.h"

#define VIEW_FILL_PAGE		10000
#define VIEW_NODE_BYTES(n)	(sizeof *(n) + (size_t)(n)->level * \
				    sizeof (n)->next[0] + (n)->key_len + \
				    (n)->value_len)

SL_GENERATE(view_keys, view_node)

static void
view_node_free(struct view_node *n)
{
	free(n->value);
	free(n);
}

static void
view_clear(struct etcd_view *v)
{
	view_keys_clear(&v->keys, view_node_free);
	free(v->hb);
	v->hb = NULL;
	v->hmask = 0;
	v->bytes = 0;
	v->nkeys = 0;
}

/* Keyed (store_hash.h): any writer of the prefix chooses the keys. */
static uint32_t
view_hash(const char *k, size_t n)
{
	return ((uint32_t)store_hash_bytes(k, n));
}

static struct view_node *
view_hfind(const struct etcd_view *v, const char *key, size_t len,
    uint32_t h)
{
	struct view_node	*n;

	if (v->hb == NULL)
		return (NULL);
	for (n = v->hb[h & v->hmask]; n != NULL; n = n->hnext) {
		if (n->hash == h && n->key_len == len &&
		    memcmp(n->key, key, len) == 0)
			return (n);
	}
	return (NULL);
}

/*
 * n into the index (nkeys counts it); past one node per bucket on
 * average, twice the buckets.
 */
static void
view_hadd(struct etcd_view *v, struct view_node *n)
{
	struct view_node	**hb, *m, *next;
	size_t			  i, size;

	if (v->hb == NULL || v->nkeys > v->hmask + 1) {
		size = v->hb == NULL ? 64 : (v->hmask + 1) * 2;
		hb = xcalloc(size, sizeof *hb);
		for (i = 0; v->hb != NULL && i <= v->hmask; i++) {
			for (m = v->hb[i]; m != NULL; m = next) {
				next = m->hnext;
				m->hnext = hb[m->hash & (size - 1)];
				hb[m->hash & (size - 1)] = m;
			}
		}
		/* The buckets count in the view's bytes too. */
		v->bytes += (size - (v->hb != NULL ? v->hmask + 1 : 0)) *
		    sizeof *hb;
		free(v->hb);
		v->hb = hb;
		v->hmask = size - 1;
	}
	n->hnext = v->hb[n->hash & v->hmask];
	v->hb[n->hash & v->hmask] = n;
}

static void
view_hdel(struct etcd_view *v, struct view_node *n)
{
	struct view_node	**pp;

	for (pp = &v->hb[n->hash & v->hmask]; *pp != NULL;
	    pp = &(*pp)->hnext) {
		if (*pp == n) {
			*pp = n->hnext;
			return;
		}
	}
}

static void
view_off(struct etcd_view *v, const char *why)
{
	if (!v->on)
		return;
	log_warnx("etcd view off: %s; reads go to etcd", why);
	snprintf(v->why_off, sizeof v->why_off, "%s", why);
	v->on = 0;
	view_clear(v);
}

/* A put (or a delete) of the view's key. */
static void
view_set(struct etcd_view *v, const struct etcd_ev *ev)
{
	struct view_node	*update[SL_LEVEL_MAX], *n;
	uint32_t		 h = view_hash(ev->key, ev->key_len);

	/* The list's seek only to link or unlink a node. */
	n = view_hfind(v, ev->key, ev->key_len, h);
	if (ev->deleted) {
		if (n == NULL)
			return;
		(void)view_keys_find(&v->keys, ev->key, ev->key_len, update);
		view_keys_remove(n, update);
		view_hdel(v, n);
		v->bytes -= VIEW_NODE_BYTES(n);
		v->nkeys--;
		view_node_free(n);
		return;
	}
	if (n == NULL) {
		(void)view_keys_find(&v->keys, ev->key, ev->key_len, update);
		n = view_keys_node_new(&v->keys, ev->key, ev->key_len);
		view_keys_insert(&v->keys, n, update);
		n->hash = h;
		v->nkeys++;
		view_hadd(v, n);
	} else if (n->value_len == ev->value_len && ev->value_len > 0) {
		/* A value of the same size: written over in place. */
		v->bytes -= VIEW_NODE_BYTES(n);
		memcpy(n->value, ev->value, ev->value_len);
	} else {
		v->bytes -= VIEW_NODE_BYTES(n);
		free(n->value);
		n->value = NULL;
	}
	if (n->value == NULL)
		n->value = xmemdup(ev->value != NULL ?
		    (const void *)ev->value : "", ev->value_len);
	n->value_len = ev->value_len;
	n->version = ev->version;
	n->create_rev = ev->create_rev;
	n->mod_rev = ev->mod_rev;
	n->lease = ev->lease;
	v->bytes += VIEW_NODE_BYTES(n);
	if (v->bytes > v->max_bytes) {
		char	 why[64];

		snprintf(why, sizeof why, "over --view-max-bytes (%zu)",
		    v->max_bytes);
		view_off(v, why);
	}
}

static void
view_kv(const struct view_node *n, int keys_only, struct store_kv *kv)
{
	memset(kv, 0, sizeof *kv);
	kv->key = n->key;
	kv->key_len = n->key_len;
	if (!keys_only) {
		kv->value = n->value;
		kv->value_len = n->value_len;
	}
	kv->version = n->version;
	kv->create_rev = n->create_rev;
	kv->mod_rev = n->mod_rev;
	kv->lease = n->lease;
}

static void
view_get(struct etcd_view *v, const char *key, size_t len,
    store_read_done done, void *arg)
{
	struct view_node	*n;
	struct store_kv		 kv;

	if ((n = view_hfind(v, key, len, view_hash(key, len))) == NULL) {
		done(arg, 0, NULL, 0, NULL);
		return;
	}
	view_kv(n, 0, &kv);
	done(arg, 1, &kv, 0, NULL);
}

static void
view_range(struct etcd_view *v, const struct store_range *r,
    store_read_done done, void *arg)
{
	struct view_node	*n;
	struct store_span	 sp;
	struct store_kv		*kvs;
	uint64_t		 count = 0;
	int			 more = 0;

	store_range_span(r, &sp);
	n = r->reverse ? view_keys_before(&v->keys, sp.hi, sp.hi_len) :
	    view_keys_seek(&v->keys, sp.lo, sp.lo_len, 0, NULL);
	kvs = xcalloc(r->limit < 1024 ? r->limit : 1024, sizeof *kvs);
	while (n != NULL && store_span_has(&sp, n->key, n->key_len)) {
		if (count == r->limit) {
			more = 1;
			break;
		}
		if (count >= 1024 && (count & (count - 1)) == 0)
			kvs = xrealloc(kvs, count * 2 * sizeof *kvs);
		view_kv(n, r->keys_only, &kvs[count++]);
		n = r->reverse ? view_keys_before(&v->keys, n->key,
		    n->key_len) : n->next[0];
	}
	store_span_free(&sp);
	done(arg, (long)count, kvs, more, NULL);
	free(kvs);
}

/* 1 if the view answers reads at once (a serializable one, say). */
int
etcd_view_on(struct store_etcd *e)
{
	return (e->view != NULL && e->view->on);
}

void
etcd_view_get(struct store_etcd *e, const char *key, size_t len,
    store_read_done done, void *arg)
{
	view_get(e->view, key, len, done, arg);
}

void
etcd_view_range(struct store_etcd *e, const struct store_range *r,
    store_read_done done, void *arg)
{
	view_range(e->view, r, done, arg);
}

/* Events the stream read (revs above the view's): apply them. */
void
etcd_view_apply(struct store_etcd *e, const struct etcd_ev *ev)
{
	struct etcd_view	*v = e->view;

	if (v == NULL || !v->on || ev->rev <= v->rev)
		return;
	view_set(v, ev);
}

/* The stream moved st->rev (or lost events: then the view is wrong). */
void
etcd_view_moved(struct store_etcd *e, int lost)
{
	struct etcd_view	*v = e->view;

	if (v == NULL)
		return;
	if (lost)
		view_off(v, "events were compacted before the stream read "
		    "them");
	v->rev = e->st->head.rev;
	etcd_lin_progress(v);
}

/* Fill the view with the prefix at st->rev (blocking: at open). */
static int
view_fill(struct etcd_view *v, struct store_err *err)
{
	struct store_etcd	*e = v->e;
	struct etcd_evs		 evs;
	const cJSON		*more;
	cJSON			*reply;
	char			*beg64 = xstrdup(e->kbeg64), *k;
	size_t			 i;
	int			 rc = 0, m;

	for (;;) {
		if (etcd_range(e, beg64, e->kend64, e->st->head.rev,
		    VIEW_FILL_PAGE, 0, &reply, err) != 0) {
			rc = -1;
			break;
		}
		memset(&evs, 0, sizeof evs);
		etcd_reply_kvs(e, reply, VIEW_FILL_PAGE, &evs, &m);
		for (i = 0; i < evs.n && v->on; i++)
			view_set(v, &evs.v[i]);
		more = cJSON_GetObjectItemCaseSensitive(reply, "more");
		free(beg64);
		beg64 = NULL;
		if (v->on && cJSON_IsTrue(more) && evs.n > 0) {
			k = xcalloc(1, e->prefix_len + evs.v[evs.n - 1].key_len +
			    1);
			memcpy(k, e->prefix, e->prefix_len);
			memcpy(k + e->prefix_len, evs.v[evs.n - 1].key,
			    evs.v[evs.n - 1].key_len);
			beg64 = etcd_b64(k, e->prefix_len +
			    evs.v[evs.n - 1].key_len + 1);
			free(k);
		}
		etcd_evs_free(&evs);
		cJSON_Delete(reply);
		if (beg64 == NULL)
			break;
	}
	free(beg64);
	v->rev = e->st->head.rev;
	return (rc);
}

int
etcd_view_open(struct store_etcd *e, struct store_err *err)
{
	struct etcd_view	*v;

	v = xcalloc(1, sizeof *v);
	v->e = e;
	view_keys_init(&v->keys);
	v->max_bytes = e->opts.view_max_bytes;
	TAILQ_INIT(&v->queued);
	TAILQ_INIT(&v->probes);
	e->view = v;
	if (v->max_bytes == 0) {
		snprintf(v->why_off, sizeof v->why_off, "--view-max-bytes 0");
		return (0);
	}
	if ((v->kick = event_new(e->opts.base, -1, 0, etcd_lin_kick, v)) == NULL)
		fatalx("event_new");
	v->on = 1;
	return (view_fill(v, err));
}

void
etcd_view_close(struct store_etcd *e)
{
	struct etcd_view	*v = e->view;

	if (v == NULL)
		return;
	etcd_lin_close(v);
	if (v->kick != NULL)
		event_free(v->kick);
	view_keys_free(&v->keys, view_node_free);
	free(v->hb);
	free(v);
	e->view = NULL;
}

void
etcd_view_stats(struct store_etcd *e, struct store_stats *ss)
{
	struct etcd_view	*v = e->view;

	if (v == NULL)
		return;
	if (v->on)
		snprintf(ss->view, sizeof ss->view, "on: %" PRIu64 " keys, "
		    "%zu of %zu bytes", v->nkeys, v->bytes, v->max_bytes);
	else
		snprintf(ss->view, sizeof ss->view, "off: %s", v->why_off);
}
