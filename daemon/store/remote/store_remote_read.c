/*
 * The remote backend's reads (store_remote.h): from the replica, a
 * linearizable one after its barrier; the history with the lease ends the
 * stream told; the status.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/remote/remote_conn.h"
#include "store/remote/store_remote.h"
#include "util.h"

#define R(st)	((struct store_remote *)(st)->impl)

static uint64_t
remote_view_rev(struct store_remote *sr, uint64_t rev)
{
	return (rev > store_rev(sr->view) ? 0 : rev);
}

/* A read at a rev above ours: as a local store answers it. */
static int
remote_future(struct store_remote *sr, uint64_t rev, store_read_done done,
    void *arg)
{
	struct store_err	 err;

	if (rev <= store_rev(sr->st))
		return (0);
	store_err_set(&err, STORE_ERR_FUTURE, "rev %" PRIu64 " is above the "
	    "current rev %" PRIu64, rev, store_rev(sr->st));
	done(arg, -1, NULL, 0, &err);
	return (1);
}

struct remote_read {
	struct store_remote	*sr;
	int			 range;
	char			*key;
	size_t			 key_len;
	uint64_t		 rev;
	struct store_range	 r;
	store_read_done		 done;
	void			*arg;
};

static void
remote_read_free(struct remote_read *rr)
{
	free(rr->key);
	free((void *)rr->r.prefix);
	free((void *)rr->r.after);
	free((void *)rr->r.start);
	free((void *)rr->r.end);
	free(rr);
}

static char *
remote_dup(const char *s, size_t len)
{
	char	*p;

	if (s == NULL)
		return (NULL);
	p = xmalloc(len + 1);
	memcpy(p, s, len);
	p[len] = '\0';
	return (p);
}

static void
remote_read_run(void *arg, const struct store_err *se)
{
	struct remote_read	*rr = arg;
	struct store_remote	*sr = rr->sr;
	struct store_range	 r = rr->r;

	if (se != NULL)
		rr->done(rr->arg, -1, NULL, 0, se);
	else if (!rr->range)
		store_read_get_at(sr->view, rr->key, rr->key_len,
		    remote_view_rev(sr, rr->rev), 1, rr->done, rr->arg);
	else {
		r.rev = remote_view_rev(sr, r.rev);
		store_read_range(sr->view, &r, rr->done, rr->arg);
	}
	remote_read_free(rr);
}

void
remote_read_get(struct store *st, const char *key, size_t key_len,
    uint64_t rev, int serializable, store_read_done done, void *arg)
{
	struct store_remote	*sr = R(st);
	struct remote_read	*rr;

	/* A read at a rev is the same wherever it is read. */
	if (remote_future(sr, rev, done, arg))
		return;
	if (serializable || rev != 0) {
		store_read_get_at(sr->view, key, key_len,
		    remote_view_rev(sr, rev), 1, done, arg);
		return;
	}
	rr = xcalloc(1, sizeof *rr);
	rr->sr = sr;
	rr->key = remote_dup(key, key_len);
	rr->key_len = key_len;
	rr->done = done;
	rr->arg = arg;
	remote_barrier(sr, remote_read_run, rr);
}

void
remote_read_range(struct store *st, const struct store_range *r,
    store_read_done done, void *arg)
{
	struct store_remote	*sr = R(st);
	struct store_range	 vr = *r;
	struct remote_read	*rr;

	if (remote_future(sr, r->rev, done, arg))
		return;
	if (r->serializable || r->rev != 0) {
		vr.rev = remote_view_rev(sr, r->rev);
		store_read_range(sr->view, &vr, done, arg);
		return;
	}
	rr = xcalloc(1, sizeof *rr);
	rr->sr = sr;
	rr->range = 1;
	rr->r = *r;
	rr->r.prefix = remote_dup(r->prefix, r->prefix_len);
	rr->r.after = remote_dup(r->after, r->after_len);
	rr->r.start = remote_dup(r->start, r->start_len);
	rr->r.end = remote_dup(r->end, r->end_len);
	rr->done = done;
	rr->arg = arg;
	remote_barrier(sr, remote_read_run, rr);
}

