#include <sys/queue.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "enc.h"
#include "log.h"
#include "metad.h"
#include "ops/ops.h"
#include "core/reply.h"
#include "ops/snapshot.h"
#include "core/watch.h"

struct snapshot {
	struct snapshots	*set;
	uint64_t		 id;
	char			*path;		/* until written */
	int			 fd;		/* once written */
	uint64_t		 rev;
	uint64_t		 bytes;
	struct store_snapshot	*taking;
	struct req		*req;		/* to answer when written */
	const struct conn	*owner;		/* who may read it; NULL: gone */
	char			 who[WATCH_PEER_WHO];	/* its peer */
	struct event		*idle_ev;
	TAILQ_ENTRY(snapshot)	 entry;
};

struct snapshots {
	struct metad			*md;
	TAILQ_HEAD(, snapshot)		 list;
	unsigned			 n;
	uint64_t			 next_id;
	char				*dir;	/* ours, 0700: made at first */
};

struct snapshots *
snapshots_create(struct metad *md)
{
	struct snapshots	*set;

	set = xcalloc(1, sizeof *set);
	set->md = md;
	TAILQ_INIT(&set->list);
	return (set);
}

static void
snapshot_free(struct snapshot *sn)
{
	struct snapshots	*set = sn->set;

	TAILQ_REMOVE(&set->list, sn, entry);
	set->n--;
	if (sn->taking != NULL)
		store_snapshot_cancel(sn->taking);
	if (sn->path != NULL)
		unlink(sn->path);
	if (sn->fd != -1)
		close(sn->fd);
	event_free(sn->idle_ev);
	free(sn->path);
	free(sn);
}

void
snapshots_free(struct snapshots *set)
{
	struct snapshot	*sn;

	if (set == NULL)
		return;
	while ((sn = TAILQ_FIRST(&set->list)) != NULL) {
		if (sn->req != NULL) {
			reply_error(sn->req, PROTO_UNAVAILABLE, "metad is "
			    "stopping: the snapshot was not finished");
			req_done(sn->req);
		}
		snapshot_free(sn);
	}
	if (set->dir != NULL && rmdir(set->dir) == -1)
		log_warn("snapshots: removing %s", set->dir);
	free(set->dir);
	free(set);
}

static void
snapshot_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct snapshot	*sn = arg;

	log_info("snapshot %" PRIu64 ": unread for %d s, dropped", sn->id,
	    SNAPSHOT_IDLE_MS / 1000);
	snapshot_free(sn);
}

static void
snapshot_touch(struct snapshot *sn)
{
	struct timeval	 tv = { SNAPSHOT_IDLE_MS / 1000,
	    (SNAPSHOT_IDLE_MS % 1000) * 1000 };

	evtimer_add(sn->idle_ev, &tv);
}

