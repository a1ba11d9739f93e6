/*
 * One watch response of the etcd backend's stream or of a history replay
 * (store_etcd_watch.c), read into events: each under the user prefix with
 * its prev_kv, a lease's record to store_etcd_expire.c, and the deletes a
 * lease's end made marked so (their cause, metad-protocol(7) WATCHES).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store/etcd/store_etcd.h"

/*
 * One event of a watch response: under the user prefix to out; else, on
 * the stream (stream set), a lease record to store_etcd_expire.c.
 */
static void
etcd_wmsg_ev(struct store_etcd *e, const struct etcd_pb_kv *kv, int deleted,
    const struct etcd_pb_watch *w, struct etcd_evs *out, struct etcd_wmsg *m,
    uint32_t *seq, int stream)
{
	struct etcd_ev	 ev;
	uint64_t	 id;

	if (kv->mod_rev > m->last_rev) {
		m->last_rev = kv->mod_rev;
		*seq = 0;
	}
	if (etcd_ev_of(e, kv, deleted, &ev) != 0) {
		/* A slot, a lease's record, the sentinel */
		if (stream)
			(void)etcd_expiry_of(e, kv, deleted);
		if (deleted && m->nended < ETCD_WMSG_ENDED_MAX &&
		    (id = etcd_record_id(e, kv->key, kv->key_len)) != 0) {
			m->ended[m->nended].rev = kv->mod_rev;
			m->ended[m->nended].id = id;
			m->ended[m->nended++].revoked = w->has_prev &&
			    etcd_record_revoked(w->prev.value,
			    w->prev.value_len);
		}
		return;
	}
	ev.seq = (*seq)++;
	if (w->has_prev) {
		ev.prev_state = STORE_PREV_KV;
		ev.prev_value = (unsigned char *)xmemdup(w->prev.value,
		    w->prev.value_len);
		ev.prev_value_len = w->prev.value_len;
		ev.prev_version = w->prev.version;
		ev.prev_create_rev = w->prev.create_rev;
		ev.prev_mod_rev = w->prev.mod_rev;
		ev.prev_lease = w->prev.lease;
	} else if (!deleted && kv->version == 1)
		ev.prev_state = STORE_PREV_NONE;
	etcd_evs_push(out, &ev);
	m->pushed++;
}

/*
 * etcd deletes a lease's keys and its record at one revision, when it
 * expires or is revoked: the deletes at that revision of keys that were
 * the lease's (their prev_kv says) are its end's, revoked if the record
 * said a client asked (store_etcd_lease.c), else expired.
 */
static void
etcd_wmsg_ended(struct etcd_evs *out, const struct etcd_wmsg *m)
{
	struct etcd_ev	*ev;
	size_t		 i, j;

	for (i = out->n - m->pushed; m->nended > 0 && i < out->n; i++) {
		ev = &out->v[i];
		if (!ev->deleted || ev->prev_state != STORE_PREV_KV ||
		    ev->prev_lease == 0)
			continue;
		for (j = 0; j < m->nended; j++) {
			if (m->ended[j].rev == ev->rev &&
			    m->ended[j].id == ev->prev_lease) {
				ev->cause = m->ended[j].revoked ?
				    STORE_CAUSE_REVOKED : STORE_CAUSE_EXPIRED;
				ev->cause_lease = ev->prev_lease;
			}
		}
	}
}

/*
 * One watch response (w: etcd_pb_watch_read) of the stream (stream set) or
 * of a history replay; -1: an error (no header).
 */
int
etcd_wmsg_pb(struct store_etcd *e, struct etcd_pb_watch *w,
    struct etcd_evs *out, struct etcd_wmsg *m, int stream)
{
	struct etcd_pb_kv	 kv;
	uint32_t		 seq = 0;
	int			 deleted;

	memset(m, 0, sizeof *m);
	m->created = w->created;
	m->canceled = w->canceled;
	m->compact_rev = w->compact_rev;
	while (etcd_pb_watch_next(w, &deleted, &kv) == 1)
		etcd_wmsg_ev(e, &kv, deleted, w, out, m, &seq, stream);
	etcd_wmsg_ended(out, m);
	return (!w->header && !m->canceled ? -1 : 0);
}
