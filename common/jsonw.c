#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "enc.h"
#include "jsonw.h"
#include "log.h"

void
jw_init(struct jw *w, struct buf *b)
{
	memset(w, 0, sizeof *w);
	w->b = b;
}

/* buf_addc and buf_add, without a call while the buffer has room. */
static inline void
jw_putc(struct buf *b, char c)
{
	if (b->len + 2 <= b->cap)
		b->data[b->len++] = c;
	else
		buf_addc(b, c);
}

static inline void
jw_put(struct buf *b, const char *p, size_t n)
{
	if (b->len + n + 1 <= b->cap) {
		memcpy(b->data + b->len, p, n);
		b->len += n;
	} else
		buf_add(b, p, n);
}

static void
jw_sep(struct jw *w)
{
	if (w->after_name) {
		w->after_name = 0;
		return;
	}
	if (w->comma[w->depth])
		jw_putc(w->b, ',');
	w->comma[w->depth] = 1;
}

static void
jw_open(struct jw *w, char c)
{
	jw_sep(w);
	jw_putc(w->b, c);
	if (++w->depth >= JW_MAX_DEPTH)
		fatalx("jw: nested too deep");
	w->comma[w->depth] = 0;
}

static void
jw_close(struct jw *w, char c)
{
	jw_putc(w->b, c);
	w->depth--;
}

void
jw_obj_open(struct jw *w)
{
	jw_open(w, '{');
}

void
jw_obj_close(struct jw *w)
{
	jw_close(w, '}');
}

void
jw_arr_open(struct jw *w)
{
	jw_open(w, '[');
}

void
jw_arr_close(struct jw *w)
{
	jw_close(w, ']');
}

/* Names are nearly always plain identifiers: copy those as they are. */
void
jw_name(struct jw *w, const char *name)
{
	size_t	 n;

	jw_sep(w);
	for (n = 0; name[n] != '\0'; n++) {
		if ((unsigned char)name[n] < 0x20 || name[n] == '"' ||
		    name[n] == '\\') {
			json_escape(w->b, name, strlen(name));
			buf_addc(w->b, ':');
			w->after_name = 1;
			return;
		}
	}
	buf_reserve(w->b, n + 3);
	w->b->data[w->b->len++] = '"';
	memcpy(w->b->data + w->b->len, name, n);
	w->b->len += n;
	w->b->data[w->b->len++] = '"';
	w->b->data[w->b->len++] = ':';
	w->after_name = 1;
}

void
jw_name_raw(struct jw *w, const char *quoted, size_t n)
{
	jw_sep(w);
	jw_put(w->b, quoted, n);
	w->after_name = 1;
}

void
json_escape(struct buf *b, const char *s, size_t n)
{
	static const char	 hex[] = "0123456789abcdef";
	size_t			 i, run = 0;
	unsigned char		 c;

	buf_reserve(b, n + 2);
	buf_addc(b, '"');
	for (i = 0; i < n; i++) {
		/* plain bytes, most often: a word at a time */
		while (n - i >= 8 && enc_json_plain8(s + i))
			i += 8;
		if (i == n)
			break;
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0xc0)
			continue;
		buf_add(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case 0xc0:	/* C0 80, a \u0000 as proto_parse reads it */
			if (i + 1 < n && (unsigned char)s[i + 1] == 0x80) {
				buf_add(b, "\\u0000", 6);
				run = ++i + 1;
			} else
				buf_addc(b, (char)c);
			break;
		case '"':
			buf_add(b, "\\\"", 2);
			break;
		case '\\':
			buf_add(b, "\\\\", 2);
			break;
		case '\n':
			buf_add(b, "\\n", 2);
			break;
		case '\r':
			buf_add(b, "\\r", 2);
			break;
		case '\t':
			buf_add(b, "\\t", 2);
			break;
		default:
			buf_add(b, "\\u00", 4);
			buf_addc(b, hex[c >> 4]);
			buf_addc(b, hex[c & 15]);
			break;
		}
	}
	buf_add(b, s + run, n - run);
	buf_addc(b, '"');
}

void
jw_str(struct jw *w, const char *s, size_t n)
{
	jw_sep(w);
	json_escape(w->b, s, n);
}

void
jw_cstr(struct jw *w, const char *s)
{
	jw_str(w, s, strlen(s));
}

void
jw_u64(struct jw *w, uint64_t v)
{
	char	 tmp[24], *p = tmp + sizeof tmp;

	jw_sep(w);
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	jw_put(w->b, p, (size_t)(tmp + sizeof tmp - p));
}

void
jw_bool(struct jw *w, int v)
{
	jw_sep(w);
	buf_addstr(w->b, v ? "true" : "false");
}

void
jw_null(struct jw *w)
{
	jw_sep(w);
	buf_add(w->b, "null", 4);
}

void
jw_raw(struct jw *w, const char *s, size_t n)
{
	jw_sep(w);
	buf_add(w->b, s, n);
}

static void
jw_value_b64(struct jw *w, const void *p, size_t n)
{
	size_t	 enc;

	JW_NAME(w, "value_b64");
	jw_sep(w);
	enc = b64_encoded_len(n);
	buf_reserve(w->b, enc + 2);
	buf_addc(w->b, '"');
	b64_encode(p, n, w->b->data + w->b->len);
	w->b->len += enc;
	buf_addc(w->b, '"');
}

void
jw_value(struct jw *w, const void *p, size_t n)
{
	if (n == 0)
		p = "";		/* an empty value may come as NULL */
	if (utf8_valid(p, n)) {
		JW_NAME(w, "value");
		jw_str(w, p, n);
		return;
	}
	jw_value_b64(w, p, n);
}

void
jw_value_req(struct jw *w, const void *p, size_t n)
{
	const unsigned char	*s = p;
	size_t			 i, escaped = 2;

	for (i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\' || s[i] == '\n' ||
		    s[i] == '\r' || s[i] == '\t')
			escaped += 2;
		else
			escaped += s[i] >= 0x20 ? 1 : 6;
	}
	if (escaped > b64_encoded_len(n) + 2)
		jw_value_b64(w, p, n);
	else
		jw_value(w, p, n);
}

size_t
json_escaped_len(const char *s, size_t n)
{
	size_t		 i, len = n + 2;
	unsigned char	 c;

	for (i = 0; i < n; i++) {
		while (n - i >= 8 && enc_json_plain8(s + i))
			i += 8;
		if (i == n)
			break;
		c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\' && c != 0xc0)
			continue;
		if (c == 0xc0 && i + 1 < n && (unsigned char)s[i + 1] == 0x80) {
			len += 4;	/* \u0000 for two bytes */
			i++;
		} else if (c == '"' || c == '\\' || c == '\n' || c == '\r' ||
		    c == '\t')
			len += 1;
		else if (c < 0x20)
			len += 5;
	}
	return (len);
}

size_t
jw_value_len(const void *p, size_t n)
{
	if (n == 0 || utf8_valid(p, n))
		return (sizeof "\"value\":" - 1 + json_escaped_len(p, n));
	return (sizeof "\"value_b64\":" - 1 + b64_encoded_len(n) + 2);
}
