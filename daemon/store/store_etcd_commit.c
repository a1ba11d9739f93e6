/*
 * The etcd backend's commit, applied exactly once, answered with the
 * truth, with many out at once.
 *
 * A batch's writes go in one etcd txn that compares the mod_revision of
 * every key the batch read (0: absent) with what begin read, so it lands
 * only on the state it was decided on; keys it did not read (blind: a
 * plain put) are put with prev_kv, which tells what they held.  The txn
 * also owns a slot of this daemon's (store_etcd.h): it compares the slot's
 * mod_revision with the one we know and puts its token there, and on
 * failure it reads the slot.
 *
 * A txn is never sent blindly again.  When its answer is lost (none came,
 * or etcd said it does not know: a timeout, a leader change), the resolve
 * txn asks "is the slot still where we knew it?": if so it puts a void
 * token there, which fences off every copy of the txn still on its way
 * (their slot compare now fails), and the batch did not land: a conflict,
 * which the caller runs again from a fresh read.  If not, the slot holds
 * our token, and the batch landed at its mod_revision.  The resolve is
 * itself sent again until one answer comes back (its void token tells a
 * copy of it that landed).  Only if etcd stays unreachable throughout is
 * the outcome unknown (STORE_ERR_UNKNOWN); the slot is then retired.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* Sends of a resolve whose answers were lost, at most, and the pause. */
#define ETCD_COMMIT_TRIES	20
#define ETCD_COMMIT_PAUSE_MS	100

enum etcd_commit_step {
	STEP_TXN,		/* the txn is out */
	STEP_RESOLVE,		/* its answer was lost: did it land? */
	STEP_BLIND,		/* it landed: what blind keys held */
	STEP_COMPACT		/* then the compaction it asked for */
};

struct etcd_commit {
	struct store		*st;
	LIST_ENTRY(etcd_commit)	 entry;		/* e->commits_out */
	store_done		 done;
	void			*arg;
	struct etcd_batch	*b;		/* its snapshot */
	char			*body;		/* the txn */
	char			 token[64];
	int			 slot;		/* -1: none */
	uint64_t		 known;		/* the slot's, at send */
	enum etcd_commit_step	 step;
	unsigned		 tries;
	struct event		*pause;
	uint64_t		 compact_to;	/* after the txn, or 0 */
	uint64_t		 planned;	/* the batch's last rev */
	uint64_t		 landed;	/* the txn's revision */
};

static char *
etcd_slot_key64(struct store_etcd *e, int slot)
{
	char	 k[ETCD_PREFIX_MAX + 24];
	int	 n;

	n = snprintf(k, sizeof k, "%s%" PRIu64, e->slotpfx,
	    e->slots[slot].name);
	return (etcd_b64(k, (size_t)n));
}

static int
etcd_slot_take(struct store_etcd *e)
{
	int	 i;

	for (i = 0; i < ETCD_SLOTS; i++) {
		if (!e->slots[i].busy) {
			if (e->slots[i].name == 0)
				e->slots[i].name = ++e->slot_names;
			e->slots[i].busy = 1;
			return (i);
		}
	}
	return (-1);
}

/* Puts of blind keys carry prev_kv: what the key held before. */
static void
etcd_txn_ops(struct store_etcd *e, struct etcd_batch *b, struct buf *out)
{
	const struct etcd_ev	*ev;
	const struct etcd_snap	*sn;
	char			*k64, *v64;
	size_t			 i, j;

	for (i = e->overlay.head; i < e->overlay.n; i++) {
		ev = &e->overlay.v[i];
		if (etcd_overlay_find(e, ev->key, ev->key_len) != ev)
			continue;	/* a later write of the key wins */
		k64 = etcd_key64(e, ev->key, ev->key_len);
		if (ev->deleted)
			buf_printf(out, ",{\"request_delete_range\":{\"key\":"
			    "\"%s\"}}", k64);
		else {
			for (j = 0, sn = NULL; j < b->nsnap; j++) {
				if (b->snap[j].blind &&
				    b->snap[j].key_len == ev->key_len &&
				    memcmp(b->snap[j].key, ev->key,
				    ev->key_len) == 0)
					sn = &b->snap[j];
			}
			v64 = etcd_b64(ev->value, ev->value_len);
			buf_printf(out, ",{\"request_put\":{\"key\":\"%s\","
			    "\"value\":\"%s\"%s}}", k64, v64, sn != NULL ?
			    ",\"prev_kv\":true" : "");
			free(v64);
		}
		free(k64);
	}
}

