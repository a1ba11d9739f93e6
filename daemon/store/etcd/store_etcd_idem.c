/*
 * The etcd backend's records of idempotent writes (store.h;
 * metad-protocol(7), IDEMPOTENT WRITES; metad(8), BACKEND INTERNALS).
 *
 * A record is the key PREFIX "i/" NAME (outside PREFIX "k/": no client
 * sees it), whose value is "p REV EXPIRES\n" then the answer.  The batch
 * reads it with its keys (store_keys' idem entry); the batch's txn
 * compares its mod_revision with what was read (0: absent) and puts it,
 * so it lands with the write, exactly once (the slot's token,
 * store_etcd_commit.c), or the batch runs again and finds it.
 *
 * The answer in the txn was made at the planned rev REV ("p":
 * provisional).  If the txn landed there (its mod_revision is REV), it is
 * the true one.  If not, the commit answers again where it landed and
 * store_etcd_idem_fix() puts the true answer, "f L ...", before the write
 * is answered.  A provisional record that landed elsewhere than planned
 * (the daemon stopped in between) is reported lost: the write was applied
 * once, and its answer cannot be given again.  The lease calls' records
 * are kept alike (store_etcd_lease_idem.c).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "log.h"
#include "store/etcd/store_etcd_commit.h"

#define E(st)	((struct store_etcd *)(st)->impl)

/* The record's etcd key: PREFIX "i/" name, into out. */
void
etcd_idem_key(struct store_etcd *e, const char *name, size_t len,
    struct buf *out)
{
	buf_reset(out);
	buf_add(out, e->prefix, e->prefix_len - 2);	/* less "k/" */
	buf_add(out, "i/", 2);
	buf_add(out, name, len);
}

char *
etcd_idem_key64(struct store_etcd *e, const char *name, size_t len)
{
	struct buf	 k;
	char		*k64;

	buf_init(&k);
	etcd_idem_key(e, name, len, &k);
	k64 = etcd_b64(k.data, k.len);
	buf_free(&k);
	return (k64);
}

/* A begin's read of the record: kvs, a range's kvs (JSON). */
void
etcd_idem_snap(struct etcd_snap *sn, const cJSON *kvs)
{
	struct etcd_jkv	 j;

	sn->found = 0;
	if (cJSON_GetArraySize(kvs) < 1)
		return;
	etcd_jkv_of(&j, cJSON_GetArrayItem(kvs, 0));
	free(sn->rec);
	sn->rec = j.v;
	sn->rec_len = j.kv.value_len;
	sn->rec_mod = j.kv.mod_rev;
	j.v = NULL;
	etcd_jkv_free(&j);
	sn->found = 1;
}

void
etcd_idem_clear(struct store_etcd *e)
{
	free(e->idem_name);
	e->idem_name = NULL;
	e->idem_name_len = 0;
	buf_reset(&e->idem_val);
}

/* A record's value as read (mod: its mod_revision, 0: unknown). */
int
etcd_idem_parse(const unsigned char *v, size_t len, uint64_t mod,
    struct store_idem *rec, struct store_err *err)
{
	const unsigned char	*nl = memchr(v, '\n', len);
	char			 head[64], kind;
	unsigned long long	 rev, exp;

	if (nl == NULL || (size_t)(nl - v) >= sizeof head)
		goto bad;
	memcpy(head, v, (size_t)(nl - v));
	head[nl - v] = '\0';
	if (sscanf(head, "%c %llu %llu", &kind, &rev, &exp) != 3 ||
	    (kind != 'p' && kind != 'f' && kind != 'r'))
		goto bad;
	memset(rec, 0, sizeof *rec);
	rec->answer = nl + 1;
	rec->answer_len = len - (size_t)(nl + 1 - v);
	rec->rev = rev;
	rec->expires_ms = exp;
	rec->mod = mod;
	rec->pending = kind == 'r';	/* a revoke's (store_etcd_lease_idem.c) */
	if (kind == 'p' && rev != 0 && mod != 0 && mod != rev) {
		rec->lost = 1;
		rec->rev = mod;
	}
	return (1);
bad:
	return (store_err_set(err, STORE_ERR_INTERNAL, "etcd: an idem "
	    "record that is not one"));
}

int
store_etcd_idem_get(struct store *st, const void *name, size_t len,
    struct store_idem *rec, struct store_err *err)
{
	struct store_etcd	*e = E(st);
	struct etcd_batch	*b = e->cur;
	size_t			 i;

	if (e->idem_name != NULL && e->idem_name_len == len &&
	    memcmp(e->idem_name, name, len) == 0)
		return (etcd_idem_parse((const unsigned char *)e->idem_val.data,
		    e->idem_val.len, 0, rec, err));
	for (i = 0; b != NULL && i < b->nsnap; i++) {
		if (!b->snap[i].idem || b->snap[i].key_len != len ||
		    memcmp(b->snap[i].key, name, len) != 0)
			continue;
		if (!b->snap[i].found)
			return (0);
		return (etcd_idem_parse(b->snap[i].rec, b->snap[i].rec_len,
		    b->snap[i].rec_mod, rec, err));
	}
	return (store_err_set(err, STORE_ERR_INTERNAL, "etcd: an idem "
	    "record was not read with the batch"));
}

