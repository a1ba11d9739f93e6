/*
 * The etcd backend's state, shared by store_etcd.c (batches: one etcd txn
 * per write request), store_etcd_read.c (reads outside a batch, status),
 * store_etcd_ev.c (etcd's kvs and events as the backend holds them) and
 * store_etcd_watch.c (the watch stream that feeds the history cache and
 * opts.notify, and history older than the cache).
 *
 * Keys: a user key K lives in etcd at PREFIX "k/" K.  Each write's txn
 * compares the mod_revision of every key its request read with what was
 * read at store_begin (optimistic concurrency on those keys only), so
 * batches naming other keys are out together, and daemons sharing one
 * etcd serialize only on the keys they share.  PREFIX "s/" ID "/" N are
 * the slots of the daemon whose random id is ID: each txn out owns one,
 * compares its mod_revision and puts its token there, so a txn whose
 * answer was lost can be looked up, and fenced off (store_etcd_commit.c).
 * Both are outside PREFIX "k/": no client sees them (etcd_ev_from_kv).
 */
#ifndef METAD_STORE_ETCD_H
#define METAD_STORE_ETCD_H

#include "store/etcd/etcd_client.h"
#include "store/store_backend.h"
#include "util.h"

#define ETCD_PREFIX_DEFAULT	"metad/"
#define ETCD_PREFIX_MAX		256
#define ETCD_CACHE_EVENTS_MAX	65536
#define ETCD_CACHE_BYTES_MAX	(64u << 20)
#define ETCD_RECONNECT_MS	250
/* A revoke waits this long for the stream to count its deletes. */
#define ETCD_REVOKE_WAIT_MS	5000
/* Operations in one etcd txn (etcd's --max-txn-ops is 128 by default). */
#define ETCD_TXN_OPS_MAX	100
/* Batches out at once, each committing with a slot of its own. */
#define ETCD_SLOTS		64
/* Events one history read hands back, at most (whole revisions). */
#define ETCD_HISTORY_CHUNK	4096

/* A write buffered in the batch, or an event in the history cache. */
struct etcd_ev {
	uint64_t		 rev;
	uint32_t		 seq;
	int			 deleted;
	char			*key;		/* the user key */
	size_t			 key_len;
	unsigned char		*value;
	size_t			 value_len;
	uint64_t		 version;
	uint64_t		 create_rev;
	uint64_t		 mod_rev;
	uint64_t		 lease;		/* etcd's, 0: none */
	/* The key before (etcd's prev_kv), an enum store_prev. */
	int			 prev_state;
	unsigned char		*prev_value;
	size_t			 prev_value_len;
	uint64_t		 prev_version, prev_create_rev, prev_mod_rev;
	uint64_t		 prev_lease;
	/* A delete by its lease's end: an enum store_cause, and the lease. */
	int			 cause;
	uint64_t		 cause_lease;
};

/* What an event costs the cache, in bytes. */
#define ETCD_EV_BYTES(ev)	((ev)->key_len + (ev)->value_len + \
				    (ev)->prev_value_len + sizeof *(ev))

struct etcd_evs {
	struct etcd_ev		*v;
	size_t			 n, cap, head;	/* live: [head, n) */
	size_t			 bytes;
};

/* A key the batch read with its base (store_begin). */
struct etcd_snap {
	char			*key;
	size_t			 key_len;
	int			 found;
	int			 blind;		/* not read (store.h) */
	int			 unknown;	/* nor read back after */
	struct etcd_ev		 ev;
	/* An idem record's name, not a key (store_etcd_idem.c): */
	int			 idem;
	unsigned char		*rec;		/* its value */
	size_t			 rec_len;
	uint64_t		 rec_mod;
};

/* A batch out: its reads, then (committed) its txn's. */
struct etcd_batch {
	struct store_etcd	*e;
	LIST_ENTRY(etcd_batch)	 entry;		/* e->begins, while read */
	struct etcd_snap	*snap;
	size_t			 nsnap;
	size_t			 snap_next;	/* read so far */
	size_t			 snap_chunk;	/* being read */
	uint64_t		 read_rev;	/* the reads, at */
	uint64_t		 base_rev;
	/* The range it deletes (store_keys.rkey), read at begin: */
	int			 has_range, range_read;
	char			*rkey, *rend;	/* rend NULL: no end */
	size_t			 rkey_len, rend_len;
	int			 landed;	/* its commit's callback */
	store_done		 begun;
	void			*begun_arg;
};

