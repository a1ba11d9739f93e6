/*
 * The remote backend's watch stream (store_remote.h): one watch of every
 * key on the metad used, from the rev after ours; each rev's events
 * applied to the replica as one batch at that rev once the rev is whole;
 * progress lines moving our rev over revs without keys; and the barrier
 * of a linearizable read: a ping (the metad used's rev now) and a
 * watch_progress (the stream up to it) in one round trip.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "store/remote/remote_conn.h"
#include "store/remote/store_remote.h"
#include "jscan.h"
#include "jsonw.h"
#include "log.h"
#include "proto.h"
#include "util.h"

struct rwait {
	TAILQ_ENTRY(rwait)	 entry;
	struct store_remote	*sr;
	uint64_t		 rev;		/* the metad used's, pinged */
	int			 pinged;
	int64_t			 deadline_ms;
	void			 (*run)(void *, const struct store_err *);
	void			*arg;
};

static void	remote_waits_check(struct store_remote *);

/* Our rev moves to rev, past revs the stream said hold nothing of ours. */
static void
remote_feed_advance(struct store_remote *sr, uint64_t rev)
{
	struct store	*st = sr->st;
	uint64_t	 old = st->head.rev;

	if (rev <= old || sr->loading)
		return;
	st->head.rev = rev;
	if (rev > st->head.seen_rev)
		st->head.seen_rev = rev;
	if (sr->opts.notify != NULL && sr->opened)
		sr->opts.notify(sr->opts.notify_arg, old, rev);
	remote_waits_check(sr);
}

struct remote_apply {
	struct store_remote	*sr;
	struct store_err	 err;
	int			 failed;
};

static void
remote_applied(void *arg, const struct store_err *se)
{
	struct remote_apply	*ap = arg;

	if (se != NULL) {
		ap->err = *se;
		ap->failed = 1;
	}
}

/* The rev's events, in the replica's batch: each must find the key as
 * the metad used had it. */
static void
remote_apply_begun(void *arg, const struct store_err *se)
{
	struct remote_apply	*ap = arg;
	struct store_remote	*sr = ap->sr;
	const struct store_event *ev;
	struct store_kv		 meta;
	uint64_t		 pv;
	size_t			 i;
	int			 deleted;

	if (se != NULL) {
		ap->err = *se;
		ap->failed = 1;
		return;
	}
	for (i = 0; i < sr->evs.n; i++) {
		ev = &sr->evs.v[i];
		if (ev->type == STORE_EVENT_PUT) {
			if (store_put_lease(sr->view, ev->rev, (uint32_t)i,
			    ev->kv.key, ev->kv.key_len, ev->kv.value,
			    ev->kv.value_len, ev->kv.lease, &meta, &pv,
			    &ap->err) != 0)
				break;
			if (meta.version != ev->kv.version ||
			    meta.create_rev != ev->kv.create_rev) {
				store_err_set(&ap->err, STORE_ERR_INTERNAL,
				    "the replica's %.*s is at version %" PRIu64
				    " from rev %" PRIu64 " after rev %" PRIu64
				    ", the metad used's at %" PRIu64 " from %"
				    PRIu64, (int)(ev->kv.key_len < 64 ?
				    ev->kv.key_len : 64), ev->kv.key,
				    meta.version, meta.create_rev, ev->rev,
				    ev->kv.version, ev->kv.create_rev);
				break;
			}
		} else {
			if (store_delete(sr->view, ev->rev, (uint32_t)i,
			    ev->kv.key, ev->kv.key_len, &deleted,
			    &ap->err) != 0)
				break;
			if (!deleted) {
				store_err_set(&ap->err, STORE_ERR_INTERNAL,
				    "the replica had no %.*s to delete at rev %"
				    PRIu64, (int)(ev->kv.key_len < 64 ?
				    ev->kv.key_len : 64), ev->kv.key, ev->rev);
				break;
			}
		}
	}
	if (i < sr->evs.n) {
		ap->failed = 1;
		store_rollback(sr->view);
		return;
	}
	store_commit(sr->view, sr->ev_rev, remote_applied, ap);
}

/* The rev coming in is whole: into the replica. */
static void
remote_feed_flush(struct store_remote *sr)
{
	static const struct store_keys	 none;
	struct remote_apply		 ap;

	if (sr->evs.n == 0)
		return;
	memset(&ap, 0, sizeof ap);
	ap.sr = sr;
	store_begin(sr->view, &none, remote_apply_begun, &ap);
	store_evbuf_free(&sr->evs);
	memset(&sr->evs, 0, sizeof sr->evs);
	if (ap.failed) {
		/* Never serve a replica that went astray: load it again. */
		log_warnx("store: %s; loading the replica again", ap.err.msg);
		remote_load(sr);
		return;
	}
	remote_waits_check(sr);
}

