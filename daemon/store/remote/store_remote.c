/*
 * The remote backend (store_remote.h): open, with the replica's load, and
 * close; reads from the replica (a linearizable one after its barrier);
 * writes forwarded whole; the status.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "store/remote/remote_conn.h"
#include "store/remote/store_remote.h"
#include "jsonw.h"
#include "log.h"
#include "proto.h"
#include "util.h"

#define R(st)	((struct store_remote *)(st)->impl)

cJSON *
remote_answer_parse(const char *line, size_t len, struct store_err *err)
{
	struct proto_err	 e;
	cJSON			*j;

	if ((j = proto_parse(line, len, &e)) == NULL)
		store_err_set(err, STORE_ERR_INTERNAL, "the metad used sent a "
		    "line that is not JSON: %s", e.msg);
	return (j);
}

void
remote_answer_error(const cJSON *j, struct store_err *err)
{
	const cJSON	*e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON	*code = cJSON_GetObjectItemCaseSensitive(e, "code");
	const cJSON	*msg = cJSON_GetObjectItemCaseSensitive(e, "message");
	const char	*c = cJSON_IsString(code) ? code->valuestring : "";
	enum store_errcode ec = STORE_ERR_INTERNAL;

	if (strcmp(c, "unavailable") == 0)
		ec = STORE_ERR_UNAVAILABLE;
	else if (strcmp(c, "compacted") == 0)
		ec = STORE_ERR_COMPACTED;
	else if (strcmp(c, "storage_full") == 0)
		ec = STORE_ERR_FULL;
	else if (strcmp(c, "not_found") == 0)
		ec = STORE_ERR_NO_LEASE;
	else if (strcmp(c, "value_too_large") == 0)
		ec = STORE_ERR_TOO_LARGE;
	store_err_set(err, ec, "the metad used: %s%s%s", c,
	    cJSON_IsString(msg) ? ": " : "",
	    cJSON_IsString(msg) ? msg->valuestring : "");
}

/* The view's rev and compact_rev moved: ours follow (feed's notify). */
static void
remote_view_notify(void *arg, uint64_t from, uint64_t to)
{
	struct store_remote	*sr = arg;
	struct store		*st = sr->st;
	uint64_t		 old = st->head.rev;

	if (store_compact_rev(sr->view) > st->head.compact_rev)
		st->head.compact_rev = store_compact_rev(sr->view);
	if (to <= old || sr->loading)
		return;
	st->head.rev = to;
	if (to > st->head.seen_rev)
		st->head.seen_rev = to;
	if (sr->opts.notify != NULL && sr->opened)
		sr->opts.notify(sr->opts.notify_arg, old, to);
}

static int
remote_kv_cmp(const void *a, const void *b)
{
	const struct store_kv	*x = a, *y = b;

	return (x->mod_rev < y->mod_rev ? -1 : x->mod_rev > y->mod_rev);
}

struct remote_load_apply {
	struct store_remote	*sr;
	struct store_err	 err;
	int			 failed;
};

static void
remote_applied_quiet(void *arg, const struct store_err *se)
{
	(void)arg;
	(void)se;
}

static void
remote_load_committed(void *arg, const struct store_err *se)
{
	struct remote_load_apply	*la = arg;

	if (se != NULL) {
		la->err = *se;
		la->failed = 1;
	}
}

/* The view's one batch at the load's rev: every key, and a compaction. */
static void
remote_load_begun(void *arg, const struct store_err *se)
{
	struct remote_load_apply	*la = arg;
	struct store_remote		*sr = la->sr;
	size_t				 i;

	if (se != NULL) {
		la->err = *se;
		la->failed = 1;
		return;
	}
	qsort(sr->load_kvs.v, sr->load_kvs.n, sizeof *sr->load_kvs.v,
	    remote_kv_cmp);
	for (i = 0; i < sr->load_kvs.n; i++) {
		if (store_put_as(sr->view, sr->load_rev, &sr->load_kvs.v[i],
		    &la->err) != 0) {
			la->failed = 1;
			store_rollback(sr->view);
			return;
		}
	}
	if (store_compact(sr->view, sr->load_rev, &la->err) != 0) {
		la->failed = 1;
		store_rollback(sr->view);
		return;
	}
	store_commit(sr->view, sr->load_rev, remote_load_committed, la);
}

