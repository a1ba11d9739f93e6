/*
 * The etcd backend's kvs and events: a kv as etcd's protobuf has it
 * (struct etcd_pb_kv), or as its JSON gateway answers (base64 keys and
 * values, int64s as strings: etcd_jkv_of reads it into the same), turned
 * into the backend's own struct etcd_ev; and the bodies of the range
 * requests it sends.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/etcd/store_etcd.h"

void
etcd_ev_free(struct etcd_ev *ev)
{
	free(ev->key);
	free(ev->value);
	free(ev->prev_value);
	memset(ev, 0, sizeof *ev);
}

void
etcd_evs_push(struct etcd_evs *a, const struct etcd_ev *ev)
{
	if (a->n == a->cap) {
		if (a->head > 0 && a->head >= a->n / 2) {
			memmove(a->v, a->v + a->head,
			    (a->n - a->head) * sizeof *a->v);
			a->n -= a->head;
			a->head = 0;
		} else {
			a->cap = a->cap == 0 ? 64 : a->cap * 2;
			a->v = xrealloc(a->v, a->cap * sizeof *a->v);
		}
	}
	a->v[a->n++] = *ev;
	a->bytes += ETCD_EV_BYTES(ev);
}

/* Free the entries from keep_from on (all of them: 0). */
void
etcd_evs_clear(struct etcd_evs *a, size_t keep_from)
{
	while (a->n > keep_from && a->n > a->head) {
		a->n--;
		a->bytes -= ETCD_EV_BYTES(&a->v[a->n]);
		etcd_ev_free(&a->v[a->n]);
	}
	if (a->n == a->head) {
		a->n = a->head = 0;
		a->bytes = 0;
	}
}

void
etcd_jkv_of(struct etcd_jkv *j, const cJSON *kv)
{
	memset(j, 0, sizeof *j);
	j->k = etcd_unb64(kv, "key", &j->kv.key_len);
	j->v = etcd_unb64(kv, "value", &j->kv.value_len);
	j->kv.key = j->k;
	j->kv.value = j->v;
	j->kv.create_rev = etcd_u64(kv, "create_revision");
	j->kv.mod_rev = etcd_u64(kv, "mod_revision");
	j->kv.version = etcd_u64(kv, "version");
	j->kv.lease = etcd_u64(kv, "lease");
}

void
etcd_jkv_free(struct etcd_jkv *j)
{
	free(j->k);
	free(j->v);
	memset(j, 0, sizeof *j);
}

int
etcd_ev_of(struct store_etcd *e, const struct etcd_pb_kv *kv, int deleted,
    struct etcd_ev *ev)
{
	memset(ev, 0, sizeof *ev);
	if (kv->key_len <= e->prefix_len ||
	    memcmp(kv->key, e->prefix, e->prefix_len) != 0)
		return (-1);
	ev->key_len = kv->key_len - e->prefix_len;
	ev->key = xmemdup(kv->key + e->prefix_len, ev->key_len);
	ev->deleted = deleted;
	ev->mod_rev = kv->mod_rev;
	ev->rev = ev->mod_rev;
	if (!deleted) {
		ev->value = (unsigned char *)xmemdup(kv->value, kv->value_len);
		ev->value_len = kv->value_len;
		ev->version = kv->version;
		ev->create_rev = kv->create_rev;
		ev->lease = kv->lease;
	}
	return (0);
}

int
etcd_ev_from_kv(struct store_etcd *e, const cJSON *kv, int deleted,
    struct etcd_ev *ev)
{
	struct etcd_jkv	 j;
	int		 rc;

	etcd_jkv_of(&j, kv);
	rc = etcd_ev_of(e, &j.kv, deleted, ev);
	etcd_jkv_free(&j);
	return (rc);
}

char *
etcd_key64(struct store_etcd *e, const char *key, size_t len)
{
	char	*k, *s;

	k = xmalloc(e->prefix_len + len);
	memcpy(k, e->prefix, e->prefix_len);
	memcpy(k + e->prefix_len, key, len);
	s = etcd_b64(k, e->prefix_len + len);
	free(k);
	return (s);
}

void
etcd_kv_of(const struct etcd_ev *ev, struct store_kv *kv, int with_value)
{
	memset(kv, 0, sizeof *kv);
	kv->key = ev->key;
	kv->key_len = ev->key_len;
	kv->value = with_value ? ev->value : NULL;
	kv->value_len = with_value ? ev->value_len : 0;
	kv->version = ev->version;
	kv->create_rev = ev->create_rev;
	kv->mod_rev = ev->mod_rev;
	kv->lease = ev->lease;
}

/* The header revision of a reply: etcd's revision when it answered. */
uint64_t
etcd_header_rev(struct store_etcd *e, const cJSON *reply)
{
	return (etcd_rev_seen(e, etcd_u64(cJSON_GetObjectItemCaseSensitive(
	    reply, "header"), "revision")));
}

/* etcd was at rev when it answered: st->seen_rev. */
uint64_t
etcd_rev_seen(struct store_etcd *e, uint64_t rev)
{
	if (rev > e->st->head.seen_rev)
		e->st->head.seen_rev = rev;
	return (rev);
}

/* The body of a range request for [key64, end64) at rev (0: current). */
void
etcd_range_body(struct buf *b, const char *key64, const char *end64,
    uint64_t rev, uint64_t limit, int keys_only)
{
	buf_printf(b, "{\"key\":\"%s\"", key64);
	if (end64 != NULL)
		buf_printf(b, ",\"range_end\":\"%s\"", end64);
	if (rev != 0)
		buf_printf(b, ",\"revision\":\"%" PRIu64 "\"", rev);
	if (limit != 0)
		buf_printf(b, ",\"limit\":\"%" PRIu64 "\"", limit);
	if (keys_only == 1)
		buf_addstr(b, ",\"keys_only\":true");
	else if (keys_only == 2)
		buf_addstr(b, ",\"count_only\":true");
	buf_addstr(b, "}");
}

/* Range [key64, end64) at rev (0: current); the reply in *out. */
int
etcd_range(struct store_etcd *e, const char *key64, const char *end64,
    uint64_t rev, uint64_t limit, int keys_only, cJSON **out,
    struct store_err *err)
{
	struct buf	 b;
	int		 rc;

	buf_init(&b);
	etcd_range_body(&b, key64, end64, rev, limit, keys_only);
	rc = etcd_call_sync(&e->client, "/v3/kv/range", buf_cstr(&b), out, err);
	buf_free(&b);
	if (rc == 0)
		(void)etcd_header_rev(e, *out);
	return (rc);
}

/* The kvs of a range reply, at most limit of them, into out (in order). */
void
etcd_reply_kvs(struct store_etcd *e, const cJSON *reply, uint64_t limit,
    struct etcd_evs *out, int *more)
{
	const cJSON	*it;
	struct etcd_ev	 ev;

	*more = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItemCaseSensitive(reply,
	    "kvs")) {
		if (out->n - out->head == limit) {
			*more = 1;
			break;
		}
		if (etcd_ev_from_kv(e, it, 0, &ev) == 0)
			etcd_evs_push(out, &ev);
	}
}

void
etcd_evs_free(struct etcd_evs *evs)
{
	etcd_evs_clear(evs, 0);
	free(evs->v);
	memset(evs, 0, sizeof *evs);
}

