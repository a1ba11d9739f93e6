#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "util.h"

void *
xmalloc(size_t n)
{
	void	*p;

	if ((p = malloc(n == 0 ? 1 : n)) == NULL)
		fatal("malloc %zu", n);
	return (p);
}

void *
xcalloc(size_t n, size_t sz)
{
	void	*p;

	if ((p = calloc(n == 0 ? 1 : n, sz == 0 ? 1 : sz)) == NULL)
		fatal("calloc %zu", n * sz);
	return (p);
}

void *
xrealloc(void *p, size_t n)
{
	if ((p = realloc(p, n == 0 ? 1 : n)) == NULL)
		fatal("realloc %zu", n);
	return (p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatal("strdup");
	return (p);
}

void *
xmemdup(const void *s, size_t n)
{
	char	*p;

	p = xmalloc(n + 1);
	if (n > 0)
		memcpy(p, s, n);
	p[n] = '\0';
	return (p);
}

int
xasprintf(char **out, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vasprintf(out, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatal("vasprintf");
	return (n);
}

void
buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

void
buf_reset(struct buf *b)
{
	b->len = 0;
}

void
buf_reserve(struct buf *b, size_t more)
{
	size_t	 need = b->len + more + 1;

	if (need <= b->cap)
		return;
	if (b->cap == 0)
		b->cap = 256;
	while (b->cap < need)
		b->cap *= 2;
	b->data = xrealloc(b->data, b->cap);
}

void
buf_add(struct buf *b, const void *p, size_t n)
{
	buf_reserve(b, n);
	if (n > 0)
		memcpy(b->data + b->len, p, n);
	b->len += n;
}

void
buf_addc(struct buf *b, char c)
{
	buf_reserve(b, 1);
	b->data[b->len++] = c;
}

void
buf_addstr(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

void
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list	 ap;
	int	 n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		fatalx("vsnprintf");
	buf_reserve(b, (size_t)n);
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

char *
buf_cstr(struct buf *b)
{
	buf_reserve(b, 0);
	b->data[b->len] = '\0';
	return (b->data);
}

int
parse_u64(const char *s, uint64_t *out)
{
	uint64_t	 v = 0;

	if (s == NULL || *s == '\0')
		return (-1);
	for (; *s != '\0'; s++) {
		if (*s < '0' || *s > '9')
			return (-1);
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return (-1);
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return (0);
}

int64_t
mono_ns(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec);
}

int64_t
mono_us(void)
{
	return (mono_ns() / 1000);
}

int64_t
mono_ms(void)
{
	return (mono_ns() / 1000000);
}

/* A duration as metactl's options take it: 1h, 2m, 10s or 500ms. */
void
format_ms(uint64_t ms, char *out, size_t len)
{
	if (ms % 3600000 == 0 && ms != 0)
		snprintf(out, len, "%" PRIu64 "h", ms / 3600000);
	else if (ms % 60000 == 0 && ms != 0)
		snprintf(out, len, "%" PRIu64 "m", ms / 60000);
	else if (ms % 1000 == 0)
		snprintf(out, len, "%" PRIu64 "s", ms / 1000);
	else
		snprintf(out, len, "%" PRIu64 "ms", ms);
}
