/*
 * libmetad-client: a C client for metad.  See metad_client(3).
 *
 * A handle (struct md_client) is one connection to one daemon.  Every call
 * blocks until its answer, bounded by the handle's timeout (md_connect);
 * requests on a handle are answered in order.  A handle is used by one
 * thread at a time: give each thread its own.  The library keeps no global
 * state, starts no thread and prints nothing.
 *
 * Errors: calls return -1 (or NULL) and leave on the handle the error's
 * code (md_errcode(): the protocol's code, metad-protocol(7), or one of the library's
 * own: MD_E_CONNECT and above) and message (md_errmsg()), valid until the
 * next call on the handle.  After MD_E_CONNECT, MD_E_DEADLINE,
 * MD_E_PROTOCOL or MD_E_INTERRUPTED the connection is closed (its answers
 * would no longer match; md_recv() past its own timeout excepted);
 * md_connect() again to go on.  Out of memory
 * aborts the process.
 *
 * Memory: what a call returns through a pointer the caller frees with the
 * matching md_*_free(); strings with free().  An event from md_watch_next()
 * and a kv from md_view_get()/md_view_at() belong to the library and stay
 * valid until the next call on that watch or view (or on its handle).
 */
#ifndef METAD_CLIENT_H
#define METAD_CLIENT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MD_CLIENT_VERSION	"0.1.0"

struct md_client;
struct md_watch;
struct md_view;

enum md_err {
	MD_OK = 0,
	/* The protocol's codes (metad-protocol(7), ERROR CODES). */
	MD_E_BAD_REQUEST,
	MD_E_UNKNOWN_OP,
	MD_E_REQUEST_TOO_LARGE,
	MD_E_VALUE_TOO_LARGE,
	MD_E_FAILED_PRECONDITION,
	MD_E_FENCED,
	MD_E_COMPACTED,
	MD_E_TIMEOUT,
	MD_E_NOT_FOUND,
	MD_E_READ_ONLY,
	MD_E_PERMISSION_DENIED,
	MD_E_UNAVAILABLE,
	MD_E_STORAGE_FULL,
	MD_E_INTERNAL,
	MD_E_OTHER,		/* a code this library does not know */
	/* Protocol codes added since (after MD_E_OTHER: the ABI keeps
	 * every value). */
	MD_E_ANSWER_TOO_LARGE,	/* past --max-answer-bytes: page */
	MD_E_RESOURCE_EXHAUSTED, /* a quota: per peer, or --max-leases */
	/* The library's own. */
	MD_E_CONNECT = 100,	/* cannot connect; connection closed or lost */
	MD_E_DEADLINE,		/* no answer within the handle's timeout */
	MD_E_PROTOCOL,		/* metad sent something not in the protocol */
	MD_E_INTERRUPTED,	/* the flag of md_set_interrupt() was set */
	MD_E_INVALID		/* a bad argument, or a call out of place */
};

/* A key and its metadata; value is NULL for keys_only lists. */
struct md_kv {
	char		*key;		/* NUL-terminated */
	size_t		 key_len;
	char		*value;		/* NUL-terminated too (may hold NULs) */
	size_t		 value_len;
	uint64_t	 version;
	uint64_t	 create_rev;
	uint64_t	 mod_rev;
	uint64_t	 lease;		/* 0: none */
};

/* --- Handles. --- */

struct md_client *md_new(void);
void		 md_free(struct md_client *);
/*
 * Connects to path, or with path NULL to metactl's default: $METACTL_SOCKET,
 * $METAD_SOCKET, $XDG_RUNTIME_DIR/metad.sock, /tmp/metad-$UID/metad.sock.
 * A path tls://HOST:PORT (HOST may be [IPV6]) is a daemon's TLS listener
 * (metad(8), --listen), reached over TCP with TLS 1.2 or later: its
 * certificate must be signed by the CA file and name HOST, and this
 * client shows its own (md_set_tls()).
 * timeout_ms bounds the connect and every later answer (0: no limit).
 */
