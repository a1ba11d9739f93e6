/*
 * get with "keys" (metad-protocol(7), get): the present keys of a list of
 * at most GET_KEYS_MAX, in key order, all at one rev R, the missing ones
 * left out.  R is "rev" if given, else the current rev: a linearizable one
 * first reads the first key as any get does (it sees every write
 * acknowledged before it), then every key is read as of the rev the store
 * then answers with, so that no write landing meanwhile splits the answer.
 */
#include <stdlib.h>
#include <string.h>

#include "metad.h"
#include "metad_limits.h"
#include "enc.h"
#include "ops/ops.h"
#include "ops/ops_read.h"
#include "core/reply.h"

struct mget {
	struct read_args	 a;	/* first: r->state, freed with free() */
	const char		*key[GET_KEYS_MAX];
	size_t			 len[GET_KEYS_MAX];
	size_t			 n, next;
	uint64_t		 at;
	int			 reading;	/* the keys at at */
	struct store_kvbuf	 kvs;
};

static void	mget_next(struct req *);

static int
mget_cmp(const void *x, const void *y)
{
	const char *const	*a = x, *const *b = y;

	return (strcmp(*a, *b));
}

static int
mget_args(struct req *r, struct mget *m, struct proto_err *e)
{
	const cJSON	*keys, *it;
	const char	*sorted[GET_KEYS_MAX];
	size_t		 i, n = 0, len;

	if (cJSON_GetObjectItemCaseSensitive(r->json, "key") != NULL)
		return (proto_fail(e, PROTO_BAD_REQUEST, "give \"key\" or "
		    "\"keys\", not both"));
	keys = cJSON_GetObjectItemCaseSensitive(r->json, "keys");
	if (!cJSON_IsArray(keys))
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"keys\" must "
		    "be an array of keys"));
	if (cJSON_GetArraySize(keys) > GET_KEYS_MAX)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"keys\" has "
		    "%d keys; the limit is %d", cJSON_GetArraySize(keys),
		    GET_KEYS_MAX));
	cJSON_ArrayForEach(it, keys) {
		if (!cJSON_IsString(it))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field "
			    "\"keys\" must be an array of strings"));
		len = strlen(it->valuestring);
		if (memmem(it->valuestring, len, "\xc0\x80", 2) != NULL ||
		    !utf8_valid(it->valuestring, len))
			return (proto_fail(e, PROTO_BAD_REQUEST, "field "
			    "\"keys\": a key is UTF-8 with no NUL"));
		if (proto_check_key(it->valuestring, len, "keys", e) != 0)
			return (-1);
		sorted[n++] = it->valuestring;
	}
	/* Key order (strcmp: bytewise, as keys hold no NUL), each once. */
	qsort(sorted, n, sizeof *sorted, mget_cmp);
	for (i = 0; i < n; i++) {
		if (m->n > 0 && strcmp(m->key[m->n - 1], sorted[i]) == 0)
			continue;
		m->key[m->n] = sorted[i];
		m->len[m->n++] = strlen(sorted[i]);
	}
	return (ops_read_args(r, &m->a, e));
}

static void
mget_answer(struct req *r)
{
	struct mget	*m = r->state;
	struct jw	 w;
	size_t		 i, len = 64;

	for (i = 0; i < m->kvs.n; i++)
		len += reply_kv_len(&m->kvs.v[i], 1);
	if (reply_too_large(r, len, "ask for fewer keys")) {
		req_done(r);
		return;
	}
	reply_begin(r, &w);
	JW_NAME(&w, "kvs");
	jw_arr_open(&w);
	for (i = 0; i < m->kvs.n; i++)
		reply_kv(&w, NULL, &m->kvs.v[i], 1);
	jw_arr_close(&w);
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

static void
mget_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct mget	*m = r->state;

	(void)more;
	if (n < 0) {
		ops_read_fail(r, se);
		req_done(r);
		return;
	}
	if (!m->reading) {
		/* The linearizable read: the rev every key is read at. */
		m->at = store_read_rev(r->md->store);
		m->reading = 1;
		if (m->at == 0) {	/* an empty store */
			mget_answer(r);
			return;
		}
	} else {
		if (n > 0)
			store_kvbuf_add(&kvs[0], &m->kvs);
		m->next++;
	}
	mget_next(r);
}

/* One key at a time: a local store answers at once, etcd later. */
static void
mget_next(struct req *r)
{
	struct mget	*m = r->state;

	if (m->next == m->n) {
		mget_answer(r);
		return;
	}
	store_read_get_at(r->md->store, m->key[m->next], m->len[m->next],
	    m->at, m->a.serializable, mget_done, r);
}

static void
mget_go(struct req *r)
{
	struct mget	*m = r->state;

	switch (ops_read_at_zero(r, &m->a)) {
	case 1:
		return;
	case -1:
		mget_answer(r);
		return;
	}
	if (m->n > 0 && !m->a.has_rev && !m->a.serializable) {
		store_read_get_at(r->md->store, m->key[0], m->len[0], 0, 0,
		    mget_done, r);
		return;
	}
	m->reading = 1;
	m->at = m->a.has_rev ? m->a.rev : store_read_rev(r->md->store);
	if (m->at == 0) {	/* an empty store */
		mget_answer(r);
		return;
	}
	mget_next(r);
}

static void
mget_free(void *p)
{
	struct mget	*m = p;

	store_kvbuf_free(&m->kvs);
	free(m);
}

void
ops_mget(struct req *r)
{
	struct proto_err	 e;
	struct mget		*m;

	m = xcalloc(1, sizeof *m);
	if (mget_args(r, m, &e) != 0) {
		free(m);
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	r->state_free = mget_free;
	ops_read_start(r, &m->a, mget_go);
}
