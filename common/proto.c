#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "jsonw.h"
#include "metad_limits.h"
#include "proto.h"
#include "util.h"

static const char *proto_code_names[] = {
	"ok",
	"bad_request",
	"unknown_op",
	"request_too_large",
	"value_too_large",
	"failed_precondition",
	"fenced",
	"compacted",
	"timeout",
	"not_found",
	"read_only",
	"permission_denied",
	"unavailable",
	"storage_full",
	"internal",
	"resource_exhausted",
	"answer_too_large"
};

const char *
proto_code_name(enum proto_code c)
{
	if ((size_t)c >= sizeof proto_code_names / sizeof proto_code_names[0])
		return ("internal");
	return (proto_code_names[c]);
}

enum proto_code
proto_code_parse(const char *s)
{
	size_t	 i;

	for (i = 1; i < sizeof proto_code_names / sizeof proto_code_names[0];
	    i++) {
		if (strcmp(s, proto_code_names[i]) == 0)
			return ((enum proto_code)i);
	}
	return (PROTO_INTERNAL);
}

int
proto_fail(struct proto_err *e, enum proto_code code, const char *fmt, ...)
{
	va_list	 ap;

	if (e == NULL)		/* a caller that wants no words */
		return (-1);
	e->code = code;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof e->msg, fmt, ap);
	va_end(ap);
	return (-1);
}

/*
 * A \u0000 escape cannot reach us through cJSON, whose strings end at
 * their first NUL: each one in a string is turned into the two bytes
 * C0 80 (Java's "modified UTF-8" NUL) before parsing, which no valid
 * UTF-8 holds, so that a value (proto_get_value, proto_kv_value) turns
 * them back into NUL bytes and every other string refuses them
 * (proto_get_str); a line that holds C0 80 itself is refused (invalid
 * UTF-8 wherever it is).  Requests (metad) and answers (metactl,
 * libmetad-client) are parsed the same way, and json_escape() writes C0 80
 * back as \u0000 (proto_print).
 * The copy, or NULL if the line holds no \u0000 escape.
 */
static char *
proto_nul_escapes(const char *s, size_t n, size_t *outlen)
{
	char	*out = NULL;
	size_t	 i, o = 0;
	int	 in_str = 0;

	for (i = 0; i < n; i++) {
		if (in_str && s[i] == '\\' && i + 5 < n && s[i + 1] == 'u' &&
		    memcmp(s + i + 2, "0000", 4) == 0) {
			if (out == NULL) {
				out = xmalloc(n);
				memcpy(out, s, i);
				o = i;
			}
			out[o++] = (char)0xc0;
			out[o++] = (char)0x80;
			i += 5;
			continue;
		}
		if (!in_str && s[i] == '"')
			in_str = 1;
		else if (in_str && s[i] == '"')
			in_str = 0;
		else if (in_str && s[i] == '\\' && i + 1 < n) {
			if (out != NULL)
				out[o++] = s[i];
			i++;
		}
		if (out != NULL)
			out[o++] = s[i];
	}
	*outlen = o;
	return (out);
}

static int
proto_name_cmp(const void *a, const void *b)
{
	return (strcmp(*(const char *const *)a, *(const char *const *)b));
}

/* The name is quoted when it is short UTF-8 (an error line is UTF-8). */
static int
proto_dup_name(const char *name, struct proto_err *e)
{
	size_t	 n = strlen(name);

	if (n > 64 || !utf8_valid(name, n) || memchr(name, '"', n) != NULL ||
	    memchr(name, '\\', n) != NULL)
		return (proto_fail(e, PROTO_BAD_REQUEST, "a member name "
		    "appears twice in one object"));
	return (proto_fail(e, PROTO_BAD_REQUEST, "member \"%s\" appears "
	    "twice in one object", name));
}

/*
 * 0 when no object in j names a member twice, else -1 with e: decoders
 * disagree on which of two wins (cJSON the first, Python's and Go's the
 * last), so a proxy that filters requests could be bypassed.  Names are
 * compared decoded ("\u0069d" is "id"); an object of many members is
 * checked by sorting its names, so the cost is never quadratic.
 */