/* A slot: its key's name (a number) and the mod_revision we know. */
struct etcd_slot {
	uint64_t		 name;
	uint64_t		 known;
	int			 busy;
};

struct etcd_replay;
struct etcd_commit;
struct etcd_lcall;
struct etcd_expiry;
struct etcd_idem_sweep;

/* Lease ends remembered (etcd_lease_ended()). */
#define ETCD_ENDS	256

struct store_etcd {
	struct store		*st;
	struct etcd_client	 client;
	char			 prefix[ETCD_PREFIX_MAX];	/* P "k/" */
	size_t			 prefix_len;
	char			 sentinel[ETCD_PREFIX_MAX];	/* P "rev": older metad's */
	char			 slotpfx[ETCD_PREFIX_MAX];	/* P "s/" ID "/" */
	char			*kbeg64, *kend64, *sent64;	/* base64 */
	char			*slots64, *slotsend64;	/* P "s/": all slots */
	char			*wbeg64, *wend64;	/* the stream's: P "k/" */
	/* The batch open (or, in its callback, the one that landed): */
	struct etcd_batch	*cur;
	struct etcd_batch	*last;		/* landed last */
	struct etcd_evs		 overlay;
	size_t			 mark;
	int			 marked;
	/* The overlay's [drange_from, drange_to): the batch's range delete. */
	int			 drange;
	size_t			 drange_from, drange_to;
	/* The open batch's idem record (store_etcd_idem.c), or NULL. */
	char			*idem_name;
	size_t			 idem_name_len;
	struct buf		 idem_val;
	int			 idem_marked;
	struct etcd_idem_sweep	*idem_sweep;	/* of expired records */
	uint64_t		 compact_to_mark, compact_rev_mark;
	uint64_t		 id;		/* this store's, in tokens */
	uint64_t		 commits;
	LIST_HEAD(, etcd_batch)	 begins;	/* reads out */
	LIST_HEAD(, etcd_commit) commits_out;
	struct etcd_slot	 slots[ETCD_SLOTS];
	uint64_t		 slot_names;	/* named so far */
	uint64_t		 compact_to;	/* at commit, or 0 */
	uint64_t		 compact_begin;	/* to restore */
	/* The stream and the history cache: */
	struct store_options	 opts;
	struct etcd_evs		 cache;		/* revs >= cache_from */
	uint64_t		 cache_from;
	uint64_t		 before_cache;	/* last metad rev below it */
	struct etcd_gstream	*wst;		/* the stream (etcd_grpc.h) */
	struct event		*wtimer;
	unsigned		 wep;
	int			 wcancelled;	/* by etcd: reopen it */
	unsigned		 wgen;		/* its token's (etcd_client.h) */
	struct etcd_renewal	 wrenew;	/* etcd refused that token */
	LIST_HEAD(, etcd_replay) replays;	/* history reads out */
	struct etcd_view	*view;		/* store_etcd_view.c */
	LIST_HEAD(, etcd_lcall)	 lcalls;	/* lease calls out */
	LIST_HEAD(, etcd_lcall)	 rwaits;	/* revokes done, not seen */
	struct etcd_expiry	*expiry;	/* store_etcd_expire.c */
	/* The last leases whose record the stream saw deleted, and at. */
	struct {
		uint64_t	 id, rev;
	}			 ends[ETCD_ENDS];
	unsigned		 ends_next;
};

void	etcd_evs_push(struct etcd_evs *, const struct etcd_ev *);
void	etcd_evs_clear(struct etcd_evs *, size_t keep_from);
void	etcd_ev_free(struct etcd_ev *);
/* Fill ev from a kv; -1 if it is not under the prefix. */
int	etcd_ev_of(struct store_etcd *, const struct etcd_pb_kv *, int deleted,
	    struct etcd_ev *);
/* The same from a gateway kv object. */
int	etcd_ev_from_kv(struct store_etcd *, const cJSON *, int deleted,
	    struct etcd_ev *);
/* A gateway kv object read as etcd_pb_kv (k, v: its bytes, decoded). */
struct etcd_jkv {
	struct etcd_pb_kv	 kv;
	unsigned char		*k, *v;
};
void	etcd_jkv_of(struct etcd_jkv *, const cJSON *);
void	etcd_jkv_free(struct etcd_jkv *);

