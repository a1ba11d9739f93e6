/*
 * The etcd backend's lease calls carrying a token (store_idem.h,
 * store_lease_idem; metad-protocol(7), IDEMPOTENT WRITES; metad(8),
 * BACKEND INTERNALS).  etcd's Lease service takes no part in a txn, so
 * the token's record, kept as the batches' are (store_etcd_idem.c: PREFIX
 * "i/" NAME), goes in the txn that puts the lease's own record:
 *
 * - a grant's, "f 0 EXPIRES\n" then its answer, with the record that
 *   makes the new lease metad's: the grant is the lease's and the answer
 *   at once (a lease granted without its record expires unseen);
 * - a revoke's, "r ID EXPIRES\n" (pending), with the note that the revoke
 *   was asked; once the revoke is answered, its answer, "f REV EXPIRES\n"
 *   ..., replaces it.  A revoke named again while its record is pending
 *   finishes it: revoked again if the lease is still there, else answered
 *   from the delete of the lease's record the watch stream saw (its rev:
 *   etcd_lease_end_rev()), or reported lost if this daemon did not see it.
 *
 * Each txn compares the record's mod_revision with the one read first: a
 * call with the same token that came in between makes it fail, answered
 * "unavailable" (send it again: it then finds that call's answer).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd.h"
#include "store/etcd/store_etcd_commit.h"
#include "store/etcd/store_etcd_lease.h"

void
etcd_lease_ended(struct store_etcd *e, uint64_t id, uint64_t rev)
{
	e->ends[e->ends_next].id = id;
	e->ends[e->ends_next].rev = rev;
	e->ends_next = (e->ends_next + 1) % ETCD_ENDS;
}

uint64_t
etcd_lease_end_rev(struct store_etcd *e, uint64_t id)
{
	unsigned	 i;

	for (i = 0; i < ETCD_ENDS; i++) {
		if (e->ends[i].id == id)
			return (e->ends[i].rev);
	}
	return (0);
}

/* A lookup's callback. */
struct etcd_lidem_look {
	store_idem_done	 done;
	void		*arg;
};

static void
etcd_lidem_looked(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_lidem_look	*l = arg;
	struct store_idem	 rec;
	struct store_err	 e2;
	const cJSON		*kvs;
	struct etcd_jkv		 j;
	int			 rc;

	memset(&rec, 0, sizeof rec);
	kvs = reply != NULL ? cJSON_GetObjectItemCaseSensitive(reply, "kvs") :
	    NULL;
	if (reply == NULL)
		l->done(l->arg, -1, &rec, err);
	else if (cJSON_GetArraySize(kvs) < 1)
		l->done(l->arg, 0, &rec, NULL);
	else {
		etcd_jkv_of(&j, cJSON_GetArrayItem(kvs, 0));
		rc = etcd_idem_parse(j.v != NULL ? j.v : (unsigned char *)"",
		    j.kv.value_len, j.kv.mod_rev, &rec, &e2);
		l->done(l->arg, rc, &rec, rc < 0 ? &e2 : NULL);
		etcd_jkv_free(&j);
	}
	free(l);
}

/* The record named tok read (linearizable), cb its answer; or -1, err. */
static int
etcd_lidem_range(struct store_etcd *e, const void *tok, size_t len,
    etcd_call_cb cb, void *arg, struct store_err *err)
{
	struct buf	 body;
	char		*k64;
	int		 rc;

	buf_init(&body);
	k64 = etcd_idem_key64(e, tok, len);
	etcd_range_body(&body, k64, NULL, 0, 0, 0);
	rc = etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&body), cb,
	    arg, err);
	free(k64);
	buf_free(&body);
	return (rc);
}

void
store_etcd_lease_idem_get(struct store *st, const void *tok, size_t len,
    store_idem_done done, void *arg)
{
	struct etcd_lidem_look	*l = xcalloc(1, sizeof *l);
	struct store_idem	 none;
	struct store_err	 err;

	l->done = done;
	l->arg = arg;
	if (etcd_lidem_range(E(st), tok, len, etcd_lidem_looked, l,
	    &err) != 0) {
		memset(&none, 0, sizeof none);
		done(arg, -1, &none, &err);
		free(l);
	}
}

