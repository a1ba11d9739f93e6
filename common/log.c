#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char	*log_name = "metad";
static enum log_level	 log_level = LOG_LEVEL_INFO;
static int		 log_syslog;	/* 1: syslog(3), not stderr */
static int		 log_stamp;	/* 1: a file: each line timed */
static int		 log_journal;	/* 1: stderr is journald's stream */
/* Each level's syslog(3) priority, also sd-daemon(3)'s prefix "<N>". */
static const int	 log_prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO,
			     LOG_DEBUG };

/*
 * Under systemd, $JOURNAL_STREAM names the device and inode of the stream
 * journald reads: when stderr is that stream, each line starts with its
 * priority as sd-daemon(3) prefixes it ("<4>" a warning), so that
 * journalctl -p filters them.
 */
static int
log_is_journal(void)
{
	const char		*v = getenv("JOURNAL_STREAM");
	struct stat		 st;
	unsigned long long	 dev, ino;
	char			 c;

	if (v == NULL || sscanf(v, "%llu:%llu%c", &dev, &ino, &c) != 2 ||
	    fstat(STDERR_FILENO, &st) == -1)
		return (0);
	return ((unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino);
}

void
log_init(const char *name, enum log_level level)
{
	log_name = name;
	log_level = level;
	log_journal = log_is_journal();
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

int
log_to_file(const char *path)
{
	int	 fd;

	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd == -1)
		return (-1);
	if (fd != STDERR_FILENO) {
		if (dup2(fd, STDERR_FILENO) == -1) {
			close(fd);
			return (-1);
		}
		close(fd);
	}
	log_stamp = 1;
	log_journal = 0;
	return (0);
}

void
log_to_syslog(void)
{
	int	 fd;

	openlog(log_name, LOG_PID | LOG_NDELAY, LOG_DAEMON);
	log_syslog = 1;
	log_journal = 0;
	/* Nothing is written to the terminal or file stderr was. */
	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) != -1) {
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
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
	if (log_syslog) {
		if (with_errno)
			syslog(log_prio[level], "%s%s: %s", tag, msg,
			    strerror(saved));
		else
			syslog(log_prio[level], "%s%s", tag, msg);
		errno = saved;
		return;
	}
	if (log_journal)
		fprintf(stderr, "<%d>", log_prio[level]);
	else if (log_stamp) {
		char		 when[32];
		time_t		 now = time(NULL);
		struct tm	 tm;

		if (gmtime_r(&now, &tm) != NULL &&
		    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ ", &tm) > 0)
			fputs(when, stderr);
	}
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