static int
proto_unique_names(const cJSON *j, struct proto_err *e)
{
	const cJSON	*c, *d;
	const char	**names;
	size_t		 n = 0, i;
	int		 dup = 0;

	for (c = j->child; c != NULL; c = c->next) {
		if ((cJSON_IsObject(c) || cJSON_IsArray(c)) &&
		    proto_unique_names(c, e) != 0)
			return (-1);
		n++;
	}
	if (!cJSON_IsObject(j) || n < 2)
		return (0);
	if (n <= 16) {
		for (c = j->child; c != NULL; c = c->next)
			for (d = c->next; d != NULL; d = d->next)
				if (strcmp(c->string, d->string) == 0)
					return (proto_dup_name(c->string, e));
		return (0);
	}
	names = xcalloc(n, sizeof *names);
	for (i = 0, c = j->child; c != NULL; c = c->next)
		names[i++] = c->string;
	qsort(names, n, sizeof *names, proto_name_cmp);
	for (i = 1; i < n && !dup; i++)
		if (strcmp(names[i - 1], names[i]) == 0)
			dup = proto_dup_name(names[i], e);
	free(names);
	return (dup);
}

/* proto_parse's JSON, checked: one object, its names unique. */
static cJSON *
proto_checked(cJSON *j, struct proto_err *e)
{
	if (proto_unique_names(j, e) != 0) {
		cJSON_Delete(j);
		return (NULL);
	}
	return (j);
}

static int
proto_hex(char c)
{
	return ((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' &&
	    (c | 0x20) <= 'f'));
}

/*
 * Every string in the line as RFC 8259 writes one, and only its four
 * blanks between tokens (cJSON takes any byte below 0x20 for a blank): no
 * raw control character in a string, every escape one of \" \\ \/ \b \f \n \r \t \uXXXX.  cJSON
 * is lax there: it takes "ab\u00zz" as "ab" and a NUL, which would store a
 * truncated key or value without a word.  0, or -1 with e.
 */
static int
proto_strict_strings(const char *s, size_t len, struct proto_err *e)
{
	size_t	 i;
	int	 in = 0;

	for (i = 0; i < len; i++) {
		if (!in && (unsigned char)s[i] < 0x20 && s[i] != ' ' &&
		    s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
			return (proto_fail(e, PROTO_BAD_REQUEST, "request is "
			    "not valid JSON: a control character between "
			    "tokens (byte %zu)", i));
		if (!in) {
			in = s[i] == '"';
			continue;
		}
		if (s[i] == '"')
			in = 0;
		else if ((unsigned char)s[i] < 0x20)
			return (proto_fail(e, PROTO_BAD_REQUEST, "request is "
			    "not valid JSON: a control character in a string "
			    "(byte %zu)", i));
		else if (s[i] == '\\') {
			if (i + 1 < len && strchr("\"\\/bfnrt", s[i + 1]) != NULL &&
			    s[i + 1] != '\0') {
				i++;
				continue;
			}
			if (i + 5 >= len || s[i + 1] != 'u' ||
			    !proto_hex(s[i + 2]) || !proto_hex(s[i + 3]) ||
			    !proto_hex(s[i + 4]) || !proto_hex(s[i + 5]))
				return (proto_fail(e, PROTO_BAD_REQUEST,
				    "request is not valid JSON: a bad escape "
				    "in a string (byte %zu)", i));
			i += 5;
		}
	}
	return (0);
}

cJSON *
proto_parse(const char *line, size_t len, struct proto_err *e)
{
	cJSON		*j;
	const char	*end = NULL;
	char		*copy;
	size_t		 clen;

	if (memchr(line, '\0', len) != NULL) {
		proto_fail(e, PROTO_BAD_REQUEST, "request holds a NUL byte");
		return (NULL);
	}
	if (proto_strict_strings(line, len, e) != 0)
		return (NULL);
	if (memmem(line, len, "\xc0\x80", 2) != NULL) {
		proto_fail(e, PROTO_BAD_REQUEST, "request is not valid UTF-8 "
		    "(it holds the bytes C0 80)");
		return (NULL);
	}
	if ((copy = proto_nul_escapes(line, len, &clen)) != NULL) {
		j = cJSON_ParseWithLengthOpts(copy, clen, &end, 0);
		if (j != NULL && end != NULL) {
			while (end < copy + clen && (*end == ' ' ||
			    *end == '\t' || *end == '\r' || *end == '\n'))
				end++;
			if (end == copy + clen && cJSON_IsObject(j)) {
				free(copy);
				return (proto_checked(j, e));
			}
		}
		/* Not valid: the errors below, as for the line itself. */
		cJSON_Delete(j);
		free(copy);
		end = NULL;
	}
	j = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (j == NULL) {
		proto_fail(e, PROTO_BAD_REQUEST,
		    "request is not valid JSON (near byte %zu)",
		    end != NULL && end >= line ? (size_t)(end - line) : 0);
		return (NULL);
	}
	while (end != NULL && end < line + len &&
	    (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n'))
		end++;
	if (end != NULL && end != line + len) {
		cJSON_Delete(j);
		proto_fail(e, PROTO_BAD_REQUEST,
		    "request has trailing data after the JSON object");
		return (NULL);
	}
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		proto_fail(e, PROTO_BAD_REQUEST, "request is not a JSON object");
		return (NULL);
	}
	return (proto_checked(j, e));
}

static const cJSON *
proto_field(const cJSON *obj, const char *name)
{
	const cJSON	*f;

	f = cJSON_GetObjectItemCaseSensitive(obj, name);
	if (f == NULL || cJSON_IsNull(f))
		return (NULL);
	return (f);
}

static int
proto_absent(const char *name, int required, struct proto_err *e)
{
	if (required)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "missing field \"%s\"", name));
	return (0);
}

