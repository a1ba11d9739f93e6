/*
 * The remote backend's connection to the metad it uses (metad(8), the
 * metad backend): one connection at a time to one of its URLs
 * (unix:PATH, or tls://HOST:PORT with store_tls.h's client), the
 * protocol's request lines sent without an "id" and their answers
 * matched to them in order (metad answers in request order), and every
 * other line (a watch's event) handed to lines().
 *
 * A call made while no connection is up fails at once with
 * STORE_ERR_UNAVAILABLE.  When the connection goes, the calls sent and not
 * answered are lost: one made RCONN_RETRY (it carries an "idem" token, or
 * it only reads) is kept and sent again, in order, once a connection is
 * up again, for at most RCONN_RETAIN_MS; past that, or another, it fails:
 * STORE_ERR_UNKNOWN for an RCONN_WRITE (it may have landed), else
 * STORE_ERR_UNAVAILABLE.  The URLs are tried in turn, with a backoff from
 * RCONN_BACKOFF_MIN_MS doubling to RCONN_BACKOFF_MAX_MS, reset once a
 * connection has answered.  up() is called as a connection comes up, before the calls kept
 * are sent again, so that what it sends (the watch) goes first.
 *
 * Ownership: the line handed to a callback is valid during the call.
 */
#ifndef METAD_REMOTE_CONN_H
#define METAD_REMOTE_CONN_H

#include <stddef.h>

#include "store/store.h"

struct event_base;
struct rconn;

#define RCONN_RETAIN_MS		5000
#define RCONN_BACKOFF_MIN_MS	20
#define RCONN_BACKOFF_MAX_MS	1000
/* The longest line taken from the server; a longer one drops it. */
#define RCONN_LINE_MAX		(256u << 20)

#define RCONN_RETRY	0x1	/* sent again after a reconnect */
#define RCONN_WRITE	0x2	/* lost: STORE_ERR_UNKNOWN */

/* An answer line, or line NULL and err. */
typedef void (*rconn_done)(void *arg, const char *line, size_t len,
		    const struct store_err *err);

struct rconn_cbs {
	void	 (*up)(void *);
	void	 (*down)(void *);
	/* A line that is not an answer: 0, or -1 to drop the connection. */
	int	 (*line)(void *, const char *, size_t);
	/* An answer came (before its call's done): the lines before it are
	 * whole. */
	void	 (*answer)(void *);
	void	*arg;
};

/* TLS's files, for tls:// URLs (NULL: the system's CAs; no client cert). */
struct rconn_tls {
	const char	*cacert, *cert, *key;
};

/*
 * urls: "unix:PATH" or "tls://HOST:PORT", comma-separated.  Nothing is
 * connected until rconn_start().
 */
struct rconn	*rconn_open(struct event_base *, const char *urls,
		    const struct rconn_tls *, const struct rconn_cbs *,
		    struct store_err *);
void		 rconn_start(struct rconn *);
/* Every call not answered fails (STORE_ERR_UNAVAILABLE); nothing after. */
void		 rconn_free(struct rconn *);
int		 rconn_is_up(const struct rconn *);
/*
 * 1 if every URL's last try failed in TLS itself (a certificate not
 * verified or refused): trying again will not help.
 */
int		 rconn_refused(const struct rconn *);
/* Why the last connection failed (""), for a message. */
const char	*rconn_why(const struct rconn *);
/* line: a request, without its LF, copied. */
void		 rconn_call(struct rconn *, const char *line, size_t len,
		    int flags, rconn_done, void *);
/*
 * The same, with size bytes of the caller's state copied into the call
 * (its one allocation): done's arg is that copy, or state itself if the
 * call fails at once.
 */
void		 rconn_call_with(struct rconn *, const char *line, size_t len,
		    int flags, rconn_done, const void *state, size_t size);
/* The URLs, and whether each answered last it was tried. */
unsigned	 rconn_endpoints(const struct rconn *, struct store_endpoint *,
		    unsigned max);

#endif