/* The value of a record: kind, then rec. */
void
etcd_idem_value(struct buf *out, char kind, const struct store_idem *rec)
{
	buf_reset(out);
	buf_printf(out, "%c %" PRIu64 " %" PRIu64 "\n", kind, rec->rev,
	    rec->expires_ms);
	buf_add(out, rec->answer, rec->answer_len);
}

int
store_etcd_idem_put(struct store *st, const void *name, size_t len,
    const struct store_idem *rec, uint64_t now_ms, struct store_err *err)
{
	struct store_etcd	*e = E(st);

	(void)now_ms;
	(void)err;
	etcd_idem_clear(e);
	e->idem_name = xmemdup(name, len);
	e->idem_name_len = len;
	etcd_idem_value(&e->idem_val, 'p', rec);
	return (0);
}

/* The commit takes the batch's record: its key, value and compare. */
void
etcd_idem_take(struct store_etcd *e, struct etcd_commit *c)
{
	struct etcd_batch	*b = c->b;
	size_t			 i;

	buf_init(&c->idem_key);
	buf_init(&c->idem_val);
	c->idem = e->idem_name != NULL;
	if (!c->idem)
		return;
	etcd_idem_key(e, e->idem_name, e->idem_name_len, &c->idem_key);
	buf_add(&c->idem_val, e->idem_val.data, e->idem_val.len);
	c->idem_mod = 0;
	for (i = 0; b != NULL && i < b->nsnap; i++) {
		if (b->snap[i].idem && b->snap[i].found &&
		    b->snap[i].key_len == e->idem_name_len &&
		    memcmp(b->snap[i].key, e->idem_name,
		    e->idem_name_len) == 0)
			c->idem_mod = b->snap[i].rec_mod;
	}
	etcd_idem_clear(e);
}

/* A fix's call. */
struct etcd_idem_fix {
	store_done	 done;
	void		*arg;
};

static void
etcd_idem_fixed(void *arg, const struct buf *answer,
    const struct store_err *err)
{
	struct etcd_idem_fix	*f = arg;
	struct etcd_pb_txn	 t;
	struct store_err	 e2;

	if (answer != NULL && (etcd_pb_txn_read((const uint8_t *)(answer->data
	    != NULL ? answer->data : ""), answer->len, &t) != 0 ||
	    !t.succeeded)) {
		store_err_set(&e2, STORE_ERR_CONFLICT, "etcd: the idem record "
		    "moved before its answer was fixed");
		err = &e2;
	}
	f->done(f->arg, answer != NULL && err != &e2 ? NULL : err);
	free(f);
}

/*
 * The record the batch just landed put at rec->rev: its true answer, if
 * the record is still that one.
 */
void
store_etcd_idem_fix(struct store *st, const void *name, size_t len,
    const struct store_idem *rec, store_done done, void *arg)
{
	struct store_etcd	*e = E(st);
	struct etcd_idem_fix	*f;
	struct store_err	 err;
	struct buf		 k, v, body;

	buf_init(&k);
	buf_init(&v);
	buf_init(&body);
	etcd_idem_key(e, name, len, &k);
	etcd_idem_value(&v, 'f', rec);
	etcd_pb_cmp_mod(&body, k.data, k.len, rec->rev);
	etcd_pb_put_op(&body, k.data, k.len, v.data, v.len, 0);
	f = xcalloc(1, sizeof *f);
	f->done = done;
	f->arg = arg;
	if (etcd_call_pb(&e->client, 0, "/v3/kv/txn", &body, etcd_idem_fixed,
	    f, &err) != 0) {
		free(f);
		done(arg, &err);
	}
	buf_free(&k);
	buf_free(&v);
	buf_free(&body);
}

/*
 * The sweep of expired records: every ETCD_IDEM_SWEEP_MS, a range of at
 * most ETCD_IDEM_SWEEP_MAX records from where the last one stopped (from
 * the first past the end), then one txn deleting those expired, each in a
 * txn of its own that compares its mod_revision with the one read (a
 * record put again since stays).
 */
#define ETCD_IDEM_SWEEP_MS	5000
#define ETCD_IDEM_SWEEP_MAX	64

struct etcd_idem_sweep {
	struct store_etcd	*e;
	struct event		*timer;
	struct buf		 from;		/* the next range's start */
	int			 busy;		/* a call out */
	int			 closing;
};

static void	etcd_idem_sweep_arm(struct etcd_idem_sweep *);

static uint64_t
etcd_idem_wall_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

static void
etcd_idem_swept(void *arg, const struct buf *answer,
    const struct store_err *err)
{
	struct etcd_idem_sweep	*w = arg;

	(void)answer;
	if (err != NULL && !w->closing)
		log_debug("etcd: idem sweep: %s", err->msg);
	w->busy = 0;
	if (!w->closing)
		etcd_idem_sweep_arm(w);
}

