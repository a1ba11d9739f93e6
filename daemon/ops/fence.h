/*
 * Fences on put, delete and txn: "fence":{"key":K,"epoch":N} lets the write
 * happen only if the epoch stored at K is exactly N, checked inside the
 * write's batch.
 */
#ifndef METAD_FENCE_H
#define METAD_FENCE_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/req.h"
#include "proto.h"
#include "store/store.h"

/* struct fence, a write's fence as decoded, is in core/req.h. */

int	fence_parse(const cJSON *, struct fence *, struct proto_err *);
/*
 * 1 if the write may go on, 0 if it was answered (fenced, or the fence key
 * holds no epoch), -1 on a store error.
 */
int	fence_check(struct req *, const struct fence *, struct store_err *);

#endif