int		 md_connect(struct md_client *, const char *path,
		    uint64_t timeout_ms);
/*
 * The PEM files for tls:// (copied; used by each later md_connect()): the
 * CA that signed the daemon's certificate, this client's certificate and
 * its key (NULL: the certificate file holds it too).  A NULL argument
 * falls back to $METACTL_CACERT, $METACTL_CERT or $METACTL_KEY; without a
 * CA file the system's CAs are trusted.
 */
void		 md_set_tls(struct md_client *, const char *cacert,
		    const char *cert, const char *key);
void		 md_close(struct md_client *);
int		 md_connected(const struct md_client *);
const char	*md_path(const struct md_client *);
void		 md_set_timeout(struct md_client *, uint64_t timeout_ms);
uint64_t	 md_timeout(const struct md_client *);
/*
 * The "idem" token (metad-protocol(7), IDEMPOTENT WRITES) that the next
 * md_put(), md_delete() or md_txn() carries, which takes it (NULL: none).
 * To retry a write whose answer was lost, set the same token again before
 * calling it again.  0, or -1 (MD_E_INVALID: not 1 to 128 bytes).
 */
int		 md_set_idem(struct md_client *, const char *token);
/*
 * While flag is set, calls fail with MD_E_INTERRUPTED; waiting uses
 * ppoll() with mask, so that a signal blocked elsewhere (SIGINT) gets in.
 * NULL, NULL: plain poll().
 */
void		 md_set_interrupt(struct md_client *,
		    const volatile sig_atomic_t *flag, const sigset_t *mask);
/* 1 when an idle connection can carry no more requests (closed, junk). */
int		 md_stale(struct md_client *);

enum md_err	 md_errcode(const struct md_client *);
const char	*md_errname(enum md_err);	/* "fenced", "connect" ... */
const char	*md_errmsg(const struct md_client *);
/* The daemon's whole error object as JSON text, or NULL. */
const char	*md_errjson(const struct md_client *);
/* After failed_precondition: 1 and the key's metadata, 0 if it is absent. */
int		 md_err_current(const struct md_client *, uint64_t *version,
		    uint64_t *mod_rev);
/* After fenced: the epoch stored at the fence key (0: none). */
uint64_t	 md_err_epoch(const struct md_client *);

/* --- Raw requests: one JSON object per line (no '\n'). --- */

/*
 * Sends req and returns the response line (no '\n', NUL-terminated), which
 * points into the handle and lives until the next call on it.  The response
 * is returned whatever its "ok".
 */
int		 md_request(struct md_client *, const char *req, size_t len,
		    const char **resp, size_t *resp_len);
/*
 * The two halves, for streams (a raw watch): timeout_ms -1 waits forever.
 * md_recv() failing with MD_E_DEADLINE keeps the connection: a stream may
 * just be quiet.
 */
int		 md_send(struct md_client *, const char *req, size_t len);
int		 md_recv(struct md_client *, int64_t timeout_ms,
		    const char **line, size_t *len);

/*
 * Non-blocking use, for a caller's own poll or epoll loop (pipelining):
 * md_queue() appends request lines (each ending in '\n'), md_flush()
 * writes (1: some left, wait for POLLOUT; 0: all sent; -1), md_fill() reads
 * what is there (1; 0 at end of file; -1), md_next_line() hands out the
 * next whole line (NUL-terminated in place) or NULL, valid until the next
 * md_fill().  Not on a handle that feeds a watch or a view.
 */
int		 md_fd(const struct md_client *);
void		 md_queue(struct md_client *, const char *req, size_t len);
int		 md_flush(struct md_client *);
int		 md_fill(struct md_client *);
char		*md_next_line(struct md_client *, size_t *len);

/* --- Reads and writes. --- */

