#include <sys/queue.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "metad_limits.h"
#include "util.h"
#include "core/watch_index.h"
#include "store/store_hash.h"

/* Told apart from the key's hash: a prefix and a key of the same bytes. */
#define WATCH_INDEX_PREFIX_SALT	0x9e3779b97f4a7c15ULL
#define WATCH_INDEX_MIN_BUCKETS	64

struct watch_index_ent {
	TAILQ_ENTRY(watch_index_ent)	 entry;
	struct watch_index_slot		*slot;
	void				*owner;
};

struct watch_index_slot {
	struct watch_index_slot		*next;	/* in its bucket */
	uint64_t			 hash;
	TAILQ_HEAD(, watch_index_ent)	 ents;
	size_t				 len;
	int				 prefix;
	char				 key[];
};

/*
 * Most events' keys are watched by no one: a lookup that misses should
 * touch as little memory as it can.  Each bucket has a tag byte, one bit
 * (of 8, from the top bits of the hash) for each slot in its chain: a key
 * whose bit is clear is not there, known from one byte (with 1M slots, an
 * array of 1 MiB, not the 8 MiB of buckets and the slots behind them).
 */
#define WATCH_INDEX_TAG(h)	((uint8_t)(1u << ((h) >> 61)))

struct watch_index {
	struct watch_index_slot	**buckets;
	uint8_t			 *tags;		/* a bucket's chain's bits */
	size_t			  nbuckets;	/* a power of two */
	size_t			  nslots;
	size_t			 *lens;		/* prefix lengths, ascending */
	size_t			  nlens;
	unsigned		 *lencount;	/* prefix slots per length */
};

struct watch_index *
watch_index_create(void)
{
	struct watch_index	*ix;

	ix = xcalloc(1, sizeof *ix);
	ix->nbuckets = WATCH_INDEX_MIN_BUCKETS;
	ix->buckets = xcalloc(ix->nbuckets, sizeof *ix->buckets);
	ix->tags = xcalloc(ix->nbuckets, sizeof *ix->tags);
	ix->lens = xcalloc(KEY_MAX_BYTES + 1, sizeof *ix->lens);
	ix->lencount = xcalloc(KEY_MAX_BYTES + 1, sizeof *ix->lencount);
	return (ix);
}

void
watch_index_free(struct watch_index *ix)
{
	if (ix == NULL)
		return;
	free(ix->buckets);
	free(ix->tags);
	free(ix->lens);
	free(ix->lencount);
	free(ix);
}

static uint64_t
watch_index_hash(const char *key, size_t len, int prefix)
{
	return (store_hash_bytes(key, len) ^
	    (prefix ? WATCH_INDEX_PREFIX_SALT : 0));
}

static struct watch_index_slot *
watch_index_find(const struct watch_index *ix, const char *key, size_t len,
    int prefix, uint64_t h)
{
	struct watch_index_slot	*s;
	size_t			 b = h & (ix->nbuckets - 1);

	if (!(ix->tags[b] & WATCH_INDEX_TAG(h)))
		return (NULL);
	for (s = ix->buckets[b]; s != NULL; s = s->next)
		if (s->hash == h && s->len == len && s->prefix == prefix &&
		    memcmp(s->key, key, len) == 0)
			return (s);
	return (NULL);
}

static void
watch_index_grow(struct watch_index *ix)
{
	struct watch_index_slot	**nb, *s, *next;
	uint8_t			 *nt;
	size_t			  n = ix->nbuckets * 2, i;

	nb = xcalloc(n, sizeof *nb);
	nt = xcalloc(n, sizeof *nt);
	for (i = 0; i < ix->nbuckets; i++) {
		for (s = ix->buckets[i]; s != NULL; s = next) {
			next = s->next;
			s->next = nb[s->hash & (n - 1)];
			nb[s->hash & (n - 1)] = s;
			nt[s->hash & (n - 1)] |= WATCH_INDEX_TAG(s->hash);
		}
	}
	free(ix->buckets);
	free(ix->tags);
	ix->buckets = nb;
	ix->tags = nt;
	ix->nbuckets = n;
}

