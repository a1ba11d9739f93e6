/*
 * The store interface's records of idempotent writes (store.h;
 * metad-protocol(7), IDEMPOTENT WRITES): the checks every backend would
 * make, then its own calls.  A record past its expiry is absent here, so a
 * backend need not look at the clock to answer.
 */
#include <stdint.h>
#include <stdlib.h>

#include "store/store_backend.h"
#include "util.h"

int
store_has_idem(const struct store *s)
{
	return (s->backend->idem_get != NULL && s->backend->idem_put != NULL);
}

static int
store_idem_check(struct store *s, const char *what, size_t len,
    struct store_err *err)
{
	if (!store_has_idem(s))
		return (store_err_set(err, STORE_ERR_INTERNAL, "the %s "
		    "backend keeps no records of idempotent writes",
		    s->backend->name));
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s outside a "
		    "batch", what));
	if (len == 0 || len > STORE_IDEM_TOK_MAX)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s: a token "
		    "of %zu bytes", what, len));
	return (0);
}

/* A record read: 1 if it answers, 0 if expired (or pending), -1 lost. */
static int
store_idem_found(const struct store_idem *rec, uint64_t now_ms,
    struct store_err *err)
{
	if (rec->expires_ms <= now_ms || rec->pending)
		return (0);
	if (rec->lost)
		return (store_err_set(err, STORE_ERR_INTERNAL, "the write of "
		    "this idem token was applied at rev %llu, but its answer "
		    "was lost before it was kept (the daemon stopped): it is "
		    "not applied again", (unsigned long long)rec->rev));
	return (1);
}

int
store_idem_get(struct store *s, const void *tok, size_t len, uint64_t now_ms,
    struct store_idem *rec, struct store_err *err)
{
	int	 rc;

	if (store_idem_check(s, "idem record read", len, err) != 0)
		return (-1);
	if ((rc = s->backend->idem_get(s, tok, len, rec, err)) != 1)
		return (rc);
	return (store_idem_found(rec, now_ms, err));
}

int
store_idem_put(struct store *s, const void *tok, size_t len,
    const struct store_idem *rec, uint64_t now_ms, struct store_err *err)
{
	if (store_idem_check(s, "idem record", len, err) != 0)
		return (-1);
	if (s->backend->idem_put(s, tok, len, rec, now_ms, err) != 0)
		return (-1);
	s->dirty = 1;
	return (0);
}

void
store_idem_fix(struct store *s, const void *tok, size_t len,
    const struct store_idem *rec, store_done done, void *arg)
{
	struct store_err	 err;

	if (s->backend->idem_fix == NULL) {
		store_err_set(&err, STORE_ERR_INTERNAL, "the %s backend lands "
		    "every batch where planned: no record to fix",
		    s->backend->name);
		done(arg, &err);
		return;
	}
	s->backend->idem_fix(s, tok, len, rec, done, arg);
}

/* A lease call's lookup, its checks made on the backend's answer. */
struct store_idem_look {
	uint64_t	 now_ms;
	store_idem_done	 done;
	void		*arg;
};

static void
store_idem_looked(void *arg, int rc, const struct store_idem *rec,
    const struct store_err *err)
{
	struct store_idem_look	*l = arg;
	struct store_idem	 r2 = *rec;
	struct store_err	 e2;

	if (rc == 1) {
		/* Past its window, a pending one is absent too. */
		if (r2.expires_ms <= l->now_ms)
			r2.pending = 0;
		rc = store_idem_found(&r2, l->now_ms, &e2);
		err = rc < 0 ? &e2 : NULL;
	}
	l->done(l->arg, rc, &r2, err);
	free(l);
}

void
store_lease_idem_get(struct store *s, const void *tok, size_t len,
    uint64_t now_ms, store_idem_done done, void *arg)
{
	struct store_idem_look	*l;
	struct store_idem	 none = { 0 };
	struct store_err	 err;

	if (s->backend->lease_idem_get == NULL || len == 0 ||
	    len > STORE_IDEM_TOK_MAX) {
		store_err_set(&err, STORE_ERR_INTERNAL, "the %s backend keeps "
		    "no records of its lease calls", s->backend->name);
		done(arg, -1, &none, &err);
		return;
	}
	l = xcalloc(1, sizeof *l);
	l->now_ms = now_ms;
	l->done = done;
	l->arg = arg;
	s->backend->lease_idem_get(s, tok, len, store_idem_looked, l);
}
