/*
 * Logging to stderr, shared by both binaries (after OpenSMTPD's log.c);
 * the daemon may send it to a file (log_to_file: that file becomes stderr,
 * opened again on SIGHUP) or to syslog(3) instead (log_to_syslog: stderr
 * becomes /dev/null).
 * log_warn() and fatal() append strerror(errno); the *x variants do not.
 * fatal() is for impossible states and allocation failure only.
 */
#ifndef METAD_LOG_H
#define METAD_LOG_H

enum log_level {
	LOG_LEVEL_ERROR,
	LOG_LEVEL_WARN,
	LOG_LEVEL_INFO,
	LOG_LEVEL_DEBUG
};

void	log_init(const char *, enum log_level);
int	log_level_parse(const char *, enum log_level *);
void	log_set_level(enum log_level);
int	log_to_file(const char *);
void	log_to_syslog(void);
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