/* Written: keep it open, unlinked, and tell the client. */
static int
snapshot_keep(struct snapshot *sn, struct store_err *err)
{
	struct stat	 sb;

	if ((sn->fd = open(sn->path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(sn->fd, &sb) == -1)
		return (store_err_set(err, STORE_ERR_IO, "snapshot %s: %s",
		    sn->path, strerror(errno)));
	unlink(sn->path);
	free(sn->path);
	sn->path = NULL;
	sn->bytes = (uint64_t)sb.st_size;
	return (0);
}

static void
snapshot_taken(void *arg, uint64_t rev, const struct store_err *se)
{
	struct snapshot		*sn = arg;
	struct req		*r = sn->req;
	struct store_err	 err;
	struct jw		 w;

	sn->taking = NULL;
	sn->req = NULL;
	if (se == NULL && snapshot_keep(sn, &err) != 0)
		se = &err;
	if (se != NULL) {
		log_warnx("snapshot %" PRIu64 ": %s", sn->id, se->msg);
		reply_store_error(r, se);
		snapshot_free(sn);
	} else {
		sn->rev = rev;
		log_info("snapshot %" PRIu64 ": rev %" PRIu64 ", %" PRIu64
		    " bytes", sn->id, rev, sn->bytes);
		reply_begin(r, &w);
		jw_name(&w, "snapshot");
		jw_u64(&w, sn->id);
		jw_name(&w, "rev");
		jw_u64(&w, rev);
		jw_name(&w, "bytes");
		jw_u64(&w, sn->bytes);
		reply_end(r, &w);
		if (sn->owner == NULL)
			snapshot_free(sn);	/* its connection is gone */
		else
			snapshot_touch(sn);
	}
	req_done(r);
}

/*
 * Where a snapshot is written before it is unlinked: a file made O_EXCL
 * in a directory of the daemon's own, made 0700 by mkdtemp(3) under
 * $TMPDIR at the first snapshot.  Nobody else can create a file in it, so
 * no other local user can plant the -wal or -shm file that SQLite opens
 * beside a database in WAL mode (whose frames would then be read into the
 * snapshot), nor swap the snapshot itself.
 */
static char *
snapshot_tmp_path(struct snapshots *set, char *why, size_t len)
{
	const char	*tmp = getenv("TMPDIR");
	char		*path;
	int		 fd;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	if (set->dir == NULL) {
		xasprintf(&set->dir, "%s/metad-snapshots.XXXXXX", tmp);
		if (mkdtemp(set->dir) == NULL) {
			snprintf(why, len, "cannot create a directory for "
			    "snapshots in %s: %s", tmp, strerror(errno));
			free(set->dir);
			set->dir = NULL;
			return (NULL);
		}
	}
	xasprintf(&path, "%s/snapshot.XXXXXX", set->dir);
	if ((fd = mkostemp(path, O_CLOEXEC)) == -1) {
		snprintf(why, len, "cannot create a snapshot file in %s: %s",
		    set->dir, strerror(errno));
		free(path);
		return (NULL);
	}
	close(fd);
	return (path);
}

/*
 * A peer other than root and metad's own uid holds SNAPSHOTS_PER_PEER at
 * most (taken or being read), so it cannot hold every one of the
 * daemon's SNAPSHOTS_MAX for SNAPSHOT_IDLE_MS.
 */
static int
snapshot_peer_full(struct snapshots *set, const struct req *r, char *why,
    size_t len)
{
	const struct snapshot	*sn;
	unsigned		 n = 0;

	/* Root and metad's own uid are bound by no peer's limit. */
	if (r->peer == NULL || r->peer->peer_watches == NULL)
		return (0);
	TAILQ_FOREACH(sn, &set->list, entry)
		n += strcmp(sn->who, r->peer->who) == 0;
	if (n < SNAPSHOTS_PER_PEER)
		return (0);
	snprintf(why, len, "%s has %u snapshots being taken or read, "
	    "the limit is %d a peer", r->peer->who, n, SNAPSHOTS_PER_PEER);
	return (1);
}

void
snapshots_conn_closed(struct snapshots *set, const struct conn *c)
{
	struct snapshot	*sn, *next;

	if (set == NULL)
		return;
	for (sn = TAILQ_FIRST(&set->list); sn != NULL; sn = next) {
		next = TAILQ_NEXT(sn, entry);
		if (sn->owner != c)
			continue;
		sn->owner = NULL;	/* nobody may read it now */
		if (sn->taking == NULL)
			snapshot_free(sn);	/* else once it is taken */
	}
}

void
snapshot_op_snapshot(struct req *r)
{
	struct snapshots	*set = r->md->snapshots;
	struct snapshot		*sn;
	struct store_err	 err;
	char			 why[PROTO_MSG_MAX], *path;

	if (set->n >= SNAPSHOTS_MAX) {
		snprintf(why, sizeof why, "%u snapshots are being taken or "
		    "read already (the limit is %d)", set->n, SNAPSHOTS_MAX);
		reply_error(r, PROTO_UNAVAILABLE, why);
		req_done(r);
		return;
	}
	if (snapshot_peer_full(set, r, why, sizeof why)) {
		reply_error(r, PROTO_RESOURCE_EXHAUSTED, why);
		req_done(r);
		return;
	}
	if ((path = snapshot_tmp_path(set, why, sizeof why)) == NULL) {
		reply_error(r, PROTO_INTERNAL, why);
		req_done(r);
		return;
	}
	sn = xcalloc(1, sizeof *sn);
	sn->set = set;
	sn->id = ++set->next_id;
	sn->path = path;
	sn->fd = -1;
	sn->req = r;
	sn->owner = r->conn;
	if (r->peer != NULL)
		memcpy(sn->who, r->peer->who, sizeof sn->who);
	if ((sn->idle_ev = evtimer_new(r->md->base, snapshot_idle_cb,
	    sn)) == NULL)
		fatalx("evtimer_new");
	TAILQ_INSERT_TAIL(&set->list, sn, entry);
	set->n++;
	sn->taking = store_snapshot(r->md->store, path, snapshot_taken, sn,
	    &err);
	if (sn->taking == NULL) {
		sn->req = NULL;
		snapshot_free(sn);
		reply_store_error(r, &err);
		req_done(r);
	}
}

static struct snapshot *
snapshot_find(struct snapshots *set, uint64_t id)
{
	struct snapshot	*sn;

	TAILQ_FOREACH(sn, &set->list, entry) {
		if (sn->id == id && sn->fd != -1)
			return (sn);
	}
	return (NULL);
}

static int
snapshot_read_args(struct req *r, struct snapshot **sn, uint64_t *off,
    uint64_t *limit, struct proto_err *e)
{
	uint64_t	 id;

	*limit = SNAPSHOT_CHUNK_MAX;
	if (proto_get_u64(r->json, "snapshot", 1, &id, e) != 1 ||
	    proto_get_u64(r->json, "offset", 1, off, e) != 1 ||
	    proto_get_u64(r->json, "limit", 0, limit, e) == -1)
		return (-1);
	if (*limit == 0 || *limit > SNAPSHOT_CHUNK_MAX)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"limit\" must "
		    "be 1 to %d", SNAPSHOT_CHUNK_MAX));
	/* Another connection's is no more there than a dropped one. */
	if ((*sn = snapshot_find(r->md->snapshots, id)) == NULL ||
	    (*sn)->owner == NULL || (*sn)->owner != r->conn)
		return (proto_fail(e, PROTO_NOT_FOUND, "no snapshot %" PRIu64
		    " (a snapshot is dropped once read to its end, or unread "
		    "for %d s)", id, SNAPSHOT_IDLE_MS / 1000));
	if (*off > (*sn)->bytes)
		return (proto_fail(e, PROTO_BAD_REQUEST, "field \"offset\" is "
		    "past the snapshot's %" PRIu64 " bytes", (*sn)->bytes));
	return (0);
}

