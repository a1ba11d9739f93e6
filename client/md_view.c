/*
 * Views: a prefix kept in memory.  md_view_open() lists the
 * prefix at one rev R (page after page at that rev when the daemon can list
 * at a rev; else each page at its own rev, see below), then watches it from
 * R + 1.  Events are applied by whatever call reads the handle; there is no
 * thread.
 *
 * Applying an event keeps a key only if the event is newer than what the
 * view holds (mod_rev), so that pages read at later revs than R (a daemon
 * that cannot list at a rev) converge: the watch replays every change after
 * R, and each key ends at its latest state.
 *
 * md_view_wait(rev): the view's rev moves with its events, and with the
 * progress of its watch (metad-protocol(7), watch_progress): a
 * watch_progress answered at P, and the progress line after it, mean every
 * event of the watch up to P has arrived, whether or not P touched the
 * prefix.  A put through the same handle at rev R is thus in the view once
 * md_view_wait(R) returns.  While the watch is being asked again (after
 * slow_consumer) a ping stands in: metad writes a live watch's events for
 * every rev it has reached before any later answer on that connection.
 * The view's requests are answered in the order sent: asked[] says which
 * answer is which.
 */
#include <stdlib.h>
#include <string.h>

#include "md_int.h"
#include "proto.h"

#define MD_VIEW_PAGE	1000
#define MD_VIEW_RETRY_MS 10	/* between pings while metad is behind */

struct md_view {
	struct md_sub		 sub;		/* first: the callbacks' cast */
	struct md_client	*h;
	char			*prefix;
	struct md_kv		**kvs;		/* sorted by key */
	size_t			 n;
	size_t			 cap;
	uint64_t		 rev;
	unsigned		 pings;		/* in flight */
	char			 asked[4];	/* w: watch, p: ping or progress */
	unsigned		 nasked;
	int			 changed;
	unsigned		 resumed;
	enum md_err		 end;
	char			*end_msg;
};

static int
md_view_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
	int	 c;

	c = memcmp(a, b, alen < blen ? alen : blen);
	if (c != 0)
		return (c);
	return (alen < blen ? -1 : alen > blen);
}

