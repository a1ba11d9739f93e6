/*
 * The etcd view's state, shared by store_etcd_view.c (the keys in a skip
 * list, filled and kept by the stream) and store_etcd_lin.c (linearizable
 * reads: probes).  Nothing else includes it: the backend uses the calls
 * of store_etcd.h.
 */
#ifndef METAD_STORE_ETCD_VIEW_H
#define METAD_STORE_ETCD_VIEW_H

#include <sys/queue.h>

#include <event2/util.h>

#include "store/skiplist.h"
#include "store/etcd/store_etcd.h"

struct view_node {
	char			*key;		/* after next[] */
	size_t			 key_len;
	unsigned char		*value;
	size_t			 value_len;
	uint64_t		 version, create_rev, mod_rev;
	uint64_t		 lease;
	struct view_node	*hnext;		/* in its hash bucket */
	uint32_t		 hash;
	int			 level;
	struct view_node	*next[];
};

SL_HEAD(view_keys, view_node);

/* A linearizable read waiting for its probe, then for the view. */
struct view_read {
	int			 is_range;
	char			*key;		/* get; range: prefix */
	size_t			 key_len;
	char			*after;
	size_t			 after_len;
	char			*start, *end;	/* range: its bounds' copies */
	struct store_range	 rg;
	store_read_done		 done;
	void			*arg;
	TAILQ_ENTRY(view_read)	 entry;
};

TAILQ_HEAD(view_reads, view_read);

struct view_probe {
	struct etcd_view	*v;
	struct view_reads	 reads;
	uint64_t		 need;		/* answered at view rev >= */
	int			 back;		/* its answer came */
	struct event		*late;		/* VIEW_LATE_MS after */
	TAILQ_ENTRY(view_probe)	 entry;
};

struct etcd_view {
	struct store_etcd	*e;
	struct view_keys	 keys;
	/* The same nodes by key: a put of a key there needs no seek. */
	struct view_node	**hb;		/* hmask + 1 buckets */
	size_t			 hmask;
	size_t			 bytes, max_bytes;
	uint64_t		 nkeys;
	uint64_t		 rev;		/* applied up to */
	int			 on;
	char			 why_off[96];
	struct view_reads	 queued;	/* for the next probe */
	struct event		*kick;
	TAILQ_HEAD(, view_probe) probes;
};

/* store_etcd_lin.c */
void	etcd_lin_kick(evutil_socket_t, short, void *);
void	etcd_lin_progress(struct etcd_view *);
void	etcd_lin_close(struct etcd_view *);

#endif
