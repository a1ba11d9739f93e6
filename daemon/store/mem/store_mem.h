/*
 * The memory backend's state, shared by store_mem.c (the skip list,
 * batches) and store_mem_rev.c (reads at a revision, one key's history,
 * and what compaction keeps for them).
 *
 * The history hist[hist_first, hist_len) is in (rev, seq) order:
 * [hist_first, hist_head) were compacted by the open batch (trimmed at
 * commit), [hist_head, hist_len) are the history; [0, hist_first) were
 * trimmed (moved out or freed; the array drops them when they outnumber
 * the rest).  What reads at a revision need of the events below
 * hist_first, each key's last one if it is a put, is in the hash table
 * kept (by key, linear probing), so that a trim costs O(1) per event it
 * drops.
 */
#ifndef METAD_STORE_MEM_H
#define METAD_STORE_MEM_H

#include <sys/queue.h>

#include <stddef.h>
#include <stdint.h>

#include "store/skiplist.h"
#include "store/store_backend.h"

struct store_mem_node {
	unsigned char		*value;
	size_t			 value_len;
	uint64_t		 version;
	uint64_t		 create_rev;
	uint64_t		 mod_rev;
	uint64_t		 lease;		/* attached to, 0: none */
	char			*key;		/* after next[], NUL ended */
	size_t			 key_len;
	int			 level;
	struct store_mem_node	*next[];
};

SL_HEAD(store_mem_keys, store_mem_node);
SL_GENERATE(store_mem_keys, store_mem_node)

struct store_mem_event {
	uint64_t		 rev;
	uint32_t		 seq;
	enum store_event_type	 type;
	char			*key;		/* key, NUL, value, NUL */
	size_t			 key_len;
	unsigned char		*value;
	size_t			 value_len;
	uint64_t		 version;
	uint64_t		 create_rev;
	uint64_t		 lease;		/* a put's key's, 0: none */
};

/* A slot of the kept table: ev.key NULL when empty. */
struct store_mem_kept {
	uint64_t		 hash;
	struct store_mem_event	 ev;
};

enum store_mem_undo_type {
	MEM_UNDO_CREATE,	/* node was inserted: unlink and free it */
	MEM_UNDO_UPDATE,	/* node's value was replaced: restore old */
	MEM_UNDO_DELETE,	/* node was unlinked: link it back */
	MEM_UNDO_LEASE,		/* lease records: put lease back as it was */
	MEM_UNDO_IDEM		/* an idem record was put: take it away */
};

struct store_mem_undo {
	enum store_mem_undo_type	 type;
	struct store_mem_node		*node;
	unsigned char			*old_value;
	size_t				 old_value_len;
	uint64_t			 old_version;
	uint64_t			 old_mod_rev;
	uint64_t			 old_lease;
	/* MEM_UNDO_LEASE: lease.id's record was lease (ttl_ms 0: none). */
	struct store_lease		 lease;
	struct store_mem_idem		*idem;	/* MEM_UNDO_IDEM */
};

struct store_mem_idem;

struct store_mem_snap {
	size_t		 undo_len;
	size_t		 hist_len;
	size_t		 hist_head;
	uint64_t	 nkeys;
	uint64_t	 bytes;
	uint64_t	 compact_rev;
};

struct store_mem {
	struct store_mem_keys	 keys;
	uint64_t		 nkeys;
	uint64_t		 bytes;		/* keys, values and events */

	struct store_mem_event	*hist;
	size_t			 hist_len;
	size_t			 hist_head;	/* first event >= compact_rev */
	size_t			 hist_first;	/* first event not trimmed */
	size_t			 hist_cap;
	struct store_mem_kept	*kept;		/* cap a power of 2, or 0 */
	size_t			 nkept;
	size_t			 kept_cap;

	struct store_mem_undo	*undo;
	size_t			 undo_len;
	size_t			 undo_cap;
	struct store_mem_snap	 begin;
	struct store_mem_snap	 mark;
	int			 marked;

	/* Lease records (store_mem_lease.c), unordered. */
	struct store_lease	*leases;
	size_t			 nleases, leases_cap;

	/* Idempotent writes' records (store_mem_idem.c). */
	struct store_mem_idem	**idem_tab;
	size_t			 idem_cap, idem_n;
	TAILQ_HEAD(, store_mem_idem) idem_queue;	/* by expiry */
};

struct store_mem_undo *store_mem_undo_add(struct store_mem *,
	    enum store_mem_undo_type, struct store_mem_node *);
int	store_mem_del(struct store *, uint64_t, uint32_t, const char *, size_t,
	    int *, struct store_err *);
/* Leases (store_mem_lease.c). */
void	store_mem_lease_undo(struct store_mem *, const struct store_lease *);
void	store_mem_read_leases(struct store *, store_leases_done, void *);
void	store_mem_read_lease_keys(struct store *, uint64_t, const char *,
	    size_t, uint64_t, store_read_done, void *);
int	store_mem_lease_put(struct store *, const struct store_lease *,
	    struct store_err *);
int	store_mem_lease_attach(struct store *, const char *, size_t, uint64_t,
	    struct store_err *);
int	store_mem_lease_revoke(struct store *, uint64_t, uint64_t, uint64_t *,
	    struct store_err *);
/* Idempotent writes' records (store_mem_idem.c). */
int	store_mem_idem_get(struct store *, const void *, size_t,
	    struct store_idem *, struct store_err *);
int	store_mem_idem_put(struct store *, const void *, size_t,
	    const struct store_idem *, uint64_t, struct store_err *);
void	store_mem_idem_undo(struct store_mem *, struct store_mem_idem *);
void	store_mem_idem_free(struct store_mem *);
/* At commit: free the events compaction dropped, keep what reads need. */
void	store_mem_hist_trim(struct store_mem *);
void	store_mem_hist_free(struct store_mem *);
int	store_mem_get_at(struct store *, const char *, size_t, uint64_t,
	    store_kv_cb, void *, struct store_err *);
long	store_mem_range_at(struct store *, const struct store_range *,
	    store_kv_cb, void *, int *, struct store_err *);
int	store_mem_key_history(struct store *, const char *, size_t, uint64_t,
	    store_event_cb, void *, struct store_err *);

#endif