/*
 * The compares of the keys the batch read: each found key's mod_revision
 * as read; each absent key's 0, or, when there are more than
 * ETCD_TXN_ABSENT_MAX of them, one compare on the span of them all: no
 * key in it written after the read (a key created since has a newer
 * mod_revision; a write to another key of the span is a false conflict,
 * run again).  A txn then compares 1 + its found keys + at most
 * ETCD_TXN_ABSENT_MAX.
 */
#define ETCD_TXN_ABSENT_MAX	8

/* Bytewise, a proper prefix first (store.h). */
static int
etcd_snap_cmp(const struct etcd_snap *a, const struct etcd_snap *b)
{
	size_t	 n = a->key_len < b->key_len ? a->key_len : b->key_len;
	int	 c = memcmp(a->key, b->key, n);

	if (c != 0)
		return (c);
	return (a->key_len < b->key_len ? -1 : a->key_len > b->key_len);
}

static void
etcd_txn_compares(struct store_etcd *e, struct etcd_batch *b,
    struct buf *out)
{
	const struct etcd_snap	*lo = NULL, *hi = NULL, *sn;
	char			*k64, *end, *k;
	size_t			 i, nabsent = 0;

	for (i = 0; i < b->nsnap; i++)
		nabsent += !b->snap[i].blind && !b->snap[i].found;
	for (i = 0; i < b->nsnap; i++) {
		sn = &b->snap[i];
		if (sn->blind)
			continue;
		if (!sn->found && nabsent > ETCD_TXN_ABSENT_MAX) {
			if (lo == NULL || etcd_snap_cmp(sn, lo) < 0)
				lo = sn;
			if (hi == NULL || etcd_snap_cmp(sn, hi) > 0)
				hi = sn;
			continue;
		}
		k64 = etcd_key64(e, sn->key, sn->key_len);
		buf_printf(out, ",{\"target\":\"MOD\",\"key\":\"%s\","
		    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}",
		    k64, sn->found ? sn->ev.mod_rev : 0);
		free(k64);
	}
	if (lo == NULL)
		return;
	k64 = etcd_key64(e, lo->key, lo->key_len);
	/* The end: just past hi, hi with a NUL byte after it. */
	k = xmalloc(e->prefix_len + hi->key_len + 1);
	memcpy(k, e->prefix, e->prefix_len);
	memcpy(k + e->prefix_len, hi->key, hi->key_len);
	k[e->prefix_len + hi->key_len] = '\0';
	end = etcd_b64(k, e->prefix_len + hi->key_len + 1);
	free(k);
	buf_printf(out, ",{\"target\":\"MOD\",\"key\":\"%s\",\"range_end\":"
	    "\"%s\",\"mod_revision\":\"%" PRIu64 "\",\"result\":\"LESS\"}",
	    k64, end, b->read_rev + 1);
	free(k64);
	free(end);
}

/*
 * The txn: the slot's and the read keys' compares, the slot's token and
 * the writes, and on failure the slot.
 */