/* The view, made anew with the keys loaded, at load_rev; 0 or -1. */
static int
remote_load_apply(struct store_remote *sr, struct store_err *err)
{
	static const struct store_keys	 none;
	struct remote_load_apply	 la;
	struct store_options		 vo;
	struct store			*old = sr->view;
	struct store			*st = sr->st;
	uint64_t			 from = st->head.rev;

	memset(&vo, 0, sizeof vo);
	vo.sync = STORE_SYNC_OFF;
	vo.history = sr->opts.history;
	vo.notify = remote_view_notify;
	vo.notify_arg = sr;
	if ((sr->view = store_open("memory", &vo, err)) == NULL) {
		sr->view = old;
		return (-1);
	}
	memset(&la, 0, sizeof la);
	la.sr = sr;
	/* A store at a rev without keys: the view stays at 0 (reads at our
	 * rev read it as it is, remote_view_rev()). */
	if (sr->load_kvs.n > 0) {
		store_begin(sr->view, &none, remote_load_begun, &la);
		if (la.failed) {
			*err = la.err;
			store_close(sr->view);
			sr->view = old;
			return (-1);
		}
	}
	store_close(old);
	/* History from the rev after the load's: rev L's is not whole. */
	st->head.compact_rev = sr->load_rev > 0 ? sr->load_rev + 1 : 0;
	st->head.rev = st->head.seen_rev = sr->load_rev;
	if (old != NULL && sr->opts.notify != NULL && sr->opened) {
		/* The events in between are gone: their watches are told. */
		log_warnx("store: the replica was loaded again at rev %" PRIu64
		    ": the events after rev %" PRIu64 " are lost to the "
		    "watches here (compacted)", sr->load_rev, from);
		if (sr->load_rev > from)
			sr->opts.notify(sr->opts.notify_arg, from,
			    sr->load_rev);
	}
	return (0);
}

static void	remote_load_page(struct store_remote *, const char *, size_t);
static void	remote_load_done(struct store_remote *);

static void
remote_load_failed(struct store_remote *sr, const struct store_err *se)
{
	store_kvbuf_free(&sr->load_kvs);
	sr->loading = 0;
	if (!sr->loaded) {
		sr->open_err = *se;
		sr->open_failed = 1;
		return;
	}
	log_warnx("store: loading the replica: %s; trying again", se->msg);
	remote_load(sr);
}