static void
remote_watch_got(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct store_remote	*sr = arg;
	struct store_err	 err;
	cJSON			*j;
	uint64_t		 id;

	/* The connection went: up() asks again. */
	if ((j = remote_answer(line, len, se, &err)) == NULL) {
		if (se == NULL)
			log_warnx("store: the watch: %s", err.msg);
		return;
	}
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")) &&
	    proto_get_u64(j, "watch", 0, &id, NULL) == 1)
		sr->watch = id;
	else {
		remote_answer_error(j, &err);
		log_warnx("store: the watch from rev %" PRIu64 ": %s",
		    store_rev(sr->st) + 1, err.msg);
		/* Compacted past us (or refused): a new replica. */
		remote_load(sr);
	}
	cJSON_Delete(j);
}

void
remote_feed_watch(struct store_remote *sr)
{
	struct buf	 b;
	struct jw	 w;

	store_evbuf_free(&sr->evs);
	memset(&sr->evs, 0, sizeof sr->evs);
	sr->watch = 0;
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	JW_NAME(&w, "op");
	jw_cstr(&w, "watch");
	JW_NAME(&w, "prefix");
	jw_cstr(&w, "");
	JW_NAME(&w, "from_rev");
	jw_u64(&w, store_rev(sr->st) + 1);
	JW_NAME(&w, "progress_ms");
	jw_u64(&w, REMOTE_PROGRESS_MS);
	/* The puts' leases, so that the replica's keys show them. */
	JW_NAME(&w, "with_lease");
	jw_bool(&w, 1);
	jw_obj_close(&w);
	rconn_call(sr->conn, b.data, b.len, 0, remote_watch_got, sr);
	buf_free(&b);
}

void
remote_feed_up(struct store_remote *sr)
{
	remote_feed_watch(sr);
}

void
remote_feed_down(struct store_remote *sr)
{
	/* A rev not whole yet comes again with the next watch. */
	store_evbuf_free(&sr->evs);
	memset(&sr->evs, 0, sizeof sr->evs);
	sr->watch = 0;
}

void
remote_feed_answer(void *arg)
{
	remote_feed_flush(arg);
}

/* A delete of a lease's end, at rev: noted for the history (ring). */
static void
remote_end_note(struct store_remote *sr, const cJSON *j, uint64_t rev)
{
	const char	*cause;
	size_t		 len;
	uint64_t	 lease;
	unsigned	 last;

	if (proto_get_str(j, "cause", 0, &cause, &len, NULL) != 1 ||
	    proto_get_u64(j, "lease", 0, &lease, NULL) != 1)
		return;
	last = (sr->ends_next + REMOTE_ENDS - 1) % REMOTE_ENDS;
	if (sr->nends > 0 && sr->ends[last].rev == rev)
		return;
	sr->ends[sr->ends_next].rev = rev;
	sr->ends[sr->ends_next].lease = lease;
	sr->ends[sr->ends_next].expired = strcmp(cause, "expired") == 0;
	sr->ends_next = (sr->ends_next + 1) % REMOTE_ENDS;
	if (sr->nends < REMOTE_ENDS)
		sr->nends++;
}

/* An event line's kv into ev (its strings are j's, or v's). */
static int
remote_event_take(const cJSON *j, const char *type, struct store_event *ev,
    struct proto_bytes *v)
{
	memset(ev, 0, sizeof *ev);
	if (proto_get_key(j, "key", 0, &ev->kv.key, &ev->kv.key_len,
	    NULL) != 1 || proto_get_u64(j, "mod_rev", 0, &ev->rev, NULL) != 1 ||
	    proto_get_u64(j, "lease", 0, &ev->kv.lease, NULL) < 0)
		return (-1);
	ev->kv.mod_rev = ev->rev;
	if (strcmp(type, "delete") == 0) {
		ev->type = STORE_EVENT_DELETE;
		return (0);
	}
	ev->type = STORE_EVENT_PUT;
	if (proto_kv_value(j, v) != 1 ||
	    proto_get_u64(j, "version", 0, &ev->kv.version, NULL) != 1 ||
	    proto_get_u64(j, "create_rev", 0, &ev->kv.create_rev, NULL) != 1)
		return (-1);
	ev->kv.value = v->data;
	ev->kv.value_len = v->len;
	return (0);
}

