#include <string.h>

#include <sodium.h>

#include "store/store_hash.h"

_Static_assert(crypto_shorthash_BYTES == sizeof(uint64_t), "a 64-bit hash");

static unsigned char	 store_hash_key[crypto_shorthash_KEYBYTES];

int
store_hash_init(void)
{
	if (sodium_init() < 0)
		return (-1);
	randombytes_buf(store_hash_key, sizeof store_hash_key);
	return (0);
}

uint64_t
store_hash_bytes(const void *p, size_t len)
{
	unsigned char	 out[crypto_shorthash_BYTES];
	uint64_t	 h;

	crypto_shorthash(out, p, len, store_hash_key);
	memcpy(&h, out, sizeof h);
	return (h);
}

uint64_t
store_hash_u64(uint64_t v)
{
	return (store_hash_bytes(&v, sizeof v));
}
