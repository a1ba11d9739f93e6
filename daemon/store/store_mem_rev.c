/*
 * The memory backend's reads at a revision and one key's history, from the
 * event array: the state of a key at R is its last event at or before R.
 * Compaction (store_mem_hist_trim(), at commit) keeps each key's last put
 * below compact_rev, so that it is exact at every kept R.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store_local.h"
#include "store_mem.h"
#include "util.h"

/* Events by key, then by position (the history's order). */
static int
store_mem_ev_cmp(const void *a, const void *b)
{
	const struct store_mem_event	*x = *(const struct store_mem_event **)a;
	const struct store_mem_event	*y = *(const struct store_mem_event **)b;
	int				 c;

	c = sl_cmp(x->key, x->key_len, y->key, y->key_len);
	if (c != 0)
		return (c);
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

void
store_mem_hist_trim(struct store_mem *m)
{
	struct store_mem_event	**v, *ev;
	size_t			  n = m->hist_head, i, j, kept = 0;

	if (n == m->hist_kept)
		return;
	v = xcalloc(n, sizeof *v);
	for (i = 0; i < n; i++)
		v[i] = &m->hist[i];
	qsort(v, n, sizeof *v, store_mem_ev_cmp);
	for (i = 0; i < n; i = j) {
		j = store_mem_group_end(v, n, i);
		while (i < j) {
			ev = v[i++];
			if (i == j && ev->type == STORE_EVENT_PUT)
				break;
			m->bytes -= ev->key_len + ev->value_len;
			free(ev->key);
			ev->key = NULL;
		}
	}
	free(v);
	for (i = 0; i < n; i++) {
		if (m->hist[i].key != NULL)
			m->hist[kept++] = m->hist[i];
	}
	memmove(m->hist + kept, m->hist + n, (m->hist_len - n) *
	    sizeof *m->hist);
	m->hist_len -= n - kept;
	m->hist_head = m->hist_kept = kept;
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
}

int
store_mem_get_at(struct store *s, const char *key, size_t key_len,
    uint64_t rev, store_kv_cb cb, void *arg, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_event	*ev;
	struct store_kv		 kv;
	size_t			 i;

	for (i = store_mem_after(m, 0, rev); i > 0; i--) {
		ev = &m->hist[i - 1];
		if (sl_cmp(ev->key, ev->key_len, key, key_len) != 0)
			continue;
		if (ev->type != STORE_EVENT_PUT)
			return (0);
		store_mem_ev_kv(ev, 0, &kv);
		cb(&kv, arg);
		return (1);
	}
	return (0);
}

static int
store_mem_in_range(const struct store_mem_event *ev,
    const struct store_range *r)
{
	if (ev->key_len < r->prefix_len ||
	    memcmp(ev->key, r->prefix, r->prefix_len) != 0)
		return (0);
	return (r->after == NULL || sl_cmp(ev->key, ev->key_len,
	    r->after, r->after_len) > 0);
}

long
store_mem_range_at(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_mem	 *m = s->impl;
	struct store_mem_event	**v, *ev;
	struct store_kv		  kv;
	size_t			  end, n = 0, i, j;
	uint64_t		  count = 0;
	int			  stop = 0;

	end = store_mem_after(m, 0, r->rev);
	v = xcalloc(end + 1, sizeof *v);
	for (i = 0; i < end; i++) {
		if (store_mem_in_range(&m->hist[i], r))
			v[n++] = &m->hist[i];
	}
	qsort(v, n, sizeof *v, store_mem_ev_cmp);
	for (i = 0; i < n; i = j) {
		j = store_mem_group_end(v, n, i);
		ev = v[j - 1];
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