/* Helpers of store_etcd.c, for its reads, commit and event stream. */
const struct etcd_ev *etcd_overlay_find(struct store_etcd *, const char *,
	    size_t);
uint64_t etcd_first_u64(const cJSON *, const char *);
/*
 * The body of a range that finds the newest write any metad made under the
 * prefix (every metad txn puts a slot): its mod_revision is the first kv's.
 * Older metads put the sentinel instead (etcd_load() reads both).
 */
void	etcd_probe_body(struct store_etcd *, struct buf *);
/* The commit (store_etcd_commit.c). */
void	store_etcd_commit(struct store *, uint64_t, store_done, void *);
/* At close: every commit out ends, unanswered by etcd. */
void	store_etcd_commits_end(struct store_etcd *);
void	etcd_batch_free(struct etcd_batch *);
char	*etcd_key64(struct store_etcd *, const char *, size_t);
void	 etcd_kv_of(const struct etcd_ev *, struct store_kv *, int);
/* The header revision of a reply (and the newest seen, st->seen_rev). */
uint64_t etcd_header_rev(struct store_etcd *, const cJSON *);
uint64_t etcd_rev_seen(struct store_etcd *, uint64_t rev);

/* Leases: etcd's (store_etcd_lease.c); at close, calls out end unanswered. */
void	store_etcd_leases_free(struct store_etcd *);
/* The stream passed more revisions: revokes waiting for theirs answer. */
void	etcd_lease_stream_moved(struct store_etcd *);
/*
 * etcd refused a txn for a lease it lacks: *err names the lease (id, the
 * first the txn names; other, another, or 0).
 */
void	etcd_lease_err_ids(uint64_t id, uint64_t other, struct store_err *);
void	store_etcd_read_leases(struct store *, store_leases_done, void *);
void	store_etcd_read_lease_keys(struct store *, uint64_t, const char *,
	    size_t, uint64_t, store_read_done, void *);
int	store_etcd_lease_attach(struct store *, const char *, size_t,
	    uint64_t, struct store_err *);
void	store_etcd_lease_grant(struct store *, uint64_t, int,
	    const struct store_lease_idem *, store_lease_done, void *);
/* The leases of the prefix known from their records (every daemon's). */
size_t	store_etcd_lease_count(struct store *);
void	store_etcd_lease_keepalive(struct store *, uint64_t,
	    store_lease_done, void *);
void	store_etcd_lease_get(struct store *, uint64_t, store_lease_done,
	    void *);
void	store_etcd_lease_revoke_now(struct store *, uint64_t, int,
	    const struct store_lease_idem *, store_revoke_done, void *);
/*
 * Lease calls with a token (store_etcd_lease_idem.c): its record read;
 * the lease records' deletes the stream saw, to find a revoke's rev
 * (0: not seen).
 */
void	store_etcd_lease_idem_get(struct store *, const void *, size_t,
	    store_idem_done, void *);
void	etcd_lease_ended(struct store_etcd *, uint64_t id, uint64_t rev);
uint64_t etcd_lease_end_rev(struct store_etcd *, uint64_t id);
/* The body of a range request for [key64, end64) at rev (0: current). */
void	 etcd_range_body(struct buf *, const char *, const char *, uint64_t,
	    uint64_t, int);
/* A blocking range: only while opening the store. */
int	 etcd_range(struct store_etcd *, const char *, const char *, uint64_t,
	    uint64_t, int, cJSON **, struct store_err *);
/* The kvs of a range reply, at most limit of them, into out (in order). */
void	 etcd_reply_kvs(struct store_etcd *, const cJSON *, uint64_t,
	    struct etcd_evs *, int *);
void	 etcd_evs_free(struct etcd_evs *);

/* A batch's mark, undo, reopen, rollback, compact (store_etcd_batch.c). */
int	store_etcd_mark(struct store *, struct store_err *);
int	store_etcd_undo(struct store *, struct store_err *);
void	store_etcd_reopen(struct store *);
void	store_etcd_rollback(struct store *);
int	store_etcd_compact(struct store *, uint64_t, struct store_err *);

/* Range deletes (store_etcd_range.c). */
void	etcd_batch_range_set(struct etcd_batch *, const struct store_keys *);
/* The read of the batch's range at begin; done: etcd_begin_end(). */
int	etcd_begin_range(struct etcd_batch *, struct store_err *);
void	etcd_begin_end(struct etcd_batch *, const struct store_err *);
int	store_etcd_del_range(struct store *, uint64_t, const char *, size_t,
	    const char *, size_t, uint64_t *, struct store_err *);