void
etcd_lidem_take(struct etcd_lcall *c, const struct store_lease_idem *idem)
{
	if (idem == NULL)
		return;
	c->itok = xmemdup(idem->tok, idem->len);
	c->ilen = idem->len;
	c->imod = idem->mod;
	c->iexp = idem->expires_ms;
	c->ipending = idem->pending;
	c->ianswer = idem->answer;
}

/*
 * The txn: if the token's record is as read, the lease's record put
 * (marker: its value; NULL: not) and the token's (kind, rec).  cb gets
 * etcd's answer, or NULL and the error.
 */
static void
etcd_lidem_txn(struct etcd_lcall *c, const struct buf *marker, char kind,
    const struct store_idem *rec, etcd_call_pb_cb cb)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	struct buf		 k, v, m, body;

	buf_init(&k);
	buf_init(&v);
	buf_init(&m);
	buf_init(&body);
	etcd_idem_key(e, c->itok, c->ilen, &k);
	etcd_idem_value(&v, kind, rec);
	buf_reset(&c->isent);
	buf_add(&c->isent, v.data, v.len);
	etcd_pb_cmp_mod(&body, k.data, k.len, c->imod);
	if (marker != NULL) {
		etcd_lease_marker(e, c->id, &m);
		etcd_pb_put_op(&body, m.data, m.len, marker->data,
		    marker->len, c->id);
	}
	etcd_pb_put_op(&body, k.data, k.len, v.data, v.len, 0);
	if (etcd_call_pb(&e->client, ETCD_CALL_ONCE, "/v3/kv/txn", &body, cb,
	    c, &err) != 0)
		cb(c, NULL, &err);
	buf_free(&k);
	buf_free(&v);
	buf_free(&m);
	buf_free(&body);
}

/* A txn's answer: 1 it landed (at *rev), 0 the record moved, -1 out. */
static int
etcd_lidem_landed(const struct buf *answer, const struct store_err *err,
    uint64_t *rev, struct store_err *out)
{
	struct etcd_pb_txn	 t;

	if (answer == NULL) {
		*out = *err;
		return (-1);
	}
	if (etcd_pb_txn_read((const uint8_t *)(answer->data != NULL ?
	    answer->data : ""), answer->len, &t) != 0) {
		store_err_set(out, STORE_ERR_UNKNOWN, "etcd: a lease txn's "
		    "answer that is not one");
		return (-1);
	}
	if (!t.succeeded) {
		store_err_set(out, STORE_ERR_CONFLICT, "another request with "
		    "this idem token came first: send it again for its answer");
		return (0);
	}
	*rev = t.rev;
	return (1);
}

/*
 * A txn's answer was lost (STORE_ERR_UNKNOWN): the record read back (from
 * another endpoint if need be).  Holding what the txn put, it landed:
 * landed(c, its rev); else (absent, another's, or etcd unreachable) the
 * call fails, and sent again with its token finds what is there.
 */
struct etcd_lidem_back {
	struct etcd_lcall	*c;
	void			(*landed)(struct etcd_lcall *, uint64_t);
	void			(*failed)(struct etcd_lcall *,
				    const struct store_err *);
	struct store_err	 err;
};

static void
etcd_lidem_read_back(void *arg, const cJSON *reply,
    const struct store_err *err)
{
	struct etcd_lidem_back	*b = arg;
	struct etcd_lcall	*c = b->c;
	const cJSON		*kvs;
	struct etcd_jkv		 j;
	uint64_t		 mod = 0;

	(void)err;
	kvs = reply != NULL ? cJSON_GetObjectItemCaseSensitive(reply, "kvs") :
	    NULL;
	if (cJSON_GetArraySize(kvs) >= 1) {
		etcd_jkv_of(&j, cJSON_GetArrayItem(kvs, 0));
		if (j.kv.value_len == c->isent.len && j.v != NULL &&
		    memcmp(j.v, c->isent.data, c->isent.len) == 0)
			mod = j.kv.mod_rev;
		etcd_jkv_free(&j);
	}
	if (mod != 0) {
		log_debug("lease %" PRIu64 ": a txn whose answer was lost "
		    "landed at rev %" PRIu64, c->id, mod);
		b->landed(c, mod);
	} else
		b->failed(c, &b->err);
	free(b);
}

