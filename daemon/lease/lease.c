/*
 * The lease table (lease.h): a hash of leases by id, a min-heap of their
 * deadlines, one libevent timer for the earliest, and the list of session
 * leases whose connection lives.
 */
#include <sys/random.h>

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "lease/lease.h"
#include "log.h"
#include "metad.h"
#include "store/store_hash.h"
#include "u64map.h"
#include "util.h"

struct lease_table {
	struct metad		*md;
	struct u64map		 byid;		/* every lease, by id */
	size_t			 nlive;		/* of them, not revoking */
	struct lease		**heap;
	size_t			 nheap, heap_cap;
	struct event		*timer;
	uint64_t		 timer_at;	/* armed for, 0: not armed */
	int			 remote;	/* the backend keeps them */
	lease_due_fn		*on_due;	/* a local lease's revoke */
	void			*on_due_arg;
	TAILQ_HEAD(, lease)	 sessions;
};

struct lease *
lease_lookup(struct lease_table *lt, uint64_t id)
{
	return (u64map_find(&lt->byid, id));
}

struct lease *
lease_find(struct lease_table *lt, uint64_t id)
{
	struct lease	*l = lease_lookup(lt, id);

	return (l != NULL && !l->revoking ? l : NULL);
}

/* The heap: heap[0] is due first; each lease knows its index. */
static int
lease_before(const struct lease *a, const struct lease *b)
{
	return (a->deadline < b->deadline);
}

static void
lease_heap_set(struct lease_table *lt, size_t i, struct lease *l)
{
	lt->heap[i] = l;
	l->heap_i = i;
}