static void
remote_load_got(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct store_remote	*sr = arg;
	struct store_err	 err;
	const cJSON		*kvs, *kv, *more;
	cJSON			*j;
	struct proto_bytes	 v;
	struct store_kv		 k;
	const char		*last = NULL;
	uint64_t		 rev;
	size_t			 last_len = 0;
	int			 ok = 1;

	if (se != NULL) {
		remote_load_failed(sr, se);
		return;
	}
	if ((j = remote_answer_parse(line, len, &err)) == NULL) {
		remote_load_failed(sr, &err);
		return;
	}
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "ok"))) {
		remote_answer_error(j, &err);
		cJSON_Delete(j);
		if (err.code == STORE_ERR_COMPACTED) {
			/* Compacted while we paged: from the start again. */
			sr->loading = 0;
			remote_load(sr);
			return;
		}
		remote_load_failed(sr, &err);
		return;
	}
	if (proto_get_u64(j, "rev", 1, &rev, NULL) != 1)
		ok = 0;
	kvs = cJSON_GetObjectItemCaseSensitive(j, "kvs");
	cJSON_ArrayForEach(kv, kvs) {
		memset(&k, 0, sizeof k);
		if (proto_get_key(kv, "key", 1, &k.key, &k.key_len,
		    NULL) != 1 || proto_kv_value(kv, &v) != 1 ||
		    proto_get_u64(kv, "version", 1, &k.version, NULL) != 1 ||
		    proto_get_u64(kv, "create_rev", 1, &k.create_rev,
		    NULL) != 1 ||
		    proto_get_u64(kv, "mod_rev", 1, &k.mod_rev, NULL) != 1 ||
		    proto_get_u64(kv, "lease", 0, &k.lease, NULL) < 0) {
			ok = 0;
			break;
		}
		k.value = v.data;
		k.value_len = v.len;
		store_kvbuf_add(&k, &sr->load_kvs);
		proto_bytes_free(&v);
		last = sr->load_kvs.v[sr->load_kvs.n - 1].key;
		last_len = sr->load_kvs.v[sr->load_kvs.n - 1].key_len;
	}
	more = cJSON_GetObjectItemCaseSensitive(j, "more");
	if (!ok || !cJSON_IsArray(kvs)) {
		cJSON_Delete(j);
		store_err_set(&err, STORE_ERR_INTERNAL, "the metad used "
		    "answered a list the replica cannot read");
		remote_load_failed(sr, &err);
		return;
	}
	cJSON_Delete(j);
	if (cJSON_IsTrue(more) && last != NULL) {
		remote_load_page(sr, last, last_len);
		return;
	}
	remote_load_done(sr);
}

/* The keys are in: the view made, then the stream from the rev after. */
static void
remote_load_done(struct store_remote *sr)
{
	struct store_err	 err;

	if (remote_load_apply(sr, &err) != 0) {
		remote_load_failed(sr, &err);
		return;
	}
	store_kvbuf_free(&sr->load_kvs);
	sr->loading = 0;
	sr->loaded = 1;
	log_info("store: the replica holds the metad used's keys at rev %"
	    PRIu64, sr->load_rev);
	remote_feed_watch(sr);
}

/* The page after key (NULL: the first), at load_rev. */
static void
remote_load_page(struct store_remote *sr, const char *after, size_t len)
{
	struct buf	 b;
	struct jw	 w;

	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	JW_NAME(&w, "op");
	jw_cstr(&w, "list");
	JW_NAME(&w, "limit");
	jw_u64(&w, REMOTE_LOAD_PAGE);
	JW_NAME(&w, "rev");
	jw_u64(&w, sr->load_rev);
	if (after != NULL) {
		JW_NAME(&w, "after");
		jw_str(&w, after, len);
	}
	jw_obj_close(&w);
	rconn_call(sr->conn, b.data, b.len, RCONN_RETRY, remote_load_got, sr);
	buf_free(&b);
}

/*
 * The metad used's compact_rev C and rev: the keys are loaded as of C,
 * and its history from C + 1 comes on the stream, so that the replica
 * holds the history it holds (C 0: none to load, all of it to come).
 */
static void
remote_status_got(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct store_remote	*sr = arg;
	struct store_err	 err;
	cJSON			*j;
	int			 ok;

	if (se != NULL) {
		remote_load_failed(sr, se);
		return;
	}
	if ((j = remote_answer_parse(line, len, &err)) == NULL) {
		remote_load_failed(sr, &err);
		return;
	}
	ok = proto_get_u64(j, "compact_rev", 1, &sr->load_rev, NULL) == 1 &&
	    proto_get_u64(j, "rev", 1, &sr->open_rev, NULL) == 1;
	if (!ok)
		remote_answer_error(j, &err);
	cJSON_Delete(j);
	if (!ok)
		remote_load_failed(sr, &err);
	else if (sr->load_rev == 0)
		remote_load_done(sr);
	else
		remote_load_page(sr, NULL, 0);
}