static void
etcd_lidem_back(struct etcd_lcall *c, const struct store_err *err,
    void (*landed)(struct etcd_lcall *, uint64_t),
    void (*failed)(struct etcd_lcall *, const struct store_err *))
{
	struct etcd_lidem_back	*b;
	struct store_err	 e2;

	if (err->code != STORE_ERR_UNKNOWN) {
		failed(c, err);
		return;
	}
	b = xcalloc(1, sizeof *b);
	b->c = c;
	b->landed = landed;
	b->failed = failed;
	b->err = *err;
	if (etcd_lidem_range(E(c->st), c->itok, c->ilen, etcd_lidem_read_back,
	    b, &e2) != 0) {
		free(b);
		failed(c, err);
	}
}

static void
etcd_lidem_dropped(void *arg, const cJSON *reply, const struct store_err *err)
{
	(void)arg;
	if (reply == NULL)
		log_debug("etcd: a lease granted for nothing: %s (it expires "
		    "by its TTL)", err->msg);
}

/* Not granted: the lease expires unseen, or the token has it. */
static void
etcd_lidem_grant_failed(struct etcd_lcall *c, const struct store_err *err)
{
	c->done(c->arg, NULL, err);
	etcd_lcall_free(c);
}

static void
etcd_lidem_granted(void *arg, const struct buf *answer,
    const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_etcd	*e = E(c->st);
	struct store_err	 e2, e3;
	uint64_t		 rev = 0;
	char			 body[64];
	int			 rc;

	if ((rc = etcd_lidem_landed(answer, err, &rev, &e2)) == 1) {
		etcd_grant_done(c, rev);
		return;
	}
	if (rc < 0) {
		etcd_lidem_back(c, &e2, etcd_grant_done, etcd_lidem_grant_failed);
		return;
	}
	/* The record moved: the lease this call granted is no one's. */
	snprintf(body, sizeof body, "{\"ID\":\"%" PRIu64 "\"}", c->id);
	(void)etcd_call_async(&e->client, "/v3/lease/revoke", body,
	    etcd_lidem_dropped, NULL, &e3);
	etcd_lidem_grant_failed(c, &e2);
}

void
etcd_lidem_grant(struct etcd_lcall *c)
{
	struct store_lease_state ls;
	struct store_idem	 rec;
	struct buf		 ans, m;

	buf_init(&ans);
	buf_init(&m);
	memset(&ls, 0, sizeof ls);
	ls.id = c->id;
	ls.ttl_ms = ls.remaining_ms = c->ttl_ms;
	ls.session = c->session;
	ls.found = 1;
	c->ianswer(c->arg, &ls, 1, 0, 0, &ans);
	memset(&rec, 0, sizeof rec);
	rec.answer = ans.data;
	rec.answer_len = ans.len;
	rec.expires_ms = c->iexp;
	etcd_lease_value(&m, c->ttl_ms, c->stamp);
	etcd_lidem_txn(c, &m, 'f', &rec, etcd_lidem_granted);
	buf_free(&ans);
	buf_free(&m);
}

/* The revoke is noted, its record pending at rev: now etcd's revoke. */
static void
etcd_lidem_revoke(struct etcd_lcall *c, uint64_t rev)
{
	c->imod = rev;
	c->ipending = 1;
	etcd_revoke_send(c);
}

/* Not noted, so not revoked: sent again, it finds what landed. */
static void
etcd_lidem_revoke_failed(struct etcd_lcall *c, const struct store_err *err)
{
	c->rdone(c->arg, 0, 0, 0, err);
	etcd_lcall_free(c);
}

