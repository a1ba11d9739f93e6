/*
 * The asynchronous store calls of the local backends, over their
 * synchronous functions (store_local.h): each answers before it returns.
 */
#include <stdlib.h>
#include <string.h>

#include "store/store_local.h"
#include "util.h"

#define LOCAL(s)	((s)->backend->local)

/*
 * A commit out, landed in its turn (store_local_landed()), or a begin
 * held back (store_local_hold()).
 */
struct store_local_out {
	TAILQ_ENTRY(store_local_out) entry;
	uint64_t		 rev;
	int			 wrote;
	store_done		 done;
	void			*arg;
};

TAILQ_HEAD(store_local_outq, store_local_out);

/* A local store's state of its own, beside its backend's (s->local). */
struct store_local_state {
	struct store_local_outq	 out;		/* commits out, oldest first */
	struct store_local_outq	 begins;	/* held back while hold */
	int			 hold;
};

void
store_local_init(struct store *s)
{
	s->local = xcalloc(1, sizeof *s->local);
	TAILQ_INIT(&s->local->out);
	TAILQ_INIT(&s->local->begins);
}

void
store_local_free(struct store *s)
{
	struct store_local_out	*o;

	if (s->local == NULL)
		return;
	while ((o = TAILQ_FIRST(&s->local->out)) != NULL) {
		TAILQ_REMOVE(&s->local->out, o, entry);
		free(o);
	}
	while ((o = TAILQ_FIRST(&s->local->begins)) != NULL) {
		TAILQ_REMOVE(&s->local->begins, o, entry);
		free(o);
	}
	free(s->local);
	s->local = NULL;
}

int
store_local_any_out(const struct store *s)
{
	return (!TAILQ_EMPTY(&s->local->out));
}

int
store_local_held(const struct store *s)
{
	return (s->local->hold);
}

/* -1 (err) if rev is above the current one; rev 0 for the current one. */
static int
local_rev(struct store *s, uint64_t *rev, struct store_err *err)
{
	if (*rev > s->head.rev)
		return (store_err_set(err, STORE_ERR_FUTURE, "rev %llu is "
		    "above the current rev %llu", (unsigned long long)*rev,
		    (unsigned long long)s->head.rev));
	if (*rev == s->head.rev)
		*rev = 0;
	return (0);
}

void
store_local_read_get(struct store *s, const char *key, size_t len,
    uint64_t rev, int serializable, store_read_done done, void *arg)
{
	struct store_err	 err;
	struct store_kv		 kv;
	int			 rc;

	memset(&kv, 0, sizeof kv);
	if (local_rev(s, &rev, &err) != 0)
		rc = -1;
	else if (rev != 0)
		rc = LOCAL(s)->get_at(s, key, len, rev, store_kv_copy_cb, &kv,
		    &err);
	else
		rc = s->backend->get(s, key, len, store_kv_copy_cb, &kv, &err);
	if (rc == -1)
		done(arg, -1, NULL, 0, &err);
	else
		done(arg, rc, rc ? &kv : NULL, 0, NULL);
	store_kv_copy_free(&kv);
}

void
store_local_read_range(struct store *s, const struct store_range *r,
    store_read_done done, void *arg)
{
	struct store_err	 err;
	struct store_range	 rr = *r;
	struct store_kvbuf	 a;
	long			 n;
	int			 more = 0;

	memset(&a, 0, sizeof a);
	if (local_rev(s, &rr.rev, &err) != 0)
		n = -1;
	else
		n = LOCAL(s)->range(s, &rr, store_kvbuf_add, &a, &more, &err);
	if (n < 0)
		done(arg, -1, NULL, 0, &err);
	else
		done(arg, (long)a.n, a.v, more, NULL);
	store_kvbuf_free(&a);
}

/*
 * Events copied until max, stopping only between revisions, and before
 * the revisions of batches out (not landed: nobody may see them yet).
 */
struct local_events {
	struct store_evbuf	 b;
	size_t			 max;
	uint64_t		 upto;
	int			 more;
};

static int
local_events_add(const struct store_event *ev, void *arg)
{
	struct local_events	*le = arg;

	if (ev->rev > le->upto)
		return (1);
	if (le->b.n >= le->max && ev->rev != le->b.v[le->b.n - 1].rev) {
		le->more = 1;
		return (1);
	}
	store_evbuf_add(&le->b, ev);
	return (0);
}

/*
 * Each event's prev (store_want_prev()): none for a create, else the key
 * as of the rev before (a txn writes a key once a rev); unknown when that
 * rev is compacted or the read fails.
 */
static void
local_events_prev(struct store *s, struct store_evbuf *b)
{
	struct store_event	*ev;
	struct store_err	 err;
	size_t			 i;
	int			 rc;

	for (i = 0; i < b->n; i++) {
		ev = &b->v[i];
		if (ev->type == STORE_EVENT_PUT && ev->kv.version == 1) {
			ev->prev_state = STORE_PREV_NONE;
			continue;
		}
		if (ev->rev < 2 || ev->rev - 1 < s->head.compact_rev)
			continue;
		rc = LOCAL(s)->get_at(s, ev->kv.key, ev->kv.key_len,
		    ev->rev - 1, store_kv_copy_cb, &ev->prev, &err);
		if (rc == 1)
			ev->prev_state = STORE_PREV_KV;
		else if (rc == 0)
			ev->prev_state = STORE_PREV_NONE;
	}
}

