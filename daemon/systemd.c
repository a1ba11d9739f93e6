#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "systemd.h"
#include "util.h"

/* A non-negative decimal environment variable, or -1. */
static long
systemd_env_long(const char *name)
{
	const char	*s = getenv(name);
	char		*end;
	long		 v;

	if (s == NULL || *s == '\0')
		return (-1);
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < 0)
		return (-1);
	return (v);
}

static int
systemd_check_socket(int fd, char **cause)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len;
	int			 type, listening;

	len = sizeof type;
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == -1)
		type = -1;	/* not a socket at all */
	len = sizeof listening;
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening,
	    &len) == -1)
		listening = 0;
	len = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		ss.ss_family = AF_UNSPEC;
	if (ss.ss_family != AF_UNIX || type != SOCK_STREAM || !listening) {
		xasprintf(cause, "socket activation: descriptor %d is not a "
		    "listening Unix stream socket (ListenStream= with a path)",
		    fd);
		return (-1);
	}
	return (0);
}

int
systemd_listen_fd(int *fd, char **cause)
{
	long	 pid, n;
	int	 flags;

	*fd = -1;
	pid = systemd_env_long("LISTEN_PID");
	n = systemd_env_long("LISTEN_FDS");
	if (pid != (long)getpid() || n == -1)
		return (0);
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (n != 1) {
		xasprintf(cause, "socket activation passed %ld sockets; metad "
		    "serves exactly one", n);
		return (-1);
	}
	if (systemd_check_socket(SYSTEMD_LISTEN_FDS_START, cause) != 0)
		return (-1);
	flags = fcntl(SYSTEMD_LISTEN_FDS_START, F_GETFL);
	if (flags == -1 || fcntl(SYSTEMD_LISTEN_FDS_START, F_SETFL,
	    flags | O_NONBLOCK) == -1 || fcntl(SYSTEMD_LISTEN_FDS_START,
	    F_SETFD, FD_CLOEXEC) == -1) {
		xasprintf(cause, "socket activation: fcntl: %s",
		    strerror(errno));
		return (-1);
	}
	*fd = SYSTEMD_LISTEN_FDS_START;
	return (0);
}

long
systemd_watchdog_usec(void)
{
	long	 usec = systemd_env_long("WATCHDOG_USEC");
	long	 pid = systemd_env_long("WATCHDOG_PID");

	if (usec <= 0 || (getenv("WATCHDOG_PID") != NULL &&
	    pid != (long)getpid()))
		return (0);
	return (usec);
}

int
systemd_notify(const char *state)
{
	struct sockaddr_un	 sun;
	const char		*path = getenv("NOTIFY_SOCKET");
	size_t			 len;
	socklen_t		 salen;
	ssize_t			 n;
	int			 fd, saved;

	if (path == NULL || *path == '\0')
		return (0);
	len = strlen(path);
	if ((path[0] != '/' && path[0] != '@') || len >= sizeof sun.sun_path) {
		errno = EAFNOSUPPORT;
		return (-1);
	}
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, path, len);
	if (path[0] == '@')
		sun.sun_path[0] = '\0';	/* an abstract name */
	salen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len +
	    (path[0] == '/'));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	n = sendto(fd, state, strlen(state), MSG_NOSIGNAL,
	    (struct sockaddr *)&sun, salen);
	saved = errno;
	close(fd);
	errno = saved;
	return (n == (ssize_t)strlen(state) ? 0 : -1);
}
