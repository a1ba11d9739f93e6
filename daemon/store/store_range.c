/*
 * Range deletes (store.h: store_delete_range()), the same on every
 * backend: the generic checks, then the backend's del_range.
 */
#include <string.h>

#include "store/store_backend.h"

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
