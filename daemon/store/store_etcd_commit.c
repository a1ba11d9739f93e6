/*
 * The etcd backend's commit, applied exactly once, answered with the
 * truth.
 *
 * A batch's writes go in one etcd txn guarded by a compare on the
 * sentinel's mod_revision read at begin (sent_mod), and the txn puts the
 * sentinel with a token of its own.  A txn is never sent blindly again:
 * when its answer is lost (no answer, or etcd answered that it does not
 * know: a timeout, a leader change), the very same txn -- same compare,
 * same token -- is sent again, after a pause, to the next endpoint.  Of
 * all its copies at most one can succeed, since the first to land moves
 * the sentinel past sent_mod.  If a copy succeeds, that is where the batch
 * landed.  If one fails its compare, the first sentinel write after
 * sent_mod tells whose it was: ours (our token) -- the batch landed there
 * -- or another writer's -- it never will, a conflict.  Only if etcd stays
 * unreachable throughout is the outcome unknown (STORE_ERR_UNKNOWN).
 *
 * The first sentinel write after sent_mod is found by its version: the
 * sentinel had version sent_ver at begin, so the write we look for made it
 * sent_ver + 1; ranges at past revisions find the revision where it did.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* Sends of one txn whose answers were lost, at most, and the pause. */
#define ETCD_COMMIT_TRIES	20
#define ETCD_COMMIT_PAUSE_MS	100
/* Lookups that found the sentinel unmoved, each followed by a copy. */
#define ETCD_COMMIT_LOOKUPS	3

enum etcd_lookup_step {
	LOOKUP_NOW,
	LOOKUP_MID,
	LOOKUP_AT
};

struct etcd_commit {
	struct store		*st;
	store_done		 done;
	void			*arg;
	char			*body;		/* the txn, sent as it is */
	char			 token[64];
	uint64_t		 sent_mod, sent_ver;
	int			 uncertain;	/* a copy may have landed */
	unsigned		 tries;
	struct event		*pause;
	int			 compacting;	/* else the txn */
	uint64_t		 compact_to;	/* after the txn, or 0 */
	enum etcd_lookup_step	 lookup;
	unsigned		 lookups;
	uint64_t		 lo, hi, mid;	/* the lookup's revisions */
};

/* The txn body: the sentinel compare, then each key's last write. */
static void
etcd_txn_body(struct store_etcd *e, const char *token, struct buf *b)
{
	const struct etcd_ev	*ev;
	char			*k64, *v64;
	size_t			 i;

	v64 = etcd_b64(token, strlen(token));
	buf_printf(b, "{\"compare\":[{\"target\":\"MOD\",\"key\":\"%s\","
	    "\"mod_revision\":\"%" PRIu64 "\",\"result\":\"EQUAL\"}],"
	    "\"success\":[{\"request_put\":{\"key\":\"%s\",\"value\":\"%s\"}}",
	    e->sent64, e->sent_mod, e->sent64, v64);
	free(v64);
	for (i = e->overlay.head; i < e->overlay.n; i++) {
		ev = &e->overlay.v[i];
		if (etcd_overlay_find(e, ev->key, ev->key_len) != ev)
			continue;	/* a later write of the key wins */
		k64 = etcd_key64(e, ev->key, ev->key_len);
		if (ev->deleted)
			buf_printf(b, ",{\"request_delete_range\":{\"key\":"
			    "\"%s\"}}", k64);
		else {
			v64 = etcd_b64(ev->value, ev->value_len);
			buf_printf(b, ",{\"request_put\":{\"key\":\"%s\","
			    "\"value\":\"%s\"}}", k64, v64);
			free(v64);
		}
		free(k64);
	}
	buf_addstr(b, "]}");
}

static void	etcd_commit_send(struct etcd_commit *);
static void	etcd_lookup(struct etcd_commit *);

static void
etcd_commit_end(struct etcd_commit *c, const struct store_err *err)
{
	if (err != NULL)
		c->st->compact_rev = E(c->st)->compact_begin;
	c->done(c->arg, err);
	if (c->pause != NULL)
		event_free(c->pause);
	free(c->body);
	free(c);
}

/* The batch's txn landed at rev: then its compaction, if it asked. */
static void
etcd_commit_landed(struct etcd_commit *c, uint64_t rev)
{
	c->st->commit_rev = rev;
	if (c->compact_to == 0) {
		etcd_commit_end(c, NULL);
		return;
	}
	c->compacting = 1;
	c->uncertain = 0;
	c->tries = 0;
	etcd_commit_send(c);
}