static void
etcd_txn_body(struct etcd_commit *c, struct buf *out)
{
	struct store_etcd	*e = E(c->st);
	char			*s64, *v64;

	s64 = etcd_slot_key64(e, c->slot);
	buf_printf(out, "{\"compare\":[{\"target\":\"MOD\",\"key\":\"%s\","
	    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}", s64,
	    c->known);
	etcd_txn_compares(e, c->b, out);
	v64 = etcd_b64(c->token, strlen(c->token));
	buf_printf(out, "],\"success\":[{\"request_put\":{\"key\":\"%s\","
	    "\"value\":\"%s\"}}", s64, v64);
	free(v64);
	etcd_txn_ops(e, c->b, out);
	buf_printf(out, "],\"failure\":[{\"request_range\":{\"key\":\"%s\"}}"
	    "]}", s64);
	free(s64);
}

static void	etcd_commit_send(struct etcd_commit *);

static void
etcd_commit_free(struct etcd_commit *c)
{
	struct store_etcd	*e = E(c->st);

	LIST_REMOVE(c, entry);
	if (c->slot >= 0)
		e->slots[c->slot].busy = 0;
	if (c->pause != NULL)
		event_free(c->pause);
	etcd_batch_free(c->b);
	free(c->body);
	free(c);
}

/*
 * The end: the batch landed (err NULL; st->commit_rev) or not.  In the
 * callback its snapshot is e->cur, for store_reopen().
 */
static void
etcd_commit_end(struct etcd_commit *c, const struct store_err *err)
{
	struct store_etcd	*e = E(c->st);
	struct etcd_batch	*b = c->b;

	if (err != NULL)
		c->st->compact_rev = e->compact_begin;
	if (err == NULL && b != NULL && c->landed != 0) {
		c->st->commit_rev = c->landed;
		c->st->answer_again = 1;
		b->base_rev = c->landed - 1;
		b->landed = 1;
		e->cur = b;
	}
	c->done(c->arg, err);
	if (e->cur == b)
		e->cur = NULL;
	if (b != NULL && b->landed) {
		/* The batch just committed, for a store_reopen() later. */
		etcd_batch_free(e->last);
		e->last = b;
		c->b = NULL;
	}
	etcd_commit_free(c);
}

void
store_etcd_commits_end(struct store_etcd *e)
{
	struct etcd_commit	*c;
	struct store_err	 err;

	while ((c = LIST_FIRST(&e->commits_out)) != NULL) {
		store_err_set(&err, STORE_ERR_UNKNOWN, "the store closed "
		    "before etcd answered the write: it may or may not have "
		    "been applied");
		etcd_commit_end(c, &err);
	}
}

/* The txn landed at rev: what blind keys held, then the compaction. */
static void
etcd_commit_landed(struct etcd_commit *c, uint64_t rev, const cJSON *reply)
{
	struct etcd_batch	*b = c->b;
	const cJSON		*res, *pkv, *it;
	struct etcd_ev		 ev;
	size_t			 i;
	int			 blind = 0;

	c->landed = rev;
	c->st->commit_rev = rev;
	if (c->slot >= 0)
		E(c->st)->slots[c->slot].known = rev;
	/*
	 * A compaction up to the batch's own writes (above its base) meant
	 * their planned revs: it goes up to where they landed.
	 */
	if (c->compact_to > b->base_rev && rev > c->planned) {
		c->compact_to += rev - c->planned;
		if (c->st->compact_rev < c->compact_to)
			c->st->compact_rev = c->compact_to;
	}
	for (i = 0; i < b->nsnap; i++)
		blind |= b->snap[i].blind;
	if (blind && reply == NULL) {
		/* Landed by an earlier send: read them at rev (- 1). */
		c->step = STEP_BLIND;
		c->tries = 0;
		etcd_commit_send(c);
		return;
	}
	/* A blind key's put answered with what it held (none: absent). */
	res = cJSON_GetObjectItemCaseSensitive(reply, "responses");
	cJSON_ArrayForEach(it, res) {
		pkv = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(it, "response_put"),
		    "prev_kv");
		if (pkv == NULL || etcd_ev_from_kv(E(c->st), pkv, 0, &ev) != 0)
			continue;
		for (i = 0; i < b->nsnap; i++) {
			if (b->snap[i].blind && !b->snap[i].found &&
			    b->snap[i].key_len == ev.key_len &&
			    memcmp(b->snap[i].key, ev.key, ev.key_len) == 0) {
				b->snap[i].found = 1;
				b->snap[i].ev = ev;
				memset(&ev, 0, sizeof ev);
				break;
			}
		}
		etcd_ev_free(&ev);
	}
	if (c->compact_to == 0) {
		etcd_commit_end(c, NULL);
		return;
	}
	c->step = STEP_COMPACT;
	c->tries = 0;
	etcd_commit_send(c);
}

