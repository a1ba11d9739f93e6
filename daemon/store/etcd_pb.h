/*
 * etcd's KV messages in protobuf, for its gRPC API (etcd_grpc.c), to and
 * from the JSON of its gateway, so that the callers' requests and answers
 * keep the gateway's shape whichever transport carries them: a request's
 * JSON (TxnRequest, RangeRequest, PutRequest, DeleteRangeRequest, nested
 * txns included; WatchRequest: a create or cancel request) is encoded, an answer is decoded into the tree the gateway
 * would have sent (bytes in base64, int64s as strings, zero values left
 * out).  Hand-written from etcd 3.4's rpc.proto and kv.proto: only the
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
	ETCD_PB_WATCH,		/* a stream (etcd_grpc_stream) */
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
/* The answer in p[0..n) as the gateway's JSON, or NULL if malformed. */
cJSON		*etcd_pb_decode(enum etcd_pb_rpc, const void *p, size_t n);
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
 * etcd_pb_watch_next gives its next event (1), 0 after the last.  p must
 * stay as it is meanwhile.
 */
struct etcd_pb_watch {
	int		 header, created, canceled;
	uint64_t	 compact_rev;
	const uint8_t	*p, *end;	/* what is left to read */
};

int		 etcd_pb_watch_read(const uint8_t *, size_t,
		    struct etcd_pb_watch *);
int		 etcd_pb_watch_next(struct etcd_pb_watch *, int *deleted,
		    struct etcd_pb_kv *);

/* Protobuf's base-128 varint: bytes read from p[0..n), or -1. */
int		 etcd_pb_varint(const uint8_t *p, size_t n, uint64_t *v);

#endif