struct md_read_opts {
	uint64_t	 rev;		/* 0: current; else as of rev */
	uint64_t	 min_rev;	/* 0: none */
	int		 serializable;	/* else linearizable */
};

/* *kv is NULL when the key is absent. */
int		 md_get(struct md_client *, const char *key,
		    const struct md_read_opts *, struct md_kv **kv,
		    uint64_t *rev);
void		 md_kv_free(struct md_kv *);
struct md_kv	*md_kv_dup(const struct md_kv *);

struct md_list_opts {
	const char	*prefix;	/* NULL or "": every key */
	const char	*after;		/* exclusive start key, or NULL */
	uint64_t	 limit;		/* 0: the daemon's default (1000) */
	int		 keys_only;
	struct md_read_opts read;
};

struct md_list {
	struct md_kv	*kvs;
	size_t		 n;
	int		 more;		/* another page: list after kvs[n-1] */
	uint64_t	 rev;
};

/* One page. */
int		 md_list(struct md_client *, const struct md_list_opts *,
		    struct md_list *);
void		 md_list_free(struct md_list *);
/*
 * The present keys of keys[0..n) (n at most 128), in key order, all at
 * one rev (l->rev); missing ones are left out.  Free l with md_list_free.
 */
int		 md_get_many(struct md_client *, const char *const *keys,
		    size_t n, const struct md_read_opts *, struct md_list *);

enum md_precond {
	MD_PRE_NONE = 0,
	MD_PRE_ABSENT,		/* if_absent */
	MD_PRE_VERSION,		/* if_version: arg (0 = absent) */
	MD_PRE_MOD_REV		/* if_mod_rev: arg */
};

struct md_write_opts {
	enum md_precond	 pre;
	uint64_t	 pre_arg;
	const char	*fence_key;	/* NULL: not fenced */
	uint64_t	 fence_epoch;
	uint64_t	 lease;		/* put only; 0: none */
};

struct md_put_result {
	uint64_t	 version;
	uint64_t	 create_rev;
	uint64_t	 mod_rev;
	uint64_t	 prev_version;	/* 0: the key was absent */
	uint64_t	 rev;
};

int		 md_put(struct md_client *, const char *key, const void *value,
		    size_t len, const struct md_write_opts *,
		    struct md_put_result *);
int		 md_delete(struct md_client *, const char *key,
		    const struct md_write_opts *, int *deleted, uint64_t *rev);
/*
 * Every key that starts with prefix ("": every key), or every key in
 * [key, end), deleted at one rev; *deleted how many (0: none, and *rev
 * did not move).  The options: a fence only.
 */
int		 md_delete_prefix(struct md_client *, const char *prefix,
		    const struct md_write_opts *, uint64_t *deleted,
		    uint64_t *rev);
int		 md_delete_range(struct md_client *, const char *key,
		    const char *end, const struct md_write_opts *,
		    uint64_t *deleted, uint64_t *rev);
/*
 * body: a JSON object with "if", "then", "else" and optionally "fence"
 * (metad-protocol(7), TRANSACTIONS).  *resp_json (if not NULL): the whole response, for "results";
 * free() it.
 */
int		 md_txn(struct md_client *, const char *body, int *succeeded,
		    uint64_t *rev, char **resp_json);

/* --- Epochs and fences. --- */

struct md_epoch {
	uint64_t	 epoch;		/* 0: the key is absent */
	char		*owner;		/* free() it (md_epoch_clear) */
	uint64_t	 version;
	uint64_t	 mod_rev;
};

int		 md_epoch_get(struct md_client *, const char *key,
		    struct md_epoch *);
/* if_epoch < 0: unconditional. */
int		 md_epoch_bump(struct md_client *, const char *key,
		    const char *owner, int64_t if_epoch, struct md_epoch *,
		    uint64_t *rev);
void		 md_epoch_clear(struct md_epoch *);

/* --- Leases. --- */