static void
etcd_commit_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	etcd_commit_send(arg);
}

static void
etcd_commit_later(struct etcd_commit *c)
{
	struct timeval	 tv = { 0, ETCD_COMMIT_PAUSE_MS * 1000 };

	if (c->pause == NULL && (c->pause = evtimer_new(E(c->st)->opts.base,
	    etcd_commit_pause_cb, c)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(c->pause, &tv);
}

/* The outcome cannot be learned: the slot is retired, never used again. */
static void
etcd_commit_unknown(struct etcd_commit *c, const char *why)
{
	struct store_err	 err;

	E(c->st)->slots[c->slot].name = 0;
	E(c->st)->slots[c->slot].known = 0;
	store_err_set(&err, STORE_ERR_UNKNOWN, "etcd did not answer the "
	    "write, and whether it was applied cannot be learned (%s): it may "
	    "or may not have been", why);
	etcd_commit_end(c, &err);
}

/* An answer was lost: find out (again), after a pause. */
static void
etcd_commit_lost(struct etcd_commit *c, const struct store_err *err)
{
	if (c->step == STEP_TXN) {
		log_debug("etcd: %s; looking the write up", err->msg);
		c->step = STEP_RESOLVE;
		c->tries = 0;
		etcd_commit_send(c);
		return;
	}
	if (++c->tries >= ETCD_COMMIT_TRIES) {
		if (c->step == STEP_RESOLVE) {
			log_warnx("etcd: %s; after %u tries the outcome is not "
			    "known", err->msg, c->tries);
			etcd_commit_unknown(c, err->msg);
		} else if (c->step == STEP_COMPACT)
			etcd_commit_end(c, err);
		else
			etcd_commit_end(c, NULL);	/* it landed anyway */
		return;
	}
	etcd_commit_later(c);
}

/* What the slot holds (a failed txn's range): whose token, and when. */
static int
etcd_slot_is(const cJSON *reply, const char *token, const char *pre,
    uint64_t *mod)
{
	const cJSON	*kv;
	unsigned char	*v;
	size_t		 vlen, plen = strlen(pre), tlen = strlen(token);
	int		 mine;

	kv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
	    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(
	    cJSON_GetObjectItemCaseSensitive(reply, "responses"), 0),
	    "response_range"), "kvs"), 0);
	*mod = kv != NULL ? etcd_u64(kv, "mod_revision") : 0;
	if (kv == NULL)
		return (0);
	v = etcd_unb64(kv, "value", &vlen);
	mine = vlen == plen + tlen && memcmp(v, pre, plen) == 0 &&
	    memcmp(v + plen, token, tlen) == 0;
	free(v);
	return (mine);
}

static void
etcd_commit_txn_cb(struct etcd_commit *c, const cJSON *reply)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	uint64_t		 mod;

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply,
	    "succeeded"))) {
		etcd_commit_landed(c, etcd_header_rev(e, reply), reply);
		return;
	}
	if (etcd_slot_is(reply, c->token, "", &mod)) {
		etcd_commit_landed(c, mod, NULL);	/* cannot be: sent once */
		return;
	}
	e->slots[c->slot].known = mod;
	store_err_set(&err, STORE_ERR_CONFLICT, "etcd: a key the write read "
	    "changed since rev %" PRIu64 " (another writer)", c->b->read_rev);
	etcd_commit_end(c, &err);
}

