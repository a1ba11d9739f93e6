#include <stdint.h>

#include "enc.h"

int
utf8_valid(const void *p, size_t n)
{
	const unsigned char	*s = p, *end = s + n;
	unsigned char		 c;
	size_t			 need, i;
	uint32_t		 cp, min;

	while (s < end) {
		c = *s;
		if (c < 0x80) {
			/* ASCII, most often: a word at a time */
			for (s++; end - s >= 8 && !(enc_load8(s) & ENC_HIGHS);
			    s += 8)
				;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf) {
			need = 1;
			cp = c & 0x1f;
			min = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			need = 2;
			cp = c & 0x0f;
			min = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			need = 3;
			cp = c & 0x07;
			min = 0x10000;
		} else
			return (0);
		if ((size_t)(end - s) <= need)
			return (0);
		for (i = 1; i <= need; i++) {
			if ((s[i] & 0xc0) != 0x80)
				return (0);
			cp = (cp << 6) | (s[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return (0);
		s += need + 1;
	}
	return (1);
}

static const char b64_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t
b64_encoded_len(size_t n)
{
	return ((n + 2) / 3 * 4);
}

void
b64_encode(const void *p, size_t n, char *out)
{
	const unsigned char	*s = p;
	uint32_t		 v;
	size_t			 i;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
		*out++ = b64_alphabet[(v >> 18) & 63];
		*out++ = b64_alphabet[(v >> 12) & 63];
		*out++ = b64_alphabet[(v >> 6) & 63];
		*out++ = b64_alphabet[v & 63];
	}
	if (n - i == 1) {
		v = (uint32_t)s[i] << 16;
		*out++ = b64_alphabet[(v >> 18) & 63];
		*out++ = b64_alphabet[(v >> 12) & 63];
		*out++ = '=';
		*out++ = '=';
	} else if (n - i == 2) {
		v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8;
		*out++ = b64_alphabet[(v >> 18) & 63];
		*out++ = b64_alphabet[(v >> 12) & 63];
		*out++ = b64_alphabet[(v >> 6) & 63];
		*out++ = '=';
	}
	*out = '\0';
}

static int
b64_value(char c)
{
	if (c >= 'A' && c <= 'Z')
		return (c - 'A');
	if (c >= 'a' && c <= 'z')
		return (c - 'a' + 26);
	if (c >= '0' && c <= '9')
		return (c - '0' + 52);
	if (c == '+')
		return (62);
	if (c == '/')
		return (63);
	return (-1);
}

long
b64_decode(const char *s, size_t n, unsigned char *out)
{
	size_t		 i, pad = 0, o = 0;
	uint32_t	 v;
	int		 d[4], k;

	if (n % 4 != 0)
		return (-1);
	if (n > 0 && s[n - 1] == '=')
		pad++;
	if (n > 1 && s[n - 2] == '=')
		pad++;
	for (i = 0; i < n; i += 4) {
		for (k = 0; k < 4; k++) {
			if (i + (size_t)k >= n - pad && s[i + k] == '=')
				d[k] = 0;
			else if ((d[k] = b64_value(s[i + k])) < 0)
				return (-1);
		}
		v = (uint32_t)d[0] << 18 | (uint32_t)d[1] << 12 |
		    (uint32_t)d[2] << 6 | (uint32_t)d[3];
		out[o++] = (unsigned char)(v >> 16);
		if (i + 4 < n || pad < 2)
			out[o++] = (unsigned char)(v >> 8);
		if (i + 4 < n || pad < 1)
			out[o++] = (unsigned char)v;
	}
	/* Reject non-canonical trailing bits ("QQ==" ok, "QR==" not). */
	if (pad == 2 && (d[1] & 0x0f) != 0)
		return (-1);
	if (pad == 1 && (d[2] & 0x03) != 0)
		return (-1);
	return ((long)o);
}
