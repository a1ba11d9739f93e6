/*
 * The hash of every table keyed by something a client or another writer
 * of the store chooses (keys, lease ids from etcd): SipHash-2-4 under a
 * key drawn from the kernel's random source when the daemon starts, so
 * that keys which collide cannot be worked out offline and fed in
 * (metad-protocol(7), LIMITS).  The implementation is libsodium's
 * crypto_shorthash, a well-kept Debian library, rather than our own.
 *
 * store_hash_init() draws the key; before it (a unit test, a fuzz target)
 * the key is all zeros: the same hash, just not secret.
 */
#ifndef METAD_STORE_HASH_H
#define METAD_STORE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* 0, or -1 when no random key can be had (libsodium would not start). */
int		 store_hash_init(void);
uint64_t	 store_hash_bytes(const void *, size_t);
uint64_t	 store_hash_u64(uint64_t);

#endif
