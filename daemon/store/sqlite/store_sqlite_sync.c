/*
 * The SQLite backend's fsync off the loop (--sync full, in the daemon).
 *
 * A batch COMMITs at synchronous = NORMAL: SQLite writes its WAL frames
 * and returns without an fsync.  The batch is then "out": its writes wait
 * in an sq_out, seen by the batches that begin after it (they build on
 * it: the store is ordered, store.h) and by nothing else; a thread of
 * ours fdatasyncs the WAL (its own descriptor of the same file) for every
 * batch committed before the call began, and tells the loop through an
 * eventfd.  The loop then lands the batches it covered, oldest first:
 * their writes join the dirty map, and store_local_landed() hands out
 * their events and answers them.  Meanwhile the loop goes on reading,
 * applying and committing the next batches, so the fsync of one overlaps
 * the work of the next instead of stopping the loop.
 *
 * Durability is SQLite's WAL's own: a commit's frames are appended after
 * every earlier one's, and a crash keeps a prefix of the commits (the
 * frames' checksums); the prefix holds every commit whose frames were
 * written before an fdatasync that returned, so every batch answered.
 * Reads see only what landed (the dirty map, kv, history up to the
 * store's rev): what a crash could still take is shown to nobody.
 * A failed fdatasync leaves unknown what is on disk, so the daemon stops
 * rather than answer for it; opening the file again recovers the prefix.
 */
#include <sys/eventfd.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "store/store_local.h"
#include "store/sqlite/store_sqlite.h"
#include "util.h"

/*
 * A batch of at most this many events with nothing out, after an fsync
 * that covered no more, is fsynced on the loop: with so few clients every
 * one of them waits for that fsync anyway, and the thread's two wake-ups
 * would only add to their wait (measured: BENCHMARKS.md).  After a larger
 * group (more clients: the rest of them are still to come) a small batch
 * goes to the thread too, and the loop takes the others meanwhile.
 */
#define SQ_SYNC_INLINE	2

/*
 * The thread's fsyncs that the loop has not reported yet, at most: one
 * more than the batches out, since each fsync covers one more of them at
 * least, and they stay out until the loop lands them (sq_sync_cb), which
 * takes these first.
 */
#define SQ_SYNC_TOOK_MAX	(SQ_BATCHES_OUT + 1)

struct sq_sync {
	struct store	*s;
	pthread_t	 th;
	pthread_mutex_t	 mu;
	pthread_cond_t	 cv;
	int		 fd;		/* the WAL */
	int		 efd;		/* the thread -> the loop */
	struct event	*ev;
	/* Under mu: batches committed (want) and fdatasync'ed (synced). */
	uint64_t	 want, synced;
	int		 err, stop;
	uint64_t	 seq;		/* the loop's count of batches out */
	size_t		 group;		/* events the last fsync covered */
	/* Under mu: how long the thread's fsyncs took (us), to report. */
	int64_t		 took[SQ_SYNC_TOOK_MAX];
	unsigned	 ntook;
};

static void *
sq_sync_main(void *arg)
{
	struct sq_sync	*y = arg;
	uint64_t	 t, one = 1;
	int64_t		 t0;
	int		 rc, e;

	pthread_mutex_lock(&y->mu);
	for (;;) {
		while (!y->stop && y->want <= y->synced)
			pthread_cond_wait(&y->cv, &y->mu);
		if (y->want <= y->synced)
			break;		/* stopping, nothing left */
		t = y->want;
		pthread_mutex_unlock(&y->mu);
		t0 = mono_us();
		rc = fdatasync(y->fd);
		e = errno;
		t0 = mono_us() - t0;
		pthread_mutex_lock(&y->mu);
		if (rc != 0 && y->err == 0)
			y->err = e;
		if (y->ntook < SQ_SYNC_TOOK_MAX)
			y->took[y->ntook++] = t0;
		if (t > y->synced)
			y->synced = t;
		pthread_mutex_unlock(&y->mu);
		if (write(y->efd, &one, sizeof one) < 0 && errno != EAGAIN)
			log_warn("sqlite: eventfd");
		pthread_mutex_lock(&y->mu);
	}
	pthread_mutex_unlock(&y->mu);
	return (NULL);
}

/* The batches out up to seq are durable: they land, oldest first. */
static void
sq_land_upto(struct store *s, uint64_t seq)
{
	struct store_sqlite	*q = s->impl;
	struct sq_out		*o;

	if ((o = STAILQ_FIRST(&q->out)) != NULL && o->seq <= seq)
		q->sync->group = 0;
	while ((o = STAILQ_FIRST(&q->out)) != NULL && o->seq <= seq) {
		STAILQ_REMOVE_HEAD(&q->out, entry);
		q->sync->group += o->pend.n;
		q->nkeys_landed = o->nkeys;
		store_sqlite_landed(s, &o->pend);
		STAILQ_INSERT_HEAD(&q->out_free, o, entry);	/* its arrays */
		store_local_landed(s);
	}
	if (STAILQ_EMPTY(&q->out) && !STAILQ_EMPTY(&q->lreads))
		store_sqlite_lreads_run(s);
}

