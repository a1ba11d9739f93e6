/*
 * Snapshots for clients (metad-protocol(7)): "snapshot" writes a snapshot
 * of the whole store (store_snapshot()) to a private temporary file and
 * answers its id, rev and size; "snapshot_read" hands it out in chunks at
 * the offsets the client asks for.  The client, not the daemon, writes the
 * file it keeps: metad never writes where a client names, and needs no
 * access to the client's directories.
 *
 * A snapshot is read only by the connection that took it (another's id is
 * not_found, as a dropped one is).
 *
 * Ownership: the snapshot set owns every snapshot and its file, which is
 * unlinked as soon as it is written (the open descriptor keeps it) and
 * closed when its last byte is read, after SNAPSHOT_IDLE_MS without a
 * read, or at exit.
 */
#ifndef METAD_SNAPSHOT_H
#define METAD_SNAPSHOT_H

struct conn;
struct metad;
struct req;
struct snapshots;

/* Snapshots being taken or read at once. */
#define SNAPSHOTS_MAX		4
/* Of them, for one peer other than root and metad's own uid. */
#define SNAPSHOTS_PER_PEER	2
/* Bytes of a snapshot one snapshot_read answers, at most (base64 more). */
#define SNAPSHOT_CHUNK_MAX	(512 * 1024)
/* A snapshot nobody reads for this long is dropped. */
#define SNAPSHOT_IDLE_MS	60000

struct snapshots	*snapshots_create(struct metad *);
/* At exit: snapshots being taken are answered "unavailable". */
void			 snapshots_free(struct snapshots *);
/* c closes: its snapshots go (one being taken, once it is). */
void			 snapshots_conn_closed(struct snapshots *,
			    const struct conn *);

void	snapshot_op_snapshot(struct req *);
void	snapshot_op_read(struct req *);

#endif
