/*
 * The etcd backend's batch as it is undone (store_etcd.c opens it, and
 * puts and deletes into it): a mark and its undo, the reopen of a batch
 * that landed, the rollback, and the compaction a batch asks for.
 */
#include <inttypes.h>
#include <stdint.h>

#include "store/etcd/store_etcd.h"

#define E(st)	((struct store_etcd *)(st)->impl)

int
store_etcd_mark(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);

	e->mark = e->overlay.n;
	e->compact_to_mark = e->compact_to;
	e->compact_rev_mark = st->head.compact_rev;
	e->marked = 1;
	return (0);
}

int
store_etcd_undo(struct store *st, struct store_err *err)
{
	struct store_etcd	*e = E(st);

	if (!e->marked)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "undo without a mark"));
	etcd_evs_clear(&e->overlay, e->mark);
	if (e->drange && e->mark <= e->drange_from)
		e->drange = 0;
	e->compact_to = e->compact_to_mark;
	st->head.compact_rev = e->compact_rev_mark;
	e->marked = 0;
	return (0);
}

/*
 * The batch that just landed, again (in its commit's callback, e->cur):
 * its snapshot, with what blind keys held just before the txn.
 */
void
store_etcd_reopen(struct store *st)
{
	struct store_etcd	*e = E(st);

	etcd_evs_clear(&e->overlay, 0);
	e->mark = e->drange = 0;
	e->compact_to = 0;
	e->compact_begin = st->head.compact_rev;
	if (e->cur == NULL)
		e->cur = e->last;
}

void
store_etcd_rollback(struct store *st)
{
	struct store_etcd	*e = E(st);

	etcd_evs_clear(&e->overlay, 0);
	e->drange = 0;
	e->compact_to = 0;
	st->head.compact_rev = e->compact_begin;
	if (e->cur != NULL && !e->cur->landed)
		etcd_batch_free(e->cur);	/* its commit's otherwise */
	e->cur = NULL;
}

/* Compaction is etcd's own, of the whole cluster, at commit. */
int
store_etcd_compact(struct store *st, uint64_t rev, struct store_err *err)
{
	E(st)->compact_to = rev;
	return (0);
}
