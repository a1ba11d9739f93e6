/*
 * The watch hub's memory of the revs a lease's end deleted keys at, so
 * that those delete events carry "lease" and "cause" (metad-protocol(7),
 * WATCHES).  A revoke, the daemon's of a due lease or a client's, is one
 * request at a rev of its own, and every delete at that rev is its lease's.
 * The last WATCH_LEASE_REVS of them are kept, in rev order; a watch that
 * replays older history, or history from before the daemon started, sees
 * plain deletes.  On etcd the events say it themselves (store_event's
 * cause).
 */
#include <stdlib.h>
#include <string.h>

#include "metad.h"
#include "core/watch.h"
#include "core/watch_int.h"

#define WATCH_LEASE_REVS	4096

/* The index of the first entry with rev >= rev. */
static size_t
watch_lease_find(const struct watch_hub *hub, uint64_t rev)
{
	size_t	 lo = 0, hi = hub->nlease_revs, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (hub->lease_revs[mid].rev < rev)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

void
watch_lease_ended(struct watch_hub *hub, uint64_t rev, uint64_t lease,
    int expired)
{
	struct watch_lease_rev	*v;
	size_t			 i;

	if (hub->lease_revs == NULL)
		hub->lease_revs = xcalloc(WATCH_LEASE_REVS,
		    sizeof *hub->lease_revs);
	v = hub->lease_revs;
	if (hub->nlease_revs == WATCH_LEASE_REVS) {
		if (rev < v[0].rev)
			return;		/* older than all: not kept */
		memmove(v, v + 1, (WATCH_LEASE_REVS - 1) * sizeof *v);
		hub->nlease_revs--;
	}
	i = watch_lease_find(hub, rev);
	if (i < hub->nlease_revs && v[i].rev == rev) {
		v[i].lease = lease;	/* a rev used again after a failure */
		v[i].expired = expired;
		return;
	}
	memmove(v + i + 1, v + i, (hub->nlease_revs - i) * sizeof *v);
	v[i].rev = rev;
	v[i].lease = lease;
	v[i].expired = expired;
	hub->nlease_revs++;
}

void
watch_lease_forget(struct watch_hub *hub, uint64_t rev, uint64_t lease)
{
	struct watch_lease_rev	*v = hub->lease_revs;
	size_t			 i;

	i = watch_lease_find(hub, rev);
	if (i == hub->nlease_revs || v[i].rev != rev || v[i].lease != lease)
		return;
	memmove(v + i, v + i + 1, (hub->nlease_revs - i - 1) * sizeof *v);
	hub->nlease_revs--;
}

int
watch_lease_of(const struct watch_hub *hub, uint64_t rev, uint64_t *lease,
    int *expired)
{
	size_t	 i;

	if (hub->nlease_revs == 0)
		return (0);
	i = watch_lease_find(hub, rev);
	if (i == hub->nlease_revs || hub->lease_revs[i].rev != rev)
		return (0);
	*lease = hub->lease_revs[i].lease;
	*expired = hub->lease_revs[i].expired;
	return (1);
}