static void
sq_sync_cb(evutil_socket_t fd, short what, void *arg)
{
	struct store		*s = arg;
	struct store_sqlite	*q = s->impl;
	struct sq_sync		*y = q->sync;
	uint64_t		 n, synced;
	int64_t			 took[SQ_SYNC_TOOK_MAX];
	unsigned		 i, ntook;
	int			 err;

	(void)what;
	if (read(fd, &n, sizeof n) < 0 && errno != EAGAIN)
		log_warn("sqlite: eventfd");
	pthread_mutex_lock(&y->mu);
	synced = y->synced;
	err = y->err;
	ntook = y->ntook;
	memcpy(took, y->took, ntook * sizeof took[0]);
	y->ntook = 0;
	pthread_mutex_unlock(&y->mu);
	for (i = 0; i < ntook; i++)
		store_report(s, STORE_REPORT_FSYNC, NULL, STORE_ERR_NONE,
		    (double)took[i] / 1e6);
	if (err != 0)
		fatalx("sqlite: fdatasync of %s: %s: the last writes may or "
		    "may not be on disk; stopping so that none is answered "
		    "(a restart recovers what is)", q->wal_path,
		    strerror(err));
	sq_land_upto(s, synced);
}

/*
 * In the daemon with --sync full: commits go out, fsynced by the thread.
 * Without (an error is logged), they stay fsynced by SQLite at COMMIT.
 */
void
store_sqlite_sync_start(struct store *s, struct event_base *base)
{
	struct store_sqlite	*q = s->impl;
	struct sq_sync		*y;

	if (!q->sync_full || base == NULL)
		return;
	y = xcalloc(1, sizeof *y);
	y->s = s;
	y->fd = y->efd = -1;
	if ((y->fd = open(q->wal_path, O_RDWR | O_CLOEXEC)) == -1 ||
	    (y->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) == -1) {
		log_warn("sqlite: %s: fsyncs stay on the loop", q->wal_path);
		goto fail;
	}
	if ((y->ev = event_new(base, y->efd, EV_READ | EV_PERSIST,
	    sq_sync_cb, s)) == NULL || event_add(y->ev, NULL) != 0)
		fatalx("event_new");
	pthread_mutex_init(&y->mu, NULL);
	pthread_cond_init(&y->cv, NULL);
	if ((errno = pthread_create(&y->th, NULL, sq_sync_main, y)) != 0) {
		log_warn("sqlite: fsync thread: fsyncs stay on the loop");
		event_free(y->ev);
		pthread_mutex_destroy(&y->mu);
		pthread_cond_destroy(&y->cv);
		goto fail;
	}
	if (sqlite3_exec(q->db, "PRAGMA synchronous = NORMAL", NULL, NULL,
	    NULL) != SQLITE_OK)
		fatalx("sqlite: PRAGMA synchronous: %s", sqlite3_errmsg(q->db));
	q->sync_full = 0;	/* every transaction at NORMAL now */
	q->sync = y;
	return;
fail:
	if (y->fd != -1)
		close(y->fd);
	if (y->efd != -1)
		close(y->efd);
	free(y);
}

/* The batch just committed goes out; the thread is told. */
static void
sq_sync_out(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct sq_sync		*y = q->sync;
	struct sq_out		*o;
	struct sq_pend		 t;

	if (STAILQ_EMPTY(&q->out))	/* what reads see until it lands */
		q->nkeys_landed = q->nkeys_begin;
	if ((o = STAILQ_FIRST(&q->out_free)) != NULL)
		STAILQ_REMOVE_HEAD(&q->out_free, entry);
	else
		o = xcalloc(1, sizeof *o);
	t = o->pend;		/* empty: its arrays go to the next batch */
	o->pend = q->pend;
	q->pend = t;
	o->seq = ++y->seq;
	o->nkeys = q->nkeys;
	STAILQ_INSERT_TAIL(&q->out, o, entry);
	pthread_mutex_lock(&y->mu);
	y->want = o->seq;
	pthread_cond_signal(&y->cv);
	pthread_mutex_unlock(&y->mu);
}

/*
 * An fdatasync on the loop; as the thread's, a failure stops the daemon
 * (sq_sync_cb).
 */
static void
sq_fsync_here(struct store_sqlite *q)
{
	int64_t	 t0 = mono_us();

	if (fdatasync(q->sync->fd) != 0)
		fatal("sqlite: fdatasync of %s: the last writes may or may not "
		    "be on disk; stopping so that none is answered",
		    q->wal_path);
	store_report(q->sync->s, STORE_REPORT_FSYNC, NULL, STORE_ERR_NONE,
	    (double)(mono_us() - t0) / 1e6);
}

/*
 * The batch just committed: out to the thread; or, when it is small,
 * nothing else is out and the last fsync covered a small group too,
 * fsynced here at once (SQ_SYNC_INLINE).  1: out; 0: durable now.
 */