int
proto_number_u64(const cJSON *f, uint64_t *out)
{
	double	 d;

	if (!cJSON_IsNumber(f))
		return (-1);
	d = f->valuedouble;
	if (!(d >= 0) || d > (double)JSON_INT_MAX || floor(d) != d)
		return (-1);
	*out = (uint64_t)d;
	return (0);
}

int
proto_get_u64(const cJSON *obj, const char *name, int required,
    uint64_t *out, struct proto_err *e)
{
	const cJSON	*f;

	if ((f = proto_field(obj, name)) == NULL)
		return (proto_absent(name, required, e));
	if (proto_number_u64(f, out) != 0)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\" must be an integer from 0 to %llu", name,
		    (unsigned long long)JSON_INT_MAX));
	return (1);
}

int
proto_get_bool(const cJSON *obj, const char *name, int required, int *out,
    struct proto_err *e)
{
	const cJSON	*f;

	if ((f = proto_field(obj, name)) == NULL)
		return (proto_absent(name, required, e));
	if (!cJSON_IsBool(f))
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\" must be true or false", name));
	*out = cJSON_IsTrue(f);
	return (1);
}

int
proto_get_str(const cJSON *obj, const char *name, int required,
    const char **out, size_t *len, struct proto_err *e)
{
	const cJSON	*f;

	if ((f = proto_field(obj, name)) == NULL)
		return (proto_absent(name, required, e));
	if (!cJSON_IsString(f))
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\" must be a string", name));
	*out = f->valuestring;
	*len = strlen(f->valuestring);
	if (memmem(*out, *len, "\xc0\x80", 2) != NULL)	/* proto_parse */
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\" may not hold a NUL (\\u0000); only a "
		    "value may", name));
	if (!utf8_valid(*out, *len))
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\" is not valid UTF-8", name));
	return (1);
}

int
proto_check_key(const char *key, size_t len, const char *field,
    struct proto_err *e)
{
	if (len == 0)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\": a key may not be empty", field));
	if (len > KEY_MAX_BYTES)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\": key is %zu bytes, the limit is %d", field,
		    len, KEY_MAX_BYTES));
	if (memchr(key, '\0', len) != NULL)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\": a key may not hold a NUL byte", field));
	if (!utf8_valid(key, len))
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\": key is not valid UTF-8", field));
	return (0);
}

int
proto_get_key(const cJSON *obj, const char *name, int required,
    const char **out, size_t *len, struct proto_err *e)
{
	int	 r;

	if ((r = proto_get_str(obj, name, required, out, len, e)) != 1)
		return (r);
	if (proto_check_key(*out, *len, name, e) != 0)
		return (-1);
	return (1);
}

int
proto_get_prefix(const cJSON *obj, const char *name, const char **out,
    size_t *len, struct proto_err *e)
{
	int	 r;

	if ((r = proto_get_str(obj, name, 0, out, len, e)) != 1) {
		if (r == 0) {
			*out = "";
			*len = 0;
		}
		return (r);
	}
	if (*len > KEY_MAX_BYTES)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"%s\" is %zu bytes, the limit is %d", name, *len,
		    KEY_MAX_BYTES));
	return (1);
}

/* A "value" with \u0000 escapes (C0 80 here, proto_parse): NUL bytes. */
static int
proto_value_nul(const char *s, size_t n, size_t max, struct proto_bytes *out,
    struct proto_err *e)
{
	size_t	 i, o = 0;

	out->owned = xmalloc(n + 1);
	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] == 0xc0 && i + 1 < n &&
		    (unsigned char)s[i + 1] == 0x80) {
			out->owned[o++] = '\0';
			i++;
		} else
			out->owned[o++] = (unsigned char)s[i];
	}
	if (!utf8_valid((const char *)out->owned, o)) {
		proto_bytes_free(out);
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"value\" is "
		    "not valid UTF-8 (use value_b64 for bytes)"));
	}
	if (o > max) {
		proto_bytes_free(out);
		return (proto_fail(e, PROTO_VALUE_TOO_LARGE, "value is %zu "
		    "bytes, the limit is %zu (--max-value-bytes)", o, max));
	}
	out->owned[o] = '\0';
	out->data = out->owned;
	out->len = o;
	return (1);
}