/* The overlay's i-th write: sent as the DeleteRange (first), or not. */
int	etcd_drange_first(const struct store_etcd *, size_t);
int	etcd_drange_skip(const struct store_etcd *, size_t);
void	etcd_pb_drange(struct buf *, struct store_etcd *,
	    const struct etcd_batch *);
void	etcd_pb_range_cmp(struct buf *, struct store_etcd *,
	    const struct etcd_batch *);

/* Reads (store_etcd_read.c). */
void	store_etcd_read_get(struct store *, const char *, size_t, uint64_t,
	    int, store_read_done, void *);
void	store_etcd_read_key_history(struct store *, const char *, size_t,
	    uint64_t, size_t, store_history_done, void *);
void	store_etcd_read_range(struct store *, const struct store_range *,
	    store_read_done, void *);
void	store_etcd_read_stats(struct store *, store_stats_done, void *);

/*
 * The view of the prefix (store_etcd_view.c): opened and filled with the
 * stream, kept current by it (apply each new event, then moved: st->rev
 * moved, or events were lost), closed with it.  While it is on, reads at
 * the current rev are answered from it: at once (serializable), or after
 * one probe for the reads of a loop turn (linearizable: etcd_lin_*, in
 * store_etcd_lin.c).
 */
int	etcd_view_open(struct store_etcd *, struct store_err *);
void	etcd_view_close(struct store_etcd *);
void	etcd_view_apply(struct store_etcd *, const struct etcd_ev *);
void	etcd_view_moved(struct store_etcd *, int lost);
int	etcd_view_on(struct store_etcd *);
void	etcd_view_get(struct store_etcd *, const char *, size_t,
	    store_read_done, void *);
void	etcd_view_range(struct store_etcd *, const struct store_range *,
	    store_read_done, void *);
void	etcd_lin_get(struct store_etcd *, const char *, size_t,
	    store_read_done, void *);
void	etcd_lin_range(struct store_etcd *, const struct store_range *,
	    store_read_done, void *);
void	etcd_view_stats(struct store_etcd *, struct store_stats *);
/* A current read that etcd answers, view or not (store_etcd_read.c). */
void	etcd_read_get_direct(struct store_etcd *, const char *, size_t,
	    uint64_t, store_read_done, void *);
void	etcd_read_range_direct(struct store_etcd *, const struct store_range *,
	    store_read_done, void *);

/*
 * Leases' ids: below 2^53 (JSON numbers), bit 52 set for a session's.
 * Each has its record, PREFIX "l/" ID, attached to it, whose value is
 * {"ttl_ms":N,"stamp":B} (store_etcd_lease.c).
 */
#define ETCD_LEASE_SESSION	(UINT64_C(1) << 52)
#define ETCD_LEASE_ID_MAX	((UINT64_C(1) << 53) - 1)
/*
 * Punctual expiry (store_etcd_expire.c): etcd looks for expired leases
 * every ETCD_LESSOR_CHECK_MS; a lease that etcd's TTL (whole seconds,
 * at least its minimum) would leave more than ETCD_EXPIRY_LATE_MS late,
 * within a margin, is stamped: timed by every daemon too.
 */
#define ETCD_LESSOR_CHECK_MS	500
#define ETCD_EXPIRY_MARGIN_MS	200
#define ETCD_EXPIRY_LATE_MS	1000

/* A lease of the prefix, known from its record. */
struct etcd_known {
	struct store_etcd	*e;
	uint64_t		 id;
	uint64_t		 ttl_ms;	/* 0: an older metad's record */
	int			 stamp;
	uint64_t		 seen_rev;	/* the record's newest put seen */
	uint64_t		 deadline;	/* stamped: monotonic ms */
	struct event		*timer;		/* stamped: due at deadline */
	int			 busy;		/* a check or revoke out */
	int			 gone;		/* forgotten while busy */
	unsigned		 gen;		/* seen by a reload */
	struct etcd_known	*hnext;
};

