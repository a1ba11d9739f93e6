/*
 * The watch ops: watch (its keys, prefixes and options checked, the
 * answer, then its history), unwatch and watch_progress
 * (metad-protocol(7), WATCHES).
 */
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "metad.h"
#include "core/req.h"
#include "core/reply.h"
#include "core/watch.h"
#include "core/watch_int.h"

_Static_assert(WATCH_KEYS_MAX <= UINT16_MAX, "struct watch's nfilters");
_Static_assert(KEY_MAX_BYTES <= UINT32_MAX, "struct watch_filter's len");

static int
watch_add_filter(struct watch *w, const char *key, size_t len, int prefix,
    struct proto_err *e)
{
	struct watch_filter	*f;

	if (w->nfilters == WATCH_KEYS_MAX)
		return (proto_fail(e, PROTO_BAD_REQUEST, "a watch names at "
		    "most %d keys and prefixes", WATCH_KEYS_MAX));
	/* Sized as it goes: a million watches of one key each stay small. */
	if ((w->nfilters & (w->nfilters - 1)) == 0)
		w->filters = xrealloc(w->filters, (w->nfilters == 0 ? 1 :
		    2 * w->nfilters) * sizeof *w->filters);
	f = &w->filters[w->nfilters++];
	f->ent = NULL;
	f->key = xmemdup(key, len);
	f->len = (uint32_t)len;
	f->prefix = prefix;
	return (0);
}

/* "keys" or "prefixes": an array of strings, each checked. */
static int
watch_list(const cJSON *j, const char *name, int prefix, struct watch *w,
    struct proto_err *e)
{
	const cJSON	*a, *it;
	char		 field[32];
	size_t		 len;
	int		 i = 0;

	a = cJSON_GetObjectItemCaseSensitive(j, name);
	if (a == NULL || cJSON_IsNull(a))
		return (0);
	if (!cJSON_IsArray(a))
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"%s\" must "
		    "be an array of strings", name));
	cJSON_ArrayForEach(it, a) {
		snprintf(field, sizeof field, "%s[%d]", name, i++);
		if (!cJSON_IsString(it))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field "
			    "\"%s\" must be a string", field));
		len = strlen(it->valuestring);
		if (prefix && len > KEY_MAX_BYTES)
			return (proto_fail(e, PROTO_BAD_REQUEST, "field "
			    "\"%s\" is %zu bytes, the limit is %d", field, len,
			    KEY_MAX_BYTES));
		if (!prefix && proto_check_key(it->valuestring, len, field,
		    e) != 0)
			return (-1);
		if (watch_add_filter(w, it->valuestring, len, prefix, e) != 0)
			return (-1);
	}
	return (0);
}

static int
watch_args(struct req *r, struct watch *w, uint64_t *from,
    struct proto_err *e)
{
	const char	*key, *prefix;
	size_t		 klen, plen;
	uint64_t	 ms = 0;
	int		 hk, hp, prev_kv = 0, with_lease = 0;

	if ((hk = proto_get_key(r->json, "key", 0, &key, &klen, e)) == -1 ||
	    (hp = proto_get_prefix(r->json, "prefix", &prefix, &plen,
	    e)) == -1)
		return (-1);
	if ((hk && watch_add_filter(w, key, klen, 0, e) != 0) ||
	    (hp && watch_add_filter(w, prefix, plen, 1, e) != 0) ||
	    watch_list(r->json, "keys", 0, w, e) != 0 ||
	    watch_list(r->json, "prefixes", 1, w, e) != 0)
		return (-1);
	if (w->nfilters == 0)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give a key or a "
		    "prefix: \"key\", \"prefix\", \"keys\" or \"prefixes\""));
	*from = 0;
	if (proto_get_u64(r->json, "from_rev", 0, from, e) == -1 ||
	    proto_get_u64(r->json, "progress_ms", 0, &ms, e) == -1 ||
	    proto_get_bool(r->json, "prev_kv", 0, &prev_kv, e) == -1 ||
	    proto_get_bool(r->json, "with_lease", 0, &with_lease, e) == -1)
		return (-1);
	w->prev_kv = prev_kv != 0;
	w->with_lease = with_lease != 0;
	if (ms != 0 && (ms < WATCH_PROGRESS_MIN_MS ||
	    ms > WATCH_PROGRESS_MAX_MS))
		return (proto_fail(e, PROTO_BAD_REQUEST, "progress_ms must be "
		    "%d to %d", WATCH_PROGRESS_MIN_MS, WATCH_PROGRESS_MAX_MS));
	w->progress_ms = (unsigned)ms;
	return (0);
}

static void
watch_discard(struct watch *w)
{
	unsigned	 i;

	for (i = 0; i < w->nfilters; i++)
		free(w->filters[i].key);
	free(w->filters);
	free(w);
}

