/*
 * The memory backend: nothing is durable.  Keys live in a skip list
 * (skiplist.h: p = 1/4, expected O(log n) search, insert and delete,
 * in-order walk from any lower bound); the history is an array of events,
 * oldest first, whose front is dropped by compaction, each key's last put
 * below the compaction point moved to a hash table by key
 * (store_mem_rev.c: reads at a revision).
 *
 * Batches keep an undo log: one entry per key changed (the node created, the
 * node unlinked, or the value and metadata replaced), plus snapshots of the
 * counters taken at begin and at mark.  Undoing replays the log backwards,
 * so the store returns to exactly its state at the snapshot.  Memory that a
 * batch replaces or unlinks is freed only when the batch commits.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_backend.h"
#include "store/store_local.h"
#include "store/mem/store_mem.h"
#include "util.h"
#include "store/store_range.h"

static void
store_mem_node_free(struct store_mem_node *n)
{
	if (n == NULL)
		return;
	free(n->value);
	free(n);
}

struct store_mem_undo *
store_mem_undo_add(struct store_mem *m, enum store_mem_undo_type type,
    struct store_mem_node *n)
{
	struct store_mem_undo	*u;

	if (m->undo_len == m->undo_cap) {
		m->undo_cap = m->undo_cap == 0 ? 64 : m->undo_cap * 2;
		m->undo = xrealloc(m->undo, m->undo_cap * sizeof *m->undo);
	}
	u = &m->undo[m->undo_len++];
	memset(u, 0, sizeof *u);
	u->type = type;
	u->node = n;
	return (u);
}

static void
store_mem_undo_one(struct store_mem *m, struct store_mem_undo *u)
{
	struct store_mem_node	*n = u->node;

	switch (u->type) {
	case MEM_UNDO_CREATE:
		store_mem_keys_unlink(&m->keys, n);
		store_mem_node_free(n);
		break;
	case MEM_UNDO_UPDATE:
		free(n->value);
		n->value = u->old_value;
		n->value_len = u->old_value_len;
		n->version = u->old_version;
		n->mod_rev = u->old_mod_rev;
		n->lease = u->old_lease;
		break;
	case MEM_UNDO_DELETE:
		store_mem_keys_link(&m->keys, n);
		break;
	case MEM_UNDO_LEASE:
		store_mem_lease_undo(m, &u->lease);
		break;
	case MEM_UNDO_IDEM:
		store_mem_idem_undo(m, u->idem);
		break;
	}
}

static void
store_mem_event_add(struct store_mem *m, uint64_t rev, uint32_t seq,
    const struct store_mem_node *n, enum store_event_type type)
{
	struct store_mem_event	*ev;
	size_t			 vlen;

	vlen = type == STORE_EVENT_PUT ? n->value_len : 0;
	if (m->hist_len == m->hist_cap) {
		m->hist_cap = m->hist_cap == 0 ? 1024 : m->hist_cap * 2;
		m->hist = xrealloc(m->hist, m->hist_cap * sizeof *m->hist);
	}
	ev = &m->hist[m->hist_len++];
	memset(ev, 0, sizeof *ev);
	ev->rev = rev;
	ev->seq = seq;
	ev->type = type;
	ev->key = xmalloc(n->key_len + vlen + 2);
	memcpy(ev->key, n->key, n->key_len);
	ev->key[n->key_len] = '\0';
	ev->key_len = n->key_len;
	if (type == STORE_EVENT_PUT) {
		ev->value = (unsigned char *)ev->key + n->key_len + 1;
		if (vlen > 0)
			memcpy(ev->value, n->value, vlen);
		ev->value[vlen] = '\0';
		ev->value_len = vlen;
		ev->version = n->version;
		ev->create_rev = n->create_rev;
		ev->lease = n->lease;
	}
	m->bytes += n->key_len + vlen;
}

static void
store_mem_snap_take(struct store_mem *m, struct store *s,
    struct store_mem_snap *snap)
{
	snap->undo_len = m->undo_len;
	snap->hist_len = m->hist_len;
	snap->hist_head = m->hist_head;
	snap->nkeys = m->nkeys;
	snap->bytes = m->bytes;
	snap->compact_rev = s->head.compact_rev;
}

static void
store_mem_snap_restore(struct store_mem *m, struct store *s,
    const struct store_mem_snap *snap)
{
	size_t	 i;

	while (m->undo_len > snap->undo_len)
		store_mem_undo_one(m, &m->undo[--m->undo_len]);
	for (i = snap->hist_len; i < m->hist_len; i++)
		free(m->hist[i].key);
	m->hist_len = snap->hist_len;
	m->hist_head = snap->hist_head;
	m->nkeys = snap->nkeys;
	m->bytes = snap->bytes;
	s->head.compact_rev = snap->compact_rev;
}

static int
store_mem_open(struct store *s, const char *arg,
    const struct store_options *opts, struct store_err *err)
{
	struct store_mem	*m;

	if (*arg != '\0')
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "the memory store takes no argument (got \"%.64s\")",
		    arg));
	m = xcalloc(1, sizeof *m);
	store_mem_keys_init(&m->keys);
	TAILQ_INIT(&m->idem_queue);
	s->impl = m;
	s->head.rev = 0;
	s->head.compact_rev = 0;
	return (0);
}

static void
store_mem_close(struct store *s)
{
	struct store_mem	*m = s->impl;

	store_mem_keys_free(&m->keys, store_mem_node_free);
	store_mem_hist_free(m);
	free(m->undo);
	free(m->leases);
	store_mem_idem_free(m);
	free(m);
	s->impl = NULL;
}

static void
store_mem_kv(const struct store_mem_node *n, int keys_only, struct store_kv *kv)
{
	kv->key = n->key;
	kv->key_len = n->key_len;
	kv->value = keys_only ? NULL : n->value;
	kv->value_len = keys_only ? 0 : n->value_len;
	kv->version = n->version;
	kv->create_rev = n->create_rev;
	kv->mod_rev = n->mod_rev;
	kv->lease = n->lease;
}

static int
store_mem_get(struct store *s, const char *key, size_t key_len,
    store_kv_cb cb, void *arg, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;
	struct store_kv		 kv;

	if ((n = store_mem_keys_find(&m->keys, key, key_len, NULL)) == NULL)
		return (0);
	store_mem_kv(n, 0, &kv);
	cb(&kv, arg);
	return (1);
}

static long
store_mem_range(struct store *s, const struct store_range *r,
    store_kv_cb cb, void *arg, int *more, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;
	struct store_span	 sp;
	struct store_kv		 kv;
	uint64_t		 count = 0;
	int			 stop = 0;

	if (r->rev != 0)
		return (store_mem_range_at(s, r, cb, arg, more, err));
	store_range_span(r, &sp);
	n = r->reverse ? store_mem_keys_before(&m->keys, sp.hi, sp.hi_len) :
	    store_mem_keys_seek(&m->keys, sp.lo, sp.lo_len, 0, NULL);
	while (n != NULL && store_span_has(&sp, n->key, n->key_len)) {
		if (count == r->limit || stop) {
			*more = 1;
			break;
		}
		store_mem_kv(n, r->keys_only, &kv);
		count++;
		stop = cb(&kv, arg) != 0;
		n = r->reverse ? store_mem_keys_before(&m->keys, n->key,
		    n->key_len) : n->next[0];
	}
	store_span_free(&sp);
	return ((long)count);
}

static int
store_mem_del_range(struct store *s, uint64_t rev, const char *key,
    size_t key_len, const char *end, size_t end_len, uint64_t *n,
    struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*x, *next;
	int			 deleted;

	*n = 0;
	for (x = store_mem_keys_seek(&m->keys, key, key_len, 0, NULL);
	    x != NULL; x = next) {
		if (end != NULL && sl_cmp(x->key, x->key_len, end,
		    end_len) >= 0)
			break;
		next = x->next[0];
		if (store_mem_del(s, rev, (uint32_t)*n, x->key, x->key_len,
		    &deleted, err) != 0)
			return (-1);
		*n += deleted;
	}
	return (0);
}

static int
store_mem_begin(struct store *s, struct store_err *err)
{
	struct store_mem	*m = s->impl;

	store_mem_snap_take(m, s, &m->begin);
	m->marked = 0;
	return (0);
}

static void
store_mem_update(struct store_mem *m, struct store_mem_node *n, uint64_t rev,
    const void *value, size_t value_len)
{
	struct store_mem_undo	*u;

	u = store_mem_undo_add(m, MEM_UNDO_UPDATE, n);
	u->old_value = n->value;
	u->old_value_len = n->value_len;
	u->old_version = n->version;
	u->old_mod_rev = n->mod_rev;
	u->old_lease = n->lease;
	m->bytes -= n->value_len;
	n->value = xmemdup(value, value_len);
	n->value_len = value_len;
	n->version++;
	n->mod_rev = rev;
	m->bytes += value_len;
}

static int
store_mem_put(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, const void *value, size_t value_len, uint64_t lease,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;

	if ((n = store_mem_keys_find(&m->keys, key, key_len, NULL)) != NULL) {
		*prev_version = n->version;
		store_mem_update(m, n, rev, value, value_len);
	} else {
		*prev_version = 0;
		n = store_mem_keys_node_new(&m->keys, key, key_len);
		n->value = xmemdup(value, value_len);
		n->value_len = value_len;
		n->version = 1;
		n->create_rev = n->mod_rev = rev;
		store_mem_keys_link(&m->keys, n);
		store_mem_undo_add(m, MEM_UNDO_CREATE, n);
		m->nkeys++;
		m->bytes += key_len + value_len;
	}
	n->lease = lease;	/* the undo above has the old one */
	store_mem_event_add(m, rev, seq, n, STORE_EVENT_PUT);
	store_mem_kv(n, 1, meta);
	meta->key = key;
	return (0);
}

