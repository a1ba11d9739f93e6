/*
 * Byte encodings used on the wire: UTF-8 validation and standard base64
 * (RFC 4648, with padding).
 */
#ifndef METAD_ENC_H
#define METAD_ENC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* 1 if the bytes are well-formed UTF-8 (no overlongs, no surrogates). */
int	utf8_valid(const void *, size_t);

#define ENC_ONES	0x0101010101010101ULL
#define ENC_HIGHS	(ENC_ONES * 0x80)

/* The 8 bytes at p as one word (any alignment). */
static inline uint64_t
enc_load8(const void *p)
{
	uint64_t	 w;

	memcpy(&w, p, sizeof w);
	return (w);
}

/*
 * 1 if the 8 bytes at p are ASCII from 0x20 other than '"' and '\\': bytes
 * a JSON string holds as they are.  A word at a time: (v - ENC_ONES) & ~v
 * & ENC_HIGHS is nonzero exactly when v holds a zero byte.
 */
static inline int
enc_json_plain8(const void *p)
{
	uint64_t	 w = enc_load8(p), q, b;

	q = w ^ (ENC_ONES * '"');
	b = w ^ (ENC_ONES * '\\');
	return (((w | ((w - ENC_ONES * 0x20) & ~w) | ((q - ENC_ONES) & ~q) |
	    ((b - ENC_ONES) & ~b)) & ENC_HIGHS) == 0);
}

/* Encoded length of n bytes, without the NUL. */
size_t	b64_encoded_len(size_t);
/* Writes b64_encoded_len(n) characters plus a NUL into out. */
void	b64_encode(const void *, size_t, char *out);
/*
 * Decodes strict, padded base64 into out (room for len / 4 * 3 bytes).
 * Returns the decoded length, or -1 for invalid input.
 */
long	b64_decode(const char *, size_t, unsigned char *out);

#endif
