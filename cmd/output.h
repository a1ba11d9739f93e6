/*
 * metactl's rendering, shared by the commands: the daemon's responses as
 * JSON lines (-o json), its errors, and text helpers (aligned tables, "name:
 * value" lines).  Results go to stdout, human messages to stderr.
 *
 * JSON is re-serialized from the decoded tree with integers written exactly
 * (PRIu64), never through cJSON's printer, and in the daemon's field order.
 *
 * Memory: an output_table owns copies of its cells; output_table_free()
 * releases them.  Nothing else here keeps a pointer.
 */
#ifndef METACTL_OUTPUT_H
#define METACTL_OUTPUT_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "util.h"

enum output_mode {
	OUTPUT_TEXT,
	OUTPUT_JSON
};

int	 output_mode_parse(const char *, enum output_mode *);

/* A JSON value appended to b, exactly. */
void	 output_json_append(struct buf *, const cJSON *);
/* A response object on one line of stdout, without its "id". */
void	 output_json(const cJSON *);
/* An object on one line of stdout, without the member named skip. */
void	 output_json_without(const cJSON *, const char *skip);

/*
 * A key or a value as one token of a text line (watch, txn), so that a
 * line splits back unambiguously:
 * - bare when it is non-empty, has no byte <= ' ' (space, tab, newline and
 *   other control characters) or DEL, and does not start with '"', '(' or
 *   "b64:";
 * - otherwise a JSON string literal ("a b", "", "line\n", "a\u0000b": a
 *   NUL byte too is a control character);
 * - a value that is not UTF-8 (the daemon sent "value_b64") as
 *   b64:BASE64.
 * A token never starts with '(', so "(not found)" is never a value.
 */
#define OUTPUT_B64_PREFIX	"b64:"
#define OUTPUT_B64_PREFIX_LEN	4

void	 output_token(struct buf *, const char *, size_t);
/*
 * obj's "value" or "value_b64" as a token (proto_kv_value: its bytes, NUL
 * ones included); -1 if it has neither or an invalid one.
 */
int	 output_token_value(struct buf *, const cJSON *obj);

/*
 * An error response: "metactl: CODE: MESSAGE (details)" on stderr; with
 * OUTPUT_JSON, the response object on stdout as well.  Returns the code.
 */
const char	*output_error(enum output_mode, const cJSON *);
/* Nonzero: the line of a REPL script, named first ("line N: CODE..."). */
extern unsigned long	 output_error_lineno;

/*
 * The fields of an object but "ok", "id" and the one named skip (NULL:
 * none), one "name: value" a line.
 */
void	 output_fields(const cJSON *, const char *skip);

/* Rows of columns, printed aligned; right-aligned columns by bit mask. */
#define OUTPUT_TABLE_MAX_COLS	8

struct output_table {
	size_t		 ncols;
	unsigned int	 right;
	char		**cells;	/* nrows * ncols */
	size_t		 nrows;
	size_t		 cap;
	size_t		 width[OUTPUT_TABLE_MAX_COLS];
};

void	 output_table_init(struct output_table *, size_t ncols,
	     unsigned int right);
void	 output_table_add(struct output_table *, const char **);
void	 output_table_print(struct output_table *);
void	 output_table_free(struct output_table *);

#endif
