/*
 * Protobuf's wire format for etcd_pb.h: varints and fields, written
 * directly (the commit's txns) and read in place (the watch stream's
 * messages, the commit's answers) without the gateway's JSON; etcd_pb.c
 * checks what is read against its tables first.
 */
#include <stdint.h>
#include <string.h>

#include "store/etcd/etcd_pb.h"
#include "util.h"

/* Writing. */

static void
pb_put_varint(struct buf *b, uint64_t v)
{
	unsigned char	 t[10];
	size_t		 n = 0;

	do {
		t[n] = v & 0x7f;
		v >>= 7;
		if (v != 0)
			t[n] |= 0x80;
		n++;
	} while (v != 0);
	buf_add(b, t, n);
}

void
etcd_pb_put_int(struct buf *b, uint32_t no, uint64_t v)
{
	pb_put_varint(b, (uint64_t)no << 3);
	pb_put_varint(b, v);
}

void
etcd_pb_put_len(struct buf *b, uint32_t no, size_t n)
{
	pb_put_varint(b, (uint64_t)no << 3 | 2);
	pb_put_varint(b, n);
}

void
etcd_pb_put_bytes(struct buf *b, uint32_t no, const void *p, size_t n)
{
	etcd_pb_put_len(b, no, n);
	buf_add(b, p, n);
}

size_t
etcd_pb_begin(struct buf *b, uint32_t no)
{
	pb_put_varint(b, (uint64_t)no << 3 | 2);
	return (b->len);
}

void
etcd_pb_end(struct buf *b, size_t off)
{
	unsigned char	 t[10];
	size_t		 n = b->len - off, v = n, k = 0;

	do {
		t[k] = v & 0x7f;
		v >>= 7;
		if (v != 0)
			t[k] |= 0x80;
		k++;
	} while (v != 0);
	buf_reserve(b, b->len + k);
	memmove(b->data + off + k, b->data + off, n);
	memcpy(b->data + off, t, k);
	b->len += k;
}

/* Reading. */

int
etcd_pb_varint(const uint8_t *p, size_t n, uint64_t *v)
{
	size_t	 i;

	*v = 0;
	for (i = 0; i < n && i < 10; i++) {
		*v |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if ((p[i] & 0x80) == 0) {
			if (i == 9 && p[i] > 1)
				return (-1);	/* over 64 bits */
			return ((int)i + 1);
		}
	}
	return (-1);	/* truncated, or longer than 10 bytes */
}

int
etcd_pb_next(const uint8_t **pp, const uint8_t *end, uint32_t *no, int *wt,
    uint64_t *v, const uint8_t **data, size_t *len)
{
	const uint8_t	*p = *pp;
	uint64_t	 tag;
	int		 k;

	if (p >= end)
		return (0);
	if ((k = etcd_pb_varint(p, (size_t)(end - p), &tag)) < 0)
		return (-1);
	p += k;
	*wt = (int)(tag & 7);
	if ((tag >> 3) == 0 || (tag >> 3) > UINT32_MAX)
		return (-1);
	*no = (uint32_t)(tag >> 3);
	switch (*wt) {
	case 0:
		if ((k = etcd_pb_varint(p, (size_t)(end - p), v)) < 0)
			return (-1);
		p += k;
		break;
	case 1:
	case 5:
		if ((size_t)(end - p) < (*wt == 1 ? 8u : 4u))
			return (-1);
		p += *wt == 1 ? 8 : 4;
		break;
	case 2:
		if ((k = etcd_pb_varint(p, (size_t)(end - p), v)) < 0)
			return (-1);
		p += k;
		if (*v > (uint64_t)(end - p))
			return (-1);	/* past the end */
		*data = p;
		*len = (size_t)*v;
		p += *len;
		break;
	default:
		return (-1);
	}
	*pp = p;
	return (1);
}

/* An int64 as the gateway's JSON reads it (etcd_u64): none below 0. */
static uint64_t
pb_u64(uint64_t v)
{
	return ((int64_t)v < 0 ? 0 : v);
}

int
etcd_pb_kv_read(const uint8_t *p, size_t n, struct etcd_pb_kv *kv)
{
	const uint8_t	*end = p + n, *data = NULL;
	uint64_t	 v = 0;
	uint32_t	 no;
	size_t		 len = 0;
	int		 rc, wt;

	memset(kv, 0, sizeof *kv);
	while ((rc = etcd_pb_next(&p, end, &no, &wt, &v, &data, &len)) == 1) {
		if (no < 1 || no > 6)
			continue;
		if ((wt == 2) != (no == 1 || no == 5))
			return (-1);
		switch (no) {
		case 1:
			kv->key = data;
			kv->key_len = len;
			break;
		case 2:
			kv->create_rev = pb_u64(v);
			break;
		case 3:
			kv->mod_rev = pb_u64(v);
			break;
		case 4:
			kv->version = pb_u64(v);
			break;
		case 5:
			kv->value = data;
			kv->value_len = len;
			break;
		case 6:
			kv->lease = pb_u64(v);
			break;
		}
	}
	return (rc);
}

