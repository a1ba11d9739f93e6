/*
 * An intrusive hash table of elements keyed by a uint64_t id: the lease
 * table's leases (daemon/lease/lease.c) and the etcd backend's known leases
 * (store_etcd_expire.c).  Each element holds its id and a chain link (a
 * void *) at offsets given to u64map_init(); the table holds pointers, never
 * copies, and frees nothing.  It doubles when it holds as many elements as
 * buckets.  hash is the caller's (a keyed one where another party chooses
 * the ids).
 */
#ifndef METAD_U64MAP_H
#define METAD_U64MAP_H

#include <stddef.h>
#include <stdint.h>

struct u64map {
	void		**buckets;
	size_t		 nbuckets;	/* a power of two */
	size_t		 n;
	size_t		 id_off;	/* the element's uint64_t id */
	size_t		 next_off;	/* its void * chain link */
	uint64_t	(*hash)(uint64_t);
};

void	 u64map_init(struct u64map *, size_t, size_t, uint64_t (*)(uint64_t));
void	 u64map_free(struct u64map *);
void	*u64map_find(const struct u64map *, uint64_t);
/* Add an element whose id is not in the table. */
void	 u64map_add(struct u64map *, void *);
/* Take the element out; 0, or -1 when it is not in the table. */
int	 u64map_del(struct u64map *, void *);
/*
 * Every element, in no order: start with *bucket = 0 and prev NULL, then
 * pass the element last returned (*bucket is its bucket).  The caller may
 * free prev once the call that passed it has returned.
 */
void	*u64map_next(const struct u64map *, size_t *, void *);

#endif
