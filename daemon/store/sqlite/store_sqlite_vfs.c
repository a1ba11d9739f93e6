/*
 * A VFS over SQLite's default one that gathers the WAL writes of one
 * commit into one pwrite.  SQLite writes each WAL frame as two writes, its
 * 24-byte header and its page; a commit of n pages is 2n system calls, and
 * each page straddles two pages of the file.  Here the writes of a
 * contiguous run are copied into a buffer, and the buffer goes to the
 * file when the commit's last frame is complete (the commit frame: a
 * header whose "database size after commit" is not zero, then its page;
 * frames are found by their place in the file, however SQLite cuts them
 * into writes: tests/unit/test_store_vfs.c), before any other write,
 * read, size, truncate, sync, mmap or close of the WAL, or at SQ_VFS_BUF
 * bytes.  So when SQLite's COMMIT returns, every frame of
 * it was written, as before: only the number of calls changes.
 *
 * The WAL also grows ahead of its frames, SQ_WAL_GROW bytes of zeros at a
 * time (as PostgreSQL's wal_init_zero does for its segments): an
 * fdatasync of frames written past the file's end must also commit the
 * new size and blocks to the file system's journal, one of frames
 * written over blocks the file has needs not (measured: 140 against
 * 82 us on ext4, BENCHMARKS.md).  SQLite reads a WAL's frames up to the
 * first whose header does not check (salts, checksum): zeros end it, as
 * after a crash.  Only ever past every byte written (the file's size at
 * open, then its writes': the one connection that writes it holds the
 * database exclusively), so no zero lands on a frame; a fill that
 * fails (the disk is full) is left at that, and the frames' own write
 * says what it says.  Every other file (the database, temporary files)
 * is the default VFS's as is.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"
#include "util.h"

#define SQ_VFS_NAME	"metad-wal"
#define SQ_VFS_BUF	(1024 * 1024)
/* The default VFS writes at most 128 KiB - 1 a call (a size of 128 KiB
 * exactly is taken as 0, and fails as "full"): 64 KiB a call. */
#define SQ_VFS_CHUNK	(64 * 1024)
#define SQ_WAL_HDR	32
#define SQ_WAL_FRAME_HDR	24

struct sq_vfs_file {
	sqlite3_file	 base;
	sqlite3_file	*real;		/* the default VFS's, right after */
	int		 wal;
	unsigned char	*buf;
	size_t		 len, cap;
	sqlite3_int64	 off;		/* where buf goes */
	sqlite3_int64	 commit_end;	/* a commit's last frame ends here */
	sqlite3_int64	 end;		/* the WAL: no byte written past it */
	uint32_t	 pgsz;		/* the WAL header's (0: not known) */
};

#define REAL(f)		(((struct sq_vfs_file *)(f))->real)
#define RM(f)		(REAL(f)->pMethods)

static sqlite3_vfs	*sq_vfs_real;

/*
 * Before a write of the WAL up to upto: zeros from its end to the next
 * SQ_WAL_GROW boundary past upto, if upto is past its end.
 */
static void
sq_vfs_grow(struct sq_vfs_file *p, sqlite3_int64 upto)
{
	static const unsigned char	 zero[SQ_VFS_CHUNK];
	sqlite3_int64			 to;
	int				 n;

	if (upto <= p->end)
		return;
	to = (upto + SQ_WAL_GROW - 1) / SQ_WAL_GROW * SQ_WAL_GROW;
	while (p->end < to) {
		n = to - p->end < SQ_VFS_CHUNK ? (int)(to - p->end) :
		    SQ_VFS_CHUNK;
		if (p->real->pMethods->xWrite(p->real, zero, n, p->end) !=
		    SQLITE_OK)
			return;
		p->end += n;
	}
}

/* A write of the WAL, after its growth (one of the default VFS's). */
static int
sq_vfs_put(struct sq_vfs_file *p, const void *b, int amt, sqlite3_int64 off)
{
	int	 rc;

	sq_vfs_grow(p, off + amt);
	rc = p->real->pMethods->xWrite(p->real, b, amt, off);
	if (rc == SQLITE_OK && off + amt > p->end)
		p->end = off + amt;
	return (rc);
}

/*
 * The buffer goes, written or not: a write that fails fails the
 * transaction whose frames these are (committed ones never wait here).
 */
