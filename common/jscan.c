/* The JSON member scanner (jscan.h). */
#include <string.h>

#include "enc.h"
#include "jscan.h"

size_t
jscan_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t'))
		i++;
	return (i);
}

/* The string starting at s[i] (a '"'); i past it, or 0 to give up. */
static size_t
jscan_str(const char *s, size_t len, size_t i, struct jscan_tok *t)
{
	unsigned char	 c;

	t->kind = JSCAN_STR;
	t->esc = 0;
	t->p = s + ++i;
	for (; i < len; i++) {
		while (len - i >= 8 && enc_json_plain8(s + i))
			i += 8;
		if (i == len)
			break;
		c = (unsigned char)s[i];
		if (c == '"') {
			t->n = (size_t)(s + i - t->p);
			return (i + 1);
		}
		if (c < 0x20)
			return (0);
		if (c == '\\') {
			if (i + 1 >= len || strchr("\"\\/bfnrt", s[i + 1]) ==
			    NULL || s[i + 1] == '\0')
				return (0);
			t->esc = 1;
			i++;
		}
	}
	return (0);
}

/* An integer (RFC 8259, no fraction or exponent); i past it, or 0. */
static size_t
jscan_int(const char *s, size_t len, size_t i, struct jscan_tok *t)
{
	size_t	 k = i;

	t->kind = JSCAN_INT;
	t->p = s + i;
	if (k < len && s[k] == '-')
		k++;
	if (k < len && s[k] == '0')
		k++;
	else if (k < len && s[k] >= '1' && s[k] <= '9') {
		while (k < len && s[k] >= '0' && s[k] <= '9')
			k++;
	} else
		return (0);
	t->n = k - i;
	return (k);
}

static size_t
jscan_value(const char *s, size_t len, size_t i, struct jscan_tok *t)
{
	static const struct {
		const char	*word;
		size_t		 n;
		enum jscan_kind	 kind;
	} words[] = {
		{ "true", 4, JSCAN_TRUE },
		{ "false", 5, JSCAN_FALSE },
		{ "null", 4, JSCAN_NULL },
	};
	size_t	 w;

	if (i >= len)
		return (0);
	if (s[i] == '"')
		return (jscan_str(s, len, i, t));
	if (s[i] == '-' || (s[i] >= '0' && s[i] <= '9'))
		return (jscan_int(s, len, i, t));
	for (w = 0; w < sizeof words / sizeof words[0]; w++) {
		if (len - i >= words[w].n &&
		    memcmp(s + i, words[w].word, words[w].n) == 0) {
			t->kind = words[w].kind;
			t->p = s + i;
			t->n = words[w].n;
			return (i + words[w].n);
		}
	}
	return (0);
}

int
jscan_members(const char *s, size_t len, struct jscan_member *m, int max)
{
	struct jscan_tok	 name;
	size_t		 i;
	int		 n = 0;

	i = jscan_ws(s, len, 0);
	if (i >= len || s[i] != '{')
		return (-1);
	for (i++;; i++) {
		if (n == max)
			return (-1);
		i = jscan_ws(s, len, i);
		if (i >= len || s[i] != '"' ||
		    (i = jscan_str(s, len, i, &name)) == 0 || name.esc)
			return (-1);
		m[n].name = name.p;
		m[n].name_len = name.n;
		i = jscan_ws(s, len, i);
		if (i >= len || s[i] != ':')
			return (-1);
		i = jscan_ws(s, len, i + 1);
		if ((i = jscan_value(s, len, i, &m[n].v)) == 0)
			return (-1);
		n++;
		i = jscan_ws(s, len, i);
		if (i < len && s[i] == '}')
			break;
		if (i >= len || s[i] != ',')
			return (-1);
	}
	for (i++; i < len; i++) {
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return (-1);
	}
	return (n);
}

/* A string's bytes, unescaped, into out (NUL after them); their length. */
size_t
jscan_unescape(const struct jscan_tok *t, char *out)
{
	size_t	 i, o = 0;
	char	 c;

	if (!t->esc) {
		memcpy(out, t->p, t->n);
		out[t->n] = '\0';
		return (t->n);
	}
	for (i = 0; i < t->n; i++) {
		if ((c = t->p[i]) == '\\') {
			switch ((c = t->p[++i])) {
			case 'b':
				c = '\b';
				break;
			case 'f':
				c = '\f';
				break;
			case 'n':
				c = '\n';
				break;
			case 'r':
				c = '\r';
				break;
			case 't':
				c = '\t';
				break;
			}
		}
		out[o++] = c;
	}
	out[o] = '\0';
	return (o);
}

/* An unsigned integer field: 0, or -1 to give up. */
int
jscan_u64(const struct jscan_tok *t, uint64_t *out)
{
	size_t	 i;

	if (t->kind != JSCAN_INT || t->p[0] == '-' ||
	    t->n > JSCAN_U64_DIGITS)
		return (-1);
	*out = 0;
	for (i = 0; i < t->n; i++)
		*out = *out * 10 + (uint64_t)(t->p[i] - '0');
	return (0);
}

size_t
jscan_skip_blanks(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' ||
	    s[i] == '\n'))
		i++;
	return (i);
}

size_t
jscan_skip_str(const char *s, size_t len, size_t i)
{
	for (i++; i < len && s[i] != '"'; i++) {
		if (s[i] == '\\')
			i++;
	}
	return (i + 1);
}

size_t
jscan_skip_value(const char *s, size_t len, size_t i)
{
	size_t	 depth = 0;

	for (; i < len; i++) {
		if (s[i] == '"')
			i = jscan_skip_str(s, len, i) - 1;
		else if (s[i] == '{' || s[i] == '[')
			depth++;
		else if ((s[i] == '}' || s[i] == ']') && depth-- == 0)
			return (i);
		else if (s[i] == ',' && depth == 0)
			return (i);
	}
	return (len);
}
