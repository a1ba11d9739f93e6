#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"

static const char	*log_name = "metad";
static enum log_level	 log_level = LOG_LEVEL_INFO;

void
log_init(const char *name, enum log_level level)
{
	log_name = name;
	log_level = level;
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

int
log_level_parse(const char *s, enum log_level *out)
{
	static const char	*names[] = { "error", "warn", "info", "debug" };
	size_t			 i;

	for (i = 0; i < sizeof names / sizeof names[0]; i++) {
		if (strcmp(s, names[i]) == 0) {
			*out = (enum log_level)i;
			return (0);
		}
	}
	return (-1);
}

static void
log_vwrite(enum log_level level, const char *tag, int with_errno,
    const char *fmt, va_list ap)
{
	char	 msg[1024];
	int	 saved = errno;

	if (level > log_level)
		return;
	vsnprintf(msg, sizeof msg, fmt, ap);
	if (with_errno)
		fprintf(stderr, "%s: %s%s: %s\n", log_name, tag, msg,
		    strerror(saved));
	else
		fprintf(stderr, "%s: %s%s\n", log_name, tag, msg);
	fflush(stderr);
	errno = saved;
}

#define LOG_FN(name, level, tag, with_errno)			\
void								\
name(const char *fmt, ...)					\
{								\
	va_list	 ap;						\
								\
	va_start(ap, fmt);					\
	log_vwrite(level, tag, with_errno, fmt, ap);		\
	va_end(ap);						\
}

LOG_FN(log_warn, LOG_LEVEL_WARN, "warning: ", 1)
LOG_FN(log_warnx, LOG_LEVEL_WARN, "warning: ", 0)
LOG_FN(log_info, LOG_LEVEL_INFO, "", 0)
LOG_FN(log_debug, LOG_LEVEL_DEBUG, "debug: ", 0)

void
fatal(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, "fatal: ", 1, fmt, ap);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vwrite(LOG_LEVEL_ERROR, "fatal: ", 0, fmt, ap);
	va_end(ap);
	exit(1);
}