/* A put or delete event taken: into the rev's batch, or left out. */
static void
remote_event_add(struct store_remote *sr, const struct store_event *ev,
    const cJSON *j)
{
	if (ev->rev <= store_rev(sr->st)) {
		log_warnx("store: an event of rev %" PRIu64 " again, at rev %"
		    PRIu64 ": left out", ev->rev, store_rev(sr->st));
		return;
	}
	if (sr->evs.n > 0 && ev->rev != sr->ev_rev)
		remote_feed_flush(sr);
	sr->ev_rev = ev->rev;
	store_evbuf_add(&sr->evs, ev);
	if (ev->type == STORE_EVENT_DELETE && j != NULL)
		remote_end_note(sr, j, ev->rev);
}

/*
 * A put, or a delete not of a lease's end, as the metad used writes them
 * (core/watch.c), read without a tree (the tree was 39% of this daemon's
 * CPU under puts, BENCHMARKS.md): 1 taken, 0 not such a line (cJSON's
 * turn: a \u escape, a value_b64, a cause, anything else).
 */
static int
remote_feed_fast(struct store_remote *sr, const char *line, size_t len)
{
	struct jscan_member		 m[10];
	const struct jscan_tok		*key = NULL, *val = NULL;
	struct store_event		 ev;
	uint64_t			*u;
	int				 n, i, put;

	if ((n = jscan_members(line, len, m, 10)) < 2 ||
	    m[0].name_len != 5 || memcmp(m[0].name, "watch", 5) != 0 ||
	    m[1].name_len != 5 || memcmp(m[1].name, "event", 5) != 0 ||
	    m[1].v.kind != JSCAN_STR)
		return (0);
	if (m[1].v.n == 3 && memcmp(m[1].v.p, "put", 3) == 0)
		put = 1;
	else if (m[1].v.n == 6 && memcmp(m[1].v.p, "delete", 6) == 0)
		put = 0;
	else
		return (0);
	memset(&ev, 0, sizeof ev);
	ev.type = put ? STORE_EVENT_PUT : STORE_EVENT_DELETE;
	for (i = 2; i < n; i++) {
		u = NULL;
#define IS(s)	(m[i].name_len == sizeof s - 1 && \
		    memcmp(m[i].name, s, sizeof s - 1) == 0)
		if (IS("key") && m[i].v.kind == JSCAN_STR)
			key = &m[i].v;
		else if (put && IS("value") && m[i].v.kind == JSCAN_STR)
			val = &m[i].v;
		else if (put && IS("version"))
			u = &ev.kv.version;
		else if (put && IS("create_rev"))
			u = &ev.kv.create_rev;
		else if (IS("mod_rev"))
			u = &ev.rev;
		else if (put && IS("lease"))
			u = &ev.kv.lease;
		else
			return (0);
#undef IS
		if (u != NULL && jscan_u64(&m[i].v, u) != 0)
			return (0);
	}
	if (key == NULL || key->n == 0 || ev.rev == 0 || (put && (val == NULL ||
	    ev.kv.version == 0 || ev.kv.create_rev == 0)))
		return (0);
	if (sr->scratch_cap < key->n + (put ? val->n : 0) + 2) {
		sr->scratch_cap = key->n + (put ? val->n : 0) + 2;
		sr->scratch = xrealloc(sr->scratch, sr->scratch_cap);
	}
	ev.kv.key = sr->scratch;
	ev.kv.key_len = jscan_unescape(key, sr->scratch);
	if (put) {
		ev.kv.value = (unsigned char *)sr->scratch + ev.kv.key_len + 1;
		ev.kv.value_len = jscan_unescape(val, (char *)ev.kv.value);
	}
	ev.kv.mod_rev = ev.rev;
	remote_event_add(sr, &ev, NULL);
	return (1);
}

int
remote_feed_line(void *arg, const char *line, size_t len)
{
	struct store_remote	*sr = arg;
	struct store_event	 ev;
	struct proto_bytes	 v;
	struct store_err	 err;
	const char		*type, *reason;
	size_t			 tlen, rlen;
	uint64_t		 rev;
	cJSON			*j;
	int			 rc = 0;

	if (remote_feed_fast(sr, line, len))
		return (0);
	if ((j = remote_answer(line, len, NULL, &err)) == NULL)
		return (-1);
	memset(&v, 0, sizeof v);
	if (proto_get_str(j, "event", 0, &type, &tlen, NULL) != 1) {
		rc = -1;
	} else if (strcmp(type, "put") == 0 || strcmp(type, "delete") == 0) {
		if (remote_event_take(j, type, &ev, &v) != 0)
			rc = -1;
		else
			remote_event_add(sr, &ev, j);
	} else if (strcmp(type, "progress") == 0) {
		remote_feed_flush(sr);
		if (proto_get_u64(j, "rev", 0, &rev, NULL) == 1)
			remote_feed_advance(sr, rev);
	} else if (strcmp(type, "cancelled") == 0) {
		remote_feed_flush(sr);
		if (proto_get_str(j, "reason", 0, &reason, &rlen, NULL) != 1)
			reason = "?";
		log_warnx("store: the metad used ended the watch (%s)",
		    reason);
		if (strcmp(reason, "compacted") == 0)
			remote_load(sr);
		else if (!sr->loading)
			remote_feed_watch(sr);
	}
	proto_bytes_free(&v);
	cJSON_Delete(j);
	return (rc);
}

