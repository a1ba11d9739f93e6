/*
 * One client connection: line framing, access, the order of responses.
 *
 * A connection parses requests one line at a time and keeps those not yet
 * answered in arrival order (reqs); each ends in req_done(), in whatever
 * order, and answers leave from the head of that queue only, so they go in
 * request order by construction.  Writes queue behind writes (the group
 * commit keeps their order); any other request starts only once everything
 * before it is answered, so a read sees every write sent before it on the
 * connection, and a later write cannot overtake it.  A txn with gets, whose
 * answer may be as large as --max-answer-bytes, starts as a read does: so
 * a connection has at most one such answer being made, and it is made only
 * once the output before it is under --max-pending-bytes.  Watch events are not
 * answers: they may come between answers at any time.
 *
 * A connection is a Unix socket's, read and written with raw events, or a
 * TLS client's (net/tls.c), on a bufferevent_openssl whose input and
 * output buffers are the connection's: the framing, admission, limits and
 * order above are the same on both.
 *
 * Ownership: the server owns every struct conn (and its bufferevent).  A connection is never freed
 * inside its own callback; conn_close() marks it dead and the server frees
 * it from a deferred callback, after any commit that references it.
 */
#ifndef METAD_CONN_H
#define METAD_CONN_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>

#include "core/commit.h"
#include "core/req.h"
#include "core/watch.h"
#include "util.h"

struct bufferevent;
struct event;
struct evbuffer;
struct watch;
struct metad;
struct server_peer;

/* Who is at the other end. */
struct conn_id {
	uid_t		 uid;	/* a Unix socket's peer; over TLS -1 */
	gid_t		 gid;
	pid_t		 pid;
	const char	*cn;	/* TLS: the certificate's subject CN; else NULL */
	/* A socket's peer let in by a group list: that group is its identity
	 * for the per-peer limits (metad(8), ACCESS). */
	int		 by_group;
	gid_t		 group;
};

/* A peer's identity's text, at most (the NUL included). */
#define CONN_IDENTITY_MAX	272

struct conn {
	struct metad		*md;
	int			 fd;
	struct bufferevent	*bev;		 /* TLS; NULL: the raw events */
	char			*cn;		 /* TLS: the client's CN */
	struct event		*rev;
	struct event		*wev;
	struct evbuffer		*in;
	struct evbuffer		*out;
	int			 reading;	 /* rev is armed */
	int			 writing;	 /* wev is armed */
	int			 dirty;		 /* on the flush list */
	int			 stalled;	 /* stopped for output room */
	uid_t			 uid;
	gid_t			 gid;
	pid_t			 pid;
	/*
	 * Its peer's identity, which scopes its "idem" tokens
	 * (core/idem.h): "uid:N" on the Unix socket, "cn:NAME" over TLS.
	 */
	char			 identity[CONN_IDENTITY_MAX];
	size_t			 identity_len;
	enum conn_access	 access;
	struct req_queue	 reqs;		 /* not yet answered */
	unsigned		 nreqs;
	unsigned		 nother;	 /* of them, not writes */
	size_t			 held;		 /* answered, not yet sent */
	int			 processing;	 /* in conn_process() */
	int			 blocked;	 /* next line waits for nreqs 0 */
	int			 skipping;	 /* rest of a long line */
	int			 eof;		 /* client sent EOF */
	int			 closing;	 /* close once flushed */
	int			 dead;
	unsigned		 refs;		 /* requests alive */
	struct commit_order	 order;		 /* its writes, to the commit */
	struct watch_peer	 peer;		 /* its watches */
	struct server_peer	*server_peer;	 /* its uid's quota, or NULL */
	TAILQ_ENTRY(conn)	 entry;
	TAILQ_ENTRY(conn)	 dirty_entry;
};

/*
 * Serves fd, or bev (TLS, which owns fd: it is freed with the connection)
 * when it is not NULL.
 */
struct conn	*conn_create(struct metad *, int fd, struct bufferevent *,
		    const struct conn_id *, enum conn_access);
/* "uid 1000", "gid 100" or "CN \"alice\"": the peer's identity. */
void		 conn_id_name(const struct conn_id *, char *, size_t);
/* Parse and handle buffered requests until paused or out of input. */
void		 conn_process(struct conn *);
/*
 * Append a complete response line (the buffer ends with "\n"); it is
 * written at the end of this turn of the loop (server flush).
 */
void		 conn_send(struct conn *, const void *, size_t);
/* Write what the kernel takes now; arm the write event for the rest. */
void		 conn_flush(struct conn *);
void		 conn_reading(struct conn *, int);
/*
 * Unsent output bytes: the output buffer's and the answers done but held
 * behind one still owed; 1 if over --max-pending-bytes.
 */
size_t		 conn_output_len(struct conn *);
int		 conn_output_full(struct conn *);
/* r arrived on c: it is answered in its turn. */
void		 conn_enqueue(struct conn *, struct req *);
/* r ended (req_done: its on_done): send what is answered, in order. */
void		 conn_req_done(struct req *);
void		 conn_close(struct conn *);
void		 conn_free(struct conn *);

/* Between conn.c and conn_bev.c (a TLS connection's bufferevent). */
void		 conn_eof(struct conn *);
void		 conn_drained(struct conn *);
void		 conn_bev_create(struct conn *, struct bufferevent *);
void		 conn_bev_close(struct conn *);
void		 conn_bev_free(struct conn *);

#endif