static void
etcd_lidem_noted(void *arg, const struct buf *answer,
    const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_err	 e2;
	uint64_t		 rev = 0;

	switch (etcd_lidem_landed(answer, err, &rev, &e2)) {
	case 1:
		etcd_lidem_revoke(c, rev);
		break;
	case 0:
		etcd_lidem_revoke_failed(c, &e2);
		break;
	default:
		etcd_lidem_back(c, &e2, etcd_lidem_revoke,
		    etcd_lidem_revoke_failed);
	}
}

void
etcd_lidem_note(struct etcd_lcall *c, uint64_t ttl_ms, int stamp)
{
	struct store_idem	 rec;
	struct buf		 m;

	buf_init(&m);
	memset(&rec, 0, sizeof rec);
	rec.answer = "";
	rec.rev = c->id;
	rec.expires_ms = c->iexp;
	etcd_lease_value_revoked(&m, ttl_ms, stamp);
	etcd_lidem_txn(c, &m, 'r', &rec, etcd_lidem_noted);
	buf_free(&m);
}

/* The answer is recorded (or could not be: it is true all the same). */
static void
etcd_lidem_finished(void *arg, const struct buf *answer,
    const struct store_err *err)
{
	struct etcd_lcall	*c = arg;
	struct store_err	 e2;
	uint64_t		 rev;

	if (etcd_lidem_landed(answer, err, &rev, &e2) != 1)
		log_warnx("lease %" PRIu64 ": the answer of its revoke is not "
		    "known to be recorded for its idem token: %s", c->id,
		    e2.msg);
	c->rdone(c->arg, c->ofound, c->orev, c->on, NULL);
	etcd_lcall_free(c);
}

void
etcd_lidem_finish(struct etcd_lcall *c, int found, uint64_t rev, uint64_t n)
{
	struct store_idem	 rec;
	struct buf		 ans;

	if (c->rrev != 0) {
		LIST_REMOVE(c, wentry);
		c->rrev = 0;
	}
	if (c->rtimer != NULL) {
		event_free(c->rtimer);
		c->rtimer = NULL;
	}
	c->ofound = found;
	c->orev = found ? rev : 0;
	c->on = found ? n : 0;
	buf_init(&ans);
	c->ianswer(c->arg, NULL, c->ofound, c->orev, c->on, &ans);
	memset(&rec, 0, sizeof rec);
	rec.answer = ans.data;
	rec.answer_len = ans.len;
	rec.rev = c->orev;
	rec.expires_ms = c->iexp;
	etcd_lidem_txn(c, NULL, 'f', &rec, etcd_lidem_finished);
	buf_free(&ans);
}

void
etcd_lidem_gone(struct etcd_lcall *c, uint64_t seen_rev)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	uint64_t		 rev;

	if (!c->ipending) {
		etcd_lidem_finish(c, 0, 0, 0);
		return;
	}
	if ((rev = etcd_lease_end_rev(e, c->id)) != 0) {
		etcd_lidem_finish(c, 1, rev, etcd_revoke_count(e, rev, 0));
		return;
	}
	if (e->st->head.rev < seen_rev && !c->igone) {
		etcd_revoke_park(c, seen_rev);
		c->igone = 1;	/* etcd_revoke_end() comes back here */
		return;
	}
	if (e->st->head.rev < seen_rev)
		store_err_set(&err, STORE_ERR_UNAVAILABLE, "lease %" PRIu64 ": "
		    "its revoke with this idem token is not seen here yet: "
		    "send it again", c->id);
	else
		store_err_set(&err, STORE_ERR_INTERNAL, "lease %" PRIu64 " was "
		    "revoked with this idem token, but its answer was lost "
		    "before it was kept (the daemon stopped): it is not "
		    "revoked again", c->id);
	c->rdone(c->arg, 0, 0, 0, &err);
	etcd_lcall_free(c);
}
