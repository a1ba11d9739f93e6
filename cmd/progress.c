/*
 * A progress line for long commands (dump, load, snapshot save): shown on
 * stderr once the command has run for PROGRESS_DELAY_MS, rewritten at most
 * every PROGRESS_TICK_MS, erased at the end.  Never when stderr is not a
 * terminal or with -o json: scripts and pipes see nothing of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metactl.h"

#define PROGRESS_DELAY_MS	1000
#define PROGRESS_TICK_MS	100

static int64_t
progress_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

void
progress_start(struct progress *p, const struct cmd_ctx *ctx)
{
	memset(p, 0, sizeof *p);
	p->on = ctx->mode != OUTPUT_JSON && isatty(STDERR_FILENO);
	p->start_ms = progress_now_ms();
}

void
progress_show(struct progress *p, const char *fmt, ...)
{
	va_list	 ap;
	int64_t	 now;

	if (!p->on)
		return;
	now = progress_now_ms();
	if (now - p->start_ms < PROGRESS_DELAY_MS ||
	    (p->shown && now - p->last_ms < PROGRESS_TICK_MS))
		return;
	p->last_ms = now;
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
