/*
 * libmetad-client's insides: the handle, its I/O and the dispatch of the
 * lines that come back (a response to the caller or to the watch or view
 * fed by the connection, or an event for it).
 *
 * Only what <metad/client.h> declares is exported (the library is built
 * with -fvisibility=hidden; the pragma below makes the header's
 * declarations the exports).  A handle owns its socket, its buffers, its
 * error and its pending-response queue; the md_sub it feeds belongs to the
 * watch or view that registered it.
 */
#ifndef MD_INT_H
#define MD_INT_H

#include <sys/types.h>

#include <stdint.h>

#include <cjson/cJSON.h>

#pragma GCC visibility push(default)
#include "metad/client.h"
#pragma GCC visibility pop

#include "jsonw.h"
#include "metad_limits.h"
#include "util.h"

#define MD_READ_MIN		(64 * 1024)
#define MD_READ_MAX		(1024 * 1024)	/* per md_fill() */
/* Room for a value of 64 MiB in base64 plus its metadata (as metactl). */
#define MD_LINE_MAX		REQUEST_MAX_BYTES_FOR(64 * 1024 * 1024)
#define MD_PEND_MAX		16

/* Whose answer a response line is, in request order. */
enum md_pend {
	MD_PEND_USER = 1,	/* the blocking call in progress */
	MD_PEND_SUB		/* the watch or view's own request */
};

/* The watch or view a connection feeds. */
struct md_sub {
	/* An event line (ev is the parsed line; not kept). */
	int	(*event)(struct md_sub *, const cJSON *ev);
	/* The response to a request the sub sent (MD_PEND_SUB). */
	int	(*resp)(struct md_sub *, const cJSON *resp);
	uint64_t	 watch_id;	/* 0: none live */
	int		 rewatching;	/* asked again, not answered yet */
};

struct bio_method_st;
struct ssl_st;

struct md_client {
	int		 fd;
	char		*path;		/* a socket's, or tls://HOST:PORT */
	struct ssl_st	*ssl;		/* tls://: the session on fd */
	struct bio_method_st *tls_bio;	/* its socket BIO's (md_tls.c) */
	char		*tls_cacert;	/* md_set_tls(); NULL: $METACTL_* */
	char		*tls_cert;
	char		*tls_key;
	char		 tls_why[256];	/* the last TLS error */
	uint64_t	 timeout_ms;
	const volatile sig_atomic_t *intr;
	const sigset_t	*intr_mask;

	struct buf	 in;
	size_t		 in_off;
	struct buf	 out;
	size_t		 out_off;

	enum md_err	 err;
	char		*errmsg;
	char		*errjson;
	int		 cur_present;
	uint64_t	 cur_version;
	uint64_t	 cur_mod_rev;
	uint64_t	 err_epoch;

	enum md_pend	 pend[MD_PEND_MAX];
	unsigned	 pend_head;
	unsigned	 pend_len;
	struct md_sub	*sub;
	uint64_t	 next_id;
	char		*idem;		/* md_set_idem(): the next write's */
};

/* md_kv.c: the pending idem token into a write request, taken. */
void		 md_idem_field(struct md_client *, struct jw *);

/* md_client.c */
int		 md_seterr(struct md_client *, enum md_err, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
/* A connection-level failure: sets the error and closes the socket. */
int		 md_fail(struct md_client *, enum md_err, const char *, ...)
		    __attribute__((format(printf, 3, 4)));
void		 md_clearerr(struct md_client *);
/* An "ok":false response: its code, message and details on the handle. */
int		 md_response_error(struct md_client *, const cJSON *);
/* The code named (metad-protocol(7), ERROR CODES), or MD_E_OTHER. */
enum md_err	 md_err_of(const char *);

/* md_io.c */
int64_t		 md_deadline(const struct md_client *);
/* Waits for events on the socket: 0 ready, -1 error (set), -2 deadline. */
int		 md_wait(struct md_client *, short events, int64_t deadline);
/* 0, -1 (error set), -2 at the deadline (nothing set). */
int		 md_write_all(struct md_client *, const char *, size_t,
		    int64_t deadline);
int		 md_read_line(struct md_client *, int64_t deadline,
		    const char **, size_t *);
int		 md_timed_out(struct md_client *);
/*
 * Sends a request and returns its decoded response whatever its "ok";
 * events and the sub's responses that come first go to the sub.
 */
int		 md_call(struct md_client *, struct buf *, cJSON **);
/* md_call(), then an "ok":false becomes the handle's error (-1). */
int		 md_call_ok(struct md_client *, struct buf *, cJSON **);
/* The sub's own request: sent now, its answer dispatched later. */
int		 md_sub_send(struct md_client *, struct buf *);
/*
 * Reads and dispatches lines to the sub until stop(arg) is true or the
 * deadline: 0, -1 (error), -2 (deadline).
 */
int		 md_pump(struct md_client *, int64_t deadline,
		    int (*stop)(void *), void *);
/* One line that is not the caller's: dispatched to the sub. */
int		 md_dispatch_sub(struct md_client *, const char *, size_t,
		    int *is_user);

/* md_tls.c */
int		 md_tls_connect(struct md_client *, int64_t deadline);
void		 md_tls_close(struct md_client *);
/*
 * The connection's one read or write, through TLS or not: n > 0, 0 at the
 * end (a read), or -1 with errno (EAGAIN: wait for *want; EPROTO: a TLS
 * error, whose text md_sock_error() gives).
 */
ssize_t		 md_sock_read(struct md_client *, void *, size_t, short *want);
ssize_t		 md_sock_write(struct md_client *, const void *, size_t,
		    short *want);
const char	*md_sock_error(const struct md_client *, int error);
/* 1 if decrypted bytes wait in the SSL (a poll would not see them). */
int		 md_tls_pending(const struct md_client *);
int		 md_tls_stale(struct md_client *);

/* md_kv.c */
int		 md_kv_parse(const cJSON *, struct md_kv **);
uint64_t	 md_u64(const cJSON *, const char *);
int		 md_u64_req(struct md_client *, const cJSON *, const char *,
		    uint64_t *);
/* Starts {"id":N,"op":OP in b (the caller closes the object). */
void		 md_req_open(struct md_client *, struct jw *, struct buf *,
		    const char *);
/* Closes the request in b, sends it, and wants ok; frees b. */
int		 md_do(struct md_client *, struct jw *, struct buf *,
		    cJSON **);

#endif