void
snapshot_op_read(struct req *r)
{
	struct proto_err	 e;
	struct snapshot		*sn = NULL;
	uint64_t		 off = 0, limit = 0;
	unsigned char		*data;
	char			*b64;
	ssize_t			 n;
	struct jw		 w;
	int			 eof;

	if (snapshot_read_args(r, &sn, &off, &limit, &e) != 0) {
		reply_error(r, e.code, e.msg);
		req_done(r);
		return;
	}
	if (limit > sn->bytes - off)
		limit = sn->bytes - off;
	data = xmalloc(limit + 1);
	n = pread(sn->fd, data, limit, (off_t)off);
	if (n != (ssize_t)limit) {
		snprintf(e.msg, sizeof e.msg, "reading snapshot %" PRIu64
		    ": %s", sn->id, n == -1 ? strerror(errno) : "short read");
		reply_error(r, PROTO_INTERNAL, e.msg);
		free(data);
		req_done(r);
		return;
	}
	/* Base64 needs no escaping: the literal is written as it is. */
	b64 = xmalloc(b64_encoded_len(limit) + 3);
	b64[0] = '"';
	b64_encode(data, limit, b64 + 1);
	b64[b64_encoded_len(limit) + 1] = '"';
	eof = off + limit == sn->bytes;
	reply_begin(r, &w);
	jw_name(&w, "data_b64");
	jw_raw(&w, b64, b64_encoded_len(limit) + 2);
	jw_name(&w, "eof");
	jw_bool(&w, eof);
	reply_end(r, &w);
	free(b64);
	free(data);
	if (eof)
		snapshot_free(sn);
	else
		snapshot_touch(sn);
	req_done(r);
}

const struct op snapshot_op_snapshot_entry = {
	.name = "snapshot",
	.run = snapshot_op_snapshot,
};

const struct op snapshot_op_read_entry = {
	.name = "snapshot_read",
	.fields = { "snapshot", "offset", "limit" },
	.run = snapshot_op_read,
};
