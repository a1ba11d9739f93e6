/*
 * A request's "id" (metad-protocol(7), REQUESTS): a string of at most
 * ID_MAX_BYTES once decoded, or an integer of at most ID_MAX_DIGITS digits,
 * echoed in its response byte for byte as it was sent: the member's own
 * text is taken from the line, not printed again from what cJSON decoded
 * (a double rounds an integer past 2^53; a string's escapes would change).
 * Anything else (a fraction, an exponent, true, false, null, an object or
 * an array) is bad_request, answered without an id.
 */
#include <string.h>

#include "enc.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "util.h"

#define ID_MAX_DIGITS	64

/* i past the JSON string that starts at s[i] (a '"'), in valid JSON. */
static size_t
ops_id_skip_str(const char *s, size_t len, size_t i)
{
	for (i++; i < len && s[i] != '"'; i++) {
		if (s[i] == '\\')
			i++;
	}
	return (i + 1);
}

static size_t
ops_id_skip_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
	    s[i] == '\n'))
		i++;
	return (i);
}

/* One character of a member name at s[*i] ('\uXXXX' decoded), or -1. */
static long
ops_id_name_char(const char *s, size_t end, size_t *i)
{
	long	 c = 0;
	size_t	 k;

	if (s[*i] != '\\')
		return ((unsigned char)s[(*i)++]);
	if (*i + 1 < end && s[*i + 1] != 'u') {
		*i += 2;
		return (-1);	/* \n, \t...: never a letter of "id" */
	}
	if (*i + 6 > end)
		return (-1);
	for (k = *i + 2; k < *i + 6; k++) {
		c <<= 4;
		if (s[k] >= '0' && s[k] <= '9')
			c |= s[k] - '0';
		else if ((s[k] | 0x20) >= 'a' && (s[k] | 0x20) <= 'f')
			c |= (s[k] | 0x20) - 'a' + 10;
		else
			return (-1);
	}
	*i += 6;
	return (c);
}

/* The member name s[i..end) (inside its quotes) decodes to "id". */
static int
ops_id_name_is_id(const char *s, size_t i, size_t end)
{
	if (end - i == 2)
		return (s[i] == 'i' && s[i + 1] == 'd');
	if (ops_id_name_char(s, end, &i) != 'i' ||
	    ops_id_name_char(s, end, &i) != 'd')
		return (0);
	return (i == end);
}

/* The end of the value starting at s[i] (a member's), in valid JSON. */
static size_t
ops_id_skip_value(const char *s, size_t len, size_t i)
{
	size_t	 depth = 0;

	for (; i < len; i++) {
		if (s[i] == '"')
			i = ops_id_skip_str(s, len, i) - 1;
		else if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && depth-- == 0)
			return (i);
		else if (s[i] == ',' && depth == 0)
			return (i);
	}
	return (len);
}

/*
 * The text of the top-level member "id"'s value in the line (valid JSON,
 * names unique: proto_parse checked both), its trailing blanks left out;
 * 0 if there is none.
 */
static size_t
ops_id_text(const char *s, size_t len, const char **tok)
{
	size_t	 i, k, end;

	i = ops_id_skip_ws(s, len, 0);
	if (i >= len || s[i] != '{')
		return (0);
	for (i++;;) {
		i = ops_id_skip_ws(s, len, i);
		if (i >= len || s[i] != '"')
			return (0);
		k = i;
		i = ops_id_skip_str(s, len, i);
		end = i;
		i = ops_id_skip_ws(s, len, i);
		if (i >= len || s[i] != ':')
			return (0);
		i = ops_id_skip_ws(s, len, i + 1);
		k = ops_id_name_is_id(s, k + 1, end - 1);
		end = ops_id_skip_value(s, len, i);
		if (k) {
			while (end > i && (s[end - 1] == ' ' ||
			    s[end - 1] == '\t' || s[end - 1] == '\r' ||
			    s[end - 1] == '\n'))
				end--;
			*tok = s + i;
			return (end - i);
		}
		if (end >= len || s[end] != ',')
			return (0);
		i = end + 1;
	}
}

/* tok[0..n) is an integer (RFC 8259: no fraction, exponent or '+'). */
static int
ops_id_integer(const char *tok, size_t n)
{
	size_t	 i = tok[0] == '-', digits = n - i;

	if (digits == 0 || digits > ID_MAX_DIGITS ||
	    (tok[i] == '0' && digits > 1))
		return (0);
	for (; i < n; i++) {
		if (tok[i] < '0' || tok[i] > '9')
			return (0);
	}
	return (1);
}

/* A string's text (with its quotes) holds no raw control character. */
static int
ops_id_plain(const char *tok, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if ((unsigned char)tok[i] < 0x20)
			return (0);
	}
	return (1);
}

int
ops_id_take(struct req *r, const char *line, size_t len,
    struct proto_err *e)
{
	const cJSON	*f;
	const char	*tok = NULL;
	size_t		 n;

	f = cJSON_GetObjectItemCaseSensitive(r->json, "id");
	if (f == NULL)
		return (0);
	n = ops_id_text(line, len, &tok);
	if (cJSON_IsString(f)) {
		if (strlen(f->valuestring) > ID_MAX_BYTES)
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is longer than %d bytes", ID_MAX_BYTES));
		if (!utf8_valid(f->valuestring, strlen(f->valuestring)))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is not valid UTF-8"));
		if (n < 2 || tok[0] != '"' || !ops_id_plain(tok, n))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "holds a control character"));
		/*
		 * The text echoed too: an escape decoding to NUL ("\u0000",
		 * or cJSON's "\u0" and a non-hex byte) ends valuestring early.
		 */
		if (!utf8_valid(tok, n))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is not valid UTF-8"));
	} else if (!cJSON_IsNumber(f) || n == 0 || !ops_id_integer(tok, n))
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" must "
		    "be a string or an integer of at most %d digits",
		    ID_MAX_DIGITS));
	r->id_owned = xmalloc(n + 1);
	memcpy(r->id_owned, tok, n);
	r->id_owned[n] = '\0';
	r->id = r->id_owned;
	r->id_len = n;
	return (0);
}