/* The resolve's answer: fenced (did not land), or landed at mod. */
static void
etcd_commit_resolve_cb(struct etcd_commit *c, const cJSON *reply)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	uint64_t		 mod;

	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply,
	    "succeeded")))
		mod = etcd_header_rev(e, reply);
	else if (etcd_slot_is(reply, c->token, "", &mod)) {
		log_info("etcd: a write whose answer was lost had landed at "
		    "rev %" PRIu64, mod);
		etcd_commit_landed(c, mod, NULL);
		return;
	} else if (!etcd_slot_is(reply, c->token, "void ", &mod)) {
		etcd_commit_unknown(c, "its slot holds another token");
		return;
	}
	e->slots[c->slot].known = mod;
	log_info("etcd: a write whose answer was lost had not landed, and "
	    "now never will; running it again");
	store_err_set(&err, STORE_ERR_CONFLICT, "etcd lost the answer of a "
	    "write that was not applied");
	etcd_commit_end(c, &err);
}

/* The blind keys at the revision the txn landed at. */
static void
etcd_commit_blind_cb(struct etcd_commit *c, const cJSON *reply)
{
	struct etcd_batch	*b = c->b;
	const cJSON		*res, *kv;
	size_t			 i, n = 0;

	res = cJSON_GetObjectItemCaseSensitive(reply, "responses");
	for (i = 0; i < b->nsnap; i++) {
		if (!b->snap[i].blind)
			continue;
		kv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(res,
		    (int)n++), "response_range"), "kvs"), 0);
		/* Ours, at version v: it held v - 1 (if any) before. */
		b->snap[i].found = kv != NULL && etcd_u64(kv, "version") > 1 &&
		    etcd_ev_from_kv(E(c->st), kv, 0, &b->snap[i].ev) == 0;
		if (b->snap[i].found) {
			b->snap[i].ev.version--;
			b->snap[i].ev.mod_rev = b->snap[i].ev.rev = 0;
		}
	}
	if (c->compact_to == 0) {
		etcd_commit_end(c, NULL);
		return;
	}
	c->step = STEP_COMPACT;
	c->tries = 0;
	etcd_commit_send(c);
}

static void
etcd_commit_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_commit	*c = arg;

	if (reply == NULL) {
		if (c->step == STEP_COMPACT &&
		    err->code == STORE_ERR_COMPACTED)
			etcd_commit_end(c, NULL);	/* done already */
		else if (err->code == STORE_ERR_UNKNOWN ||
		    err->code == STORE_ERR_UNAVAILABLE)
			etcd_commit_lost(c, err);
		else if (c->step == STEP_BLIND)
			etcd_commit_end(c, NULL);	/* landed anyway */
		else
			etcd_commit_end(c, err);
		return;
	}
	switch (c->step) {
	case STEP_TXN:
		etcd_commit_txn_cb(c, reply);
		break;
	case STEP_RESOLVE:
		etcd_commit_resolve_cb(c, reply);
		break;
	case STEP_BLIND:
		etcd_commit_blind_cb(c, reply);
		break;
	case STEP_COMPACT:
		etcd_commit_end(c, NULL);
		break;
	}
}

/*
 * The resolve: if the slot is unmoved, void it (no copy of the txn can
 * land after); else read it.
 */
static void
etcd_resolve_body(struct etcd_commit *c, struct buf *out)
{
	char	*s64, *v64, v[96];

	s64 = etcd_slot_key64(E(c->st), c->slot);
	snprintf(v, sizeof v, "void %s", c->token);
	v64 = etcd_b64(v, strlen(v));
	buf_printf(out, "{\"compare\":[{\"target\":\"MOD\",\"key\":\"%s\","
	    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}],"
	    "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}"
	    "],\"failure\":[{\"request_range\":{\"key\":\"%s\"}}]}", s64,
	    c->known, s64, v64, s64);
	free(s64);
	free(v64);
}

