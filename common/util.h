/*
 * Small helpers shared by both binaries: allocation that never returns NULL
 * (out of memory is fatal), and a growable byte buffer.
 *
 * Ownership: a struct buf owns its data; buf_free() releases it.  buf_detach()
 * hands the data to the caller, who frees it with free().
 */
#ifndef METAD_UTIL_H
#define METAD_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

void	*xmalloc(size_t);
void	*xcalloc(size_t, size_t);
void	*xrealloc(void *, size_t);
char	*xstrdup(const char *);
void	*xmemdup(const void *, size_t);
int	 xasprintf(char **, const char *, ...)
	    __attribute__((format(printf, 2, 3)));

struct buf {
	char	*data;
	size_t	 len;
	size_t	 cap;
};

void	 buf_init(struct buf *);
void	 buf_free(struct buf *);
void	 buf_reset(struct buf *);
void	 buf_reserve(struct buf *, size_t);
void	 buf_add(struct buf *, const void *, size_t);
void	 buf_addc(struct buf *, char);
void	 buf_addstr(struct buf *, const char *);
void	 buf_printf(struct buf *, const char *, ...)
	    __attribute__((format(printf, 2, 3)));
char	*buf_cstr(struct buf *);	/* NUL-terminates, returns data */

/* Parse a decimal uint64 (no sign, no spaces) into *out; -1 if invalid. */
int	 parse_u64(const char *, uint64_t *);

/* CLOCK_MONOTONIC: for timeouts and durations, never for dates. */
int64_t	 mono_ns(void);
int64_t	 mono_us(void);
int64_t	 mono_ms(void);
void	 format_ms(uint64_t, char *, size_t);

#endif