static int
sq_vfs_flush(struct sq_vfs_file *p)
{
	size_t	 done, n;
	int	 rc = SQLITE_OK;

	for (done = 0; done < p->len && rc == SQLITE_OK; done += n) {
		n = p->len - done < SQ_VFS_CHUNK ? p->len - done :
		    SQ_VFS_CHUNK;
		rc = sq_vfs_put(p, p->buf + done, (int)n,
		    p->off + (sqlite3_int64)done);
	}
	if (p->commit_end <= p->off + (sqlite3_int64)p->len)
		p->commit_end = 0;
	p->len = 0;
	return (rc);
}

/*
 * The byte of the WAL at pos: in the write (b, amt at off), else in the
 * buffer, else in the file (a header cut in pieces around a flush).
 */
static unsigned char
sq_vfs_byte(struct sq_vfs_file *p, const unsigned char *b, int amt,
    sqlite3_int64 off, sqlite3_int64 pos)
{
	unsigned char	 c = 0;

	if (pos >= off && pos < off + amt)
		return (b[pos - off]);
	if (p->len > 0 && pos >= p->off &&
	    pos < p->off + (sqlite3_int64)p->len)
		return (p->buf[pos - p->off]);
	(void)p->real->pMethods->xRead(p->real, &c, 1, pos);
	return (c);
}

/* The WAL's page size, from its header (bytes 8-11); 0 if not valid. */
static uint32_t
sq_vfs_pgsz(struct sq_vfs_file *p, const unsigned char *b, int amt,
    sqlite3_int64 off)
{
	uint32_t	 v = 0;
	int		 i;

	if (p->pgsz != 0)
		return (p->pgsz);
	for (i = 8; i < 12; i++)
		v = v << 8 | sq_vfs_byte(p, b, amt, off, i);
	if (v >= 512 && v <= 65536 && (v & (v - 1)) == 0)
		p->pgsz = v;
	return (p->pgsz);
}

/*
 * Where the commits in a write of the WAL end.  A frame is its 24-byte
 * header, then its page, at 32 + n (24 + page size); a header whose
 * "database size after commit" (bytes 4-7) is not zero is a commit's last
 * frame.  Frames are found by their place, not by the shape of the writes
 * (SQLite's own: a header, then a page; any other cut is found as well).
 * With no page size to go by, every write of frames ends a commit.
 */
static void
sq_vfs_commits(struct sq_vfs_file *p, const unsigned char *b, int amt,
    sqlite3_int64 off)
{
	sqlite3_int64	 fr, i, last, h, e = off + amt;
	int		 k, commit;

	if (e <= SQ_WAL_HDR)
		return;
	if (sq_vfs_pgsz(p, b, amt, off) == 0) {
		p->commit_end = e;
		return;
	}
	fr = SQ_WAL_FRAME_HDR + (sqlite3_int64)p->pgsz;
	/* The frames whose bytes 4-7 end in this write: h + 8 in (off, e]. */
	i = off < SQ_WAL_HDR + 8 ? 0 : (off - SQ_WAL_HDR - 8) / fr + 1;
	last = e < SQ_WAL_HDR + 8 ? -1 : (e - SQ_WAL_HDR - 8) / fr;
	for (; i <= last; i++) {
		h = SQ_WAL_HDR + i * fr;
		for (k = 4, commit = 0; k < 8; k++)
			commit |= sq_vfs_byte(p, b, amt, off, h + k);
		if (commit && h + fr > p->commit_end)
			p->commit_end = h + fr;
	}
}

static int
sq_vfs_write(sqlite3_file *f, const void *b, int amt, sqlite3_int64 off)
{
	struct sq_vfs_file	*p = (struct sq_vfs_file *)f;
	int			 rc = SQLITE_OK;

	if (!p->wal)
		return (RM(f)->xWrite(REAL(f), b, amt, off));
	if (off < SQ_WAL_HDR)
		p->pgsz = 0;		/* the header, (re)written */
	if (p->len > 0 && (off != p->off + (sqlite3_int64)p->len ||
	    p->len + (size_t)amt > SQ_VFS_BUF) &&
	    (rc = sq_vfs_flush(p)) != SQLITE_OK)
		return (rc);
	sq_vfs_commits(p, b, amt, off);
	if ((size_t)amt > SQ_VFS_BUF)
		rc = sq_vfs_put(p, b, amt, off);
	else {
		if (p->len + (size_t)amt > p->cap) {
			while (p->cap < p->len + (size_t)amt)
				p->cap = p->cap ? p->cap * 2 : 64 * 1024;
			p->buf = xrealloc(p->buf, p->cap);
		}
		if (p->len == 0)
			p->off = off;
		memcpy(p->buf + p->len, b, (size_t)amt);
		p->len += (size_t)amt;
	}
	/* A commit's last byte written: all of it goes to the file now. */
	if (rc == SQLITE_OK && p->commit_end != 0 &&
	    off + amt >= p->commit_end) {
		if (p->len > 0)
			rc = sq_vfs_flush(p);
		p->commit_end = 0;
	}
	return (rc);
}

