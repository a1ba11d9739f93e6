/*
 * libFuzzer target: the direct decoder of get, put and delete lines
 * (daemon/ops/ops_fast.c) against the general one (ops_decode), on a
 * stand-in store.  A line the direct decoder takes must be taken by the
 * general one with the same op, id and arguments (tests/unit/ops_fast_cmp.h,
 * as tests/unit/test_ops_fast.c checks it); else abort.
 *
 * The input's first byte chooses the connection (bit 0: read-only; bit
 * 3: without a peer identity, else "uid:1000"), the value limit (bit 1:
 * 16 bytes, else 1024, so that small inputs reach it) and the stand-in
 * store (bit 2: one without records of "idem" tokens); the rest is one
 * line, as conn.c frames it (no LF), in a buffer of exactly its size so
 * that ASan sees a read past it.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/conn.h"
#include "metad.h"
#include "ops/ops.h"
#include "util.h"

#include "../unit/ops_fast_cmp.h"
#include "../unit/ops_fast_store.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct metad	 md;

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct conn	 c;
	char		 why[512], *line;
	size_t		 len;

	if (size < 1)
		return (0);
	memset(&c, 0, sizeof c);
	c.md = &md;
	c.access = (data[0] & 1) ? CONN_ACCESS_RO : CONN_ACCESS_RW;
	if (!(data[0] & 8))
		c.identity_len = (size_t)snprintf(c.identity,
		    sizeof c.identity, "uid:1000");
	md.store = ops_fast_store(!(data[0] & 4));
	md.cfg.max_value_bytes = (data[0] & 2) ? 16 : 1024;
	len = size - 1;
	line = xmalloc(len > 0 ? len : 1);
	memcpy(line, data + 1, len);
	if (ops_fast_cmp(&md, &c, line, len, why, sizeof why) == -1) {
		fprintf(stderr, "the direct decoder: %s: %.*s\n", why,
		    (int)len, line);
		abort();
	}
	free(line);
	return (0);
}
