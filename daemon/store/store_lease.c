/*
 * The store interface's lease calls (store.h): whether a backend has
 * leases and keeps them itself (etcd) or leaves the records to the daemon
 * (sqlite, memory), the calls of each kind, and their checks.  Writes at a
 * rev (store_put_lease, store_lease_revoke) stay in store.c with the other
 * writes of a batch.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metad_limits.h"
#include "store/store_backend.h"
#include "util.h"

int
store_has_leases(const struct store *s)
{
	return (s->backend->lease_put != NULL ||
	    s->backend->lease_grant != NULL);
}

int
store_leases_remote(const struct store *s)
{
	return (s->backend->lease_grant != NULL);
}

/* Calls a backend without remote leases never gets: a daemon bug. */
static void
store_lease_local_only(struct store *s, store_lease_done done, void *arg)
{
	struct store_err	 err;

	store_err_set(&err, STORE_ERR_INTERNAL, "the %s backend keeps no "
	    "leases of its own", s->backend->name);
	done(arg, NULL, &err);
}

void
store_lease_grant(struct store *s, uint64_t ttl_ms, int session,
    const struct store_lease_idem *idem, store_lease_done done, void *arg)
{
	if (!store_leases_remote(s))
		store_lease_local_only(s, done, arg);
	else
		s->backend->lease_grant(s, ttl_ms, session, idem, done, arg);
}

size_t
store_lease_count(struct store *s)
{
	if (!store_leases_remote(s) || s->backend->lease_count == NULL)
		return (0);
	return (s->backend->lease_count(s));
}

void
store_lease_keepalive(struct store *s, uint64_t id, store_lease_done done,
    void *arg)
{
	if (!store_leases_remote(s))
		store_lease_local_only(s, done, arg);
	else
		s->backend->lease_keepalive(s, id, done, arg);
}

void
store_lease_get(struct store *s, uint64_t id, store_lease_done done,
    void *arg)
{
	if (!store_leases_remote(s))
		store_lease_local_only(s, done, arg);
	else
		s->backend->lease_get(s, id, done, arg);
}

void
store_lease_revoke_now(struct store *s, uint64_t id, int asked,
    const struct store_lease_idem *idem, store_revoke_done done, void *arg)
{
	struct store_err	 err;

	if (!store_leases_remote(s)) {
		store_err_set(&err, STORE_ERR_INTERNAL, "the %s backend keeps "
		    "no leases of its own", s->backend->name);
		done(arg, 0, 0, 0, &err);
	} else
		s->backend->lease_revoke_now(s, id, asked, idem, done, arg);
}

static void
store_no_leases(struct store *s, struct store_err *err)
{
	store_err_set(err, STORE_ERR_INTERNAL, "the %s backend keeps "
	    "no lease records for the daemon", s->backend->name);
}

void
store_read_leases(struct store *s, store_leases_done done, void *arg)
{
	struct store_err	 err;

	if (!store_has_leases(s)) {
		store_no_leases(s, &err);
		done(arg, -1, NULL, &err);
		return;
	}
	s->backend->read_leases(s, done, arg);
}

void
store_read_lease_keys(struct store *s, uint64_t lease, const char *after,
    size_t after_len, uint64_t limit, store_read_done done, void *arg)
{
	struct store_err	 err;

	if (!store_has_leases(s)) {
		store_no_leases(s, &err);
		done(arg, -1, NULL, 0, &err);
		return;
	}
	s->backend->read_lease_keys(s, lease, after, after_len,
	    limit > 0 ? limit : 1, done, arg);
}

int
store_lease_put(struct store *s, const struct store_lease *l,
    struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "lease record outside a batch"));
	if (s->backend->lease_put == NULL) {	/* remote */
		store_no_leases(s, err);
		return (-1);
	}
	if (l->id == 0)
		return (store_err_set(err, STORE_ERR_INTERNAL, "lease id 0"));
	if (s->backend->lease_put(s, l, err) != 0)
		return (-1);
	s->dirty = 1;
	return (0);
}
