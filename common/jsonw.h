/*
 * A small streaming JSON writer into a struct buf.  It places commas itself;
 * integers are written exactly (PRIu64), never through a double.  Strings
 * must be valid UTF-8 (callers check); control characters are escaped.
 * The writer does not own the buffer.
 */
#ifndef METAD_JSONW_H
#define METAD_JSONW_H

#include <stddef.h>
#include <stdint.h>

#include "util.h"

#define JW_MAX_DEPTH	16

struct jw {
	struct buf	*b;
	int		 depth;
	int		 after_name;
	unsigned char	 comma[JW_MAX_DEPTH];
};

void	jw_init(struct jw *, struct buf *);
void	jw_obj_open(struct jw *);
void	jw_obj_close(struct jw *);
void	jw_arr_open(struct jw *);
void	jw_arr_close(struct jw *);
void	jw_name(struct jw *, const char *);
/* jw_name() of a literal name with no character to escape: its quotes
 * and colon joined to it by the compiler, copied as they are. */
#define JW_NAME(w, lit)	jw_name_raw((w), "\"" lit "\":", sizeof(lit) + 2)
void	jw_name_raw(struct jw *, const char *, size_t);
void	jw_str(struct jw *, const char *, size_t);
void	jw_cstr(struct jw *, const char *);
void	jw_u64(struct jw *, uint64_t);
void	jw_bool(struct jw *, int);
void	jw_null(struct jw *);
void	jw_raw(struct jw *, const char *, size_t);	/* a JSON value */
/*
 * A value's bytes, named "value" when they are valid UTF-8 (a NUL byte
 * included, as \u0000, and every control character escaped), else
 * "value_b64" (base64): the form of every answer (metad-protocol(7), KEYS,
 * VALUES AND KV OBJECTS).
 */
void	jw_value(struct jw *, const void *, size_t);
/*
 * The same for a request, which may use either form: "value_b64" too when
 * it is shorter than the escaped text (a control character takes 6 bytes),
 * so that a value within the daemon's value limit never makes a request
 * longer than its request limit (4/3 of it).
 */
void	jw_value_req(struct jw *, const void *, size_t);

/* Append a JSON string literal for s (escaped) to b. */
void	json_escape(struct buf *, const char *, size_t);
/* What json_escape() and jw_value() write, in bytes (quotes included). */
size_t	json_escaped_len(const char *, size_t);
size_t	jw_value_len(const void *, size_t);

#endif
