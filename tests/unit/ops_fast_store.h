/*
 * A stand-in store for md->store in the tests of the direct decoder
 * (tests/unit/test_ops_fast.c, tests/fuzz/fuzz_fast.c), whose decoders ask
 * a store only whether it keeps records of "idem" tokens (store_has_idem)
 * and its name (store_name): ops_fast_store(1) is one that does, (0) one
 * that does not.  Nothing else may be asked of it.
 */
#ifndef OPS_FAST_STORE_H
#define OPS_FAST_STORE_H

#include "store/store_backend.h"

static int
ops_fast_store_idem_get(struct store *s, const void *name, size_t len,
    struct store_idem *rec, struct store_err *se)
{
	(void)s; (void)name; (void)len; (void)rec; (void)se;
	return (0);
}

static int
ops_fast_store_idem_put(struct store *s, const void *name, size_t len,
    const struct store_idem *rec, uint64_t now_ms, struct store_err *se)
{
	(void)s; (void)name; (void)len; (void)rec; (void)now_ms; (void)se;
	return (0);
}

static struct store *
ops_fast_store(int idem)
{
	static const struct store_backend	 with = {
		.name = "stand-in",
		.idem_get = ops_fast_store_idem_get,
		.idem_put = ops_fast_store_idem_put,
	}, without = {
		.name = "stand-in-without-idem",
	};
	static struct store			 st[2];

	st[0].backend = &without;
	st[1].backend = &with;
	return (&st[idem != 0]);
}

#endif
