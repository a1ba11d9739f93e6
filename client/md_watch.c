/*
 * Watches as iterators.  Events are parsed as they arrive (whatever call
 * reads the handle) and queued; md_watch_next() hands them out in order.
 * A watch the daemon cancels as a slow consumer is asked for again from the
 * daemon's next_rev (the rev after the last event it sent), so nothing is
 * lost and nothing comes twice.  Any other cancellation ends the watch with
 * its reason as the error (compacted: history below the rev is gone).
 */
#include <stdlib.h>
#include <string.h>

#include "md_int.h"
#include "proto.h"

struct md_watch {
	struct md_sub		 sub;		/* first: the callbacks' cast */
	struct md_client	*h;
	char			*key;
	int			 prefix;
	uint64_t		 last_rev;	/* of the last event handed out */

	cJSON			**q;		/* events not handed out */
	size_t			 q_head;
	size_t			 q_len;
	size_t			 q_cap;
	cJSON			*cur;		/* the event handed out */
	struct proto_bytes	 cur_val;	/* its value's bytes */

	unsigned		 resumed;
	enum md_err		 end;		/* why it ended, or MD_OK */
	char			*end_msg;
};

static void
md_watch_push(struct md_watch *w, cJSON *ev)
{
	if (w->q_head > 0 && w->q_head >= w->q_len / 2) {
		memmove(w->q, w->q + w->q_head, (w->q_len - w->q_head) *
		    sizeof *w->q);
		w->q_len -= w->q_head;
		w->q_head = 0;
	}
	if (w->q_len == w->q_cap) {
		w->q_cap = w->q_cap == 0 ? 16 : w->q_cap * 2;
		w->q = xrealloc(w->q, w->q_cap * sizeof *w->q);
	}
	w->q[w->q_len++] = ev;
}

static void
md_watch_request(struct md_watch *w, struct jw *jw, struct buf *b,
    uint64_t from_rev)
{
	md_req_open(w->h, jw, b, "watch");
	jw_name(jw, w->prefix ? "prefix" : "key");
	jw_cstr(jw, w->key);
	if (from_rev != 0) {
		jw_name(jw, "from_rev");
		jw_u64(jw, from_rev);
	}
	jw_obj_close(jw);
}

static void
md_watch_ended(struct md_watch *w, enum md_err e, const char *msg)
{
	w->sub.watch_id = 0;
	if (w->end != MD_OK)
		return;
	w->end = e;
	w->end_msg = xstrdup(msg);
}

static int
md_watch_event(struct md_sub *sub, const cJSON *ev)
{
	struct md_watch	*w = (struct md_watch *)sub;
	const cJSON	*type, *reason;
	struct buf	 b;
	struct jw	 jw;
	uint64_t	 next;
	char		*msg;
	int		 rc;

	type = cJSON_GetObjectItemCaseSensitive(ev, "event");
	if (!cJSON_IsString(type))
		return (0);
	if (strcmp(type->valuestring, "put") == 0 ||
	    strcmp(type->valuestring, "delete") == 0) {
		md_watch_push(w, cJSON_Duplicate(ev, 1));
		return (0);
	}
	if (strcmp(type->valuestring, "cancelled") != 0)
		return (0);	/* an event kind from a later metad */
	reason = cJSON_GetObjectItemCaseSensitive(ev, "reason");
	next = md_u64(ev, "next_rev");
	if (cJSON_IsString(reason) && strcmp(reason->valuestring,
	    "slow_consumer") == 0 && next > 0) {
		w->sub.watch_id = 0;
		w->resumed++;
		w->sub.rewatching = 1;
		md_watch_request(w, &jw, &b, next);
		rc = md_sub_send(w->h, &b);
		buf_free(&b);
		return (rc);
	}
	if (xasprintf(&msg, "watch cancelled by metad: %s", cJSON_IsString(
	    reason) ? reason->valuestring : "no reason") == -1)
		abort();
	md_watch_ended(w, cJSON_IsString(reason) && strcmp(
	    reason->valuestring, "compacted") == 0 ? MD_E_COMPACTED :
	    MD_E_OTHER, msg);
	free(msg);
	return (0);
}

/* The answer to a watch asked for again. */
static int
md_watch_resp(struct md_sub *sub, const cJSON *resp)
{
	struct md_watch	*w = (struct md_watch *)sub;
	const cJSON	*msg;

	w->sub.rewatching = 0;
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		w->sub.watch_id = md_u64(resp, "watch");
		return (0);
	}
	msg = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
	    resp, "error"), "message");
	md_watch_ended(w, MD_E_COMPACTED, cJSON_IsString(msg) ?
	    msg->valuestring : "watch refused");
	return (0);
}