struct remote_hist {
	struct store_remote	*sr;
	store_history_done	 done;
	void			*arg;
};

/* The lease that ended at rev, from the ring: 1, or 0 if not kept. */
static int
remote_end_of(const struct store_remote *sr, uint64_t rev, uint64_t *lease,
    int *expired)
{
	unsigned	 i, k;

	for (i = 0; i < sr->nends; i++) {
		k = (sr->ends_next + REMOTE_ENDS - 1 - i) % REMOTE_ENDS;
		if (sr->ends[k].rev == rev) {
			*lease = sr->ends[k].lease;
			*expired = sr->ends[k].expired;
			return (1);
		}
		if (sr->ends[k].rev < rev)
			break;
	}
	return (0);
}

/* The replica's history, each delete of a lease's end saying so. */
static void
remote_history_got(void *arg, long n, const struct store_event *evs,
    int more, const struct store_err *se)
{
	struct remote_hist	*h = arg;
	struct store_event	*v = NULL;
	uint64_t		 lease;
	long			 i;
	int			 expired;

	if (n > 0 && h->sr->nends > 0) {
		v = xmalloc((size_t)n * sizeof *v);
		memcpy(v, evs, (size_t)n * sizeof *v);
		for (i = 0; i < n; i++) {
			if (v[i].type != STORE_EVENT_DELETE ||
			    !remote_end_of(h->sr, v[i].rev, &lease, &expired))
				continue;
			v[i].cause = expired ? STORE_CAUSE_EXPIRED :
			    STORE_CAUSE_REVOKED;
			v[i].cause_lease = lease;
		}
		evs = v;
	}
	h->done(h->arg, n, evs, more, se);
	free(v);
	free(h);
}

void
remote_read_history(struct store *st, uint64_t from_rev, size_t max_events,
    store_history_done done, void *arg)
{
	struct store_remote	*sr = R(st);
	struct store_err	 err;
	struct remote_hist	*h;

	if (from_rev < st->head.compact_rev) {
		store_err_set(&err, STORE_ERR_COMPACTED, "history from rev "
		    "%" PRIu64 " is compacted here (kept from %" PRIu64 ")",
		    from_rev, st->head.compact_rev);
		done(arg, -1, NULL, 0, &err);
		return;
	}
	store_want_prev(sr->view, st->head.want_prev);
	h = xmalloc(sizeof *h);
	h->sr = sr;
	h->done = done;
	h->arg = arg;
	store_read_history(sr->view, from_rev, max_events, remote_history_got,
	    h);
}

void
remote_read_key_history(struct store *st, const char *key, size_t key_len,
    uint64_t from_rev, size_t limit, store_history_done done, void *arg)
{
	store_read_key_history(R(st)->view, key, key_len, from_rev, limit,
	    done, arg);
}

struct remote_stats {
	struct store_remote	*sr;
	store_stats_done	 done;
	void			*arg;
};

static void
remote_stats_got(void *arg, const struct store_stats *vs,
    const struct store_err *se)
{
	struct remote_stats	*rs = arg;
	struct store_remote	*sr = rs->sr;
	struct store_stats	 s;

	memset(&s, 0, sizeof s);
	if (vs != NULL) {
		s.keys = vs->keys;
		s.db_bytes = vs->db_bytes;
	}
	snprintf(s.view, sizeof s.view, "on: a replica at rev %" PRIu64
	    ", %s", store_rev(sr->st), rconn_is_up(sr->conn) ? "streaming" :
	    "the metad used is unreachable");
	s.nendpoints = rconn_endpoints(sr->conn, s.endpoint,
	    STORE_ENDPOINTS_MAX);
	rs->done(rs->arg, &s, NULL);
	free(rs);
}

void
remote_read_stats(struct store *st, store_stats_done done, void *arg)
{
	struct remote_stats	*rs = xmalloc(sizeof *rs);

	rs->sr = R(st);
	rs->done = done;
	rs->arg = arg;
	store_read_stats(R(st)->view, remote_stats_got, rs);
}
