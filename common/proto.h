/*
 * The protocol codec shared by metad and metactl: error codes, and typed,
 * validated access to the fields of a decoded JSON request or response.
 *
 * Ownership: proto_parse() returns a cJSON tree the caller frees with
 * cJSON_Delete().  Strings returned by the getters point into that tree and
 * live as long as it does; a struct proto_bytes may own a decoded copy, which
 * proto_bytes_free() releases.
 */
#ifndef METAD_PROTO_H
#define METAD_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util.h"

/* Stable error codes (metad-protocol(7)); the order is the table in proto.c. */
enum proto_code {
	PROTO_OK = 0,
	PROTO_BAD_REQUEST,
	PROTO_UNKNOWN_OP,
	PROTO_REQUEST_TOO_LARGE,
	PROTO_VALUE_TOO_LARGE,
	PROTO_FAILED_PRECONDITION,
	PROTO_FENCED,
	PROTO_COMPACTED,
	PROTO_TIMEOUT,
	PROTO_NOT_FOUND,
	PROTO_READ_ONLY,
	PROTO_PERMISSION_DENIED,
	PROTO_UNAVAILABLE,
	PROTO_STORAGE_FULL,
	PROTO_INTERNAL,
	PROTO_RESOURCE_EXHAUSTED,	/* a peer's (or the daemon's) quota */
	PROTO_ANSWER_TOO_LARGE		/* past --max-answer-bytes */
};
/* How many codes there are (PROTO_OK included): keep it after the last. */
#define PROTO_CODES	(PROTO_ANSWER_TOO_LARGE + 1)

#define PROTO_MSG_MAX	256

struct proto_err {
	enum proto_code	 code;
	char		 msg[PROTO_MSG_MAX];
};

const char	*proto_code_name(enum proto_code);
/* PROTO_INTERNAL for an unknown name. */
enum proto_code	 proto_code_parse(const char *);

/*
 * Sets e (NULL: none, for a caller that only wants the outcome) and
 * returns -1, so that callers can "return proto_fail(...)".
 */
int	proto_fail(struct proto_err *, enum proto_code, const char *, ...)
	    __attribute__((format(printf, 3, 4)));

/*
 * Decode one request or answer line (len bytes, need not be
 * NUL-terminated).  Refuses anything but a single JSON object.  A \u0000
 * escape in a string becomes the bytes C0 80 (cJSON strings are C
 * strings): proto_get_value and proto_kv_value turn them back into NUL,
 * proto_get_str refuses them, proto_print writes them as \u0000.
 */
cJSON	*proto_parse(const char *, size_t, struct proto_err *);

/*
 * Field getters.  Each returns 1 when the field is present and valid, 0 when
 * absent (an error if required, with -1 returned), -1 with e set when present
 * but invalid.  A JSON null counts as absent.
 */
int	proto_get_u64(const cJSON *, const char *, int required, uint64_t *,
	    struct proto_err *);
int	proto_get_bool(const cJSON *, const char *, int required, int *,
	    struct proto_err *);
int	proto_get_str(const cJSON *, const char *, int required,
	    const char **, size_t *, struct proto_err *);
/* A key: non-empty UTF-8, at most KEY_MAX_BYTES, no NUL. */
int	proto_get_key(const cJSON *, const char *, int required,
	    const char **, size_t *, struct proto_err *);
/* A prefix: like a key but may be empty. */
int	proto_get_prefix(const cJSON *, const char *, const char **,
	    size_t *, struct proto_err *);
int	proto_check_key(const char *, size_t, const char *field,
	    struct proto_err *);

struct proto_bytes {
	const unsigned char	*data;
	size_t			 len;
	unsigned char		*owned;
};

/*
 * "value" (a string) or "value_b64" (base64), not both; at most max bytes
 * after decoding (value_too_large otherwise).  out->data is followed by a
 * NUL byte (not counted in out->len), and may hold NUL bytes itself.
 */
int	proto_get_value(const cJSON *, int required, size_t max,
	    struct proto_bytes *, struct proto_err *);
void	proto_bytes_free(struct proto_bytes *);

/*
 * The value of a kv object or a put event in an answer, however large:
 * "value" (its \u0000 escapes NUL bytes again, see proto_parse) or
 * "value_b64".  1, 0 when it has neither, -1 when one is invalid; out->len
 * counts NUL bytes, so read it, never strlen(out->data).
 */
int	proto_kv_value(const cJSON *, struct proto_bytes *);

/*
 * j as JSON text appended to b, the inverse of proto_parse: integers
 * exact (never through a double), members in order, an object's member
 * named skip (NULL: none) left out, the C0 80 of a \u0000 written as
 * \u0000 again.  Use it, not cJSON's printer, for a tree proto_parse made.
 */
void	proto_print(struct buf *, const cJSON *, const char *skip);

/* A number field as an exact integer 0 <= n <= JSON_INT_MAX. */
int	proto_number_u64(const cJSON *, uint64_t *);

#endif
