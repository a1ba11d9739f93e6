/*
 * metactl's connection to metad: a thin layer over libmetad-client
 * (<metad/client.h>) that keeps metactl's calling convention: errors return
 * -1 with a cause the caller frees, and c->fail telling what kind of
 * failure it was (the caller maps it to an exit status).
 *
 * Memory: struct client owns its library handle; client_close() releases
 * it.  A line returned by client_read_line() points into the handle and is
 * valid until the next read.  A response returned by client_request()
 * belongs to the caller (cJSON_Delete()).
 */
#ifndef METACTL_CLIENT_H
#define METACTL_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "metad_limits.h"
#include "util.h"

/*
 * Longest response line accepted: room for a value of 64 MiB in base64 plus
 * its metadata (the library's limit too).  metad's own default limits are
 * far below it.
 */
#define CLIENT_LINE_MAX_BYTES	REQUEST_MAX_BYTES_FOR(64 * 1024 * 1024)

struct md_client;

enum client_fail {
	CLIENT_FAIL_NONE = 0,
	CLIENT_FAIL_UNREACHABLE,	/* cannot connect, closed, timed out */
	CLIENT_FAIL_PROTOCOL,		/* metad sent something invalid */
	CLIENT_FAIL_INTERRUPTED		/* *intr was set (SIGINT) */
};

struct client {
	struct md_client *md;		/* NULL when not connected */
	/*
	 * The handle's socket (md_fd()), -1 when there is none, kept current
	 * after every call: for closing it in a child after fork().
	 */
	int		 fd;
	char		*path;
	uint64_t	 timeout_ms;	/* 0: no limit */
	/* tls://: the files (md_set_tls()), set before client_connect(). */
	const char	*tls_cacert;
	const char	*tls_cert;
	const char	*tls_key;
	enum client_fail fail;

	/*
	 * metad's --max-value-bytes from its hello on this connection
	 * (cmd_value_fits()); UINT64_MAX when it announces none.
	 */
	int		 limits_known;
	uint64_t	 max_value_bytes;

	/*
	 * Set by an interruptible command (intr.c), else NULL: waiting on
	 * the socket uses ppoll() with intr_mask and fails once *intr is set.
	 */
	const volatile sig_atomic_t *intr;
	const sigset_t	*intr_mask;
};

void	 client_init(struct client *);
int	 client_connected(const struct client *);
int	 client_connect(struct client *, const char *, uint64_t, char **);
void	 client_close(struct client *);
/*
 * 1 when an idle connection can carry no more requests: metad closed it
 * (it restarted), it failed, or bytes nobody asked for wait on it.
 */
int	 client_stale(struct client *);

/* Sends the request (a '\n' is added on the wire). */
int	 client_send(struct client *, struct buf *, int64_t deadline,
	     char **);
/* The next line, without its '\n'. */
int	 client_read_line(struct client *, int64_t deadline, const char **,
	     size_t *, char **);
/* Sends one request and reads and decodes its response. */
int	 client_request(struct client *, struct buf *, cJSON **, char **);

/* Now plus the client's timeout in ms on CLOCK_MONOTONIC, or -1. */
int64_t	 client_deadline(const struct client *);

#endif
