/*
 * What systemd hands a service, without libsystemd: a listening socket
 * (socket activation: $LISTEN_PID and $LISTEN_FDS, the sockets from fd 3)
 * and a datagram socket to report readiness to ($NOTIFY_SOCKET, a path or,
 * starting with '@', an abstract name).  See sd_listen_fds(3) and
 * sd_notify(3): both protocols are stable and documented there.
 */
#ifndef METAD_SYSTEMD_H
#define METAD_SYSTEMD_H

/* The first descriptor systemd passes (SD_LISTEN_FDS_START). */
#define SYSTEMD_LISTEN_FDS_START	3

/*
 * The socket systemd passed us, made non-blocking and close-on-exec, with
 * $LISTEN_PID, $LISTEN_FDS and $LISTEN_FDNAMES removed from the
 * environment; *fd is -1 when we were not socket-activated.  -1 with a
 * cause (the caller frees) when what was passed is not one listening Unix
 * stream socket.
 */
int	systemd_listen_fd(int *fd, char **cause);
/*
 * Sends state ("READY=1", "STOPPING=1") to $NOTIFY_SOCKET if it is set.
 * 0 when sent or when there is nobody to tell, -1 (errno set) when sending
 * failed.
 */
int	systemd_notify(const char *state);
/*
 * $WATCHDOG_USEC when systemd expects this process (not another, as
 * $WATCHDOG_PID would say) to ping its watchdog, else 0.
 */
long	systemd_watchdog_usec(void);

#endif