void
store_local_read_history(struct store *s, uint64_t from, size_t max,
    store_history_done done, void *arg)
{
	struct store_err	 err;
	struct local_events	 le;

	if (from < s->head.compact_rev) {
		store_err_set(&err, STORE_ERR_COMPACTED, "history from rev "
		    "%llu is compacted (kept from %llu)",
		    (unsigned long long)from,
		    (unsigned long long)s->head.compact_rev);
		done(arg, -1, NULL, 0, &err);
		return;
	}
	memset(&le, 0, sizeof le);
	le.max = max > 0 ? max : 1;
	le.upto = s->head.rev;
	if (LOCAL(s)->history(s, from, local_events_add, &le, &err) != 0)
		done(arg, -1, NULL, 0, &err);
	else {
		if (s->head.want_prev)
			local_events_prev(s, &le.b);
		done(arg, (long)le.b.n, le.b.v, le.more, NULL);
	}
	store_evbuf_free(&le.b);
}

void
store_local_read_key_history(struct store *s, const char *key, size_t len,
    uint64_t from, size_t max, store_history_done done, void *arg)
{
	struct store_err	 err;
	struct local_events	 le;

	memset(&le, 0, sizeof le);
	le.max = max;
	le.upto = s->head.rev;
	if (LOCAL(s)->key_history(s, key, len, from, local_events_add, &le,
	    &err) != 0)
		done(arg, -1, NULL, 0, &err);
	else
		done(arg, (long)le.b.n, le.b.v, le.more, NULL);
	store_evbuf_free(&le.b);
}

void
store_local_read_stats(struct store *s, store_stats_done done, void *arg)
{
	struct store_stats	 st;
	struct store_err	 err;

	memset(&st, 0, sizeof st);
	if (LOCAL(s)->stats(s, &st, &err) != 0)
		done(arg, NULL, &err);
	else
		done(arg, &st, NULL);
}

/* Onto a list of commits out (or of begins held back). */
static void
local_push(struct store_local_outq *q, uint64_t rev, int wrote,
    store_done done, void *arg)
{
	struct store_local_out	*o = xmalloc(sizeof *o);

	o->rev = rev;
	o->wrote = wrote;
	o->done = done;
	o->arg = arg;
	TAILQ_INSERT_TAIL(q, o, entry);
}

void
store_local_begin(struct store *s, const struct store_keys *keys,
    store_done done, void *arg)
{
	struct store_err	 err;

	(void)keys;
	if (s->local->hold) {
		local_push(&s->local->begins, 0, 0, done, arg);
		return;
	}
	/* On the batches out too, landed or not. */
	s->head.base_rev = TAILQ_EMPTY(&s->local->out) ? s->head.rev :
	    TAILQ_LAST(&s->local->out, store_local_outq)->rev;
	if (LOCAL(s)->begin(s, &err) != 0)
		done(arg, &err);
	else
		done(arg, NULL);
}

/*
 * Keep the events of the last opts.history revisions: compact, in steps of
 * a quarter of that, so that trimming costs little per commit (on sqlite
 * each step rewrites every page of `kept` it touches: a sixteenth gave
 * twice the p99 at 64 clients, BENCHMARKS.md); never a revision of this
 * batch, whose events notify is about to hand out.
 */
static int
store_local_trim(struct store *s, uint64_t rev, struct store_err *err)
{
	uint64_t	 keep = s->opts.history, floor;

	if (keep == 0 || rev < keep)
		return (0);
	floor = rev - keep + 1;
	if (floor > s->head.rev + 1)
		floor = s->head.rev + 1;
	if (floor <= s->head.compact_rev + keep / 4)
		return (0);
	return (store_compact(s, floor, err));
}

/* The batch's events are durable: hand them out, then its callback. */
static void
local_land(struct store *s, uint64_t rev, store_done done, void *arg)
{
	uint64_t	 prev = s->head.rev;

	s->head.rev = s->head.commit_rev = rev;
	if (rev > prev && s->opts.notify != NULL)
		s->opts.notify(s->opts.notify_arg, prev, rev);
	done(arg, NULL);
}

void
store_local_commit(struct store *s, uint64_t rev, store_done done,
    void *arg)
{
	struct store_err	 err;
	int			 rc;

	if (!s->dirty) {		/* behind batches out (store.c) */
		s->backend->rollback(s);
		local_push(&s->local->out, rev, 0, done, arg);
		return;
	}
	if (store_local_trim(s, rev, &err) != 0) {
		s->backend->rollback(s);
		done(arg, &err);
		return;
	}
	if ((rc = LOCAL(s)->commit(s, rev, &err)) < 0) {
		done(arg, &err);
		return;
	}
	if (rc > 0)
		local_push(&s->local->out, rev, 1, done, arg);
	else
		local_land(s, rev, done, arg);
}

void
store_local_landed(struct store *s)
{
	struct store_local_out	*o;
	int			 landed = 0;

	/* The clean ones before it (none, in order) and behind it. */
	while ((o = TAILQ_FIRST(&s->local->out)) != NULL &&
	    !(landed && o->wrote)) {
		TAILQ_REMOVE(&s->local->out, o, entry);
		if (o->wrote) {
			landed = 1;
			local_land(s, o->rev, o->done, o->arg);
		} else
			o->done(o->arg, NULL);
		free(o);
	}
}

void
store_local_hold(struct store *s)
{
	s->local->hold = 1;
}

void
store_local_release(struct store *s)
{
	struct store_local_out	*o;

	s->local->hold = 0;
	while (!s->local->hold &&
	    (o = TAILQ_FIRST(&s->local->begins)) != NULL) {
		TAILQ_REMOVE(&s->local->begins, o, entry);
		store_local_begin(s, NULL, o->done, o->arg);
		free(o);
	}
}
