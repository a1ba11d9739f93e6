/*
 * Keys that all collide in a table indexed by FNV-1a's low bits
 * (crafted.c); for the keyed hash's benchmark and its unit test.
 */
#ifndef METAD_CRAFTED_H
#define METAD_CRAFTED_H

#include <stddef.h>
#include <stdint.h>

#define CRAFTED_BITS	20

uint64_t	 crafted_fnv1a(const char *, size_t);
/* count keys (a NULL after them), each PREFIX + 12 characters. */
char		**crafted_keys(const char *prefix, size_t count);
void		 crafted_free(char **);

#endif
