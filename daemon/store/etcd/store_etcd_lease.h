/*
 * The etcd backend's lease calls, shared by store_etcd_lease.c (grant,
 * keepalive, info), store_etcd_lease_revoke.c (revoke) and
 * store_etcd_lease_ls.c (listing leases and their keys).
 */
#ifndef METAD_STORE_ETCD_LEASE_H
#define METAD_STORE_ETCD_LEASE_H

#include "store/etcd/store_etcd.h"

/* read_leases: timetolive calls out at once. */
#define ETCD_LS_WINDOW	32

#define E(st)	((struct store_etcd *)(st)->impl)

/* One lease call out. */
struct etcd_lcall {
	LIST_ENTRY(etcd_lcall)	 entry;		/* e->lcalls */
	struct store		*st;
	uint64_t		 id, ttl_ms;
	int			 session;
	int			 tries;
	store_lease_done	 done;
	store_revoke_done	 rdone;
	store_leases_done	 ldone;
	store_read_done		 kdone;
	void			*arg;
	/* revoke: keys counted first; asked: a client's (noted first) */
	uint64_t		 nkeys;
	int			 asked;
	/* read_leases: ids to ask, records so far */
	uint64_t		*ids;
	size_t			 nids, next;
	struct store_lease	*v;
	size_t			 nv;
	int			 marker;	/* found: its key too */
	int			 stamp;		/* grant, keepalive: stamped */
	struct store_lease_state ls;		/* keepalive: the answer */
	size_t			 out;		/* read_leases: calls out */
	struct store_err	 lerr;		/* read_leases: failed */
	int			 failed;
	void			*subs;		/* read_leases: per call */
	/* revoke: done at rrev, waiting in e->rwaits for the stream */
	uint64_t		 rrev;
	LIST_ENTRY(etcd_lcall)	 wentry;
	struct event		*rtimer;	/* the wait's bound */
	/* read_lease_keys */
	char			*after;
	size_t			 after_len;
	uint64_t		 limit;
	/* grant, revoke: its token (store_etcd_lease_idem.c), or NULL */
	char			*itok;
	size_t			 ilen;
	uint64_t		 imod, iexp;
	int			 ipending;
	int			 igone;		/* waits for the stream */
	store_lease_answer	 ianswer;
	struct buf		 isent;		/* the record's value sent */
	int			 ofound;	/* the revoke's outcome */
	uint64_t		 orev, on;
};

struct etcd_lcall *etcd_lcall_new(struct store *, uint64_t id, void *arg);
void	etcd_lcall_free(struct etcd_lcall *);
/* The call of path for c (once: etcd_call_once), cb its answer. */
void	etcd_lcall_send(struct etcd_lcall *, const char *path, int once,
	    etcd_call_cb);
/* A lease_state from a gateway answer's object o, its TTL field ttl. */
void	etcd_lease_state(uint64_t id, const cJSON *o, const char *ttl,
	    struct store_lease_state *);
/* The record's key, PREFIX "l/" ID, and its base64. */
void	 etcd_lease_marker(struct store_etcd *, uint64_t id, struct buf *);
char	*etcd_lease_marker64(struct store_etcd *, uint64_t id);
/* The record put (ttl_ms, stamp, revoked), cb its answer. */
void	etcd_lease_record_put(struct etcd_lcall *, uint64_t ttl_ms, int stamp,
	    int revoked, etcd_call_cb);
/* 1 if a timetolive answer's keys hold the record. */
int	etcd_lease_marked(struct store_etcd *, uint64_t id, const cJSON *);
/* ls as metad has it (the ttl_ms granted, a stamped one's time left). */
void	etcd_state_known(struct store_etcd *, struct store_lease_state *);
/* A timetolive answer's keys under the prefix, sorted: *n kvs. */
struct store_kv *etcd_lease_keys(struct store_etcd *, uint64_t lease,
	    const cJSON *, size_t *n);
void	etcd_lease_keys_free(struct store_kv *, size_t);
/* The grant landed (its record put at rev): answered, c freed. */
void	etcd_grant_done(struct etcd_lcall *, uint64_t rev);
/* The revoke sent (its record noted); its deletes counted at rev. */
void	etcd_revoke_send(struct etcd_lcall *);
/* c waits in e->rwaits for the stream to pass rev (bounded). */
void	etcd_revoke_park(struct etcd_lcall *, uint64_t rev);
uint64_t etcd_revoke_count(struct store_etcd *, uint64_t rev,
	    uint64_t listed);

/*
 * A call's token (store_etcd_lease_idem.c): taken from idem (NULL: none);
 * a grant's record put with the lease's; a revoke noted with its record
 * pending, then finished with its outcome (c freed), or, the lease gone
 * (as of seen_rev), finished from the stream's note of its end.
 */
void	etcd_lidem_take(struct etcd_lcall *, const struct store_lease_idem *);
void	etcd_lidem_grant(struct etcd_lcall *);
void	etcd_lidem_note(struct etcd_lcall *, uint64_t ttl_ms, int stamp);
void	etcd_lidem_finish(struct etcd_lcall *, int found, uint64_t rev,
	    uint64_t n);
void	etcd_lidem_gone(struct etcd_lcall *, uint64_t seen_rev);

#endif