void
remote_load(struct store_remote *sr)
{
	static const char	 status[] = "{\"op\":\"status\"}";

	if (sr->loading)
		return;
	sr->loading = 1;
	sr->load_rev = 0;
	sr->watch = 0;
	sr->watching = 0;
	store_kvbuf_free(&sr->load_kvs);
	rconn_call(sr->conn, status, sizeof status - 1, RCONN_RETRY,
	    remote_status_got, sr);
}

static void
remote_up(void *arg)
{
	struct store_remote	*sr = arg;

	if (!sr->loaded)
		remote_load(sr);
	else if (!sr->loading)
		remote_feed_up(sr);
}

static void
remote_down(void *arg)
{
	remote_feed_down(arg);
}

static int
remote_open(struct store *st, const char *arg,
    const struct store_options *opts, struct store_err *err)
{
	struct store_remote	*sr = xcalloc(1, sizeof *sr);
	struct rconn_tls	 tls = { opts->cacert, opts->cert, opts->key };
	struct rconn_cbs	 cbs;
	int64_t			 deadline = mono_ms() + REMOTE_OPEN_MS;

	st->impl = sr;
	sr->st = st;
	sr->opts = *opts;
	TAILQ_INIT(&sr->waits);
	if (opts->base == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "the metad "
		    "backend needs the daemon's loop"));
	if (opts->user != NULL || opts->password_file != NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "--store-user "
		    "and --store-password-file are for etcd: a metad knows "
		    "its clients by their certificates (--store-cert)"));
	memset(&cbs, 0, sizeof cbs);
	cbs.up = remote_up;
	cbs.down = remote_down;
	cbs.line = remote_feed_line;
	cbs.answer = remote_feed_answer;
	cbs.arg = sr;
	if ((sr->conn = rconn_open(opts->base, arg, &tls, &cbs, err)) == NULL)
		return (-1);
	/*
	 * The daemon's loop runs nothing else yet: the load runs on it, and
	 * the stream up to the rev the metad used had then.
	 */
	rconn_start(sr->conn);
	while ((!sr->loaded || store_rev(st) < sr->open_rev) &&
	    !sr->open_failed && mono_ms() < deadline) {
		if (event_base_loop(opts->base, EVLOOP_ONCE) != 0)
			break;
	}
	if (sr->open_failed) {
		*err = sr->open_err;
		return (-1);
	}
	sr->opened = 1;
	if (!sr->loaded || store_rev(st) < sr->open_rev)
		return (store_err_set(err, STORE_ERR_UNAVAILABLE, "the metad "
		    "used did not answer in %d s%s%s", REMOTE_OPEN_MS / 1000,
		    rconn_why(sr->conn)[0] != '\0' ? ": " : "",
		    rconn_why(sr->conn)));
	return (0);
}

static void
remote_close(struct store *st)
{
	struct store_remote	*sr = R(st);

	if (sr == NULL)
		return;
	rconn_free(sr->conn);
	remote_feed_free(sr);
	store_close(sr->view);
	store_kvbuf_free(&sr->load_kvs);
	free(sr);
	st->impl = NULL;
}

/* A read's rev on the view: ours may be ahead of it by revs without keys. */
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

static void
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

static void
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

static void
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

static void
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

static void
remote_read_stats(struct store *st, store_stats_done done, void *arg)
{
	struct remote_stats	*rs = xmalloc(sizeof *rs);

	rs->sr = R(st);
	rs->done = done;
	rs->arg = arg;
	store_read_stats(R(st)->view, remote_stats_got, rs);
}

static void
remote_compact_begun(void *arg, const struct store_err *se)
{
	struct store_remote	*sr = arg;
	struct store_err	 err;
	uint64_t		 to = sr->compact_to;

	if (se != NULL)
		return;
	if (to > store_rev(sr->view))
		to = store_rev(sr->view);
	if (store_compact(sr->view, to, &err) != 0) {
		store_rollback(sr->view);
		return;
	}
	store_commit(sr->view, store_rev(sr->view), remote_applied_quiet, NULL);
}

