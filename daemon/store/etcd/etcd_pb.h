/*
 * etcd's messages in protobuf, for its gRPC API (etcd_grpc.c), to and
 * from the JSON of its gateway, so that the callers' requests and answers
 * keep the gateway's shape (the callers build and read that JSON): a
 * request's JSON (KV: TxnRequest, nested txns included, RangeRequest,
 * PutRequest, DeleteRangeRequest, CompactionRequest; WatchRequest: a
 * create or cancel request; the Lease service's; Maintenance.Status's;
 * Auth.Authenticate's) is
 * encoded, an answer is decoded into the tree the gateway would have sent
 * (bytes in base64, int64s as strings, zero values left out).  Hand-written from etcd 3.4's rpc.proto and kv.proto: only the
 * fields named there, by number; unknown fields of an answer are skipped.
 *
 * The decoder reads nothing past the buffer it is given and no deeper than
 * ETCD_PB_DEPTH_MAX nested messages: a malformed answer is an error.
 */
#ifndef METAD_ETCD_PB_H
#define METAD_ETCD_PB_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "util.h"

#define ETCD_PB_DEPTH_MAX	32

enum etcd_pb_rpc {
	ETCD_PB_RANGE,
	ETCD_PB_PUT,
	ETCD_PB_DELETE,
	ETCD_PB_TXN,
	ETCD_PB_COMPACT,
	ETCD_PB_STATUS,		/* Maintenance.Status */
	ETCD_PB_LEASE_GRANT,	/* Lease.LeaseGrant */
	ETCD_PB_LEASE_REVOKE,
	/* A stream, carried as a call: one request, one answer. */
	ETCD_PB_LEASE_KEEPALIVE,
	ETCD_PB_LEASE_TTL,	/* Lease.LeaseTimeToLive */
	ETCD_PB_LEASE_LEASES,
	ETCD_PB_WATCH,		/* a stream (etcd_grpc_stream) */
	ETCD_PB_AUTH,		/* Auth.Authenticate: a token */
	ETCD_PB_NONE		/* a path not carried over gRPC */
};

/* The rpc of a gateway path ("/v3/kv/txn"), or ETCD_PB_NONE. */
enum etcd_pb_rpc etcd_pb_rpc_of(const char *path);
/* Its gRPC method ("/etcdserverpb.KV/Txn"). */
const char	*etcd_pb_method(enum etcd_pb_rpc);
/*
 * The request in json (the gateway's body) appended to out in protobuf;
 * -1 (out undefined, *why a static message) if json is not such a request.
 */
int		 etcd_pb_encode(enum etcd_pb_rpc, const char *json,
		    struct buf *out, const char **why);
/*
 * Writing a request in protobuf directly: a varint field (written even
 * when 0, as etcd_pb_encode does for a field the JSON gives), a bytes
 * field, or its tag and length (the caller adds its n bytes); a message
 * field is begun (the offset etcd_pb_end takes) and ended (its length goes
 * in front of it).  The field numbers: below, from rpc.proto.
 */
void		 etcd_pb_put_int(struct buf *, uint32_t no, uint64_t);
void		 etcd_pb_put_bytes(struct buf *, uint32_t no, const void *,
		    size_t);
void		 etcd_pb_put_len(struct buf *, uint32_t no, size_t);
size_t		 etcd_pb_begin(struct buf *, uint32_t no);
void		 etcd_pb_end(struct buf *, size_t);

enum {
	/* TxnRequest */
	ETCD_PB_TXN_COMPARE = 1, ETCD_PB_TXN_SUCCESS = 2,
	ETCD_PB_TXN_FAILURE = 3,
	/* Compare; its result and target */
	ETCD_PB_CMP_RESULT = 1, ETCD_PB_CMP_TARGET = 2, ETCD_PB_CMP_KEY = 3,
	ETCD_PB_CMP_MOD = 6, ETCD_PB_CMP_RANGE_END = 64,
	ETCD_PB_CMP_EQUAL = 0, ETCD_PB_CMP_LESS = 2, ETCD_PB_CMP_TARGET_MOD = 2,
	/* RequestOp */
	ETCD_PB_OP_RANGE = 1, ETCD_PB_OP_PUT = 2, ETCD_PB_OP_DELETE = 3,
	ETCD_PB_OP_TXN = 4,
	/* RangeRequest, PutRequest, DeleteRangeRequest */
	ETCD_PB_RANGE_KEY = 1, ETCD_PB_RANGE_REV = 4,
	ETCD_PB_PUT_KEY = 1, ETCD_PB_PUT_VALUE = 2, ETCD_PB_PUT_LEASE = 3,
	ETCD_PB_PUT_PREV_KV = 4,
	ETCD_PB_DELETE_KEY = 1, ETCD_PB_DELETE_RANGE_END = 2,
	/* CompactionRequest */
	ETCD_PB_COMPACT_REV = 1
};

