/*
 * A store that is itself a metad (the remote backend, store/remote/):
 * write requests go to the metad it uses whole, as request lines, and
 * come back as that daemon's answers, so that their revisions, their
 * errors and their "idem" replays are its own.  The store reads the rest
 * (the keys, their history) from a replica of its own, which its one
 * watch stream keeps (store_put_as() loads it).
 */
#ifndef METAD_STORE_FORWARD_H
#define METAD_STORE_FORWARD_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/*
 * The answer line to a request forwarded (valid during the call), or
 * answer NULL and err: STORE_ERR_UNAVAILABLE when it was not sent (the
 * metad used is unreachable), STORE_ERR_UNKNOWN when it was and its answer
 * was lost for good (it may have landed).
 */
typedef void (*store_forward_done)(void *, const char *answer, size_t len,
		    const struct store_err *);

/* 1 if the store takes write requests whole (store_forward()). */
int	store_forwards(const struct store *);
/*
 * Send the request line (one JSON object, no "id", with an "idem" token:
 * the metad used applies it once however often it is sent) to the metad
 * used; done is called once, later, or now when it fails at once.
 */
void	store_forward(struct store *, const char *line, size_t len,
	    store_forward_done, void *);

/*
 * The "idem" token a forwarded request carries, into out (NUL-ended, at
 * most STORE_FORWARD_TOKEN_MAX bytes with the NUL): from name, the scoped
 * name of the token the request came with (its peer's identity and its
 * token: a SHA-256 of it, so that a request sent again with its token is
 * sent with the same one), or name NULL: one of this process's own,
 * never made twice.
 */
#define STORE_FORWARD_TOKEN_MAX	72
void	store_forward_token(char *out, const void *name, size_t len);

/*
 * A replica's load, inside a batch at rev: the key as kv holds it
 * (value, version, create_rev, mod_rev <= rev, lease), recorded as its
 * put at kv->mod_rev, the kvs of one batch in mod_rev order; a
 * compaction at rev in the same batch then leaves the state at rev
 * exact.  -1 on a backend that keeps no replica (only memory does).
 */
int	store_put_as(struct store *, uint64_t rev, const struct store_kv *,
	    struct store_err *);

#endif
