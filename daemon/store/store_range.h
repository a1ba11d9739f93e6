/*
 * Ranges, the same on every backend (store_range.c): a range delete in a
 * batch (store_delete_range(), the batch having named the range in
 * store_keys.rkey), the end of a prefix, and the bounds of a range read
 * (struct store_range: prefix, start, end, after) as one span of keys.
 */
#ifndef METAD_STORE_RANGE_H
#define METAD_STORE_RANGE_H

#include "store/store.h"

/*
 * Delete every key in [key, end) (end NULL: every key from key on) at rev,
 * seq 0, 1, ... in key order, each detached from its lease as
 * store_delete() does; *n the keys deleted (0: nothing recorded).  The
 * batch named the range (store_keys.rkey).  store_range.c.
 */
int	store_delete_range(struct store *, uint64_t rev, const char *key,
	    size_t, const char *end, size_t, uint64_t *n, struct store_err *);
/*
 * The end of the range of keys that start with prefix: the first string
 * above them all, into end (room for len bytes); its length, or 0 when
 * there is none (the prefix is empty or all 0xff bytes).
 */
size_t	store_prefix_end(const char *prefix, size_t len, char *end);

/*
 * The keys a range may hold, as one span: lo <= key < hi (hi NULL: no
 * upper bound), from the prefix, start, end and after (store_range.c);
 * store_span_free() frees lo and hi.
 */
struct store_span {
	char			*lo;
	size_t			 lo_len;
	char			*hi;
	size_t			 hi_len;
};
void	store_range_span(const struct store_range *, struct store_span *);
void	store_span_free(struct store_span *);
/* 1 if key is in the span. */
int	store_span_has(const struct store_span *, const char *, size_t);

#endif
