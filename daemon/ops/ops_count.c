/*
 * list with "count_only" (metad-protocol(7), list): the number of keys
 * the list names, all as of one rev R, limit aside.  The store is read a
 * page of keys (keys only) at a time at R: "rev" if given, else the
 * current rev, for a linearizable list the rev the store answers a first
 * one-key page with (as ops_mget.c does), so that no write landing between
 * pages changes the count.
 */
#include <stdlib.h>
#include <string.h>

#include "metad.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "ops/ops_read.h"
#include "core/reply.h"

struct lcount {
	struct read_args	 a;	/* r->state */
	struct store_range	 rg;	/* the page */
	char			*after;	/* its last key */
	uint64_t		 n;
	int			 reading;	/* pages at rg.rev */
};

static void	lcount_next(struct req *);

static void
lcount_answer(struct req *r)
{
	struct lcount	*c = r->state;
	struct jw	 w;

	reply_begin(r, &w);
	JW_NAME(&w, "count");
	jw_u64(&w, c->n);
	JW_NAME(&w, "rev");
	jw_u64(&w, store_read_rev(r->md->store));
	reply_end(r, &w);
	req_done(r);
}

static void
lcount_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *se)
{
	struct req	*r = arg;
	struct lcount	*c = r->state;

	if (n < 0) {
		ops_read_fail(r, se);
		req_done(r);
		return;
	}
	if (!c->reading) {
		/* The linearizable first read: the rev every page is at. */
		c->reading = 1;
		if ((c->rg.rev = store_read_rev(r->md->store)) == 0) {
			lcount_answer(r);	/* an empty store */
			return;
		}
		c->rg.limit = LIST_LIMIT_MAX;
		lcount_next(r);
		return;
	}
	c->n += (uint64_t)n;
	if (!more || n == 0) {
		lcount_answer(r);
		return;
	}
	free(c->after);
	c->after = xmemdup(kvs[n - 1].key, kvs[n - 1].key_len);
	c->rg.after = c->after;
	c->rg.after_len = kvs[n - 1].key_len;
	lcount_next(r);
}

static void
lcount_next(struct req *r)
{
	struct lcount	*c = r->state;

	store_read_range(r->md->store, &c->rg, lcount_done, r);
}

static void
lcount_go(struct req *r)
{
	struct lcount	*c = r->state;

	switch (ops_read_at_zero(r, &c->a)) {
	case 1:
		return;
	case -1:
		lcount_answer(r);
		return;
	}
	c->rg = c->a.rg;
	c->rg.keys_only = 1;
	c->rg.serializable = c->a.serializable;
	if (!c->a.has_rev && !c->a.serializable) {
		c->rg.rev = 0;
		c->rg.limit = 1;
		store_read_range(r->md->store, &c->rg, lcount_done, r);
		return;
	}
	c->reading = 1;
	c->rg.limit = LIST_LIMIT_MAX;
	if ((c->rg.rev = c->a.has_rev ? c->a.rev :
	    store_read_rev(r->md->store)) == 0) {
		lcount_answer(r);
		return;
	}
	lcount_next(r);
}

static void
lcount_free(void *p)
{
	struct lcount	*c = p;

	free(c->after);
	free(c);
}

void
ops_list_count(struct req *r, struct read_args *a)
{
	struct lcount	*c;

	c = xcalloc(1, sizeof *c);
	c->a = *a;
	free(a);
	r->state_free = lcount_free;
	ops_read_start(r, &c->a, lcount_go);
}