/* 1 if a lease of ttl_ms that etcd granted for etcd_ttl_s is stamped. */
int	 etcd_lease_stamped(uint64_t ttl_ms, uint64_t etcd_ttl_s);
/* A record's value; revoked: a client asked the lease's revoke. */
void	 etcd_lease_value(struct buf *, uint64_t ttl_ms, int stamp);
void	 etcd_lease_value_revoked(struct buf *, uint64_t ttl_ms, int stamp);
/* The id of a record's key (PREFIX "l/" ID), or 0. */
uint64_t etcd_record_id(struct store_etcd *, const unsigned char *, size_t);
/* 1 if a record's value says its lease's revoke was asked. */
int	 etcd_record_revoked(const unsigned char *, size_t);
/* Every record, read at st->rev (blocking: while opening). */
int	 etcd_expiry_open(struct store_etcd *, struct store_err *);
void	 etcd_expiry_close(struct store_etcd *);
/* A kv of the stream outside PREFIX "k/": a record's id (learnt), or 0. */
uint64_t etcd_expiry_of(struct store_etcd *, const struct etcd_pb_kv *,
	    int deleted);
/* The same from a gateway kv object. */
uint64_t etcd_expiry_kv(struct store_etcd *, const cJSON *, int deleted);
/* A record put at rev seen: known, and if stamped due ttl_ms from now. */
void	 etcd_expiry_learn(struct store_etcd *, uint64_t id, uint64_t ttl_ms,
	    int stamp, uint64_t rev);
/* Events were lost: every stamped lease due ttl_ms from now, records read. */
void	 etcd_expiry_reload(struct store_etcd *);
struct etcd_known *etcd_known_find(struct store_etcd *, uint64_t);
/* A stamped lease's time left by this daemon's clock. */
uint64_t etcd_known_remaining(const struct etcd_known *);

/*
 * Idempotent writes' records (store_etcd_idem.c): PREFIX "i/" NAME.  A
 * begin's read of one (kvs: its range's), and the key's base64; the open
 * batch's record dropped (a rollback, an undo past it).
 */
void	 etcd_idem_snap(struct etcd_snap *, const cJSON *kvs);
char	*etcd_idem_key64(struct store_etcd *, const char *, size_t);
void	 etcd_idem_key(struct store_etcd *, const char *, size_t,
	    struct buf *);
void	 etcd_idem_clear(struct store_etcd *);
/* A record's value (kind: 'p', 'f' or 'r', then rec), and its reading. */
void	 etcd_idem_value(struct buf *, char kind, const struct store_idem *);
int	 etcd_idem_parse(const unsigned char *, size_t, uint64_t mod,
	    struct store_idem *, struct store_err *);
int	 store_etcd_idem_get(struct store *, const void *, size_t,
	    struct store_idem *, struct store_err *);
int	 store_etcd_idem_put(struct store *, const void *, size_t,
	    const struct store_idem *, uint64_t, struct store_err *);
void	 store_etcd_idem_fix(struct store *, const void *, size_t,
	    const struct store_idem *, store_done, void *);
/* The sweep of expired records, on opts.base: started, then freed. */
void	 etcd_idem_open(struct store_etcd *);
void	 etcd_idem_close(struct store_etcd *);

/* Leases whose record a response deletes, at most (more: plain deletes). */
#define ETCD_WMSG_ENDED_MAX	64

/* What a watch response carries. */
struct etcd_wmsg {
	int		 created, canceled;
	uint64_t	 compact_rev;
	uint64_t	 last_rev;	/* of its events, 0 if none */
	size_t		 pushed;	/* events it added */
	/* The leases that ended: their record's delete. */
	struct {
		uint64_t	 rev, id;
		int		 revoked;
	}		 ended[ETCD_WMSG_ENDED_MAX];
	size_t		 nended;
};

/*
 * One watch response (w: etcd_pb_watch_read) of the stream (stream set) or
 * of a history replay into out (store_etcd_wmsg.c); -1: no header.
 */
int	etcd_wmsg_pb(struct store_etcd *, struct etcd_pb_watch *,
	    struct etcd_evs *, struct etcd_wmsg *, int stream);

/* The event stream and history (store_etcd_watch.c). */
int	store_etcd_watch_start(struct store_etcd *, struct store_err *);
void	store_etcd_watch_stop(struct store_etcd *);
void	store_etcd_watch_end(struct store_etcd *);
void	store_etcd_replays_free(struct store_etcd *);
void	store_etcd_read_history(struct store *, uint64_t, size_t,
	    store_history_done, void *);

#endif
