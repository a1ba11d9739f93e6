/*
 * The skip list's level draw (skiplist.h has the list itself).
 */
#include <stdint.h>

#include "store/skiplist.h"

int
sl_random_level(uint64_t *rng)
{
	uint64_t	 x = *rng;
	int		 level = 1;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*rng = x;
	while ((x & 3) == 0 && level < SL_LEVEL_MAX) {
		level++;
		x >>= 2;
	}
	return (level);
}