/*
 * A replica's load (store_put_as()): the node as kv has it, and its put
 * event at its mod_rev (the batch's compaction moves it to the kept).
 */
static int
store_mem_put_as(struct store *s, const struct store_kv *kv,
    struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;

	if (store_mem_keys_find(&m->keys, kv->key, kv->key_len, NULL) != NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "memory: a "
		    "replica's key loaded twice"));
	n = store_mem_keys_node_new(&m->keys, kv->key, kv->key_len);
	n->value = xmemdup(kv->value != NULL ? (const void *)kv->value : "",
	    kv->value_len);
	n->value_len = kv->value_len;
	n->version = kv->version;
	n->create_rev = kv->create_rev;
	n->mod_rev = kv->mod_rev;
	n->lease = kv->lease;
	store_mem_keys_link(&m->keys, n);
	store_mem_undo_add(m, MEM_UNDO_CREATE, n);
	m->nkeys++;
	m->bytes += kv->key_len + kv->value_len;
	store_mem_event_add(m, kv->mod_rev, 0, n, STORE_EVENT_PUT);
	return (0);
}

int
store_mem_del(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, int *deleted, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;

	if ((n = store_mem_keys_find(&m->keys, key, key_len, NULL)) == NULL) {
		*deleted = 0;
		return (0);
	}
	store_mem_keys_unlink(&m->keys, n);
	store_mem_undo_add(m, MEM_UNDO_DELETE, n);
	m->nkeys--;
	m->bytes -= n->key_len + n->value_len;
	store_mem_event_add(m, rev, seq, n, STORE_EVENT_DELETE);
	*deleted = 1;
	return (0);
}