/* The index of key, or where it would go (*found 0). */
static size_t
md_view_find(const struct md_view *v, const char *key, size_t len,
    int *found)
{
	size_t	 lo = 0, hi = v->n, mid;
	int	 c;

	*found = 0;
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		c = md_view_cmp(v->kvs[mid]->key, v->kvs[mid]->key_len, key,
		    len);
		if (c == 0) {
			*found = 1;
			return (mid);
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (lo);
}

/* Takes kv: stored if newer than what the view holds, else freed. */
static void
md_view_put(struct md_view *v, struct md_kv *kv)
{
	size_t	 i;
	int	 found;

	i = md_view_find(v, kv->key, kv->key_len, &found);
	if (found) {
		if (v->kvs[i]->mod_rev >= kv->mod_rev) {
			md_kv_free(kv);
			return;
		}
		md_kv_free(v->kvs[i]);
		v->kvs[i] = kv;
		v->changed = 1;
		return;
	}
	if (v->n == v->cap) {
		v->cap = v->cap == 0 ? 64 : v->cap * 2;
		v->kvs = xrealloc(v->kvs, v->cap * sizeof *v->kvs);
	}
	memmove(v->kvs + i + 1, v->kvs + i, (v->n - i) * sizeof *v->kvs);
	v->kvs[i] = kv;
	v->n++;
	v->changed = 1;
}

static void
md_view_del(struct md_view *v, const char *key, size_t len, uint64_t rev)
{
	size_t	 i;
	int	 found;

	i = md_view_find(v, key, len, &found);
	if (!found || v->kvs[i]->mod_rev >= rev)
		return;
	md_kv_free(v->kvs[i]);
	memmove(v->kvs + i, v->kvs + i + 1, (v->n - i - 1) * sizeof *v->kvs);
	v->n--;
	v->changed = 1;
}

/* A request of the view's own was sent (kind: w, p or P, a progress). */
static void
md_view_asked(struct md_view *v, char kind)
{
	if (v->nasked < sizeof v->asked)
		v->asked[v->nasked++] = kind;
}

/* Which of them an answer is (in order); 0 if none is noted. */
static char
md_view_answered(struct md_view *v)
{
	char	 kind;

	if (v->nasked == 0)
		return (0);
	kind = v->asked[0];
	memmove(v->asked, v->asked + 1, --v->nasked);
	return (kind);
}

static void
md_view_ended(struct md_view *v, enum md_err e, const char *msg)
{
	v->sub.watch_id = 0;
	if (v->end != MD_OK)
		return;
	v->end = e;
	v->end_msg = xstrdup(msg);
}

static void
md_view_watch_req(struct md_view *v, struct jw *jw, struct buf *b,
    uint64_t from_rev)
{
	md_req_open(v->h, jw, b, "watch");
	jw_name(jw, "prefix");
	jw_cstr(jw, v->prefix);
	jw_name(jw, "from_rev");
	jw_u64(jw, from_rev);
	jw_obj_close(jw);
}

static int
md_view_cancelled(struct md_view *v, const cJSON *ev)
{
	const cJSON	*reason;
	struct buf	 b;
	struct jw	 jw;
	uint64_t	 next;
	int		 rc;

	reason = cJSON_GetObjectItemCaseSensitive(ev, "reason");
	next = md_u64(ev, "next_rev");
	if (cJSON_IsString(reason) && strcmp(reason->valuestring,
	    "slow_consumer") == 0 && next > 0) {
		v->sub.watch_id = 0;
		v->resumed++;
		v->sub.rewatching = 1;
		md_view_watch_req(v, &jw, &b, next);
		rc = md_sub_send(v->h, &b);
		buf_free(&b);
		if (rc == 0)
			md_view_asked(v, 'w');
		return (rc);
	}
	md_view_ended(v, MD_E_OTHER, cJSON_IsString(reason) ?
	    reason->valuestring : "watch cancelled");
	return (0);
}

static int
md_view_event(struct md_sub *sub, const cJSON *ev)
{
	struct md_view	*v = (struct md_view *)sub;
	const cJSON	*type, *key;
	struct md_kv	*kv;
	uint64_t	 rev;

	type = cJSON_GetObjectItemCaseSensitive(ev, "event");
	key = cJSON_GetObjectItemCaseSensitive(ev, "key");
	if (!cJSON_IsString(type))
		return (0);
	if (strcmp(type->valuestring, "cancelled") == 0)
		return (md_view_cancelled(v, ev));
	if (strcmp(type->valuestring, "progress") == 0) {
		if ((rev = md_u64(ev, "rev")) > v->rev)
			v->rev = rev;
		return (0);
	}
	rev = md_u64(ev, "mod_rev");
	if (strcmp(type->valuestring, "put") == 0) {
		if (md_kv_parse(ev, &kv) != 0)
			return (md_fail(v->h, MD_E_PROTOCOL, "metad sent an "
			    "invalid put event"));
		md_view_put(v, kv);
	} else if (strcmp(type->valuestring, "delete") == 0) {
		if (!cJSON_IsString(key))
			return (md_fail(v->h, MD_E_PROTOCOL, "metad sent an "
			    "invalid delete event"));
		md_view_del(v, key->valuestring, strlen(key->valuestring),
		    rev);
	} else
		return (0);
	if (rev > v->rev)
		v->rev = rev;
	return (0);
}

/* The answer to the view's own request: a watch again, a ping or progress. */
static int
md_view_resp(struct md_sub *sub, const cJSON *resp)
{
	struct md_view	*v = (struct md_view *)sub;
	const cJSON	*msg, *err, *code;
	uint64_t	 rev;
	char		 kind = md_view_answered(v);

	if (kind == 0)		/* not noted: as the answer says */
		kind = cJSON_GetObjectItemCaseSensitive(resp, "watch") !=
		    NULL && v->sub.rewatching ? 'w' : 'p';
	if (kind == 'w')
		v->sub.rewatching = 0;
	else if (v->pings > 0)
		v->pings--;
	if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		err = cJSON_GetObjectItemCaseSensitive(resp, "error");
		msg = cJSON_GetObjectItemCaseSensitive(err, "message");
		code = cJSON_GetObjectItemCaseSensitive(err, "code");
		/* The watch was cancelled before it was asked: ask again. */
		if (kind == 'P' && cJSON_IsString(code) &&
		    strcmp(code->valuestring, "not_found") == 0)
			return (0);
		md_view_ended(v, cJSON_IsString(code) ?
		    md_err_of(code->valuestring) : MD_E_OTHER,
		    cJSON_IsString(msg) ? msg->valuestring :
		    "metad refused the view's request");
		return (0);
	}
	if (kind == 'w') {
		v->sub.watch_id = md_u64(resp, "watch");
		return (0);
	}
	rev = md_u64(resp, "rev");
	if (v->sub.watch_id != 0 && rev > v->rev)
		v->rev = rev;
	return (0);
}