/* Anything but a write: the buffer goes first. */
#define SQ_VFS_FLUSHED(f) do {						\
	struct sq_vfs_file *p_ = (struct sq_vfs_file *)(f);		\
	int rc_;							\
	if (p_->len > 0 && (rc_ = sq_vfs_flush(p_)) != SQLITE_OK)	\
		return (rc_);						\
} while (0)

static int
sq_vfs_close(sqlite3_file *f)
{
	struct sq_vfs_file	*p = (struct sq_vfs_file *)f;
	int			 rc = SQLITE_OK, rc2;

	if (p->len > 0)
		rc = sq_vfs_flush(p);
	free(p->buf);
	p->buf = NULL;
	p->cap = 0;
	rc2 = RM(f)->xClose(REAL(f));
	return (rc != SQLITE_OK ? rc : rc2);
}

static int
sq_vfs_read(sqlite3_file *f, void *b, int amt, sqlite3_int64 off)
{
	SQ_VFS_FLUSHED(f);
	return (RM(f)->xRead(REAL(f), b, amt, off));
}

static int
sq_vfs_truncate(sqlite3_file *f, sqlite3_int64 size)
{
	struct sq_vfs_file	*p = (struct sq_vfs_file *)f;

	SQ_VFS_FLUSHED(f);
	if (size < p->end)
		p->end = size;
	return (RM(f)->xTruncate(REAL(f), size));
}

static int
sq_vfs_sync(sqlite3_file *f, int flags)
{
	SQ_VFS_FLUSHED(f);
	return (RM(f)->xSync(REAL(f), flags));
}

static int
sq_vfs_size(sqlite3_file *f, sqlite3_int64 *size)
{
	SQ_VFS_FLUSHED(f);
	return (RM(f)->xFileSize(REAL(f), size));
}

static int
sq_vfs_lock(sqlite3_file *f, int l)
{
	return (RM(f)->xLock(REAL(f), l));
}

static int
sq_vfs_unlock(sqlite3_file *f, int l)
{
	return (RM(f)->xUnlock(REAL(f), l));
}

static int
sq_vfs_reserved(sqlite3_file *f, int *out)
{
	return (RM(f)->xCheckReservedLock(REAL(f), out));
}

static int
sq_vfs_fcntl(sqlite3_file *f, int op, void *arg)
{
	return (RM(f)->xFileControl(REAL(f), op, arg));
}

static int
sq_vfs_sector(sqlite3_file *f)
{
	return (RM(f)->xSectorSize(REAL(f)));
}

static int
sq_vfs_caps(sqlite3_file *f)
{
	return (RM(f)->xDeviceCharacteristics(REAL(f)));
}

static int
sq_vfs_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp)
{
	return (RM(f)->xShmMap(REAL(f), pg, sz, ext, pp));
}

static int
sq_vfs_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return (RM(f)->xShmLock(REAL(f), off, n, flags));
}

static void
sq_vfs_shm_barrier(sqlite3_file *f)
{
	RM(f)->xShmBarrier(REAL(f));
}

static int
sq_vfs_shm_unmap(sqlite3_file *f, int del)
{
	return (RM(f)->xShmUnmap(REAL(f), del));
}

static int
sq_vfs_fetch(sqlite3_file *f, sqlite3_int64 off, int amt, void **pp)
{
	SQ_VFS_FLUSHED(f);
	return (RM(f)->xFetch(REAL(f), off, amt, pp));
}

static int
sq_vfs_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return (RM(f)->xUnfetch(REAL(f), off, p));
}

static const sqlite3_io_methods sq_vfs_io = {
	3,
	sq_vfs_close, sq_vfs_read, sq_vfs_write, sq_vfs_truncate, sq_vfs_sync,
	sq_vfs_size, sq_vfs_lock, sq_vfs_unlock, sq_vfs_reserved,
	sq_vfs_fcntl, sq_vfs_sector, sq_vfs_caps,
	sq_vfs_shm_map, sq_vfs_shm_lock, sq_vfs_shm_barrier, sq_vfs_shm_unmap,
	sq_vfs_fetch, sq_vfs_unfetch
};