static int
store_mem_mark(struct store *s, struct store_err *err)
{
	struct store_mem	*m = s->impl;

	store_mem_snap_take(m, s, &m->mark);
	m->marked = 1;
	return (0);
}

static int
store_mem_undo(struct store *s, struct store_err *err)
{
	struct store_mem	*m = s->impl;

	if (!m->marked)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "undo without a mark"));
	store_mem_snap_restore(m, s, &m->mark);
	m->marked = 0;
	return (0);
}

static int
store_mem_commit(struct store *s, uint64_t rev, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_undo	*u;
	size_t			 i;

	for (i = 0; i < m->undo_len; i++) {
		u = &m->undo[i];
		if (u->type == MEM_UNDO_UPDATE)
			free(u->old_value);
		else if (u->type == MEM_UNDO_DELETE)
			store_mem_node_free(u->node);
	}
	m->undo_len = 0;
	m->marked = 0;
	store_mem_hist_trim(m);
	return (0);
}

static void
store_mem_rollback(struct store *s)
{
	struct store_mem	*m = s->impl;

	store_mem_snap_restore(m, s, &m->begin);
	m->marked = 0;
}

static int
store_mem_history(struct store *s, uint64_t from_rev, store_event_cb cb,
    void *arg, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_event	*ev;
	struct store_event	 e;
	size_t			 lo = m->hist_head, hi = m->hist_len, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (m->hist[mid].rev < from_rev)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < m->hist_len; lo++) {
		ev = &m->hist[lo];
		memset(&e, 0, sizeof e);
		e.rev = ev->rev;
		e.seq = ev->seq;
		e.type = ev->type;
		e.kv.key = ev->key;
		e.kv.key_len = ev->key_len;
		e.kv.value = ev->value;
		e.kv.value_len = ev->value_len;
		e.kv.version = ev->version;
		e.kv.create_rev = ev->create_rev;
		e.kv.mod_rev = ev->rev;
		e.kv.lease = ev->lease;
		if (cb(&e, arg) != 0)
			break;
	}
	return (0);
}