static void
remote_wait_end(struct rwait *w, const struct store_err *se)
{
	TAILQ_REMOVE(&w->sr->waits, w, entry);
	w->run(w->arg, se);
	free(w);
}

static void
remote_waits_check(struct store_remote *sr)
{
	struct rwait	*w, *next;

	for (w = TAILQ_FIRST(&sr->waits); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->pinged && store_rev(sr->st) >= w->rev)
			remote_wait_end(w, NULL);
	}
}

static void
remote_wait_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store_remote	*sr = arg;
	struct store_err	 err;
	struct rwait		*w, *next;
	struct timeval		 tv = { 0, 250000 };
	int64_t			 now = mono_ms();

	for (w = TAILQ_FIRST(&sr->waits); w != NULL; w = next) {
		next = TAILQ_NEXT(w, entry);
		if (w->deadline_ms > now)
			continue;
		store_err_set(&err, STORE_ERR_UNAVAILABLE, "the watch stream "
		    "from the metad used did not reach rev %" PRIu64 " in %d "
		    "ms (here: %" PRIu64 ")", w->rev, REMOTE_BARRIER_MS,
		    store_rev(sr->st));
		remote_wait_end(w, &err);
	}
	if (!TAILQ_EMPTY(&sr->waits))
		evtimer_add(sr->wait_timer, &tv);
}

static void
remote_pinged(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct rwait		*w = arg;
	struct store_err	 err;
	cJSON			*j;

	if ((j = remote_answer(line, len, se, &err)) == NULL) {
		remote_wait_end(w, &err);
		return;
	}
	if (proto_get_u64(j, "rev", 0, &w->rev, NULL) != 1) {
		remote_answer_error(j, &err);
		cJSON_Delete(j);
		remote_wait_end(w, &err);
		return;
	}
	cJSON_Delete(j);
	w->pinged = 1;
	remote_waits_check(w->sr);
}

/* The stream has sent everything up to the answer's rev. */
static void
remote_progressed(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct store_remote	*sr = arg;
	struct store_err	 err;
	uint64_t		 rev;
	cJSON			*j;

	if ((j = remote_answer(line, len, se, &err)) == NULL)
		return;
	/* Not found: the watch it named is gone (a reconnect). */
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok")) &&
	    proto_get_u64(j, "rev", 0, &rev, NULL) == 1)
		remote_feed_advance(sr, rev);
	cJSON_Delete(j);
}

void
remote_barrier(struct store_remote *sr,
    void (*run)(void *, const struct store_err *), void *arg)
{
	static const char	 ping[] = "{\"op\":\"ping\"}";
	struct rwait		*w = xcalloc(1, sizeof *w);
	struct timeval		 tv = { 0, 250000 };
	char			 line[96];
	int			 n;

	w->sr = sr;
	w->run = run;
	w->arg = arg;
	w->deadline_ms = mono_ms() + REMOTE_BARRIER_MS;
	if (sr->wait_timer == NULL)
		sr->wait_timer = evtimer_new(sr->opts.base,
		    remote_wait_timer_cb, sr);
	if (TAILQ_EMPTY(&sr->waits))
		evtimer_add(sr->wait_timer, &tv);
	TAILQ_INSERT_TAIL(&sr->waits, w, entry);
	/* Pipelined: the ping's answer comes first, the progress's next. */
	rconn_call(sr->conn, ping, sizeof ping - 1, RCONN_RETRY,
	    remote_pinged, w);
	if (sr->watch != 0 && rconn_is_up(sr->conn)) {
		n = snprintf(line, sizeof line, "{\"op\":\"watch_progress\","
		    "\"watch\":%" PRIu64 "}", sr->watch);
		rconn_call(sr->conn, line, (size_t)n, 0, remote_progressed,
		    sr);
	}
}

void
remote_feed_free(struct store_remote *sr)
{
	struct rwait	*w;

	while ((w = TAILQ_FIRST(&sr->waits)) != NULL) {
		TAILQ_REMOVE(&sr->waits, w, entry);
		free(w);
	}
	if (sr->wait_timer != NULL)
		event_free(sr->wait_timer);
	store_evbuf_free(&sr->evs);
	free(sr->scratch);
}
