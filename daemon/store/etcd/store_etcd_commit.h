/*
 * A commit of the etcd backend, shared by store_etcd_commit.c (its course:
 * send, landed, lost, resolved) and store_etcd_txn.c (the txns' bodies).
 */
#ifndef METAD_STORE_ETCD_COMMIT_H
#define METAD_STORE_ETCD_COMMIT_H

#include "store/etcd/store_etcd.h"

enum etcd_commit_step {
	STEP_TXN,		/* the txn is out */
	STEP_RESOLVE,		/* its answer was lost: did it land? */
	STEP_BLIND,		/* it landed: what blind keys held */
	STEP_COMPACT		/* then the compaction it asked for */
};

struct etcd_commit {
	struct store		*st;
	LIST_ENTRY(etcd_commit)	 entry;		/* e->commits_out */
	store_done		 done;
	void			*arg;
	struct etcd_batch	*b;		/* its snapshot */
	struct buf		 body;		/* the txn, in protobuf */
	uint64_t		 lease, lease_other;	/* it names */
	char			 token[64];
	int			 slot;		/* -1: none */
	uint64_t		 known;		/* the slot's, at send */
	enum etcd_commit_step	 step;
	unsigned		 tries;
	struct event		*pause;
	uint64_t		 compact_to;	/* after the txn, or 0 */
	uint64_t		 planned;	/* the batch's last rev */
	uint64_t		 compact_begin;	/* to restore on failure */
	uint64_t		 landed;	/* the txn's revision */
	/* Its idem record (store_etcd_idem.c): key, value, compare. */
	int			 idem;
	struct buf		 idem_key, idem_val;
	uint64_t		 idem_mod;
};

/* A slot's key, at most. */
#define ETCD_SLOT_KEY_MAX	(ETCD_PREFIX_MAX + 24)
/*
 * The batch's txn; the resolve; the read of its blind keys at landed: in
 * protobuf, TxnRequests.
 */
void	 etcd_txn_body(struct etcd_commit *, struct buf *);
void	 etcd_resolve_body(struct etcd_commit *, struct buf *);
void	 etcd_blind_body(struct etcd_commit *, struct buf *);
/*
 * Whether the slot a failed txn read holds pre followed by token; *mod
 * its mod_revision (0: absent).
 */
int	 etcd_slot_is(const struct etcd_pb_txn *, const char *token,
	    const char *pre, uint64_t *mod);

/* A compare of key's (len bytes) mod_revision with rev (store_etcd_txn.c). */
void	 etcd_pb_cmp_mod(struct buf *, const char *, size_t, uint64_t);
/* A success op putting value at key, with lease (0: none). */
void	 etcd_pb_put_op(struct buf *, const void *, size_t, const void *,
	    size_t, uint64_t lease);
/* The commit takes the open batch's idem record (store_etcd_idem.c). */
void	 etcd_idem_take(struct store_etcd *, struct etcd_commit *);

#endif