/* A prefix slot of length len was made (d 1) or freed (d -1). */
static void
watch_index_count_len(struct watch_index *ix, size_t len, int d)
{
	size_t	 i;

	if (d > 0 && ix->lencount[len]++ == 0) {
		for (i = ix->nlens; i > 0 && ix->lens[i - 1] > len; i--)
			ix->lens[i] = ix->lens[i - 1];
		ix->lens[i] = len;
		ix->nlens++;
	} else if (d < 0 && --ix->lencount[len] == 0) {
		for (i = 0; ix->lens[i] != len; i++)
			;
		memmove(&ix->lens[i], &ix->lens[i + 1],
		    (ix->nlens - i - 1) * sizeof *ix->lens);
		ix->nlens--;
	}
}

struct watch_index_ent *
watch_index_add(struct watch_index *ix, const char *key, size_t len,
    int prefix, void *owner)
{
	struct watch_index_slot	*s;
	struct watch_index_ent	*e;
	uint64_t		 h;

	if (len > KEY_MAX_BYTES)
		fatalx("watch_index_add: a key of %zu bytes", len);
	h = watch_index_hash(key, len, prefix);
	if ((s = watch_index_find(ix, key, len, prefix, h)) == NULL) {
		if (ix->nslots >= ix->nbuckets)
			watch_index_grow(ix);
		s = xmalloc(sizeof *s + len + 1);
		s->hash = h;
		s->len = len;
		s->prefix = prefix;
		memcpy(s->key, key, len);
		s->key[len] = '\0';
		TAILQ_INIT(&s->ents);
		s->next = ix->buckets[h & (ix->nbuckets - 1)];
		ix->buckets[h & (ix->nbuckets - 1)] = s;
		ix->tags[h & (ix->nbuckets - 1)] |= WATCH_INDEX_TAG(h);
		ix->nslots++;
		if (prefix)
			watch_index_count_len(ix, len, 1);
	}
	e = xmalloc(sizeof *e);
	e->slot = s;
	e->owner = owner;
	TAILQ_INSERT_TAIL(&s->ents, e, entry);
	return (e);
}

void
watch_index_del(struct watch_index *ix, struct watch_index_ent *e)
{
	struct watch_index_slot	*s = e->slot, **sp, *o;
	size_t			 b = s->hash & (ix->nbuckets - 1);

	TAILQ_REMOVE(&s->ents, e, entry);
	free(e);
	if (!TAILQ_EMPTY(&s->ents))
		return;
	for (sp = &ix->buckets[b]; *sp != s; sp = &(*sp)->next)
		;
	*sp = s->next;
	ix->tags[b] = 0;	/* the chain's bits, without s's */
	for (o = ix->buckets[b]; o != NULL; o = o->next)
		ix->tags[b] |= WATCH_INDEX_TAG(o->hash);
	ix->nslots--;
	if (s->prefix)
		watch_index_count_len(ix, s->len, -1);
	free(s);
}

static void
watch_index_slot_each(const struct watch_index_slot *s,
    void (*fn)(void *, void *), void *arg)
{
	struct watch_index_ent	*e;

	if (s == NULL)
		return;
	TAILQ_FOREACH(e, &s->ents, entry)
		fn(e->owner, arg);
}

void
watch_index_match(struct watch_index *ix, const char *key, size_t len,
    void (*fn)(void *, void *), void *arg)
{
	size_t	 i, l;

	if (ix->nslots == 0)
		return;
	watch_index_slot_each(watch_index_find(ix, key, len, 0,
	    watch_index_hash(key, len, 0)), fn, arg);
	for (i = 0; i < ix->nlens && (l = ix->lens[i]) <= len; i++)
		watch_index_slot_each(watch_index_find(ix, key, l, 1,
		    watch_index_hash(key, l, 1)), fn, arg);
}

size_t
watch_index_slots(const struct watch_index *ix)
{
	return (ix->nslots);
}

size_t
watch_index_prefix_lengths(const struct watch_index *ix)
{
	return (ix->nlens);
}
