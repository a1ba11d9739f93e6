/*
 * The memory backend's leases (store.h; metad-protocol(7), LEASES): a key's
 * lease is a field of its node (undone with the node), lease records an
 * unordered array whose changes are undone through MEM_UNDO_LEASE entries.
 * Finding a lease's keys walks every key: the memory store keeps nothing
 * across a restart and serves tests and caches, where that is cheap enough;
 * the SQLite backend has an index for it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/mem/store_mem.h"
#include "util.h"

static size_t
mem_lease_find(struct store_mem *m, uint64_t id)
{
	size_t	 i;

	for (i = 0; i < m->nleases; i++) {
		if (m->leases[i].id == id)
			return (i);
	}
	return (SIZE_MAX);
}

/* Make lease->id's record *lease (ttl_ms 0: no record). */
static void
mem_lease_set(struct store_mem *m, const struct store_lease *l)
{
	size_t	 i = mem_lease_find(m, l->id);

	if (l->ttl_ms == 0) {
		if (i != SIZE_MAX)
			m->leases[i] = m->leases[--m->nleases];
		return;
	}
	if (i == SIZE_MAX) {
		if (m->nleases == m->leases_cap) {
			m->leases_cap = m->leases_cap ? m->leases_cap * 2 : 64;
			m->leases = xrealloc(m->leases,
			    m->leases_cap * sizeof *m->leases);
		}
		i = m->nleases++;
	}
	m->leases[i] = *l;
}

void
store_mem_lease_undo(struct store_mem *m, const struct store_lease *l)
{
	mem_lease_set(m, l);
}

/* Change a record, remembering what it was for undo and rollback. */
static void
mem_lease_change(struct store_mem *m, const struct store_lease *l)
{
	struct store_mem_undo	*u;
	size_t			 i = mem_lease_find(m, l->id);

	u = store_mem_undo_add(m, MEM_UNDO_LEASE, NULL);
	if (i != SIZE_MAX)
		u->lease = m->leases[i];
	else {
		u->lease.id = l->id;
		u->lease.ttl_ms = 0;
	}
	mem_lease_set(m, l);
}

void
store_mem_read_leases(struct store *s, store_leases_done done, void *arg)
{
	struct store_mem	*m = s->impl;

	done(arg, (long)m->nleases, m->leases, NULL);
}

void
store_mem_read_lease_keys(struct store *s, uint64_t lease, const char *after,
    size_t after_len, uint64_t limit, store_read_done done, void *arg)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;
	struct store_kv		*v = NULL;
	size_t			 nv = 0, cap = 0;
	int			 more = 0;

	for (n = store_mem_keys_first(&m->keys); n != NULL; n = n->next[0]) {
		if (n->lease != lease || (after != NULL &&
		    sl_cmp(n->key, n->key_len, after, after_len) <= 0))
			continue;
		if (nv == limit) {
			more = 1;
			break;
		}
		if (nv == cap) {
			cap = cap ? cap * 2 : 16;
			v = xrealloc(v, cap * sizeof *v);
		}
		memset(&v[nv], 0, sizeof v[nv]);
		v[nv].key = n->key;
		v[nv].key_len = n->key_len;
		v[nv].version = n->version;
		v[nv].create_rev = n->create_rev;
		v[nv].mod_rev = n->mod_rev;
		v[nv].lease = lease;
		nv++;
	}
	done(arg, (long)nv, v, more, NULL);
	free(v);
}

int
store_mem_lease_put(struct store *s, const struct store_lease *l,
    struct store_err *err)
{
	mem_lease_change(s->impl, l);
	return (0);
}

int
store_mem_lease_attach(struct store *s, const char *key, size_t key_len,
    uint64_t lease, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*n;

	/* The put just made recorded how to undo it, lease included. */
	if ((n = store_mem_keys_find(&m->keys, key, key_len, NULL)) == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "memory: attaching a key that is absent"));
	n->lease = lease;
	return (0);
}

int
store_mem_lease_revoke(struct store *s, uint64_t rev, uint64_t lease,
    uint64_t *n, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_node	*x, *next;
	struct store_lease	 gone;
	int			 deleted;

	*n = 0;
	for (x = store_mem_keys_first(&m->keys); x != NULL; x = next) {
		next = x->next[0];
		if (x->lease != lease)
			continue;
		if (store_mem_del(s, rev, (uint32_t)*n, x->key, x->key_len,
		    &deleted, err) != 0)
			return (-1);
		*n += deleted;
	}
	memset(&gone, 0, sizeof gone);
	gone.id = lease;
	mem_lease_change(m, &gone);
	return (0);
}