static void
etcd_commit_pause_cb(evutil_socket_t fd, short what, void *arg)
{
	etcd_commit_send(arg);
}

/* The answer was lost: the same again, after a pause, or find out. */
static void
etcd_commit_again(struct etcd_commit *c, const struct store_err *err)
{
	struct timeval	 tv = { 0, ETCD_COMMIT_PAUSE_MS * 1000 };

	c->uncertain = 1;
	if (++c->tries >= ETCD_COMMIT_TRIES && c->compacting) {
		etcd_commit_end(c, err);	/* asking again is harmless */
		return;
	}
	if (c->tries >= ETCD_COMMIT_TRIES) {
		log_warnx("etcd: %s; after %u tries the outcome is not known",
		    err->msg, c->tries);
		etcd_lookup(c);
		return;
	}
	log_debug("etcd: %s; sending the same again", err->msg);
	if (c->pause == NULL && (c->pause = evtimer_new(E(c->st)->opts.base,
	    etcd_commit_pause_cb, c)) == NULL)
		fatalx("evtimer_new");
	evtimer_add(c->pause, &tv);
}

static void
etcd_commit_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_commit	*c = arg;
	struct store_err	 e2;
	uint64_t		 rev;

	if (reply == NULL) {
		if (c->compacting && err->code == STORE_ERR_COMPACTED)
			etcd_commit_end(c, NULL);	/* done already */
		else if (err->code == STORE_ERR_UNKNOWN ||
		    err->code == STORE_ERR_UNAVAILABLE)
			etcd_commit_again(c, err);
		else
			etcd_commit_end(c, err);
		return;
	}
	if (c->compacting) {
		etcd_commit_end(c, NULL);
		return;
	}
	rev = etcd_header_rev(E(c->st), reply);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "succeeded")))
		etcd_commit_landed(c, rev);
	else if (c->uncertain)
		etcd_lookup(c);		/* was it a copy of ours? */
	else {
		store_err_set(&e2, STORE_ERR_CONFLICT, "etcd moved on since "
		    "rev %" PRIu64 " (another writer)", c->st->base_rev);
		etcd_commit_end(c, &e2);
	}
}

static void
etcd_commit_send(struct etcd_commit *c)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	char			 body[96];
	int			 rc;

	if (c->compacting) {
		/* etcd keeps no event of the revision it compacts at. */
		snprintf(body, sizeof body, "{\"revision\":\"%" PRIu64 "\"}",
		    c->compact_to - 1);
		rc = etcd_http_call_once(&e->http, "/v3/kv/compaction", body,
		    etcd_commit_cb, c, &err);
	} else if (c->tries == 0)
		rc = etcd_http_call_once(&e->http, "/v3/kv/txn", c->body,
		    etcd_commit_cb, c, &err);
	else	/* a copy: only one can land, so it need not wait long */
		rc = etcd_http_call_copy(&e->http, "/v3/kv/txn", c->body,
		    etcd_commit_cb, c, &err);
	if (rc != 0 && !c->uncertain && !c->compacting)
		etcd_commit_end(c, &err);	/* never sent: nothing done */
	else if (rc != 0)
		etcd_commit_again(c, &err);
}

/*
 * The lookup: ranges of the sentinel, now (LOOKUP_NOW), then at past
 * revisions in [lo, hi] (LOOKUP_MID at mid), until the revision where its
 * version became sent_ver + 1 (LOOKUP_AT).
 */
static void	etcd_lookup_cb(void *, const cJSON *, const struct store_err *);

static void
etcd_lookup_at(struct etcd_commit *c, uint64_t rev)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	struct buf		 b;
	int			 rc;

	buf_init(&b);
	etcd_range_body(&b, e->sent64, NULL, rev, 0, 0);
	rc = etcd_http_call_async(&e->http, "/v3/kv/range", buf_cstr(&b),
	    etcd_lookup_cb, c, &err);
	buf_free(&b);
	if (rc != 0)
		etcd_lookup_cb(c, NULL, &err);
}

static void
etcd_lookup(struct etcd_commit *c)
{
	c->lookup = LOOKUP_NOW;
	etcd_lookup_at(c, 0);
}