int		 md_lease_grant(struct md_client *, uint64_t ttl_ms,
		    int session, uint64_t *lease, uint64_t *granted_ms);
int		 md_lease_keepalive(struct md_client *, uint64_t lease,
		    uint64_t *remaining_ms);
int		 md_lease_revoke(struct md_client *, uint64_t lease,
		    uint64_t *rev);

struct md_lease_info {
	uint64_t	 ttl_ms;
	uint64_t	 remaining_ms;
	int		 session;
	char		**keys;
	size_t		 nkeys;
};

int		 md_lease_info(struct md_client *, uint64_t lease,
		    struct md_lease_info *);
void		 md_lease_info_clear(struct md_lease_info *);

/* --- Administration. --- */

int		 md_ping(struct md_client *, uint64_t *rev);
int		 md_compact(struct md_client *, uint64_t rev,
		    uint64_t *compact_rev);

/* --- Watches: an iterator of events. --- */

enum md_event_type {
	MD_EV_PUT = 1,
	MD_EV_DELETE
};

struct md_event {
	enum md_event_type type;
	const char	*key;
	size_t		 key_len;
	const char	*value;		/* puts */
	size_t		 value_len;
	uint64_t	 version;	/* puts */
	uint64_t	 create_rev;	/* puts */
	uint64_t	 mod_rev;	/* the event's rev */
	uint64_t	 lease;
};

/*
 * A watch on the key (prefix 0) or on every key under it (prefix 1),
 * from_rev 0: from the next change.  One watch or view per handle; other
 * calls on the handle still work (events meanwhile wait in memory).
 * A watch cancelled for being a slow consumer is resumed at the daemon's
 * next_rev without a gap or a duplicate.
 */
struct md_watch	*md_watch_open(struct md_client *, const char *key,
		    int prefix, uint64_t from_rev);
/*
 * 1 and an event, 0 when timeout_ms passed first (-1: wait forever), -1 on
 * error: MD_E_COMPACTED when history is gone, the error on the handle.
 */
int		 md_watch_next(struct md_watch *, int64_t timeout_ms,
		    struct md_event *);
/* The rev of the last event handed out (from_rev - 1 before any). */
uint64_t	 md_watch_rev(const struct md_watch *);
/* How many times metad cancelled it as a slow consumer and it resumed. */
unsigned	 md_watch_resumed(const struct md_watch *);
/* Ends the watch (unwatch) and frees it; the handle stays. */
void		 md_watch_close(struct md_watch *);

/* --- Views: a prefix in memory, kept current by a watch. --- */

/*
 * Lists the prefix at one rev, then watches it from rev + 1.  The view is
 * fed by whatever reads its handle: md_view_poll(), md_view_wait(), and
 * every other call on the handle (events that arrive meanwhile are
 * applied).  No thread: a program that only reads the view calls
 * md_view_poll() from its loop when md_fd() is readable.
 */
struct md_view	*md_view_open(struct md_client *, const char *prefix);
void		 md_view_close(struct md_view *);
/* Applies what has arrived, waiting up to timeout_ms (0: not at all). */
int		 md_view_poll(struct md_view *, int64_t timeout_ms);
/*
 * Blocks until the view holds every change up to rev (read-your-writes
 * after an md_put() through the same handle): 0, or -1 with MD_E_TIMEOUT
 * on the handle after timeout_ms (-1: no limit but the handle's).
 */
int		 md_view_wait(struct md_view *, uint64_t rev,
		    int64_t timeout_ms);
uint64_t	 md_view_rev(const struct md_view *);
/* How many times its watch was resumed after slow_consumer. */
unsigned	 md_view_resumed(const struct md_view *);
const struct md_kv *md_view_get(const struct md_view *, const char *key);
size_t		 md_view_size(const struct md_view *);
/* In key order, i < md_view_size(). */
const struct md_kv *md_view_at(const struct md_view *, size_t i);

#ifdef __cplusplus
}
#endif

#endif
