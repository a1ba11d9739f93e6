/*
 * One skip list (p = 1/4, expected O(log n) search, insert and delete,
 * in-order walk from any lower bound) for the stores that keep keys in
 * memory: the memory backend (store_mem.c) and the etcd backend's view
 * (store_etcd_view.c).
 *
 * Keys are byte strings ordered by sl_cmp(): bytewise, a proper prefix
 * first.  The list is intrusive, in the manner of <sys/tree.h>: a node type
 * has the members
 *
 *	char		*key;		(set by NAME_node_new, NUL ended)
 *	size_t		 key_len;
 *	int		 level;
 *	struct TYPE	*next[];	(last member)
 *
 * besides its own, and SL_GENERATE(NAME, TYPE) defines, as static
 * functions on struct TYPE and struct NAME (SL_HEAD):
 *
 *	NAME_init(l)		empty list (its head: a node of SL_LEVEL_MAX)
 *	NAME_node_new(l, k, n)	a zeroed node of key k, of a random level
 *	NAME_seek(l, k, n, strict, update)
 *				first node >= k (> k if strict), or NULL;
 *				update[] (SL_LEVEL_MAX, may be NULL) gets the
 *				last node before it at each level
 *	NAME_find(l, k, n, update)	the node of key k, or NULL
 *	NAME_insert(l, n, update)	link n where update[] (from seek) says
 *	NAME_link(l, n)		link n (its key not in the list)
 *	NAME_remove(n, update)	unlink n, update[] from seek of its key
 *	NAME_unlink(l, n)	unlink n (not freed)
 *	NAME_first(l)		the first node; then n->next[0]
 *	NAME_before(l, k, n)	the last node < k (k NULL: the last of
 *				all), or NULL: a walk downward, O(log n) a
 *				step
 *	NAME_clear(l, fr)	free every node with fr (not the head), empty
 *	NAME_free(l, fr)	clear, then free the head
 *
 * The level comes from a per-list xorshift state (sl_random_level(),
 * skiplist.c), so a list's shape depends only on its own inserts.  Generated
 * code, not callbacks, keeps the key compare inlined in the search loop.
 */
#ifndef METAD_SKIPLIST_H
#define METAD_SKIPLIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define SL_LEVEL_MAX	32

/*
 * The generated functions: a user need not call them all (as with
 * <sys/tree.h>'s RB_GENERATE_STATIC, marked unused for the compilers that
 * warn of unused static functions, clang among them).
 */
#if defined(__GNUC__) || defined(__clang__)
#define SL_FN	static inline __attribute__((__unused__))
#else
#define SL_FN	static inline
#endif
#define SL_RNG_SEED	0x9e3779b97f4a7c15ULL

#define SL_HEAD(name, type)						\
struct name {								\
	struct type	*head;						\
	int		 level;		/* in use, >= 1 */		\
	uint64_t	 rng;						\
}

/* Bytewise, a proper prefix first: <0, 0 or >0 as memcmp. */
static inline int
sl_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int	 c = memcmp(a, b, alen < blen ? alen : blen);

	return (c != 0 ? c : (alen < blen ? -1 : alen > blen));
}

/* 1..SL_LEVEL_MAX, P(> k) = 4^-k; advances *rng (xorshift64). */
int	sl_random_level(uint64_t *rng);

#define SL_GENERATE(name, type)						\
SL_FN struct type *						\
name##_alloc(int level, const char *key, size_t key_len)		\
{									\
	struct type	*n;						\
	size_t		 off;						\
									\
	off = sizeof *n + (size_t)level * sizeof n->next[0];		\
	n = xcalloc(1, off + key_len + 1);				\
	n->key = (char *)n + off;					\
	if (key_len > 0)						\
		memcpy(n->key, key, key_len);				\
	n->key_len = key_len;						\
	n->level = level;						\
	return (n);							\
}									\
									\
SL_FN void							\
name##_init(struct name *l)						\
{									\
	l->head = name##_alloc(SL_LEVEL_MAX, "", 0);			\
	l->level = 1;							\
	l->rng = SL_RNG_SEED;						\
}									\
									\