/* Lists the prefix into the view: 0, or -1 with the handle's error. */
static int
md_view_fill(struct md_view *v)
{
	struct md_list_opts	 o;
	struct md_list		 l;
	size_t			 i;
	char			*after = NULL;
	int			 at_rev = 1, rc = 0;

	memset(&o, 0, sizeof o);
	o.prefix = v->prefix;
	o.limit = MD_VIEW_PAGE;
	for (;;) {
		o.after = after;
		o.read.rev = after != NULL && at_rev ? v->rev : 0;
		if (md_list(v->h, &o, &l) != 0) {
			/* A daemon older than list's "rev" field. */
			if (o.read.rev != 0 && md_errcode(v->h) ==
			    MD_E_BAD_REQUEST && strstr(md_errmsg(v->h),
			    "rev") != NULL) {
				at_rev = 0;
				continue;
			}
			rc = -1;
			break;
		}
		if (after == NULL)
			v->rev = l.rev;
		for (i = 0; i < l.n; i++)
			md_view_put(v, md_kv_dup(&l.kvs[i]));
		free(after);
		after = NULL;
		if (l.more && l.n > 0)
			after = xstrdup(l.kvs[l.n - 1].key);
		md_list_free(&l);
		if (after == NULL)
			break;
	}
	free(after);
	return (rc);
}

struct md_view *
md_view_open(struct md_client *h, const char *prefix)
{
	struct md_view	*v;
	struct buf	 b;
	struct jw	 jw;
	cJSON		*resp;
	int		 rc;

	md_clearerr(h);
	if (h->sub != NULL) {
		md_seterr(h, MD_E_INVALID, "this handle already feeds a watch "
		    "or a view: use another handle");
		return (NULL);
	}
	v = xcalloc(1, sizeof *v);
	v->h = h;
	v->prefix = xstrdup(prefix != NULL ? prefix : "");
	v->sub.event = md_view_event;
	v->sub.resp = md_view_resp;
	if (md_view_fill(v) != 0) {
		md_view_close(v);
		return (NULL);
	}
	h->sub = &v->sub;
	md_view_watch_req(v, &jw, &b, v->rev + 1);
	rc = md_call_ok(h, &b, &resp);
	buf_free(&b);
	if (rc != 0) {
		md_view_close(v);
		return (NULL);
	}
	v->sub.watch_id = md_u64(resp, "watch");
	cJSON_Delete(resp);
	return (v);
}

void
md_view_close(struct md_view *v)
{
	struct buf	 b;
	struct jw	 jw;
	cJSON		*resp;
	size_t		 i;

	if (v == NULL)
		return;
	if (v->sub.watch_id != 0 && v->h->fd != -1) {
		md_req_open(v->h, &jw, &b, "unwatch");
		jw_name(&jw, "watch");
		jw_u64(&jw, v->sub.watch_id);
		jw_obj_close(&jw);
		if (md_call(v->h, &b, &resp) == 0)
			cJSON_Delete(resp);
		buf_free(&b);
	}
	if (v->h->sub == &v->sub)
		v->h->sub = NULL;
	for (i = 0; i < v->n; i++)
		md_kv_free(v->kvs[i]);
	free(v->kvs);
	free(v->prefix);
	free(v->end_msg);
	free(v);
}