int
etcd_pb_watch_read(const uint8_t *p, size_t n, struct etcd_pb_watch *w)
{
	const uint8_t	*q = p, *end = p + n, *data = NULL;
	uint64_t	 v = 0;
	uint32_t	 no;
	size_t		 len = 0;
	int		 rc, wt;

	memset(w, 0, sizeof *w);
	if (etcd_pb_check(ETCD_PB_WATCH, p, n) != 0)
		return (-1);
	while ((rc = etcd_pb_next(&q, end, &no, &wt, &v, &data, &len)) == 1) {
		if (no == 1)
			w->header = 1;
		else if (no == 3)
			w->created = v != 0;
		else if (no == 4)
			w->canceled = v != 0;
		else if (no == 5)
			w->compact_rev = pb_u64(v);
		else if (no == 6 && wt == 2) {
			w->reason = data;
			w->reason_len = len;
		}
	}
	w->p = p;
	w->end = end;
	return (rc);
}

int
etcd_pb_watch_next(struct etcd_pb_watch *w, int *deleted,
    struct etcd_pb_kv *kv)
{
	const uint8_t	*data = NULL, *ed, *evend, *kvp = NULL, *pvp = NULL;
	uint64_t	 v = 0, type;
	uint32_t	 no;
	size_t		 len = 0, kvlen = 0, pvlen = 0;
	int		 wt;

	/* Checked by etcd_pb_watch_read: no error here. */
	while (etcd_pb_next(&w->p, w->end, &no, &wt, &v, &data, &len) == 1) {
		if (no != 11)
			continue;
		ed = data;
		evend = data + len;
		type = 0;
		while (etcd_pb_next(&ed, evend, &no, &wt, &v, &data, &len) == 1) {
			if (no == 1)
				type = v;
			else if (no == 2) {
				kvp = data;
				kvlen = len;
			} else if (no == 3) {
				pvp = data;
				pvlen = len;
			}
		}
		*deleted = type == 1;
		if (kvp == NULL)
			memset(kv, 0, sizeof *kv);
		else if (etcd_pb_kv_read(kvp, kvlen, kv) != 0)
			return (-1);
		memset(&w->prev, 0, sizeof w->prev);
		w->has_prev = pvp != NULL;
		if (pvp != NULL && etcd_pb_kv_read(pvp, pvlen, &w->prev) != 0)
			return (-1);
		return (1);
	}
	return (0);
}

int
etcd_pb_txn_read(const uint8_t *p, size_t n, struct etcd_pb_txn *t)
{
	const uint8_t	*q = p, *end = p + n, *data = NULL, *h, *hend;
	uint64_t	 v = 0;
	uint32_t	 no;
	size_t		 len = 0;
	int		 rc, wt;

	memset(t, 0, sizeof *t);
	if (etcd_pb_check(ETCD_PB_TXN, p, n) != 0)
		return (-1);
	while ((rc = etcd_pb_next(&q, end, &no, &wt, &v, &data, &len)) == 1) {
		if (no == 2)
			t->succeeded = v != 0;
		else if (no == 1) {
			/* A header given twice: the last one's (as decoded). */
			t->rev = 0;
			h = data;
			hend = data + len;
			while (etcd_pb_next(&h, hend, &no, &wt, &v, &data,
			    &len) == 1) {
				if (no == 3)
					t->rev = pb_u64(v);
			}
		}
	}
	t->p = p;
	t->end = end;
	return (rc);
}

int
etcd_pb_txn_next(struct etcd_pb_txn *t, int *op, const uint8_t **r,
    size_t *rlen)
{
	const uint8_t	*data = NULL, *q, *qend;
	uint64_t	 v = 0;
	uint32_t	 no;
	size_t		 len = 0;
	int		 wt;

	while (etcd_pb_next(&t->p, t->end, &no, &wt, &v, &data, &len) == 1) {
		if (no != 3)
			continue;
		*op = 0;
		*r = NULL;
		*rlen = 0;
		q = data;
		qend = data + len;
		while (etcd_pb_next(&q, qend, &no, &wt, &v, &data, &len) == 1) {
			if (no >= ETCD_PB_OP_RANGE && no <= ETCD_PB_OP_TXN) {
				*op = (int)no;
				*r = data;
				*rlen = len;
			}
		}
		return (1);
	}
	return (0);
}

int
etcd_pb_op_kv(int op, const uint8_t *p, size_t n, struct etcd_pb_kv *kv)
{
	const uint8_t	*end, *data = NULL, *kvp = NULL;
	uint64_t	 v = 0;
	uint32_t	 no;
	size_t		 len = 0, kvlen = 0;
	int		 wt;

	/* Not p + n first: an op 0 from etcd_pb_txn_next comes with NULL. */
	if (op != ETCD_PB_OP_RANGE && op != ETCD_PB_OP_PUT)
		return (0);
	end = p + n;
	/* Field 2: a range's kvs (the first), a put's prev_kv (the last). */
	while (etcd_pb_next(&p, end, &no, &wt, &v, &data, &len) == 1) {
		if (no != 2 || (op == ETCD_PB_OP_RANGE && kvp != NULL))
			continue;
		kvp = data;
		kvlen = len;
	}
	if (kvp == NULL)
		return (0);
	return (etcd_pb_kv_read(kvp, kvlen, kv) == 0 ? 1 : 0);
}