/* A nested txn: delete key if its mod_revision is still mod. */
static void
etcd_idem_sweep_op(struct buf *out, const struct etcd_pb_kv *kv)
{
	size_t	 op = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
	size_t	 txn = etcd_pb_begin(out, ETCD_PB_OP_TXN);
	size_t	 dop, del;

	etcd_pb_cmp_mod(out, (const char *)kv->key, kv->key_len, kv->mod_rev);
	dop = etcd_pb_begin(out, ETCD_PB_TXN_SUCCESS);
	del = etcd_pb_begin(out, ETCD_PB_OP_DELETE);
	etcd_pb_put_bytes(out, ETCD_PB_DELETE_KEY, kv->key, kv->key_len);
	etcd_pb_end(out, del);
	etcd_pb_end(out, dop);
	etcd_pb_end(out, txn);
	etcd_pb_end(out, op);
}

static void
etcd_idem_ranged(void *arg, const cJSON *reply, const struct store_err *err)
{
	struct etcd_idem_sweep	*w = arg;
	struct store_etcd	*e = w->e;
	const cJSON		*kvs;
	struct etcd_jkv		 j;
	struct store_idem	 rec;
	struct store_err	 e2;
	struct buf		 body;
	uint64_t		 now = etcd_idem_wall_ms();
	int			 i, n, dead = 0;

	if (reply == NULL || w->closing) {
		etcd_idem_swept(w, NULL, err);
		return;
	}
	buf_init(&body);
	kvs = cJSON_GetObjectItemCaseSensitive(reply, "kvs");
	n = cJSON_GetArraySize(kvs);
	buf_reset(&w->from);
	for (i = 0; i < n; i++) {
		etcd_jkv_of(&j, cJSON_GetArrayItem(kvs, i));
		if (etcd_idem_parse(j.v != NULL ? j.v : (unsigned char *)"",
		    j.kv.value_len, 0, &rec, &e2) == 1 && rec.expires_ms <= now) {
			etcd_idem_sweep_op(&body, &j.kv);
			dead++;
		}
		if (i == n - 1 && n == ETCD_IDEM_SWEEP_MAX) {
			/* Next: just past the last key read. */
			buf_add(&w->from, j.kv.key, j.kv.key_len);
			buf_addc(&w->from, '\0');
		}
		etcd_jkv_free(&j);
	}
	log_debug("etcd: idem sweep: %d records read, %d expired", n, dead);
	if (dead == 0 || etcd_call_pb(&e->client, 0, "/v3/kv/txn", &body,
	    etcd_idem_swept, w, &e2) != 0)
		etcd_idem_swept(w, NULL, dead == 0 ? NULL : &e2);
	buf_free(&body);
}

static void
etcd_idem_sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct etcd_idem_sweep	*w = arg;
	struct store_etcd	*e = w->e;
	struct store_err	 err;
	struct buf		 k, body;
	char			*k64, *end64;

	(void)fd;
	(void)what;
	buf_init(&k);
	buf_init(&body);
	etcd_idem_key(e, "", 0, &k);		/* PREFIX "i/" */
	end64 = etcd_prefix_end64(k.data, k.len);
	if (w->from.len > 0)
		buf_add(&k, w->from.data, w->from.len);
	k64 = etcd_b64(k.data, k.len);
	etcd_range_body(&body, k64, end64, 0, ETCD_IDEM_SWEEP_MAX, 0);
	w->busy = 1;
	if (etcd_call_async(&e->client, "/v3/kv/range", buf_cstr(&body),
	    etcd_idem_ranged, w, &err) != 0)
		etcd_idem_swept(w, NULL, &err);
	free(k64);
	free(end64);
	buf_free(&k);
	buf_free(&body);
}

static void
etcd_idem_sweep_arm(struct etcd_idem_sweep *w)
{
	struct timeval	 tv = { ETCD_IDEM_SWEEP_MS / 1000,
			    (ETCD_IDEM_SWEEP_MS % 1000) * 1000 };

	evtimer_add(w->timer, &tv);
}

void
etcd_idem_open(struct store_etcd *e)
{
	struct etcd_idem_sweep	*w;

	if (e->opts.base == NULL)
		return;
	w = xcalloc(1, sizeof *w);
	w->e = e;
	buf_init(&w->from);
	if ((w->timer = evtimer_new(e->opts.base, etcd_idem_sweep_cb,
	    w)) == NULL)
		fatalx("evtimer_new");
	e->idem_sweep = w;
	etcd_idem_sweep_arm(w);
}

/* After the client closed: its calls out were ended. */
void
etcd_idem_close(struct store_etcd *e)
{
	struct etcd_idem_sweep	*w = e->idem_sweep;

	if (w == NULL)
		return;
	event_free(w->timer);
	buf_free(&w->from);
	free(w);
	e->idem_sweep = NULL;
}