static int
sq_vfs_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *f, int flags,
    int *out)
{
	struct sq_vfs_file	*p = (struct sq_vfs_file *)f;
	int			 rc;

	(void)vfs;
	memset(p, 0, sizeof *p);
	p->real = (sqlite3_file *)&p[1];
	rc = sq_vfs_real->xOpen(sq_vfs_real, name, p->real, flags, out);
	if (rc != SQLITE_OK || p->real->pMethods == NULL) {
		p->base.pMethods = NULL;
		return (rc);
	}
	/* The shared-memory and mmap calls need the real file's version 3. */
	if (p->real->pMethods->iVersion < 3) {
		p->real->pMethods->xClose(p->real);
		p->base.pMethods = NULL;
		return (SQLITE_CANTOPEN);
	}
	p->wal = (flags & SQLITE_OPEN_WAL) != 0;
	p->base.pMethods = &sq_vfs_io;
	if (p->wal && p->real->pMethods->xFileSize(p->real, &p->end) !=
	    SQLITE_OK)
		p->end = INT64_MAX;		/* never grown then */
	return (SQLITE_OK);
}

static int
sq_vfs_delete(sqlite3_vfs *v, const char *name, int sync)
{
	(void)v;
	return (sq_vfs_real->xDelete(sq_vfs_real, name, sync));
}

static int
sq_vfs_access(sqlite3_vfs *v, const char *name, int flags, int *out)
{
	(void)v;
	return (sq_vfs_real->xAccess(sq_vfs_real, name, flags, out));
}

static int
sq_vfs_fullpath(sqlite3_vfs *v, const char *name, int n, char *out)
{
	(void)v;
	return (sq_vfs_real->xFullPathname(sq_vfs_real, name, n, out));
}

static void *
sq_vfs_dlopen(sqlite3_vfs *v, const char *name)
{
	(void)v;
	return (sq_vfs_real->xDlOpen(sq_vfs_real, name));
}

static void
sq_vfs_dlerror(sqlite3_vfs *v, int n, char *msg)
{
	(void)v;
	sq_vfs_real->xDlError(sq_vfs_real, n, msg);
}

static void (*sq_vfs_dlsym(sqlite3_vfs *v, void *h, const char *sym))(void)
{
	(void)v;
	return (sq_vfs_real->xDlSym(sq_vfs_real, h, sym));
}

static void
sq_vfs_dlclose(sqlite3_vfs *v, void *h)
{
	(void)v;
	sq_vfs_real->xDlClose(sq_vfs_real, h);
}

static int
sq_vfs_random(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return (sq_vfs_real->xRandomness(sq_vfs_real, n, out));
}

static int
sq_vfs_sleep(sqlite3_vfs *v, int us)
{
	(void)v;
	return (sq_vfs_real->xSleep(sq_vfs_real, us));
}

static int
sq_vfs_time(sqlite3_vfs *v, double *out)
{
	(void)v;
	return (sq_vfs_real->xCurrentTime(sq_vfs_real, out));
}

static int
sq_vfs_lasterr(sqlite3_vfs *v, int n, char *out)
{
	(void)v;
	return (sq_vfs_real->xGetLastError(sq_vfs_real, n, out));
}

static int
sq_vfs_time64(sqlite3_vfs *v, sqlite3_int64 *out)
{
	(void)v;
	return (sq_vfs_real->xCurrentTimeInt64(sq_vfs_real, out));
}

static sqlite3_vfs sq_vfs = {
	2, 0, 0, NULL, SQ_VFS_NAME, NULL,
	sq_vfs_open, sq_vfs_delete, sq_vfs_access, sq_vfs_fullpath,
	sq_vfs_dlopen, sq_vfs_dlerror, sq_vfs_dlsym, sq_vfs_dlclose,
	sq_vfs_random, sq_vfs_sleep, sq_vfs_time, sq_vfs_lasterr,
	sq_vfs_time64, NULL, NULL, NULL
};

/* The VFS's name for sqlite3_open_v2(), registered on first use. */
const char *
store_sqlite_vfs(void)
{
	if (sq_vfs_real == NULL) {
		store_sqlite_pcache_install();
		if ((sq_vfs_real = sqlite3_vfs_find(NULL)) == NULL ||
		    sq_vfs_real->iVersion < 2)
			return (NULL);
		sq_vfs.szOsFile = (int)sizeof(struct sq_vfs_file) +
		    sq_vfs_real->szOsFile;
		sq_vfs.mxPathname = sq_vfs_real->mxPathname;
		if (sqlite3_vfs_register(&sq_vfs, 0) != SQLITE_OK) {
			sq_vfs_real = NULL;
			return (NULL);
		}
	}
	return (SQ_VFS_NAME);
}