static void
etcd_blind_body(struct etcd_commit *c, struct buf *out)
{
	struct etcd_batch	*b = c->b;
	char			*k64;
	size_t			 i;
	int			 n = 0;

	buf_addstr(out, "{\"success\":[");
	for (i = 0; i < b->nsnap; i++) {
		if (!b->snap[i].blind)
			continue;
		k64 = etcd_key64(E(c->st), b->snap[i].key, b->snap[i].key_len);
		buf_printf(out, "%s{\"request_range\":{\"key\":\"%s\","
		    "\"revision\":\"%" PRIu64 "\"}}", n++ > 0 ? "," : "", k64,
		    c->landed);
		free(k64);
	}
	buf_addstr(out, "]}");
}

static void
etcd_commit_send(struct etcd_commit *c)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	struct buf		 b;
	int			 rc;

	buf_init(&b);
	switch (c->step) {
	case STEP_TXN:
		rc = etcd_http_call_once(&e->http, "/v3/kv/txn", c->body,
		    etcd_commit_cb, c, &err);
		if (rc != 0) {
			buf_free(&b);
			etcd_commit_end(c, &err);	/* never sent */
			return;
		}
		break;
	case STEP_RESOLVE:
		etcd_resolve_body(c, &b);
		rc = etcd_http_call_copy(&e->http, "/v3/kv/txn", buf_cstr(&b),
		    etcd_commit_cb, c, &err);
		break;
	case STEP_BLIND:
		etcd_blind_body(c, &b);
		rc = etcd_http_call_async(&e->http, "/v3/kv/txn",
		    buf_cstr(&b), etcd_commit_cb, c, &err);
		break;
	default:
		/* etcd keeps no event of the revision it compacts at. */
		buf_printf(&b, "{\"revision\":\"%" PRIu64 "\"}",
		    c->compact_to - 1);
		rc = etcd_http_call_once(&e->http, "/v3/kv/compaction",
		    buf_cstr(&b), etcd_commit_cb, c, &err);
		break;
	}
	buf_free(&b);
	if (rc != 0)
		etcd_commit_lost(c, &err);
}

/*
 * One etcd txn with the batch's writes, its compares and its slot's
 * token; then the compaction the batch asked for, if any.  The commit
 * takes the batch (e->cur): another may open while it is out.
 */
void
store_etcd_commit(struct store *st, uint64_t rev, store_done done,
    void *arg)
{
	struct store_etcd	*e = E(st);
	struct etcd_commit	*c;
	struct store_err	 err;
	struct buf		 b;

	if (e->compact_to == 1)
		e->compact_to = 0;	/* nothing below rev 1 to drop */
	c = xcalloc(1, sizeof *c);
	c->st = st;
	c->done = done;
	c->arg = arg;
	c->b = e->cur;
	c->slot = -1;
	e->cur = NULL;
	c->compact_to = e->compact_to;
	c->planned = rev;
	LIST_INSERT_HEAD(&e->commits_out, c, entry);
	if (e->overlay.n == e->overlay.head && e->compact_to == 0) {
		etcd_commit_end(c, NULL);	/* nothing to send */
		return;
	}
	if (e->overlay.n == e->overlay.head) {
		etcd_evs_clear(&e->overlay, 0);
		c->step = STEP_COMPACT;
		etcd_commit_send(c);
		return;
	}
	if ((c->slot = etcd_slot_take(e)) < 0) {
		etcd_evs_clear(&e->overlay, 0);
		store_err_set(&err, STORE_ERR_INTERNAL, "etcd: more than %d "
		    "commits out", ETCD_SLOTS);
		etcd_commit_end(c, &err);
		return;
	}
	c->known = e->slots[c->slot].known;
	snprintf(c->token, sizeof c->token, "metad %016" PRIx64 " %" PRIu64,
	    e->id, ++e->commits);
	buf_init(&b);
	etcd_txn_body(c, &b);
	c->body = xstrdup(buf_cstr(&b));
	buf_free(&b);
	etcd_evs_clear(&e->overlay, 0);
	etcd_commit_send(c);
}
