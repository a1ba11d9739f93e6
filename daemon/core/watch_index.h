/*
 * The watch hub's index: which watches an event's key reaches, at a cost
 * that depends on the watches it matches, not on how many there are (as
 * etcd's watcherGroup: a map of exact keys, and a structure for ranges).
 *
 * An entry is one key or one prefix of one watch (a watch may name
 * several); entries with the same key (or the same prefix) share a slot
 * of one hash table keyed by store_hash (the keys are the clients').  A
 * prefix slot is found by hashing the event's key cut at each length a
 * prefix in the index has: the distinct prefix lengths, kept sorted, are
 * at most KEY_MAX_BYTES + 1 and in practice a handful.
 *
 * A slot's entries are in the order added; watch_index_match() calls fn
 * on the entries of the exact key's slot, then of each matching prefix
 * slot, shortest first.  fn may not add or remove entries.
 */
#ifndef METAD_WATCH_INDEX_H
#define METAD_WATCH_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct watch_index;
struct watch_index_ent;

struct watch_index	*watch_index_create(void);
/* Every entry must have been removed. */
void			 watch_index_free(struct watch_index *);
/* key is copied (a prefix may be empty); owner is what fn is given. */
struct watch_index_ent	*watch_index_add(struct watch_index *,
			    const char *key, size_t len, int prefix,
			    void *owner);
void			 watch_index_del(struct watch_index *,
			    struct watch_index_ent *);
/* fn(owner, arg) for every entry whose key is key or a prefix of it. */
void			 watch_index_match(struct watch_index *,
			    const char *key, size_t len,
			    void (*fn)(void *, void *), void *arg);
/* Slots in the table, and distinct prefix lengths (for the tests). */
size_t			 watch_index_slots(const struct watch_index *);
size_t			 watch_index_prefix_lengths(const struct watch_index *);

#endif
