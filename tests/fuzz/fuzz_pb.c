/*
 * libFuzzer target: etcd's protobuf messages (daemon/store/etcd/etcd_pb*.c)
 * from arbitrary bytes, without a connection.  The input's first byte
 * chooses the rpc (modulo ETCD_PB_NONE), the rest is one message, in a
 * buffer of exactly its size so that ASan sees a read past it.  Abort
 * unless:
 *
 *   - the answer's decoders agree: etcd_pb_decode gives a tree iff
 *     etcd_pb_check says well-formed, and, for a txn or a watch, iff the
 *     in-place reader (etcd_pb_txn_read, etcd_pb_watch_read) does, whose
 *     every response, nested txn and kv then reads within the message;
 *   - a request the decoder reads (etcd_pb_decode_request) is encoded
 *     again from its JSON (etcd_pb_encode), when the encoder takes it,
 *     into a message that decodes to the same JSON (the round trip the
 *     unit tests check on known requests).
 *
 * Leaks are libFuzzer's -detect_leaks; nothing is kept between inputs.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "store/etcd/etcd_pb.h"
#include "util.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static void
fuzz_fail(const char *what, enum etcd_pb_rpc rpc)
{
	fprintf(stderr, "%s (%s)\n", what, etcd_pb_method(rpc));
	abort();
}

static int
fuzz_within(const uint8_t *p, size_t n, const uint8_t *q, size_t m)
{
	return (m == 0 || (q >= p && q + m <= p + n));
}

static void
fuzz_kv_within(const uint8_t *p, size_t n, const struct etcd_pb_kv *kv)
{
	if (!fuzz_within(p, n, kv->key, kv->key_len) ||
	    !fuzz_within(p, n, kv->value, kv->value_len))
		fuzz_fail("a kv read in place outside its message",
		    ETCD_PB_NONE);
}

/* Every response of a txn read in place, nested txns too. */
static void
fuzz_txn(const uint8_t *p, size_t n, const uint8_t *r, size_t rn, int depth)
{
	struct etcd_pb_txn	 t;
	struct etcd_pb_kv	 kv;
	const uint8_t		*q;
	size_t			 qn;
	int			 op, rc;

	if (etcd_pb_txn_read(r, rn, &t) != 0)
		fuzz_fail("a nested txn the reader refuses", ETCD_PB_TXN);
	while ((rc = etcd_pb_txn_next(&t, &op, &q, &qn)) == 1) {
		if (!fuzz_within(p, n, q, qn))
			fuzz_fail("a response outside its txn", ETCD_PB_TXN);
		if (etcd_pb_op_kv(op, q, qn, &kv) == 1)
			fuzz_kv_within(p, n, &kv);
		if (op == ETCD_PB_OP_TXN) {
			if (depth > ETCD_PB_DEPTH_MAX)
				fuzz_fail("a txn nested too deep", ETCD_PB_TXN);
			fuzz_txn(p, n, q, qn, depth + 1);
		}
	}
	if (rc != 0)
		fuzz_fail("a txn's responses end badly", ETCD_PB_TXN);
}

static void
fuzz_answer(enum etcd_pb_rpc rpc, const uint8_t *p, size_t n)
{
	struct etcd_pb_watch	 w;
	struct etcd_pb_txn	 t;
	struct etcd_pb_kv	 kv;
	cJSON			*j;
	int			 ok, rc, del;

	j = etcd_pb_decode(rpc, p, n);
	ok = j != NULL;
	cJSON_Delete(j);
	if ((etcd_pb_check(rpc, p, n) == 0) != ok)
		fuzz_fail("etcd_pb_check and etcd_pb_decode disagree", rpc);
	if (rpc == ETCD_PB_TXN) {
		if ((etcd_pb_txn_read(p, n, &t) == 0) != ok)
			fuzz_fail("etcd_pb_txn_read and etcd_pb_decode "
			    "disagree", rpc);
		if (ok)
			fuzz_txn(p, n, p, n, 0);
	} else if (rpc == ETCD_PB_WATCH) {
		if ((etcd_pb_watch_read(p, n, &w) == 0) != ok)
			fuzz_fail("etcd_pb_watch_read and etcd_pb_decode "
			    "disagree", rpc);
		while (ok && (rc = etcd_pb_watch_next(&w, &del, &kv)) != 0) {
			if (rc != 1)
				fuzz_fail("a watch's events end badly", rpc);
			fuzz_kv_within(p, n, &kv);
		}
	}
}

static void
fuzz_request(enum etcd_pb_rpc rpc, const uint8_t *p, size_t n)
{
	struct buf	 b;
	const char	*why;
	char		*s;
	cJSON		*j, *again;

	if ((j = etcd_pb_decode_request(rpc, p, n)) == NULL)
		return;
	s = cJSON_PrintUnformatted(j);
	buf_init(&b);
	if (etcd_pb_encode(rpc, s, &b, &why) == 0) {
		again = etcd_pb_decode_request(rpc, b.len > 0 ? b.data : "",
		    b.len);
		if (again == NULL || !cJSON_Compare(j, again, 1)) {
			fprintf(stderr, "decoded: %s\n", s);
			fuzz_fail("a request encoded again decodes otherwise",
			    rpc);
		}
		cJSON_Delete(again);
	}
	buf_free(&b);
	free(s);
	cJSON_Delete(j);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	enum etcd_pb_rpc	 rpc;
	uint8_t			*p;
	size_t			 n;

	if (size < 1)
		return (0);
	rpc = (enum etcd_pb_rpc)(data[0] % ETCD_PB_NONE);
	n = size - 1;
	p = xmalloc(n > 0 ? n : 1);
	memcpy(p, data + 1, n);
	fuzz_answer(rpc, p, n);
	fuzz_request(rpc, p, n);
	free(p);
	return (0);
}
