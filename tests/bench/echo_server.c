/*
 * echo_server SOCKET: the baseline for metad's read path.  A bare Unix-socket
 * line echo server: one thread, one epoll loop, each connection's complete
 * lines written back in one write() per read, like metad answers them.
 * Drive it with "metabench -s SOCKET echo".  Stops on SIGTERM or SIGINT.
 */
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ECHO_BUF	(256 * 1024)	/* a longer line is cut */
#define ECHO_EVENTS	256
#define ECHO_BACKLOG	512

struct echo_conn {
	int	 fd;
	size_t	 len;
	char	 buf[ECHO_BUF];
};

static volatile sig_atomic_t	 echo_quit;

static void
echo_signal(int sig)
{
	echo_quit = 1;
}

static int
echo_listen(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd;

	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (snprintf(sun.sun_path, sizeof sun.sun_path, "%s", path) >=
	    (int)sizeof sun.sun_path) {
		fprintf(stderr, "echo_server: socket path too long\n");
		return (-1);
	}
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sun, sizeof sun) == -1 ||
	    listen(fd, ECHO_BACKLOG) == -1) {
		fprintf(stderr, "echo_server: %s: %s\n", path, strerror(errno));
		return (-1);
	}
	return (fd);
}

/* Blocking write of all n bytes (clients read as they send). */
static int
echo_write(int fd, const char *p, size_t n)
{
	ssize_t	 w;

	while (n > 0) {
		if ((w = write(fd, p, n)) == -1) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				usleep(100);
				continue;
			}
			return (-1);
		}
		p += w;
		n -= (size_t)w;
	}
	return (0);
}

/* Read, echo the complete lines, keep the rest; -1 to close. */
static int
echo_serve(struct echo_conn *ec)
{
	ssize_t	 n;
	char	*nl;
	size_t	 done;

	n = read(ec->fd, ec->buf + ec->len, sizeof ec->buf - ec->len);
	if (n == 0 || (n == -1 && errno != EAGAIN && errno != EINTR))
		return (-1);
	if (n == -1)
		return (0);
	ec->len += (size_t)n;
	nl = memrchr(ec->buf, '\n', ec->len);
	if (nl == NULL) {
		if (ec->len == sizeof ec->buf)
			ec->len = 0;	/* over-long line: drop it */
		return (0);
	}
	done = (size_t)(nl - ec->buf) + 1;
	if (echo_write(ec->fd, ec->buf, done) != 0)
		return (-1);
	memmove(ec->buf, ec->buf + done, ec->len - done);
	ec->len -= done;
	return (0);
}

static void
echo_accept(int ep, int lfd)
{
	struct epoll_event	 ev;
	struct echo_conn	*ec;
	int			 fd;

	while ((fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) != -1) {
		if ((ec = calloc(1, sizeof *ec)) == NULL) {
			close(fd);
			continue;
		}
		ec->fd = fd;
		memset(&ev, 0, sizeof ev);
		ev.events = EPOLLIN;
		ev.data.ptr = ec;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1) {
			close(fd);
			free(ec);
		}
	}
}

static void
echo_loop(int ep, int lfd)
{
	struct epoll_event	 evs[ECHO_EVENTS];
	struct echo_conn	*ec;
	int			 i, n;

	while (!echo_quit) {
		if ((n = epoll_wait(ep, evs, ECHO_EVENTS, 500)) == -1)
			continue;
		for (i = 0; i < n; i++) {
			if (evs[i].data.ptr == NULL) {
				echo_accept(ep, lfd);
				continue;
			}
			ec = evs[i].data.ptr;
			if (echo_serve(ec) != 0) {
				close(ec->fd);
				free(ec);
			}
		}
	}
}

int
main(int argc, char **argv)
{
	struct epoll_event	 ev;
	struct sigaction	 sa;
	int			 lfd, ep;

	if (argc != 2) {
		fprintf(stderr, "usage: echo_server SOCKET\n");
		return (2);
	}
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = echo_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if ((lfd = echo_listen(argv[1])) == -1)
		return (1);
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		return (1);
	memset(&ev, 0, sizeof ev);
	ev.events = EPOLLIN;
	ev.data.ptr = NULL;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &ev) == -1)
		return (1);
	echo_loop(ep, lfd);
	unlink(argv[1]);
	return (0);
}
