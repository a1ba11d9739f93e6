/*
 * The listening socket: refuse to start over a live daemon, replace a stale
 * socket (or serve the one systemd passed), accept with peer credentials,
 * bound the number of connections, and reap closed connections outside
 * their own callbacks.
 */
#ifndef METAD_SERVER_H
#define METAD_SERVER_H

#include <stddef.h>

#include "proto.h"
#include "core/req.h"

struct bufferevent;
struct conn;
struct conn_id;
struct metad;

/*
 * Listens on cfg.socket_path, or serves fd when it is not -1 (a socket
 * systemd passed: cfg.socket_path becomes its path, for the log).
 */
struct server	*server_create(struct metad *, int fd, char **cause);
/*
 * A peer whose access is known (net/access.h), on fd, or on bev (TLS):
 * its connection, or NULL with the refusal's *code and message in msg
 * (no access, or at --max-connections or --max-connections-per-peer),
 * which the caller answers on its transport.
 */
struct conn	*server_admit(struct server *, int fd, struct bufferevent *,
		    const struct conn_id *, enum conn_access,
		    enum proto_code *, char *msg, size_t);
/* Stop accepting and remove the socket file (not systemd's). */
void		 server_stop_listening(struct server *);
void		 server_free(struct server *);
/* c has output to write at the end of this turn of the loop. */
void		 server_conn_dirty(struct server *, struct conn *);
/* A connection closed: free it once nothing refers to it. */
void		 server_conn_closed(struct server *, struct conn *);
/* A commit released its reference to c. */
void		 server_conn_unref(struct server *, struct conn *);
/* Close every connection, writing what was answered (at shutdown). */
void		 server_close_all(struct server *);
/* Stop reading requests (SIGTERM); those already read are answered. */
void		 server_stop_reading(struct server *);
/* Requests still to be answered, waits aside. */
unsigned	 server_pending_requests(struct server *);
/* Bytes of output still unsent across all connections. */
unsigned long	 server_pending_output(struct server *);

#endif
