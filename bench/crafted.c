/*
 * Keys crafted to collide in an unkeyed hash table, as an attacker would
 * make them: every key's FNV-1a hash (the function metad's tables used
 * before they were keyed) ends in CRAFTED_BITS zero bits, so in any table
 * of up to 2^CRAFTED_BITS slots indexed by the hash's low bits they all
 * fall in one slot.  Found by meeting in the middle: the low bits of FNV-1a
 * depend only on the low bits of its state, and a step is invertible (the
 * prime is odd), so the states that reach zero through two last characters
 * are tabled once, and each prefix tries every pair of next characters
 * against that table (about 16 keys a prefix, 4096 steps each).
 *
 * Shared by metabench --crafted and the unit test of the keyed hash.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "crafted.h"

#define FNV_OFFSET	14695981039346656037ULL
#define FNV_PRIME	1099511628211ULL
#define CRAFTED_MASK	((UINT64_C(1) << CRAFTED_BITS) - 1)

static const char	 crafted_alpha[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

uint64_t
crafted_fnv1a(const char *s, size_t n)
{
	uint64_t	 h = FNV_OFFSET;
	size_t		 i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * FNV_PRIME;
	return (h);
}

/* The inverse of FNV's prime modulo 2^64 (Newton's iteration). */
static uint64_t
crafted_prime_inverse(void)
{
	uint64_t	 inv = FNV_PRIME;
	int		 i;

	for (i = 0; i < 6; i++)
		inv *= 2 - FNV_PRIME * inv;
	return (inv);
}

char **
crafted_keys(const char *prefix, size_t count)
{
	uint16_t	*back;
	char		**keys, stem[64];
	uint64_t	 inv = crafted_prime_inverse(), s0, s1, s2;
	size_t		 n = 0, plen, a, b, i;
	unsigned long	 p;

	back = calloc((size_t)CRAFTED_MASK + 1, sizeof *back);
	keys = calloc(count + 1, sizeof *keys);
	if (back == NULL || keys == NULL) {
		perror("crafted_keys");
		exit(1);
	}
	/* The state before the last two characters a, b that ends in 0. */
	for (a = 0; a < 64; a++)
		for (b = 0; b < 64; b++) {
			s2 = (((unsigned char)crafted_alpha[b] * inv) &
			    CRAFTED_MASK) ^ (unsigned char)crafted_alpha[a];
			back[s2] = (uint16_t)(1 + a * 64 + b);
		}
	for (p = 0; n < count; p++) {
		plen = (size_t)snprintf(stem, sizeof stem, "%s%08lx", prefix, p);
		s0 = crafted_fnv1a(stem, plen);
		for (a = 0; a < 64 && n < count; a++) {
			s1 = (s0 ^ (unsigned char)crafted_alpha[a]) * FNV_PRIME;
			for (b = 0; b < 64 && n < count; b++) {
				s2 = ((s1 ^ (unsigned char)crafted_alpha[b]) *
				    FNV_PRIME) & CRAFTED_MASK;
				if ((i = back[s2]) == 0)
					continue;
				i--;
				if ((keys[n] = malloc(plen + 5)) == NULL) {
					perror("crafted_keys");
					exit(1);
				}
				memcpy(keys[n], stem, plen);
				keys[n][plen] = crafted_alpha[a];
				keys[n][plen + 1] = crafted_alpha[b];
				keys[n][plen + 2] = crafted_alpha[i / 64];
				keys[n][plen + 3] = crafted_alpha[i % 64];
				keys[n][plen + 4] = '\0';
				n++;
			}
		}
	}
	free(back);
	return (keys);
}

void
crafted_free(char **keys)
{
	size_t	 i;

	for (i = 0; keys != NULL && keys[i] != NULL; i++)
		free(keys[i]);
	free(keys);
}