/* The answer in p[0..n) as the gateway's JSON, or NULL if malformed. */
cJSON		*etcd_pb_decode(enum etcd_pb_rpc, const void *p, size_t n);
/*
 * About what etcd_pb_decode of p[0..n) would allocate (its items, their
 * strings), counted without allocating: a message of small fields takes
 * some 40 times its size as cJSON items.
 */
size_t		 etcd_pb_decode_cost(enum etcd_pb_rpc, const void *p,
		    size_t n);
/* The most an answer of n bytes may take decoded (etcd_grpc.c). */
#define ETCD_PB_DECODE_MAX(n)	(4 * (size_t)(n) + ((size_t)64 << 20))
/* The same for a request (the unit tests' round trips). */
cJSON		*etcd_pb_decode_request(enum etcd_pb_rpc, const void *p,
		    size_t n);

/*
 * A KeyValue (kv.proto) read in place: key and value point into the
 * message; an int64 below 0 reads 0, as the gateway's string does
 * (etcd_u64).  etcd_pb_kv_read: 0, or -1 if malformed.
 */
struct etcd_pb_kv {
	const uint8_t	*key, *value;
	size_t		 key_len, value_len;
	uint64_t	 create_rev, mod_rev, version, lease;
};

int		 etcd_pb_kv_read(const uint8_t *, size_t, struct etcd_pb_kv *);

/*
 * A WatchResponse (the stream's messages) read in place, without the
 * gateway's JSON: etcd_pb_watch_read checks all of it as etcd_pb_decode
 * would (-1 if malformed) and fills in what it says; then each
 * etcd_pb_watch_next gives its next event (1), 0 after the last, and
 * leaves its prev_kv in w->prev (w->has_prev).  p must
 * stay as it is meanwhile.
 */
struct etcd_pb_watch {
	int		 header, created, canceled;
	uint64_t	 compact_rev;
	const uint8_t	*reason;	/* cancel_reason, in place */
	size_t		 reason_len;
	const uint8_t	*p, *end;	/* what is left to read */
	/* The last event's prev_kv (watches with prev_kv), if it had one. */
	int		 has_prev;
	struct etcd_pb_kv prev;
};

int		 etcd_pb_watch_read(const uint8_t *, size_t,
		    struct etcd_pb_watch *);
int		 etcd_pb_watch_next(struct etcd_pb_watch *, int *deleted,
		    struct etcd_pb_kv *);

/* 0 if p[0..n) is a well-formed answer to rpc (as etcd_pb_decode checks). */
int		 etcd_pb_check(enum etcd_pb_rpc, const void *p, size_t n);

/*
 * A TxnResponse read in place: etcd_pb_txn_read checks it whole (-1 if
 * malformed) and says whether it succeeded and its header's revision;
 * each etcd_pb_txn_next gives its next response (1, 0 after the last):
 * which it is (op: ETCD_PB_OP_RANGE, _PUT, _DELETE, _TXN, or 0) and that
 * response, in place (a nested txn's: etcd_pb_txn_read it).  The kv of
 * a range's or a put's response (etcd_pb_op_kv): a range's first kv, a
 * put's prev_kv; 1, or 0 if it has none.
 */
struct etcd_pb_txn {
	int		 succeeded;
	uint64_t	 rev;
	const uint8_t	*p, *end;	/* the responses not yet read */
};

int		 etcd_pb_txn_read(const uint8_t *, size_t,
		    struct etcd_pb_txn *);
int		 etcd_pb_txn_next(struct etcd_pb_txn *, int *op,
		    const uint8_t **, size_t *);
int		 etcd_pb_op_kv(int op, const uint8_t *, size_t,
		    struct etcd_pb_kv *);

/* Protobuf's base-128 varint: bytes read from p[0..n), or -1. */
int		 etcd_pb_varint(const uint8_t *p, size_t n, uint64_t *v);
/*
 * The next field of *p..end (*p moves past it): its number, wire type,
 * varint v (wire type 0) or data[0..len) (2); 1, 0 at the end, -1 if
 * malformed (wire types 1 and 5 are skipped, groups are not in etcd's
 * messages).
 */
int		 etcd_pb_next(const uint8_t **p, const uint8_t *end,
		    uint32_t *no, int *wt, uint64_t *v, const uint8_t **data,
		    size_t *len);

/*
 * The gateway's encodings, for the JSON of the requests and answers:
 * bytes in base64; a prefix's range_end (the first key after every key
 * starting with it) in base64.
 */
char		*etcd_b64(const void *, size_t);
char		*etcd_prefix_end64(const char *, size_t);
/* Decodes a base64 field of obj (absent: empty); malloc'd, *len set. */
unsigned char	*etcd_unb64(const cJSON *obj, const char *name, size_t *len);
/* An int64-as-string (or number) field; 0 when absent. */
uint64_t	 etcd_u64(const cJSON *obj, const char *name);

#endif
