/*
 * The memory backend's reads at a revision and one key's history, from the
 * event array: the state of a key at R is its last event at or before R.
 * Compaction (store_mem_hist_trim(), at commit) keeps each key's last put
 * below compact_rev, so that it is exact at every kept R: in a hash table
 * by key (store_mem.h), where each compacted event replaces its key's, so
 * that a trim costs O(1) per event it drops.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_local.h"
#include "store/mem/store_mem.h"
#include "util.h"
#include "store/store_hash.h"
#include "store/store_range.h"

/* Events by key, then (rev, seq): the history's order. */
static int
store_mem_ev_cmp(const void *a, const void *b)
{
	const struct store_mem_event	*x = *(const struct store_mem_event **)a;
	const struct store_mem_event	*y = *(const struct store_mem_event **)b;
	int				 c;

	c = sl_cmp(x->key, x->key_len, y->key, y->key_len);
	if (c != 0)
		return (c);
	if (x->rev != y->rev)
		return (x->rev < y->rev ? -1 : 1);
	if (x->seq != y->seq)
		return (x->seq < y->seq ? -1 : 1);
	return (x < y ? -1 : x > y);
}

/*
 * Of the events in v[0, n) sorted by store_mem_ev_cmp, each key's last
 * one: the first of the next key's, or n.  Returns the index after the
 * group starting at i.
 */
static size_t
store_mem_group_end(struct store_mem_event **v, size_t n, size_t i)
{
	size_t	 j = i + 1;

	while (j < n && sl_cmp(v[i]->key, v[i]->key_len, v[j]->key,
	    v[j]->key_len) == 0)
		j++;
	return (j);
}

/* Keyed (store_hash.h): a client chooses the keys. */
static uint64_t
store_mem_hash(const char *key, size_t len)
{
	return (store_hash_bytes(key, len));
}

/* The slot of key in kept: its entry, or the empty slot ending its run. */
static size_t
store_mem_kept_slot(const struct store_mem *m, const char *key, size_t len,
    uint64_t h)
{
	size_t			 mask = m->kept_cap - 1, i = (size_t)h & mask;
	const struct store_mem_kept *k;

	for (; (k = &m->kept[i])->ev.key != NULL; i = (i + 1) & mask) {
		if (k->hash == h && k->ev.key_len == len &&
		    memcmp(k->ev.key, key, len) == 0)
			break;
	}
	return (i);
}

static struct store_mem_event *
store_mem_kept_find(struct store_mem *m, const char *key, size_t len)
{
	size_t	 i;

	if (m->nkept == 0)
		return (NULL);
	i = store_mem_kept_slot(m, key, len, store_mem_hash(key, len));
	return (m->kept[i].ev.key != NULL ? &m->kept[i].ev : NULL);
}

static void
store_mem_kept_grow(struct store_mem *m)
{
	struct store_mem_kept	*old = m->kept, *k;
	size_t			 i, oldcap = m->kept_cap;

	m->kept_cap = oldcap != 0 ? oldcap * 2 : 1024;
	m->kept = xcalloc(m->kept_cap, sizeof *m->kept);
	for (i = 0; i < oldcap; i++) {
		k = &old[i];
		if (k->ev.key != NULL)
			m->kept[store_mem_kept_slot(m, k->ev.key,
			    k->ev.key_len, k->hash)] = *k;
	}
	free(old);
}

