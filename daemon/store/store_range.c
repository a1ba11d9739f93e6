/*
 * Ranges the same on every backend: the span of a range read's bounds,
 * and range deletes (store.h: store_delete_range()), the generic checks,
 * then the backend's del_range.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store_backend.h"
#include "util.h"
#include "store/store_range.h"

/* Bytewise, a proper prefix first (store.h). */
static int
span_cmp(const char *a, size_t al, const char *b, size_t bl)
{
	size_t	 n = al < bl ? al : bl;
	int	 c = n > 0 ? memcmp(a, b, n) : 0;

	if (c != 0)
		return (c);
	return (al < bl ? -1 : al > bl);
}

/* lo = the higher of lo and k (k + a NUL byte, just above it, if above). */
static void
span_raise(struct store_span *sp, const char *k, size_t len, int above)
{
	size_t	 n = len + (above ? 1 : 0);
	char	*c = xcalloc(1, n + 1);

	if (len > 0)
		memcpy(c, k, len);
	if (sp->lo != NULL && span_cmp(c, n, sp->lo, sp->lo_len) <= 0) {
		free(c);
		return;
	}
	free(sp->lo);
	sp->lo = c;
	sp->lo_len = n;
}

/* hi = the lower of hi and k. */
static void
span_lower(struct store_span *sp, const char *k, size_t len)
{
	if (sp->hi != NULL && span_cmp(k, len, sp->hi, sp->hi_len) >= 0)
		return;
	free(sp->hi);
	sp->hi = xcalloc(1, len + 1);
	if (len > 0)
		memcpy(sp->hi, k, len);
	sp->hi_len = len;
}

void
store_range_span(const struct store_range *r, struct store_span *sp)
{
	char	*pe;
	size_t	 n;

	memset(sp, 0, sizeof *sp);
	span_raise(sp, r->prefix, r->prefix_len, 0);
	pe = xmalloc(r->prefix_len + 1);
	if ((n = store_prefix_end(r->prefix, r->prefix_len, pe)) > 0)
		span_lower(sp, pe, n);
	free(pe);
	if (r->start != NULL)
		span_raise(sp, r->start, r->start_len, 0);
	if (r->end != NULL)
		span_lower(sp, r->end, r->end_len);
	if (r->after != NULL && !r->reverse)
		span_raise(sp, r->after, r->after_len, 1);
	else if (r->after != NULL)
		span_lower(sp, r->after, r->after_len);
}

void
store_span_free(struct store_span *sp)
{
	free(sp->lo);
	free(sp->hi);
	memset(sp, 0, sizeof *sp);
}

int
store_span_has(const struct store_span *sp, const char *key, size_t len)
{
	return (span_cmp(key, len, sp->lo, sp->lo_len) >= 0 &&
	    (sp->hi == NULL || span_cmp(key, len, sp->hi, sp->hi_len) < 0));
}

size_t
store_prefix_end(const char *prefix, size_t len, char *end)
{
	while (len > 0 && (unsigned char)prefix[len - 1] == 0xff)
		len--;
	if (len == 0)
		return (0);
	memcpy(end, prefix, len);
	end[len - 1] = (char)((unsigned char)end[len - 1] + 1);
	return (len);
}

int
store_delete_range(struct store *s, uint64_t rev, const char *key,
    size_t key_len, const char *end, size_t end_len, uint64_t *n,
    struct store_err *err)
{
	uint64_t	 dn;

	if (n == NULL)
		n = &dn;
	*n = 0;
	/* An empty start is every key from the first (a list's "" prefix). */
	if (store_check_write(s, "range delete", rev, key_len > 0 ? key_len :
	    1, err) != 0)
		return (-1);
	if (end != NULL && (end_len == 0 || end_len > KEY_MAX_BYTES))
		return (store_err_set(err, STORE_ERR_INTERNAL, "range delete: "
		    "an end of %zu bytes", end_len));
	if (s->backend->del_range == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "the %s backend "
		    "has no range delete", s->backend->name));
	if (s->backend->del_range(s, rev, key, key_len, end, end_len, n,
	    err) != 0)
		return (-1);
	if (*n > 0)
		store_wrote(s, rev);
	return (0);
}
