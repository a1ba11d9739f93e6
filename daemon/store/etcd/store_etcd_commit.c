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
#include "store/etcd/store_etcd_commit.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* Sends of a resolve whose answers were lost, at most, and the pause. */
#define ETCD_COMMIT_TRIES	20
#define ETCD_COMMIT_PAUSE_MS	100

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

static void	etcd_commit_send(struct etcd_commit *);
static void	etcd_commit_blind_lost(struct etcd_commit *);

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
	buf_free(&c->body);
	buf_free(&c->idem_key);
	buf_free(&c->idem_val);
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

	if (err != NULL && c->compact_to != 0)
		c->st->head.compact_rev = c->compact_begin;
	if (err == NULL && b != NULL && c->landed != 0) {
		c->st->head.commit_rev = c->landed;
		c->st->head.answer_again = 1;
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

/* A response (op, r[0..n)): if a blind key's put, what the key held. */
static void
etcd_commit_prev(struct etcd_commit *c, int op, const uint8_t *r, size_t n)
{
	struct etcd_batch	*b = c->b;
	struct etcd_pb_kv	 kv;
	struct etcd_ev		 ev;
	size_t			 i;

	if (op != ETCD_PB_OP_PUT || etcd_pb_op_kv(op, r, n, &kv) != 1 ||
	    etcd_ev_of(E(c->st), &kv, 0, &ev) != 0)
		return;
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

/* The txn landed at rev: what blind keys held, then the compaction. */
static void
etcd_commit_landed(struct etcd_commit *c, uint64_t rev,
    const struct etcd_pb_txn *reply)
{
	struct etcd_batch	*b = c->b;
	struct etcd_pb_txn	 t, in;
	const uint8_t		*r;
	size_t			 i, n;
	int			 blind = 0, op;

	c->landed = rev;
	c->st->head.commit_rev = rev;
	if (c->slot >= 0)
		E(c->st)->slots[c->slot].known = rev;
	/*
	 * A compaction up to the batch's own writes (above its base) meant
	 * their planned revs: it goes up to where they landed.
	 */
	if (c->compact_to > b->base_rev && rev > c->planned) {
		c->compact_to += rev - c->planned;
		if (c->st->head.compact_rev < c->compact_to)
			c->st->head.compact_rev = c->compact_to;
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
	/*
	 * A blind key's put answered with what it held (none: absent); in
	 * the nested txns of a big one (store_etcd_txn.c) too.
	 */
	if (reply != NULL)
		t = *reply;
	while (reply != NULL && etcd_pb_txn_next(&t, &op, &r, &n) == 1) {
		if (op != ETCD_PB_OP_TXN) {
			etcd_commit_prev(c, op, r, n);
			continue;
		}
		if (etcd_pb_txn_read(r, n, &in) != 0)
			continue;	/* cannot be: checked whole */
		while (etcd_pb_txn_next(&in, &op, &r, &n) == 1)
			etcd_commit_prev(c, op, r, n);
	}
	if (c->compact_to == 0) {
		etcd_commit_end(c, NULL);
		return;
	}
	c->step = STEP_COMPACT;
	c->tries = 0;
	etcd_commit_send(c);
}

/*
 * The write landed, but what its blind keys held could not be read back:
 * its answer says so (store_etcd_get), instead of guessing a version.
 */
static void
etcd_commit_blind_lost(struct etcd_commit *c)
{
	size_t	 i;

	for (i = 0; i < c->b->nsnap; i++)
		c->b->snap[i].unknown = c->b->snap[i].blind;
	etcd_commit_end(c, NULL);
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

static void
etcd_commit_txn_cb(struct etcd_commit *c, const struct etcd_pb_txn *reply)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	uint64_t		 mod;

	if (reply->succeeded) {
		etcd_commit_landed(c, etcd_rev_seen(e, reply->rev), reply);
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
etcd_commit_resolve_cb(struct etcd_commit *c,
    const struct etcd_pb_txn *reply)
{
	struct store_etcd	*e = E(c->st);
	struct store_err	 err;
	uint64_t		 mod;

	if (reply->succeeded)
		mod = etcd_rev_seen(e, reply->rev);
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
etcd_commit_blind_cb(struct etcd_commit *c, const struct etcd_pb_txn *reply)
{
	struct etcd_batch	*b = c->b;
	struct etcd_pb_txn	 t = *reply;
	struct etcd_pb_kv	 kv;
	const uint8_t		*r;
	size_t			 i, n;
	int			 op, got;

	for (i = 0; i < b->nsnap; i++) {
		if (!b->snap[i].blind)
			continue;
		got = etcd_pb_txn_next(&t, &op, &r, &n) == 1 &&
		    op == ETCD_PB_OP_RANGE && etcd_pb_op_kv(op, r, n, &kv) == 1;
		/* Ours, at version v: it held v - 1 (if any) before. */
		b->snap[i].found = got && kv.version > 1 &&
		    etcd_ev_of(E(c->st), &kv, 0, &b->snap[i].ev) == 0;
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

/*
 * The answer of a step (NULL: err): a TxnResponse, in protobuf (the
 * compaction's: empty).
 */
static void
etcd_commit_cb(void *arg, const struct buf *answer,
    const struct store_err *err)
{
	struct etcd_commit	*c = arg;
	struct etcd_pb_txn	 t;
	struct store_err	 nl;

	if (answer == NULL) {
		if (c->step == STEP_COMPACT &&
		    err->code == STORE_ERR_COMPACTED)
			etcd_commit_end(c, NULL);	/* done already */
		else if (err->code == STORE_ERR_UNKNOWN ||
		    err->code == STORE_ERR_UNAVAILABLE)
			etcd_commit_lost(c, err);
		else if (c->step == STEP_BLIND)
			etcd_commit_blind_lost(c);
		else if (err->code == STORE_ERR_NO_LEASE) {
			/* name it */
			etcd_lease_err_ids(c->lease, c->lease_other, &nl);
			etcd_commit_end(c, &nl);
		} else
			etcd_commit_end(c, err);
		return;
	}
	if (c->step == STEP_COMPACT) {
		etcd_commit_end(c, NULL);
		return;
	}
	/* Checked whole (etcd_grpc.c): it reads. */
	(void)etcd_pb_txn_read((const uint8_t *)(answer->data != NULL ?
	    answer->data : ""), answer->len, &t);
	switch (c->step) {
	case STEP_TXN:
		etcd_commit_txn_cb(c, &t);
		break;
	case STEP_RESOLVE:
		etcd_commit_resolve_cb(c, &t);
		break;
	case STEP_BLIND:
		etcd_commit_blind_cb(c, &t);
		break;
	case STEP_COMPACT:
		break;
	}
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
		rc = etcd_call_pb(&e->client, ETCD_CALL_ONCE, "/v3/kv/txn",
		    &c->body, etcd_commit_cb, c, &err);
		if (rc != 0) {
			buf_free(&b);
			etcd_commit_end(c, &err);	/* never sent */
			return;
		}
		break;
	case STEP_RESOLVE:
		etcd_resolve_body(c, &b);
		rc = etcd_call_pb(&e->client, ETCD_CALL_ONCE |
		    ETCD_CALL_COPY, "/v3/kv/txn", &b, etcd_commit_cb, c, &err);
		break;
	case STEP_BLIND:
		etcd_blind_body(c, &b);
		rc = etcd_call_pb(&e->client, 0, "/v3/kv/txn", &b,
		    etcd_commit_cb, c, &err);
		break;
	default:
		/*
		 * A CompactionRequest (KV.Compact), sent once: etcd keeps no
		 * event of the revision it compacts at.
		 */
		etcd_pb_put_int(&b, ETCD_PB_COMPACT_REV, c->compact_to - 1);
		rc = etcd_call_pb(&e->client, ETCD_CALL_ONCE,
		    "/v3/kv/compaction", &b, etcd_commit_cb, c, &err);
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

	if (e->compact_to == 1)
		e->compact_to = 0;	/* nothing below rev 1 to drop */
	c = xcalloc(1, sizeof *c);
	c->st = st;
	c->done = done;
	c->arg = arg;
	c->b = e->cur;
	c->slot = -1;
	buf_init(&c->body);
	e->cur = NULL;
	c->compact_to = e->compact_to;
	c->compact_begin = e->compact_begin;
	c->planned = rev;
	LIST_INSERT_HEAD(&e->commits_out, c, entry);
	etcd_idem_take(e, c);
	if (e->overlay.n == e->overlay.head && !c->idem &&
	    e->compact_to == 0) {
		etcd_commit_end(c, NULL);	/* nothing to send */
		return;
	}
	if (e->overlay.n == e->overlay.head && !c->idem) {
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
	etcd_txn_body(c, &c->body);
	etcd_evs_clear(&e->overlay, 0);
	etcd_commit_send(c);
}
