/*
 * Inside a snapshot (store_snapshot(), store.h): the state one snapshot
 * carries while it is taken, step by step on the daemon's event loop, and
 * the sqlite backend's writer of a metad database from kvs, which every
 * backend without a snapshot of its own uses (store_snap.c).
 *
 * A snapshot ends in store_snapshot_end() exactly once: it calls done
 * (unless cancelled), the implementation's cleanup, and frees the rest.
 */
#ifndef METAD_STORE_SNAP_H
#define METAD_STORE_SNAP_H

#include <stdint.h>

#include "store/store_backend.h"

struct event;

struct store_snapshot {
	struct store		*store;
	char			*path;
	store_snapshot_done	 done;
	void			*arg;
	struct event		*step_ev;	/* the next step */
	void			 (*step)(struct store_snapshot *);
	void			 (*cleanup)(struct store_snapshot *);
	void			*impl;
	uint64_t		 rev;		/* of the snapshot, once known */
	int			 reading;	/* a store read is under way */
	int			 cancelled;
};

/* Run snap->step on a later turn of the loop. */
void	store_snapshot_again(struct store_snapshot *);
/* err NULL: done, at snap->rev. */
void	store_snapshot_end(struct store_snapshot *, const struct store_err *);

/*
 * A new metad SQLite database at path (which must not exist), filled with
 * kvs in one transaction; store_sqlite_writer_finish() sets its rev and
 * compact_rev (it holds no history: everything below rev is compacted),
 * commits and closes it.  store_sqlite_writer_free() after either.
 */
struct store_sqlite_writer;

struct store_sqlite_writer *store_sqlite_writer_open(const char *,
		    struct store_err *);
int	store_sqlite_writer_add(struct store_sqlite_writer *,
	    const struct store_kv *, struct store_err *);
int	store_sqlite_writer_finish(struct store_sqlite_writer *, uint64_t rev,
	    struct store_err *);
void	store_sqlite_writer_free(struct store_sqlite_writer *);

/* The sqlite backend's own: SQLite's online backup of its database. */
int	store_sqlite_snapshot(struct store_snapshot *, struct store_err *);

#endif