static void
etcd_lookup_next(struct etcd_commit *c)
{
	if (c->lo >= c->hi) {
		c->lookup = LOOKUP_AT;
		etcd_lookup_at(c, c->hi);
		return;
	}
	c->mid = c->lo + (c->hi - c->lo) / 2;
	c->lookup = LOOKUP_MID;
	etcd_lookup_at(c, c->mid);
}

/* The sentinel write that made version sent_ver + 1: ours, or not. */
static void
etcd_lookup_found(struct etcd_commit *c, const cJSON *kv)
{
	struct store_err	 err;
	unsigned char		*v;
	size_t			 vlen;
	uint64_t		 rev = etcd_u64(kv, "mod_revision");

	v = etcd_unb64(kv, "value", &vlen);
	if (vlen == strlen(c->token) && memcmp(v, c->token, vlen) == 0) {
		log_info("etcd: a write whose answer was lost had landed at "
		    "rev %" PRIu64, rev);
		free(v);
		etcd_commit_landed(c, rev);
		return;
	}
	free(v);
	store_err_set(&err, STORE_ERR_CONFLICT, "etcd moved on since rev %"
	    PRIu64 " (another writer)", c->st->base_rev);
	etcd_commit_end(c, &err);
}

static void
etcd_lookup_unknown(struct etcd_commit *c, const char *why)
{
	struct store_err	 err;

	store_err_set(&err, STORE_ERR_UNKNOWN, "etcd did not answer the "
	    "write, and whether it was applied cannot be learned (%s): it may "
	    "or may not have been", why);
	etcd_commit_end(c, &err);
}

static void
etcd_lookup_cb(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_commit	*c = arg;
	const cJSON		*kv;
	uint64_t		 ver, mod, want = c->sent_ver + 1;

	if (reply == NULL) {
		etcd_lookup_unknown(c, err->msg);
		return;
	}
	kv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(reply,
	    "kvs"), 0);
	ver = kv != NULL ? etcd_u64(kv, "version") : 0;
	mod = kv != NULL ? etcd_u64(kv, "mod_revision") : 0;
	switch (c->lookup) {
	case LOOKUP_NOW:
		if (mod == c->sent_mod) {
			/*
			 * Nothing landed yet, but a lost copy still could:
			 * send the same once more, so that one of them does.
			 */
			if (++c->lookups > ETCD_COMMIT_LOOKUPS) {
				etcd_lookup_unknown(c, "its copies got no "
				    "answer");
				return;
			}
			c->tries = ETCD_COMMIT_TRIES - 1;
			etcd_commit_send(c);
			return;
		}
		if (ver == want) {
			etcd_lookup_found(c, kv);
			return;
		}
		if (ver < want) {
			etcd_lookup_unknown(c, "the sentinel went back");
			return;
		}
		c->lo = c->sent_mod + 1;
		c->hi = mod;
		break;
	case LOOKUP_MID:
		if (ver >= want)
			c->hi = c->mid;
		else
			c->lo = c->mid + 1;
		break;
	case LOOKUP_AT:
		if (ver == want)
			etcd_lookup_found(c, kv);
		else
			etcd_lookup_unknown(c, "no sentinel write found");
		return;
	}
	etcd_lookup_next(c);
}

/*
 * One etcd txn with the batch's writes and the sentinel's token; then the
 * compaction the batch asked for, if any.
 */
void
store_etcd_commit(struct store *st, uint64_t rev, store_done done,
    void *arg)
{
	struct store_etcd	*e = E(st);
	struct etcd_commit	*c;
	struct buf		 b;

	if (e->compact_to == 1)
		e->compact_to = 0;	/* nothing below rev 1 to drop */
	if (e->overlay.n == e->overlay.head && e->compact_to == 0) {
		done(arg, NULL);	/* nothing to send: a no-op delete */
		return;
	}
	c = xcalloc(1, sizeof *c);
	c->st = st;
	c->done = done;
	c->arg = arg;
	c->compact_to = e->compact_to;
	c->sent_mod = e->sent_mod;
	c->sent_ver = e->sent_ver;
	snprintf(c->token, sizeof c->token, "metad %016" PRIx64 " %" PRIu64,
	    e->id, ++e->commits);
	if (e->overlay.n > e->overlay.head) {
		buf_init(&b);
		etcd_txn_body(e, c->token, &b);
		c->body = xstrdup(buf_cstr(&b));
		buf_free(&b);
	} else
		c->compacting = 1;
	etcd_commit_send(c);
	etcd_evs_clear(&e->overlay, 0);
}