static int
md_view_check(struct md_view *v)
{
	if (v->end != MD_OK)
		return (md_seterr(v->h, v->end, "the view's watch ended: %s",
		    v->end_msg));
	if (v->h->fd == -1)
		return (md_seterr(v->h, MD_E_CONNECT, "not connected to "
		    "metad"));
	if (v->sub.watch_id == 0 && !v->sub.rewatching)
		return (md_seterr(v->h, MD_E_CONNECT, "the view's watch was "
		    "lost with its connection: open the view again"));
	return (0);
}

static int
md_view_never(void *arg)
{
	return (0);
}

static int
md_view_changed(void *arg)
{
	struct md_view	*v = arg;

	return (v->changed || v->end != MD_OK);
}

int
md_view_poll(struct md_view *v, int64_t timeout_ms)
{
	int64_t	 now = mono_ms();
	int	 rc;

	md_clearerr(v->h);
	if (md_view_check(v) != 0)
		return (-1);
	v->changed = 0;
	rc = md_pump(v->h, timeout_ms < 0 ? -1 : now + timeout_ms,
	    md_view_changed, v);
	if (rc == 0)	/* and whatever else has come */
		rc = md_pump(v->h, mono_ms(), md_view_never, NULL);
	if (rc == -1 || md_view_check(v) != 0)
		return (-1);
	return (v->changed);
}

struct md_view_goal {
	struct md_view	*v;
	uint64_t	 rev;
};

static int
md_view_reached(void *arg)
{
	struct md_view_goal	*g = arg;

	return (g->v->rev >= g->rev || g->v->pings == 0 ||
	    g->v->end != MD_OK);
}

int
md_view_wait(struct md_view *v, uint64_t rev, int64_t timeout_ms)
{
	struct md_view_goal	 g = { v, rev };
	struct buf		 b;
	struct jw		 jw;
	int64_t			 deadline;
	int			 rc;
	char			 kind;

	md_clearerr(v->h);
	deadline = timeout_ms < 0 ? md_deadline(v->h) :
	    mono_ms() + timeout_ms;
	while (v->rev < rev) {
		if (md_view_check(v) != 0)
			return (-1);
		if (v->pings == 0) {
			kind = v->sub.watch_id != 0 ? 'P' : 'p';
			md_req_open(v->h, &jw, &b, kind == 'P' ?
			    "watch_progress" : "ping");
			if (kind == 'P') {
				jw_name(&jw, "watch");
				jw_u64(&jw, v->sub.watch_id);
			}
			jw_obj_close(&jw);
			rc = md_sub_send(v->h, &b);
			buf_free(&b);
			if (rc != 0)
				return (-1);
			v->pings++;
			md_view_asked(v, kind);
		}
		rc = md_pump(v->h, deadline, md_view_reached, &g);
		if (rc == -1)
			return (-1);
		if (rc == -2)
			return (md_seterr(v->h, MD_E_TIMEOUT, "the view is at "
			    "rev %llu, not yet at %llu", (unsigned long long)
			    v->rev, (unsigned long long)rev));
		v->changed = 0;
		if (v->rev < rev && v->pings == 0 && md_pump(v->h,
		    mono_ms() + MD_VIEW_RETRY_MS, md_view_changed, v) == -1)
			return (-1);
	}
	return (0);
}

uint64_t
md_view_rev(const struct md_view *v)
{
	return (v->rev);
}

const struct md_kv *
md_view_get(const struct md_view *v, const char *key)
{
	size_t	 i;
	int	 found;

	i = md_view_find(v, key, strlen(key), &found);
	return (found ? v->kvs[i] : NULL);
}

size_t
md_view_size(const struct md_view *v)
{
	return (v->n);
}

const struct md_kv *
md_view_at(const struct md_view *v, size_t i)
{
	return (i < v->n ? v->kvs[i] : NULL);
}

unsigned
md_view_resumed(const struct md_view *v)
{
	return (v->resumed);
}
