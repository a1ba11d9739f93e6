/*
 * Byte encodings used on the wire: UTF-8 validation and standard base64
 * (RFC 4648, with padding).
 */
#ifndef METAD_ENC_H
#define METAD_ENC_H

#include <stddef.h>

/* 1 if the bytes are well-formed UTF-8 (no overlongs, no surrogates). */
int	utf8_valid(const void *, size_t);

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