/*
 * The metad used compacted to rev (a compact's answer says so): the
 * replica's history and reads at a rev follow.
 */
static void
remote_compacted(struct store_remote *sr, uint64_t rev)
{
	static const struct store_keys	 none;

	if (rev <= sr->st->head.compact_rev)
		return;
	sr->compact_to = rev;
	if (store_rev(sr->view) > store_compact_rev(sr->view))
		store_begin(sr->view, &none, remote_compact_begun, sr);
	sr->st->head.compact_rev = rev;
}

struct remote_fwd {
	struct store_remote	*sr;
	store_forward_done	 done;
	void			*arg;
};

static void
remote_forwarded(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	struct remote_fwd	*f = arg;
	static const char	 key[] = "\"compact_rev\":";
	const char		*p;
	uint64_t		 rev = 0;

	/* Only a compact answers a compact_rev (an error its detail). */
	if (se == NULL && len > 11 && memcmp(line, "{\"ok\":true,", 11) == 0 &&
	    (p = memmem(line, len, key, sizeof key - 1)) != NULL) {
		for (p += sizeof key - 1; p < line + len && *p >= '0' &&
		    *p <= '9'; p++)
			rev = rev * 10 + (uint64_t)(*p - '0');
		remote_compacted(f->sr, rev);
	}
	f->done(f->arg, line, len, se);
	free(f);
}

static void
remote_forward(struct store *st, const char *line, size_t len,
    store_forward_done done, void *arg)
{
	struct remote_fwd	*f = xmalloc(sizeof *f);

	f->sr = R(st);
	f->done = done;
	f->arg = arg;
	rconn_call(R(st)->conn, line, len, RCONN_RETRY | RCONN_WRITE,
	    remote_forwarded, f);
}

/* No batch is ever opened here: every write goes whole (forward). */
static void
remote_begin(struct store *st, const struct store_keys *keys,
    store_done done, void *arg)
{
	struct store_err	 err;

	store_err_set(&err, STORE_ERR_INTERNAL, "the metad backend opens no "
	    "batch: its writes are forwarded whole");
	done(arg, &err);
}

static int
remote_no_write(struct store *st, struct store_err *err)
{
	return (store_err_set(err, STORE_ERR_INTERNAL, "the metad backend "
	    "writes nothing itself"));
}

static void
remote_commit(struct store *st, uint64_t rev, store_done done, void *arg)
{
	struct store_err	 err;

	remote_no_write(st, &err);
	done(arg, &err);
}

static void
remote_rollback(struct store *st)
{
}

const struct store_backend store_remote_backend = {
	.name = "metad",
	.open = remote_open,
	.close = remote_close,
	/* Batches: none (remote_begin fails); writes go whole. */
	.batch_max = 1,
	.batches_out = 1,
	.ordered = 1,
	.begin = remote_begin,
	.mark = remote_no_write,
	.undo = remote_no_write,
	.commit = remote_commit,
	.rollback = remote_rollback,
	.forward = remote_forward,
	/* Reads, from the replica. */
	.read_get = remote_read_get,
	.read_range = remote_read_range,
	.read_history = remote_read_history,
	.read_key_history = remote_read_key_history,
	.read_lease_keys = remote_read_lease_keys,
	/* Leases, kept by the metad used. */
	.read_leases = remote_read_leases,
	.lease_grant = remote_lease_grant,
	.lease_keepalive = remote_lease_keepalive,
	.lease_get = remote_lease_get,
	.lease_revoke_now = remote_lease_revoke_now,
	.lease_idem_get = remote_lease_idem_get,
	.lease_count = remote_lease_count,
	.read_stats = remote_read_stats,
};