static int
store_mem_compact(struct store *s, uint64_t rev, struct store_err *err)
{
	struct store_mem	*m = s->impl;

	/* store_mem_hist_trim() frees what goes, at commit. */
	while (m->hist_head < m->hist_len && m->hist[m->hist_head].rev < rev)
		m->hist_head++;
	return (0);
}

static int
store_mem_stats(struct store *s, struct store_stats *st,
    struct store_err *err)
{
	struct store_mem	*m = s->impl;

	st->keys = m->nkeys;
	st->db_bytes = m->bytes;
	return (0);
}

static const struct store_local store_mem_local = {
	store_mem_range,
	store_mem_history,
	store_mem_get_at,
	store_mem_key_history,
	store_mem_stats,
	store_mem_begin,
	store_mem_commit
};

const struct store_backend store_mem_backend = {
	.name = "memory",
	/* Open and close. */
	.open = store_mem_open,
	.close = store_mem_close,
	/* Batches and commits. */
	.batch_max = 0,
	.batches_out = 1,
	.ordered = 1,	/* each batch lands before the next begins */
	.begin = store_local_begin,
	.get = store_mem_get,
	.put = store_mem_put,
	.del = store_mem_del,
	.del_range = store_mem_del_range,
	.mark = store_mem_mark,
	.undo = store_mem_undo,
	.compact = store_mem_compact,
	.commit = store_local_commit,
	.rollback = store_mem_rollback,
	/* Reads. */
	.read_get = store_local_read_get,
	.read_range = store_local_read_range,
	/* History. */
	.read_history = store_local_read_history,
	.read_key_history = store_local_read_key_history,
	/* Leases the daemon times: reads, and writes in a batch. */
	.read_leases = store_mem_read_leases,
	.read_lease_keys = store_mem_read_lease_keys,
	.lease_put = store_mem_lease_put,
	.lease_attach = store_mem_lease_attach,
	.lease_revoke = store_mem_lease_revoke,
	/* Idempotent writes' records, in a batch. */
	.idem_get = store_mem_idem_get,
	.idem_put = store_mem_idem_put,
	/* A replica's load (the remote backend's view). */
	.put_as = store_mem_put_as,
	/* Status. */
	.read_stats = store_local_read_stats,
	/* The synchronous side store_local.c calls. */
	.local = &store_mem_local,
};
