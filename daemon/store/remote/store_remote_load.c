/*
 * The remote backend's replica (store_remote.h): loaded as of the metad
 * used's compact rev (its keys as they are there), made anew when the
 * stream cannot go on, compacted with the metad used; its rev and
 * compact_rev are ours.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/remote/remote_conn.h"
#include "store/remote/store_remote.h"
#include "jsonw.h"
#include "log.h"
#include "proto.h"
#include "util.h"


void
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

	if ((j = remote_answer(line, len, se, &err)) == NULL) {
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
	if (proto_get_u64(j, "rev", 0, &rev, NULL) != 1)
		ok = 0;
	kvs = cJSON_GetObjectItemCaseSensitive(j, "kvs");
	cJSON_ArrayForEach(kv, kvs) {
		memset(&k, 0, sizeof k);
		if (proto_get_key(kv, "key", 0, &k.key, &k.key_len,
		    NULL) != 1 || proto_kv_value(kv, &v) != 1 ||
		    proto_get_u64(kv, "version", 0, &k.version, NULL) != 1 ||
		    proto_get_u64(kv, "create_rev", 0, &k.create_rev,
		    NULL) != 1 ||
		    proto_get_u64(kv, "mod_rev", 0, &k.mod_rev, NULL) != 1 ||
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

	if ((j = remote_answer(line, len, se, &err)) == NULL) {
		remote_load_failed(sr, &err);
		return;
	}
	ok = proto_get_u64(j, "compact_rev", 0, &sr->load_rev, NULL) == 1 &&
	    proto_get_u64(j, "rev", 0, &sr->open_rev, NULL) == 1;
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
	store_kvbuf_free(&sr->load_kvs);
	rconn_call(sr->conn, status, sizeof status - 1, RCONN_RETRY,
	    remote_status_got, sr);
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
void
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