struct md_watch *
md_watch_open(struct md_client *h, const char *key, int prefix,
    uint64_t from_rev)
{
	struct md_watch	*w;
	struct buf	 b;
	struct jw	 jw;
	cJSON		*resp;
	int		 rc;

	md_clearerr(h);
	if (key == NULL) {
		md_seterr(h, MD_E_INVALID, "no key or prefix");
		return (NULL);
	}
	if (h->sub != NULL) {
		md_seterr(h, MD_E_INVALID, "this handle already feeds a watch "
		    "or a view: use another handle");
		return (NULL);
	}
	w = xcalloc(1, sizeof *w);
	w->h = h;
	w->key = xstrdup(key);
	w->prefix = prefix;
	w->sub.event = md_watch_event;
	w->sub.resp = md_watch_resp;
	h->sub = &w->sub;
	md_watch_request(w, &jw, &b, from_rev);
	rc = md_call_ok(h, &b, &resp);
	buf_free(&b);
	if (rc != 0) {
		md_watch_close(w);
		return (NULL);
	}
	w->sub.watch_id = md_u64(resp, "watch");
	w->last_rev = from_rev != 0 ? from_rev - 1 : md_u64(resp, "rev");
	cJSON_Delete(resp);
	return (w);
}

static int
md_watch_ready(void *arg)
{
	struct md_watch	*w = arg;

	return (w->q_head < w->q_len || w->end != MD_OK);
}

static int
md_watch_fill(struct md_watch *w, struct md_event *ev)
{
	const cJSON	*j = w->cur, *key;

	memset(ev, 0, sizeof *ev);
	key = cJSON_GetObjectItemCaseSensitive(j, "key");
	if (!cJSON_IsString(key))
		return (md_fail(w->h, MD_E_PROTOCOL, "metad sent an event "
		    "without a key"));
	ev->type = strcmp(cJSON_GetObjectItemCaseSensitive(j,
	    "event")->valuestring, "put") == 0 ? MD_EV_PUT : MD_EV_DELETE;
	ev->key = key->valuestring;
	ev->key_len = strlen(key->valuestring);
	/* A \u0000 in "value" is a NUL byte: value_len counts it. */
	switch (proto_kv_value(j, &w->cur_val)) {
	case -1:
		return (md_fail(w->h, MD_E_PROTOCOL, "metad sent an invalid "
		    "value"));
	case 1:
		ev->value = (const char *)w->cur_val.data;
		ev->value_len = w->cur_val.len;
		break;
	}
	ev->version = md_u64(j, "version");
	ev->create_rev = md_u64(j, "create_rev");
	ev->mod_rev = md_u64(j, "mod_rev");
	ev->lease = md_u64(j, "lease");
	w->last_rev = ev->mod_rev;
	return (1);
}

int
md_watch_next(struct md_watch *w, int64_t timeout_ms, struct md_event *ev)
{
	int64_t	 deadline = -1;
	int	 rc;

	md_clearerr(w->h);
	cJSON_Delete(w->cur);
	proto_bytes_free(&w->cur_val);
	w->cur = NULL;
	if (timeout_ms >= 0)
		deadline = mono_ms() + timeout_ms;
	if (!md_watch_ready(w)) {
		if (w->h->fd == -1)
			return (md_seterr(w->h, MD_E_CONNECT, "not connected "
			    "to metad"));
		if (w->sub.watch_id == 0 && !w->sub.rewatching)
			return (md_seterr(w->h, MD_E_CONNECT, "the watch was "
			    "lost with its connection: open it again"));
		rc = md_pump(w->h, deadline, md_watch_ready, w);
		if (rc == -2 && !md_watch_ready(w))
			return (0);
		if (rc == -1)
			return (-1);
	}
	if (w->q_head < w->q_len) {
		w->cur = w->q[w->q_head++];
		return (md_watch_fill(w, ev));
	}
	return (md_seterr(w->h, w->end, "%s", w->end_msg));
}

uint64_t
md_watch_rev(const struct md_watch *w)
{
	return (w->last_rev);
}

void
md_watch_close(struct md_watch *w)
{
	struct md_client	*h;
	struct buf		 b;
	struct jw		 jw;
	cJSON			*resp;

	if (w == NULL)
		return;
	h = w->h;
	if (w->sub.watch_id != 0 && h->fd != -1) {
		md_req_open(h, &jw, &b, "unwatch");
		jw_name(&jw, "watch");
		jw_u64(&jw, w->sub.watch_id);
		jw_obj_close(&jw);
		if (md_call(h, &b, &resp) == 0)
			cJSON_Delete(resp);
		buf_free(&b);
	}
	if (h->sub == &w->sub)
		h->sub = NULL;
	while (w->q_head < w->q_len)
		cJSON_Delete(w->q[w->q_head++]);
	free(w->q);
	cJSON_Delete(w->cur);
	proto_bytes_free(&w->cur_val);
	free(w->key);
	free(w->end_msg);
	free(w);
}

unsigned
md_watch_resumed(const struct md_watch *w)
{
	return (w->resumed);
}
