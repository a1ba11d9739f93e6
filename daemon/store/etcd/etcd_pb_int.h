/*
 * The inside of etcd_pb.c (the converter) shared with etcd_pb_msg.c (the
 * tables of etcd's messages, field by field, and the rpcs that carry
 * them).  Nothing else includes it.
 */
#ifndef METAD_ETCD_PB_INT_H
#define METAD_ETCD_PB_INT_H

#include <stddef.h>
#include <stdint.h>

#include "store/etcd/etcd_pb.h"

enum pb_type { PB_BYTES, PB_STRING, PB_INT, PB_UINT, PB_BOOL, PB_ENUM,
    PB_MSG };

struct pb_msg;

struct pb_field {
	const char		*name;		/* the gateway's (OrigName) */
	uint32_t		 no;
	enum pb_type		 type;
	int			 repeated;	/* messages, bytes, strings */
	const struct pb_msg	*msg;		/* PB_MSG */
	const char *const	*names;		/* PB_ENUM, NULL-ended */
};

struct pb_msg {
	const struct pb_field	*f;
	size_t			 n;
};

/* An rpc: its gateway path ("": none), gRPC method, request and answer. */
struct pb_rpc {
	const char		*path, *method;
	const struct pb_msg	*req, *resp;
};

extern const struct pb_rpc	pb_rpcs[ETCD_PB_NONE];

#endif