int
proto_get_value(const cJSON *obj, int required, size_t max,
    struct proto_bytes *out, struct proto_err *e)
{
	const cJSON	*v, *b;
	size_t		 n;
	long		 dec;

	memset(out, 0, sizeof *out);
	v = proto_field(obj, "value");
	b = proto_field(obj, "value_b64");
	if (v != NULL && b != NULL)
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "give \"value\" or \"value_b64\", not both"));
	if (v == NULL && b == NULL)
		return (proto_absent("value", required, e));
	if (v != NULL) {
		if (!cJSON_IsString(v))
			return (proto_fail(e, PROTO_BAD_REQUEST,
			    "field \"value\" must be a string (use value_b64 "
			    "for bytes)"));
		n = strlen(v->valuestring);
		if (memmem(v->valuestring, n, "\xc0\x80", 2) != NULL)
			return (proto_value_nul(v->valuestring, n, max, out,
			    e));
		if (!utf8_valid(v->valuestring, n))
			return (proto_fail(e, PROTO_BAD_REQUEST,
			    "field \"value\" is not valid UTF-8 (use "
			    "value_b64 for bytes)"));
		if (n > max)
			return (proto_fail(e, PROTO_VALUE_TOO_LARGE,
			    "value is %zu bytes, the limit is %zu "
			    "(--max-value-bytes)", n, max));
		out->data = (const unsigned char *)v->valuestring;
		out->len = n;
		return (1);
	}
	if (!cJSON_IsString(b))
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"value_b64\" must be a base64 string"));
	n = strlen(b->valuestring);
	if (n / 4 * 3 > max && n / 4 * 3 - max > 2)
		return (proto_fail(e, PROTO_VALUE_TOO_LARGE,
		    "value is about %zu bytes, the limit is %zu "
		    "(--max-value-bytes)", n / 4 * 3, max));
	out->owned = xmalloc(n / 4 * 3 + 1);
	if ((dec = b64_decode(b->valuestring, n, out->owned)) < 0) {
		proto_bytes_free(out);
		return (proto_fail(e, PROTO_BAD_REQUEST,
		    "field \"value_b64\" is not valid base64"));
	}
	if ((size_t)dec > max) {
		proto_bytes_free(out);
		return (proto_fail(e, PROTO_VALUE_TOO_LARGE,
		    "value is %ld bytes, the limit is %zu "
		    "(--max-value-bytes)", dec, max));
	}
	out->owned[dec] = '\0';
	out->data = out->owned;
	out->len = (size_t)dec;
	return (1);
}

void
proto_bytes_free(struct proto_bytes *b)
{
	free(b->owned);
	memset(b, 0, sizeof *b);
}

int
proto_kv_value(const cJSON *obj, struct proto_bytes *out)
{
	struct proto_err	 e;

	return (proto_get_value(obj, 0, SIZE_MAX, out, &e));
}

static void
proto_print_number(struct buf *b, const cJSON *n)
{
	uint64_t	 u;
	double		 d = n->valuedouble;

	if (proto_number_u64(n, &u) == 0)
		buf_printf(b, "%" PRIu64, u);
	else if (d < 0 && d >= -(double)JSON_INT_MAX && floor(d) == d)
		buf_printf(b, "%" PRId64, (int64_t)d);
	else
		buf_printf(b, "%.17g", d);
}

void
proto_print(struct buf *b, const cJSON *j, const char *skip)
{
	const cJSON	*c;
	int		 first = 1;

	if (cJSON_IsObject(j) || cJSON_IsArray(j)) {
		buf_addc(b, cJSON_IsObject(j) ? '{' : '[');
		for (c = j->child; c != NULL; c = c->next) {
			if (cJSON_IsObject(j) && skip != NULL &&
			    strcmp(c->string, skip) == 0)
				continue;
			if (!first)
				buf_addc(b, ',');
			first = 0;
			if (cJSON_IsObject(j)) {
				json_escape(b, c->string, strlen(c->string));
				buf_addc(b, ':');
			}
			proto_print(b, c, NULL);
		}
		buf_addc(b, cJSON_IsObject(j) ? '}' : ']');
	} else if (cJSON_IsString(j))
		json_escape(b, j->valuestring, strlen(j->valuestring));
	else if (cJSON_IsNumber(j))
		proto_print_number(b, j);
	else if (cJSON_IsBool(j))
		buf_addstr(b, cJSON_IsTrue(j) ? "true" : "false");
	else
		buf_addstr(b, "null");
}