/* Empties slot i, moving back the entries of its run that probed past it. */
static void
store_mem_kept_remove(struct store_mem *m, size_t i)
{
	size_t	 mask = m->kept_cap - 1, j = i, home;

	for (;;) {
		j = (j + 1) & mask;
		if (m->kept[j].ev.key == NULL)
			break;
		home = (size_t)m->kept[j].hash & mask;
		/* j stays if its home is cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		m->kept[i] = m->kept[j];
		i = j;
	}
	memset(&m->kept[i], 0, sizeof m->kept[i]);
	m->nkept--;
}

static void
store_mem_ev_drop(struct store_mem *m, struct store_mem_event *ev)
{
	m->bytes -= ev->key_len + ev->value_len;
	free(ev->key);
	ev->key = NULL;
}

/*
 * ev, the oldest event not trimmed, is compacted: it replaces its key's
 * kept event (freed), and is kept itself if it is a put (moved out of the
 * history), else freed.
 */
static void
store_mem_kept_add(struct store_mem *m, struct store_mem_event *ev)
{
	struct store_mem_kept	*k;
	uint64_t		 h;
	size_t			 i;
	int			 found;

	if ((m->nkept + 1) * 4 > m->kept_cap * 3)
		store_mem_kept_grow(m);
	h = store_mem_hash(ev->key, ev->key_len);
	i = store_mem_kept_slot(m, ev->key, ev->key_len, h);
	k = &m->kept[i];
	found = k->ev.key != NULL;
	if (found)
		store_mem_ev_drop(m, &k->ev);
	if (ev->type == STORE_EVENT_PUT) {
		if (!found)
			m->nkept++;
		k->hash = h;
		k->ev = *ev;
		ev->key = NULL;
	} else {
		store_mem_ev_drop(m, ev);
		if (found)
			store_mem_kept_remove(m, i);
	}
}

/*
 * The events compaction dropped, [hist_first, hist_head), go into kept in
 * rev order; the array drops its trimmed front once it is the larger part
 * (a copy of fewer events than were trimmed since the last one).
 */
void
store_mem_hist_trim(struct store_mem *m)
{
	size_t	 i, live;

	for (i = m->hist_first; i < m->hist_head; i++)
		store_mem_kept_add(m, &m->hist[i]);
	m->hist_first = m->hist_head;
	live = m->hist_len - m->hist_first;
	if (m->hist_first > 0 && m->hist_first >= live) {
		memmove(m->hist, m->hist + m->hist_first, live *
		    sizeof *m->hist);
		m->hist_head -= m->hist_first;
		m->hist_len = live;
		m->hist_first = 0;
	}
}

void
store_mem_hist_free(struct store_mem *m)
{
	size_t	 i;

	for (i = m->hist_first; i < m->hist_len; i++)
		free(m->hist[i].key);
	for (i = 0; i < m->kept_cap; i++)
		free(m->kept[i].ev.key);
	free(m->hist);
	free(m->kept);
}

/* The first event with rev > rev (from), or hist_len. */
static size_t
store_mem_after(struct store_mem *m, size_t lo, uint64_t rev)
{
	size_t	 hi = m->hist_len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->hist[mid].rev <= rev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

static void
store_mem_ev_kv(const struct store_mem_event *ev, int keys_only,
    struct store_kv *kv)
{
	memset(kv, 0, sizeof *kv);
	kv->key = ev->key;
	kv->key_len = ev->key_len;
	if (!keys_only && ev->type == STORE_EVENT_PUT) {
		kv->value = ev->value;
		kv->value_len = ev->value_len;
	}
	kv->version = ev->version;
	kv->create_rev = ev->create_rev;
	kv->mod_rev = ev->rev;
	kv->lease = ev->lease;
}

int
store_mem_get_at(struct store *s, const char *key, size_t key_len,
    uint64_t rev, store_kv_cb cb, void *arg, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_event	*ev = NULL;
	struct store_kv		 kv;
	size_t			 i;

	for (i = store_mem_after(m, m->hist_first, rev); i > m->hist_first;
	    i--) {
		ev = &m->hist[i - 1];
		if (sl_cmp(ev->key, ev->key_len, key, key_len) == 0)
			break;
	}
	if (i == m->hist_first)
		ev = store_mem_kept_find(m, key, key_len);
	if (ev == NULL || ev->type != STORE_EVENT_PUT || ev->rev > rev)
		return (0);
	store_mem_ev_kv(ev, 0, &kv);
	cb(&kv, arg);
	return (1);
}

static int
store_mem_in_range(const struct store_mem_event *ev,
    const struct store_span *sp)
{
	return (store_span_has(sp, ev->key, ev->key_len));
}

long
store_mem_range_at(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_mem	 *m = s->impl;
	struct store_mem_event	**v, *ev;
	struct store_span	  sp;
	struct store_kv		  kv;
	size_t			  end, n = 0, i, j, ng = 0, *last;
	uint64_t		  count = 0;
	int			  stop = 0;

	store_range_span(r, &sp);
	end = store_mem_after(m, m->hist_first, r->rev);
	v = xcalloc(end - m->hist_first + m->nkept + 1, sizeof *v);
	for (i = 0; i < m->kept_cap; i++) {
		ev = &m->kept[i].ev;
		if (ev->key != NULL && ev->rev <= r->rev &&
		    store_mem_in_range(ev, &sp))
			v[n++] = ev;
	}
	for (i = m->hist_first; i < end; i++) {
		if (store_mem_in_range(&m->hist[i], &sp))
			v[n++] = &m->hist[i];
	}
	store_span_free(&sp);
	qsort(v, n, sizeof *v, store_mem_ev_cmp);
	/* Each key's last event, in key order (or its reverse). */
	last = xcalloc(n + 1, sizeof *last);
	for (i = 0; i < n; i = j) {
		j = store_mem_group_end(v, n, i);
		last[ng++] = j - 1;
	}
	for (i = 0; i < ng; i++) {
		ev = v[last[r->reverse ? ng - 1 - i : i]];
		if (ev->type != STORE_EVENT_PUT)
			continue;
		if (count == r->limit || stop) {
			*more = 1;
			break;
		}
		store_mem_ev_kv(ev, r->keys_only, &kv);
		count++;
		stop = cb(&kv, arg) != 0;
	}
	free(last);
	free(v);
	return ((long)count);
}

int
store_mem_key_history(struct store *s, const char *key, size_t key_len,
    uint64_t from_rev, store_event_cb cb, void *arg, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_event	*ev;
	struct store_event	 e;
	size_t			 i;

	i = from_rev > 0 ? store_mem_after(m, m->hist_head, from_rev - 1) :
	    m->hist_head;
	for (; i < m->hist_len; i++) {
		ev = &m->hist[i];
		if (sl_cmp(ev->key, ev->key_len, key, key_len) != 0)
			continue;
		memset(&e, 0, sizeof e);
		e.rev = ev->rev;
		e.seq = ev->seq;
		e.type = ev->type;
		store_mem_ev_kv(ev, 0, &e.kv);
		if (cb(&e, arg) != 0)
			break;
	}
	return (0);
}