SL_FN struct type *						\
name##_node_new(struct name *l, const char *key, size_t key_len)	\
{									\
	return (name##_alloc(sl_random_level(&l->rng), key, key_len));	\
}									\
									\
SL_FN struct type *						\
name##_seek(struct name *l, const char *key, size_t key_len,		\
    int strict, struct type **update)					\
{									\
	struct type	*x = l->head, *n;				\
	int		 i, c;						\
									\
	for (i = l->level - 1; i >= 0; i--) {				\
		while ((n = x->next[i]) != NULL) {			\
			c = sl_cmp(n->key, n->key_len, key, key_len);	\
			if (c > 0 || (c == 0 && !strict))		\
				break;					\
			x = n;						\
		}							\
		if (update != NULL)					\
			update[i] = x;					\
	}								\
	return (x->next[0]);						\
}									\
									\
SL_FN struct type *						\
name##_find(struct name *l, const char *key, size_t key_len,		\
    struct type **update)						\
{									\
	struct type	*n;						\
									\
	n = name##_seek(l, key, key_len, 0, update);			\
	if (n != NULL && sl_cmp(n->key, n->key_len, key, key_len) == 0)	\
		return (n);						\
	return (NULL);							\
}									\
									\
SL_FN void							\
name##_insert(struct name *l, struct type *n, struct type **update)	\
{									\
	int	 i;							\
									\
	while (l->level < n->level)					\
		update[l->level++] = l->head;				\
	for (i = 0; i < n->level; i++) {				\
		n->next[i] = update[i]->next[i];			\
		update[i]->next[i] = n;					\
	}								\
}									\
									\
SL_FN void							\
name##_link(struct name *l, struct type *n)				\
{									\
	struct type	*update[SL_LEVEL_MAX];				\
									\
	name##_seek(l, n->key, n->key_len, 0, update);			\
	name##_insert(l, n, update);					\
}									\
									\
SL_FN void							\
name##_remove(struct type *n, struct type **update)			\
{									\
	int	 i;							\
									\
	for (i = 0; i < n->level; i++) {				\
		if (update[i]->next[i] == n)				\
			update[i]->next[i] = n->next[i];		\
	}								\
}									\
									\
SL_FN void							\
name##_unlink(struct name *l, struct type *n)				\
{									\
	struct type	*update[SL_LEVEL_MAX];				\
									\
	name##_seek(l, n->key, n->key_len, 0, update);			\
	name##_remove(n, update);					\
}									\
									\
SL_FN struct type *						\
name##_first(struct name *l)						\
{									\
	return (l->head->next[0]);					\
}									\
									\
SL_FN struct type *						\
name##_before(struct name *l, const char *key, size_t key_len)		\
{									\
	struct type	*update[SL_LEVEL_MAX], *x = l->head;		\
	int		 i;						\
									\
	if (key != NULL) {						\
		name##_seek(l, key, key_len, 0, update);		\
		x = update[0];						\
	} else {							\
		for (i = l->level - 1; i >= 0; i--)			\
			while (x->next[i] != NULL)			\
				x = x->next[i];				\
	}								\
	return (x == l->head ? NULL : x);				\
}									\
									\
SL_FN void							\
name##_clear(struct name *l, void (*fr)(struct type *))		\
{									\
	struct type	*n, *next;					\
	int		 i;						\
									\
	for (n = l->head->next[0]; n != NULL; n = next) {		\
		next = n->next[0];					\
		fr(n);							\
	}								\
	for (i = 0; i < SL_LEVEL_MAX; i++)				\
		l->head->next[i] = NULL;				\
	l->level = 1;							\
}									\
									\
SL_FN void							\
name##_free(struct name *l, void (*fr)(struct type *))		\
{									\
	if (l->head == NULL)						\
		return;							\
	name##_clear(l, fr);						\
	free(l->head);							\
	l->head = NULL;							\
}

#endif
