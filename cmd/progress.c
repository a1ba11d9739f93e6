/*
 * A progress line for long commands (dump, load, snapshot save): shown on
 * stderr once the command has run for PROGRESS_DELAY_MS, rewritten at most
 * every PROGRESS_TICK_MS, erased at the end.  Never when stderr is not a
 * terminal or with -o json: scripts and pipes see nothing of it.
 * progress_rate() and progress_eta() say how fast it goes and how long
 * is left, from the time since progress_start().
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metactl.h"

#define PROGRESS_DELAY_MS	1000
#define PROGRESS_TICK_MS	100


void
progress_start(struct progress *p, const struct cmd_ctx *ctx)
{
	memset(p, 0, sizeof *p);
	p->on = ctx->mode != OUTPUT_JSON && isatty(STDERR_FILENO);
	p->start_ms = mono_ms();
}

/* 1 when progress_show() would draw now: for a line costly to format. */
int
progress_due(const struct progress *p)
{
	int64_t	 now;

	if (!p->on)
		return (0);
	now = mono_ms();
	return (now - p->start_ms >= PROGRESS_DELAY_MS &&
	    (!p->shown || now - p->last_ms >= PROGRESS_TICK_MS));
}

/* Items a second since the start, n of them done. */
uint64_t
progress_rate(const struct progress *p, uint64_t n)
{
	int64_t	 ms = mono_ms() - p->start_ms;

	return (ms > 0 ? (uint64_t)((double)n * 1000 / (double)ms) : 0);
}

/*
 * "42%, 0:12 left": done of total (bytes of a file, say), the time left
 * at the rate so far; "42%" alone before anything is done.
 */
void
progress_eta(const struct progress *p, uint64_t done, uint64_t total,
    char *out, size_t len)
{
	int64_t		 ms = mono_ms() - p->start_ms;
	uint64_t	 pct, left;

	if (done > total)
		done = total;
	pct = total > 0 ? done * 100 / total : 100;
	if (done == 0 || ms <= 0) {
		snprintf(out, len, "%" PRIu64 "%%", pct);
		return;
	}
	left = (uint64_t)((double)ms * (double)(total - done) / (double)done /
	    1000);
	if (left >= 3600)
		snprintf(out, len, "%" PRIu64 "%%, %" PRIu64 ":%02" PRIu64
		    ":%02" PRIu64 " left", pct, left / 3600, left / 60 % 60,
		    left % 60);
	else
		snprintf(out, len, "%" PRIu64 "%%, %" PRIu64 ":%02" PRIu64
		    " left", pct, left / 60, left % 60);
}

void
progress_show(struct progress *p, const char *fmt, ...)
{
	va_list	 ap;

	if (!progress_due(p))
		return;
	p->last_ms = mono_ms();
	p->shown = 1;
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

void
progress_end(struct progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = 0;
}
