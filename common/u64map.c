/* An intrusive hash table keyed by uint64_t ids (u64map.h). */
#include <stdlib.h>

#include "u64map.h"
#include "util.h"

#define U64MAP_FIRST	64

static uint64_t
u64map_id(const struct u64map *m, const void *e)
{
	return (*(const uint64_t *)(const void *)((const char *)e +
	    m->id_off));
}

static void **
u64map_link(const struct u64map *m, void *e)
{
	return ((void **)(void *)((char *)e + m->next_off));
}

static size_t
u64map_bucket(const struct u64map *m, uint64_t id)
{
	return ((size_t)m->hash(id) & (m->nbuckets - 1));
}

void
u64map_init(struct u64map *m, size_t id_off, size_t next_off,
    uint64_t (*hash)(uint64_t))
{
	m->nbuckets = U64MAP_FIRST;
	m->buckets = xcalloc(m->nbuckets, sizeof *m->buckets);
	m->n = 0;
	m->id_off = id_off;
	m->next_off = next_off;
	m->hash = hash;
}

void
u64map_free(struct u64map *m)
{
	free(m->buckets);
	m->buckets = NULL;
	m->nbuckets = m->n = 0;
}

void *
u64map_find(const struct u64map *m, uint64_t id)
{
	void	*e;

	for (e = m->buckets[u64map_bucket(m, id)]; e != NULL;
	    e = *u64map_link(m, e)) {
		if (u64map_id(m, e) == id)
			return (e);
	}
	return (NULL);
}

static void
u64map_grow(struct u64map *m)
{
	void	**old = m->buckets, *e, *next;
	size_t	 i, b, nold = m->nbuckets;

	m->nbuckets = nold * 2;
	m->buckets = xcalloc(m->nbuckets, sizeof *m->buckets);
	for (i = 0; i < nold; i++) {
		for (e = old[i]; e != NULL; e = next) {
			next = *u64map_link(m, e);
			b = u64map_bucket(m, u64map_id(m, e));
			*u64map_link(m, e) = m->buckets[b];
			m->buckets[b] = e;
		}
	}
	free(old);
}

void
u64map_add(struct u64map *m, void *e)
{
	size_t	 b;

	if (m->n >= m->nbuckets)
		u64map_grow(m);
	b = u64map_bucket(m, u64map_id(m, e));
	*u64map_link(m, e) = m->buckets[b];
	m->buckets[b] = e;
	m->n++;
}

int
u64map_del(struct u64map *m, void *e)
{
	void	**pp;

	for (pp = &m->buckets[u64map_bucket(m, u64map_id(m, e))]; *pp != NULL;
	    pp = u64map_link(m, *pp)) {
		if (*pp == e) {
			*pp = *u64map_link(m, e);
			m->n--;
			return (0);
		}
	}
	return (-1);
}

void *
u64map_next(const struct u64map *m, size_t *bucket, void *prev)
{
	size_t	 b = *bucket;
	void	*e;

	if (prev != NULL) {
		if ((e = *u64map_link(m, prev)) != NULL)
			return (e);	/* on along prev's chain */
		b++;
	}
	for (; b < m->nbuckets; b++) {
		if ((e = m->buckets[b]) != NULL) {
			*bucket = b;
			return (e);
		}
	}
	*bucket = b;
	return (NULL);
}
