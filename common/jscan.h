/*
 * A scanner of one JSON object's members on a line, without a tree (no
 * allocation): the direct decoder of requests (ops/ops_fast.c) and the
 * metad backend's reader of the watch stream (store_remote_feed.c) take
 * the lines it can read and leave the rest to cJSON.  What it reads: one
 * object, blanks (space, tab) between tokens and space, tab or CR after
 * it; at most max members, named without escapes; strings of bytes from
 * 0x20 with the escapes \" \\ \/ \b \f \n \r \t (no \u); integers
 * without fraction or exponent; true, false, null.  Anything else: -1.
 */
#ifndef METAD_JSCAN_H
#define METAD_JSCAN_H

#include <stddef.h>
#include <stdint.h>

/* A u64 of at most this many digits is below JSON_INT_MAX (2^53). */
#define JSCAN_U64_DIGITS	15

enum jscan_kind { JSCAN_STR, JSCAN_INT, JSCAN_TRUE, JSCAN_FALSE, JSCAN_NULL };

struct jscan_tok {
	const char	*p;	/* a string's bytes inside its quotes */
	size_t		 n;
	enum jscan_kind	 kind;
	int		 esc;	/* a string holding escapes */
};

struct jscan_member {
	const char	*name;
	size_t		 name_len;
	struct jscan_tok v;
};

/*
 * In a line a decoder has taken (valid JSON): the blanks (space, tab, CR,
 * LF) from s[i], the index after them; the string at s[i] (its quote), the
 * index after it; the value at s[i], the index of the ',', '}' or ']' that
 * ends it (len if none).  The request's id (ops_id.c) and a write sent on
 * whole (core/forward.c) are cut from their lines with them.
 */
size_t	jscan_skip_blanks(const char *, size_t, size_t);
size_t	jscan_skip_str(const char *, size_t, size_t);
size_t	jscan_skip_value(const char *, size_t, size_t);
/* The blanks (space, tab) from s[i]: the index after them. */
size_t	jscan_ws(const char *, size_t, size_t);
/* The members of the object on the line (at most max); their number, -1. */
int	jscan_members(const char *, size_t, struct jscan_member *, int max);
/*
 * A string's bytes, unescaped, into out (t->n + 1 bytes at least, a NUL
 * after them); their length.
 */
size_t	jscan_unescape(const struct jscan_tok *, char *out);
/* An unsigned integer of at most JSCAN_U64_DIGITS digits: 0, or -1. */
int	jscan_u64(const struct jscan_tok *, uint64_t *);

#endif