/* 0, or -1 with the refusal answered. */
static int
watch_admit(struct req *r, uint64_t from)
{
	struct store		*st = r->md->store;
	struct proto_err	 e;
	struct jw		 jw;

	if (r->peer->peer_watches != NULL && *r->peer->peer_watches >=
	    r->md->cfg.max_watches_per_peer) {
		snprintf(e.msg, sizeof e.msg, "%s has %u watches, the "
		    "limit is %u (--max-watches-per-peer)", r->peer->who,
		    *r->peer->peer_watches, r->md->cfg.max_watches_per_peer);
		reply_error(r, PROTO_RESOURCE_EXHAUSTED, e.msg);
		return (-1);
	}
	if (r->peer->nwatches >= WATCHES_PER_CONN_MAX) {
		snprintf(e.msg, sizeof e.msg, "this connection has %u "
		    "watches, the limit is %d", r->peer->nwatches,
		    WATCHES_PER_CONN_MAX);
		reply_error(r, PROTO_BAD_REQUEST, e.msg);
		return (-1);
	}
	if (from != 0 && from < store_compact_rev(st)) {
		snprintf(e.msg, sizeof e.msg, "from_rev %" PRIu64 " is "
		    "compacted; history starts at %" PRIu64, from,
		    store_compact_rev(st));
		reply_error_begin(r, &jw, PROTO_COMPACTED, e.msg);
		jw_name(&jw, "compact_rev");
		jw_u64(&jw, store_compact_rev(st));
		reply_error_end(r, &jw);
		return (-1);
	}
	return (0);
}

/* Answer a watch request; the new watch, or NULL if it was refused. */
static struct watch *
watch_start(struct req *r)
{
	struct watch_hub	*hub = r->md->watch;
	struct proto_err	 e;
	struct watch		*w;
	struct jw		 jw;
	uint64_t		 from;

	w = xcalloc(1, sizeof *w);
	if (watch_args(r, w, &from, &e) != 0) {
		watch_discard(w);
		reply_error(r, e.code, e.msg);
		return (NULL);
	}
	if (watch_admit(r, from) != 0) {
		watch_discard(w);
		return (NULL);
	}
	w->hub = hub;
	w->id = hub->next_id++;
	w->peer = r->peer;
	w->next_rev = from != 0 ? from : hub->delivered + 1;
	TAILQ_INSERT_TAIL(&hub->watches, w, hub_entry);
	TAILQ_INSERT_TAIL(&hub->catching, w, catching_entry);
	TAILQ_INSERT_TAIL(&r->peer->watches, w, conn_entry);
	r->peer->nwatches++;
	r->peer->ncatching++;
	r->md->nwatches++;
	if (r->peer->peer_watches != NULL)
		(*r->peer->peer_watches)++;
	watch_index_in(w);

	/* The answer goes first (nothing is before it), then the history. */
	reply_begin(r, &jw);
	jw_name(&jw, "watch");
	jw_u64(&jw, w->id);
	jw_name(&jw, "rev");
	jw_u64(&jw, hub->delivered);
	reply_end(r, &jw);
	return (w);
}

void
watch_op_watch(struct req *r)
{
	struct watch_hub	*hub = r->md->watch;
	struct watch		*w;

	w = watch_start(r);
	req_done(r);
	if (w != NULL) {
		watch_progress_start(w);
		watch_catch_up(w);
		watch_sweep(hub);
	}
}

/* This connection's watch the request names; NULL when answered. */
static struct watch *
watch_named(struct req *r)
{
	struct proto_err	 e;
	struct watch		*w;
	uint64_t		 id;

	if (proto_get_u64(r->json, "watch", 1, &id, &e) != 1) {
		reply_error(r, e.code, e.msg);
		return (NULL);
	}
	TAILQ_FOREACH(w, &r->peer->watches, conn_entry) {
		if (w->id == id && !w->dead)
			return (w);
	}
	snprintf(e.msg, sizeof e.msg, "no watch %" PRIu64 " on this "
	    "connection", id);
	reply_error(r, PROTO_NOT_FOUND, e.msg);
	return (NULL);
}

void
watch_op_unwatch(struct req *r)
{
	struct watch	*w;
	struct jw	 jw;
	uint64_t	 id;

	if ((w = watch_named(r)) != NULL) {
		id = w->id;
		watch_free(w);
		reply_begin(r, &jw);
		jw_name(&jw, "watch");
		jw_u64(&jw, id);
		reply_end(r, &jw);
	}
	req_done(r);
}

/*
 * The answer names the rev; the progress line follows it, after every
 * event of the watch up to that rev (all were sent before the answer).
 */
void
watch_op_progress(struct req *r)
{
	struct watch		*w;
	struct watch_peer	*p = r->peer;
	struct jw		 jw;
	uint64_t		 id = 0;

	if ((w = watch_named(r)) != NULL) {
		id = w->id;
		reply_begin(r, &jw);
		jw_name(&jw, "watch");
		jw_u64(&jw, id);
		jw_name(&jw, "rev");
		jw_u64(&jw, watch_progress_rev(w));
		reply_end(r, &jw);
	}
	req_done(r);
	/* The watch may have ended meanwhile (req_done ran the queue). */
	if (id == 0)
		return;
	TAILQ_FOREACH(w, &p->watches, conn_entry) {
		if (w->id == id && !w->dead) {
			watch_progress_send(w);
			break;
		}
	}
}

const struct op watch_op_watch_entry = {
	.name = "watch",
	.fields = { "key", "prefix", "keys", "prefixes", "from_rev",
	    "progress_ms", "prev_kv", "with_lease" },
	.run = watch_op_watch,
};

const struct op watch_op_unwatch_entry = {
	.name = "unwatch",
	.fields = { "watch" },
	.run = watch_op_unwatch,
};

const struct op watch_op_progress_entry = {
	.name = "watch_progress",
	.fields = { "watch" },
	.run = watch_op_progress,
};