int
store_sqlite_sync_commit(struct store *s)
{
	struct store_sqlite	*q = s->impl;

	if (STAILQ_EMPTY(&q->out) && !store_local_any_out(s) &&
	    q->pend.n <= SQ_SYNC_INLINE && q->sync->group <= SQ_SYNC_INLINE) {
		q->sync->group = q->pend.n;
		sq_fsync_here(q);
		return (0);
	}
	sq_sync_out(s);
	return (1);
}

/*
 * Everything committed durable now, on the loop (a snapshot's last step
 * copied it): the batches land on the loop's next turn.
 */
void
store_sqlite_sync_now(struct store_sqlite *q)
{
	struct sq_sync	*y = q->sync;

	if (y == NULL || STAILQ_EMPTY(&q->out))
		return;
	sq_fsync_here(q);
	pthread_mutex_lock(&y->mu);
	if (y->seq > y->synced)
		y->synced = y->seq;
	pthread_mutex_unlock(&y->mu);
	event_active(y->ev, EV_READ, 0);
}

/* The newest state a batch out gave the key, for the batch being made. */
struct sq_ent *
store_sqlite_out_find(struct store_sqlite *q, const char *key, size_t len,
    uint64_t h)
{
	struct sq_out	*o;
	struct sq_ent	*e = NULL, *f;

	STAILQ_FOREACH(o, &q->out, entry)
		if ((f = sq_map_find_h(&o->pend.idx, key, len, h)) != NULL)
			e = f;
	return (e);
}

static void
sq_out_free(struct sq_out *o)
{
	size_t	 i;

	for (i = 0; i < o->pend.n; i++)
		free(o->pend.v[i]);
	free(o->pend.v);
	sq_map_free(&o->pend.idx, 0);
	free(o);
}

/*
 * At close (the daemon waited for its commits to land): whatever is still
 * out lands if one more fdatasync succeeds; nobody is notified any more.
 */
void
store_sqlite_sync_stop(struct store *s)
{
	struct store_sqlite	*q = s->impl;
	struct sq_sync		*y = q->sync;
	struct sq_out		*o;

	if (y == NULL)
		return;
	pthread_mutex_lock(&y->mu);
	y->stop = 1;
	pthread_cond_signal(&y->cv);
	pthread_mutex_unlock(&y->mu);
	pthread_join(y->th, NULL);
	s->opts.notify = NULL;
	if (!STAILQ_EMPTY(&q->out)) {
		if (y->err == 0 && fdatasync(y->fd) == 0)
			sq_land_upto(s, UINT64_MAX);
		else
			log_warnx("sqlite: %s: the last writes were not "
			    "synced; they stay unanswered", q->wal_path);
	}
	STAILQ_CONCAT(&q->out_free, &q->out);
	if (!STAILQ_EMPTY(&q->lreads))
		store_sqlite_lreads_run(s);
	while ((o = STAILQ_FIRST(&q->out_free)) != NULL) {
		STAILQ_REMOVE_HEAD(&q->out_free, entry);
		sq_out_free(o);
	}
	event_free(y->ev);
	close(y->efd);
	close(y->fd);
	pthread_mutex_destroy(&y->mu);
	pthread_cond_destroy(&y->cv);
	free(y);
	q->sync = NULL;
}

/*
 * An fsync of the directory that holds path: a name made in it (a
 * directory, the database, its WAL) is durable only then (POSIX; ext4's
 * journal usually hides it, a power cut need not: docs/RELIABILITY.md).
 */
int
store_sqlite_sync_parent(const char *path, struct store_err *err)
{
	char	*p, *slash;
	int	 fd, rc = 0;

	p = xstrdup(path);
	if ((slash = strrchr(p, '/')) == NULL)
		p[0] = '.', p[1] = '\0';
	else if (slash == p)
		slash[1] = '\0';
	else
		*slash = '\0';
	if ((fd = open(p, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fsync(fd) == -1)
		rc = store_err_set(err, STORE_ERR_IO, "fsync of the directory "
		    "%s: %s", p, strerror(errno));
	if (fd != -1)
		close(fd);
	free(p);
	return (rc);
}

/* The directories leading to path, each made durable in its parent. */
int
store_sqlite_mkdirs(const char *path, struct store_err *err)
{
	struct stat	 sb;
	char		*p, *slash;
	int		 rc = 0;

	p = xstrdup(path);
	for (slash = strchr(p + 1, '/'); slash != NULL;
	    slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdir(p, 0700) == 0) {
			if ((rc = store_sqlite_sync_parent(p, err)) != 0)
				break;
		} else if (stat(p, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
			if (errno == EEXIST || errno == 0)
				errno = ENOTDIR;
			rc = store_err_set(err, STORE_ERR_IO, "mkdir %s: %s",
			    p, strerror(errno));
			break;
		}
		*slash = '/';
	}
	free(p);
	return (rc);
}