static void
lease_heap_up(struct lease_table *lt, size_t i)
{
	struct lease	*l = lt->heap[i];

	while (i > 0 && lease_before(l, lt->heap[(i - 1) / 2])) {
		lease_heap_set(lt, i, lt->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	lease_heap_set(lt, i, l);
}

static void
lease_heap_down(struct lease_table *lt, size_t i)
{
	struct lease	*l = lt->heap[i];
	size_t		 c;

	while ((c = 2 * i + 1) < lt->nheap) {
		if (c + 1 < lt->nheap && lease_before(lt->heap[c + 1],
		    lt->heap[c]))
			c++;
		if (!lease_before(lt->heap[c], l))
			break;
		lease_heap_set(lt, i, lt->heap[c]);
		i = c;
	}
	lease_heap_set(lt, i, l);
}

static void
lease_heap_push(struct lease_table *lt, struct lease *l)
{
	if (lt->nheap == lt->heap_cap) {
		lt->heap_cap = lt->heap_cap ? lt->heap_cap * 2 : 64;
		lt->heap = xrealloc(lt->heap, lt->heap_cap * sizeof *lt->heap);
	}
	lease_heap_set(lt, lt->nheap++, l);
	lease_heap_up(lt, l->heap_i);
}

static void
lease_heap_remove(struct lease_table *lt, struct lease *l)
{
	struct lease	*m;
	size_t		 i = l->heap_i;

	if (i == SIZE_MAX)
		return;
	l->heap_i = SIZE_MAX;
	if (i == --lt->nheap)
		return;
	m = lt->heap[lt->nheap];
	lease_heap_set(lt, i, m);
	lease_heap_down(lt, i);
	lease_heap_up(lt, m->heap_i);
}

/* Arm the timer for the earliest deadline, if it is not armed for it. */
static void
lease_arm(struct lease_table *lt)
{
	struct timeval	 tv;
	uint64_t	 now, at, wait;

	if (lt->nheap == 0) {
		if (lt->timer_at != 0)
			evtimer_del(lt->timer);
		lt->timer_at = 0;
		return;
	}
	at = lt->heap[0]->deadline;
	if (lt->timer_at == at)
		return;
	now = (uint64_t)mono_ms();
	wait = at > now ? at - now : 0;
	tv.tv_sec = (time_t)(wait / 1000);
	tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
	evtimer_add(lt->timer, &tv);
	lt->timer_at = at;
}

/* A remote session lease's keepalive was answered. */
static void
lease_kept_cb(void *arg, const struct store_lease_state *ls,
    const struct store_err *se)
{
	struct lease_table	*lt = arg;
	struct lease		*l;

	if (ls == NULL || (l = lease_lookup(lt, ls->id)) == NULL)
		return;		/* an error (tried again), or gone */
	if (!ls->found && !l->revoking) {
		log_info("lease %llu: expired on the store",
		    (unsigned long long)l->id);
		lease_remove(lt, l);
	}
	(void)se;
}

/*
 * Keep a remote session lease alive: a keepalive now, the next one a third
 * of its TTL later (one lost is not yet its end).
 */
static void
lease_keep_remote(struct lease_table *lt, struct lease *l)
{
	uint64_t	 id = l->id;

	lease_refresh(lt, l);
	if (lt->md->stopping)
		return;
	/* Its answer finds the lease by id: it may be gone by then. */
	store_lease_keepalive(lt->md->store, id, lease_kept_cb, lt);
}

static void
lease_due_cb(evutil_socket_t fd, short what, void *arg)
{
	struct lease_table	*lt = arg;
	struct lease		*l;
	uint64_t		 now = (uint64_t)mono_ms();

	lt->timer_at = 0;
	while (lt->nheap > 0 && (l = lt->heap[0])->deadline <= now) {
		if (lt->remote && !l->revoking) {
			lease_keep_remote(lt, l);
			continue;
		}
		lease_heap_remove(lt, l);
		if (l->revoking)
			log_info("lease %llu: revoking it again",
			    (unsigned long long)l->id);
		else
			log_debug("lease %llu expired",
			    (unsigned long long)l->id);
		lease_expire(lt, l);
	}
	lease_arm(lt);
}

struct lease_table *
lease_table_create(struct metad *md, int remote, lease_due_fn *on_due,
    void *arg)
{
	struct lease_table	*lt;

	lt = xcalloc(1, sizeof *lt);
	lt->md = md;
	lt->on_due = on_due;
	lt->on_due_arg = arg;
	lt->remote = remote;
	/* Keyed: on etcd, another client may grant a lease of an id it chose. */
	u64map_init(&lt->byid, offsetof(struct lease, id),
	    offsetof(struct lease, hnext), store_hash_u64);
	TAILQ_INIT(&lt->sessions);
	if ((lt->timer = evtimer_new(md->base, lease_due_cb, lt)) == NULL)
		fatalx("evtimer_new");
	return (lt);
}

void
lease_table_free(struct lease_table *lt)
{
	struct lease	*l, *next;
	size_t		 b = 0;

	if (lt == NULL)
		return;
	for (l = u64map_next(&lt->byid, &b, NULL); l != NULL; l = next) {
		next = u64map_next(&lt->byid, &b, l);
		free(l);
	}
	u64map_free(&lt->byid);
	free(lt->heap);
	event_free(lt->timer);
	free(lt);
}

static struct lease *
lease_insert(struct lease_table *lt, uint64_t id, uint64_t ttl_ms,
    int session, struct conn *c)
{
	struct lease	*l;

	l = xcalloc(1, sizeof *l);
	l->id = id;
	l->ttl_ms = ttl_ms;
	l->session = session;
	l->heap_i = SIZE_MAX;
	u64map_add(&lt->byid, l);
	lt->nlive++;
	if (c != NULL) {
		l->conn = c;
		TAILQ_INSERT_TAIL(&lt->sessions, l, sentry);
	}
	lease_refresh(lt, l);
	return (l);
}

static uint64_t
lease_new_id(struct lease_table *lt)
{
	uint64_t	 id = 0;

	do {
		if (getrandom(&id, sizeof id, 0) != sizeof id)
			id = (uint64_t)random() << 31 ^ (uint64_t)random();
		id &= LEASE_ID_MAX;
	} while (id == 0 || lease_lookup(lt, id) != NULL);
	return (id);
}

struct lease *
lease_add(struct lease_table *lt, uint64_t ttl_ms, int session,
    struct conn *c)
{
	return (lease_insert(lt, lease_new_id(lt), ttl_ms, session,
	    session ? c : NULL));
}

struct lease *
lease_add_remote(struct lease_table *lt, uint64_t id, uint64_t ttl_ms,
    struct conn *c)
{
	return (lease_insert(lt, id, ttl_ms, 1, c));
}

void
lease_refresh(struct lease_table *lt, struct lease *l)
{
	/* A remote lease is due for its next keepalive. */
	l->deadline = (uint64_t)mono_ms() +
	    (lt->remote ? l->ttl_ms / 3 : l->ttl_ms);
	if (l->heap_i == SIZE_MAX)
		lease_heap_push(lt, l);
	else {
		lease_heap_down(lt, l->heap_i);
		lease_heap_up(lt, l->heap_i);
	}
	lease_arm(lt);
}

static void
lease_unsession(struct lease_table *lt, struct lease *l)
{
	if (l->conn != NULL) {
		TAILQ_REMOVE(&lt->sessions, l, sentry);
		l->conn = NULL;
	}
}

void
lease_unrevoke(struct lease_table *lt, struct lease *l)
{
	if (!l->revoking)
		return;
	if (l->session) {	/* its connection is gone */
		lease_retry(lt, l);
		return;
	}
	l->revoking = 0;
	l->revoked = 0;
	lt->nlive++;
	if (l->heap_i == SIZE_MAX)	/* due when it was before */
		lease_heap_push(lt, l);
	lease_arm(lt);
}

void
lease_retry(struct lease_table *lt, struct lease *l)
{
	l->revoked = 0;
	if (lt->md->stopping || l->heap_i != SIZE_MAX)
		return;
	l->deadline = (uint64_t)mono_ms() + LEASE_RETRY_MS;
	lease_heap_push(lt, l);
	lease_arm(lt);
}

/*
 * A remote session lease's revoke: landed (or the lease was gone), or
 * failed and tried again later.  The lease is found by id: the revoke's
 * id is not known here, so every revoking lease out of the heap is tried.
 */
struct lease_rcall {
	struct lease_table	*lt;
	uint64_t		 id;
};

static void
lease_revoked_remote(void *arg, int found, uint64_t rev, uint64_t n,
    const struct store_err *se)
{
	struct lease_rcall	*rc = arg;
	struct lease_table	*lt = rc->lt;
	struct lease		*l;

	(void)found;
	(void)rev;
	(void)n;
	if ((l = lease_lookup(lt, rc->id)) != NULL && l->revoking) {
		if (se == NULL)
			lease_remove(lt, l);
		else if (!lt->md->stopping && l->heap_i == SIZE_MAX) {
			log_warnx("lease %llu: revoke failed: %s",
			    (unsigned long long)l->id, se->msg);
			lease_retry(lt, l);
		}
	}
	free(rc);
}

void
lease_revoking(struct lease_table *lt, struct lease *l)
{
	lease_heap_remove(lt, l);
	lease_unsession(lt, l);
	if (!l->revoking) {
		l->revoking = 1;
		lt->nlive--;
	}
	lease_arm(lt);
}

void
lease_expire(struct lease_table *lt, struct lease *l)
{
	struct lease_rcall	*rc;

	lease_revoking(lt, l);
	if (lt->md->stopping)
		return;		/* revoked at the next start if a session */
	if (lt->remote) {
		rc = xcalloc(1, sizeof *rc);
		rc->lt = lt;
		rc->id = l->id;
		store_lease_revoke_now(lt->md->store, l->id, 0, NULL,
		    lease_revoked_remote, rc);
		return;
	}
	lt->on_due(l, lt->on_due_arg);
}

void
lease_remove(struct lease_table *lt, struct lease *l)
{
	lease_heap_remove(lt, l);
	lease_unsession(lt, l);
	u64map_del(&lt->byid, l);
	if (!l->revoking)
		lt->nlive--;
	free(l);
	lease_arm(lt);
}

void
lease_conn_closed(struct lease_table *lt, struct conn *c)
{
	struct lease	*l, *next;

	if (lt == NULL)
		return;
	for (l = TAILQ_FIRST(&lt->sessions); l != NULL; l = next) {
		next = TAILQ_NEXT(l, sentry);
		if (l->conn == c)
			lease_expire(lt, l);
	}
}

static int
lease_id_cmp(const void *a, const void *b)
{
	const struct lease	*x = *(struct lease *const *)a;
	const struct lease	*y = *(struct lease *const *)b;

	return (x->id < y->id ? -1 : x->id > y->id);
}

struct lease **
lease_list(struct lease_table *lt, size_t *n)
{
	struct lease	**v, *l = NULL;
	size_t		 b = 0;

	v = xcalloc(lt->nlive + 1, sizeof *v);
	*n = 0;
	while ((l = u64map_next(&lt->byid, &b, l)) != NULL) {
		if (!l->revoking)
			v[(*n)++] = l;
	}
	qsort(v, *n, sizeof *v, lease_id_cmp);
	return (v);
}

size_t
lease_count(struct lease_table *lt)
{
	return (lt->nlive);
}

static void
lease_loaded(void *arg, long n, const struct store_lease *v,
    const struct store_err *se)
{
	struct lease_table	*lt = arg;
	struct lease		*l;
	long			 i, sessions = 0;

	if (n < 0)
		fatalx("reading leases: %s", se->msg);
	for (i = 0; i < n; i++) {
		if (lease_lookup(lt, v[i].id) != NULL)
			continue;
		l = lease_insert(lt, v[i].id, v[i].ttl_ms, v[i].session, NULL);
		if (l->session) {
			/* Its connection is gone with the last run. */
			lease_expire(lt, l);
			sessions++;
		}
	}
	if (n > 0)
		log_info("%ld leases, each with its whole TTL again; %ld "
		    "sessions of the last run revoked", n - sessions,
		    sessions);
}

void
lease_table_load(struct lease_table *lt)
{
	/*
	 * A backend keeping leases itself times them: those of the last
	 * run, sessions included, expire there by their TTL.
	 */
	if (store_has_leases(lt->md->store) && !lt->remote)
		store_read_leases(lt->md->store, lease_loaded, lt);
}
