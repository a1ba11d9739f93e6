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
#include "jscan.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "util.h"

#define ID_MAX_DIGITS	64

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

/*
 * The text of the top-level member "id"'s value in the line (valid JSON,
 * names unique: proto_parse checked both), its trailing blanks left out;
 * 0 if there is none.
 */
static size_t
ops_id_text(const char *s, size_t len, const char **tok)
{
	size_t	 i, k, end;

	i = jscan_skip_blanks(s, len, 0);
	if (i >= len || s[i] != '{')
		return (0);
	for (i++;;) {
		i = jscan_skip_blanks(s, len, i);
		if (i >= len || s[i] != '"')
			return (0);
		k = i;
		i = jscan_skip_str(s, len, i);
		end = i;
		i = jscan_skip_blanks(s, len, i);
		if (i >= len || s[i] != ':')
			return (0);
		i = jscan_skip_blanks(s, len, i + 1);
		k = ops_id_name_is_id(s, k + 1, end - 1);
		end = jscan_skip_value(s, len, i);
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

/*
 * A string's text, with its quotes, as RFC 8259 writes one: UTF-8, no raw
 * control character, every escape one of \" \\ \/ \b \f \n \r \t \uXXXX
 * (cJSON takes a bad \u escape as a NUL: its text must not be echoed).
 */
static int
ops_id_strict(const char *tok, size_t n)
{
	size_t	 i, k;

	if (n < 2 || tok[0] != '"' || tok[n - 1] != '"' ||
	    !utf8_valid(tok, n))
		return (0);
	for (i = 1; i < n - 1; i++) {
		if ((unsigned char)tok[i] < 0x20)
			return (0);
		if (tok[i] != '\\')
			continue;
		if (++i >= n - 1)
			return (0);
		if (strchr("\"\\/bfnrt", tok[i]) != NULL && tok[i] != '\0')
			continue;
		if (tok[i] != 'u' || i + 4 >= n - 1)
			return (0);
		for (k = i + 1; k <= i + 4; k++)
			if (!((tok[k] >= '0' && tok[k] <= '9') ||
			    ((tok[k] | 0x20) >= 'a' && (tok[k] | 0x20) <= 'f')))
				return (0);
		i += 4;
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
		if (!ops_id_strict(tok, n))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field \"id\" "
			    "is not a JSON string as RFC 8259 writes one (a raw "
			    "control character or a bad escape)"));
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
