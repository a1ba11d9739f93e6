/*
 * powerfs's model of what is durable, and the power cut.
 *
 * Every call goes through to the backing directory at once (what the
 * running system reads is the backing file); what would be lost is kept
 * as an undo log.  A file's writes and truncates since its last fsync
 * (or fdatasync) are logged with the bytes they replaced, in memory; an
 * fsync of the file forgets them (they are durable).  A directory's
 * entries are durable as of its last fsync: the mount reads every
 * directory's entries, an fsync of a directory reads its own again, and
 * nothing else does (POSIX: a created, renamed or unlinked name is durable
 * once its directory is fsynced; fsyncing the file is not enough).  An
 * unlinked file whose name may come back is kept alive by a hard link in
 * PF_GRAVE, so that its inode stays its own.
 *
 * The cut: each file's log is undone, newest first, as the mode says:
 *   drop     all of it (the file is as of its last fsync);
 *   torn     all but a random in-order prefix of the writes, the last
 *            one of which is cut at a random sector boundary;
 *   sectors  each 512-byte sector of the file the log touched keeps its
 *            new bytes or gets its old ones back, at random, and the size
 *            is the old or the new one, at random (a disk that reorders).
 * Then the tree is built again from the directories' durable entries in
 * PF_NEW (hard links to the files' inodes) and replaces the backing tree.
 */
#include <sys/stat.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerfs.h"

struct pf	 pf;

static const char	*pf_modes[] = { "drop", "torn", "sectors" };

const char *
pf_mode_name(enum pf_mode m)
{
	return (pf_modes[m]);
}

int
pf_mode_parse(const char *s, enum pf_mode *m)
{
	size_t	 i;

	for (i = 0; i < sizeof pf_modes / sizeof pf_modes[0]; i++)
		if (strcmp(s, pf_modes[i]) == 0) {
			*m = (enum pf_mode)i;
			return (0);
		}
	return (-1);
}

const char *
pf_rel(const char *path)
{
	while (*path == '/')
		path++;
	return (*path == '\0' ? "." : path);
}

/* splitmix64: the cut's randomness, from the seed. */
static uint64_t
pf_rand(void)
{
	uint64_t	 z = (pf.seed += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return (z ^ (z >> 31));
}

static void *
pf_alloc(size_t n)
{
	void	*p;

	if ((p = calloc(1, n ? n : 1)) == NULL) {
		perror("powerfs");
		abort();
	}
	return (p);
}

/* Reads the entries of the directory at path (relative to the backing). */
int
pf_read_dir(const char *rel, struct pf_dir *d)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*dp;
	int		 fd;
	size_t		 cap = 0;

	if ((fd = openat(pf.bk, rel, O_RDONLY | O_DIRECTORY)) == -1)
		return (-errno);
	if (fstat(fd, &sb) == -1 || (dp = fdopendir(fd)) == NULL) {
		close(fd);
		return (-EIO);
	}
	d->ino = sb.st_ino;
	while ((de = readdir(dp)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    (d->ino == pf.root && strcmp(de->d_name, PF_STATE) == 0))
			continue;
		if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (d->n == cap) {
			cap = cap ? cap * 2 : 16;
			d->ents = realloc(d->ents, cap * sizeof *d->ents);
			if (d->ents == NULL)
				abort();
		}
		d->ents[d->n].name = strdup(de->d_name);
		d->ents[d->n].ino = sb.st_ino;
		d->ents[d->n].mode = sb.st_mode;
		d->n++;
	}
	closedir(dp);
	return (0);
}

void
pf_dir_free(struct pf_dir *d)
{
	size_t	 i;

	for (i = 0; i < d->n; i++)
		free(d->ents[i].name);
	free(d->ents);
	d->ents = NULL;
	d->n = 0;
}

struct pf_dir *
pf_dir_find(ino_t ino)
{
	struct pf_dir	*d;

	for (d = pf.dirs; d != NULL; d = d->next)
		if (d->ino == ino)
			return (d);
	return (NULL);
}

/* The directory's entries now are durable. */
int
pf_dir_sync(const char *rel)
{
	struct pf_dir	 tmp = { 0 }, *d;
	int		 rc;

	if ((rc = pf_read_dir(rel, &tmp)) != 0)
		return (rc);
	if ((d = pf_dir_find(tmp.ino)) == NULL) {
		d = pf_alloc(sizeof *d);
		d->next = pf.dirs;
		pf.dirs = d;
	} else
		pf_dir_free(d);
	*d = (struct pf_dir){ tmp.ino, tmp.ents, tmp.n, d->next };
	pf.dirsyncs++;
	return (0);
}

static int
pf_scan_at(const char *rel)
{
	struct pf_dir	*d;
	char		 sub[4096];
	size_t		 i;

	if (pf_dir_sync(rel) != 0)
		return (-1);
	pf.dirsyncs--;
	d = pf.dirs;
	for (i = 0; i < d->n; i++) {
		if (!S_ISDIR(d->ents[i].mode))
			continue;
		snprintf(sub, sizeof sub, "%s/%s", rel, d->ents[i].name);
		if (pf_scan_at(sub) != 0)
			return (-1);
	}
	return (0);
}

/* At the mount: everything there is durable. */
int
pf_scan(void)
{
	struct stat	 sb;

	if (fstat(pf.bk, &sb) == -1)
		return (-1);
	pf.root = sb.st_ino;
	return (pf_scan_at("."));
}

static struct pf_ino *
pf_ino_get(const char *rel, int fd)
{
	struct pf_ino	*p;
	struct stat	 sb;

	if ((fd >= 0 ? fstat(fd, &sb) : fstatat(pf.bk, rel, &sb, 0)) == -1)
		return (NULL);
	for (p = pf.inos; p != NULL; p = p->next)
		if (p->ino == sb.st_ino)
			return (p);
	p = pf_alloc(sizeof *p);
	p->ino = sb.st_ino;
	p->fd = rel != NULL ? openat(pf.bk, rel, O_RDWR) : -1;
	if (p->fd == -1 && fd >= 0)
		p->fd = dup(fd);
	if (p->fd == -1) {
		free(p);
		return (NULL);
	}
	p->next = pf.inos;
	pf.inos = p;
	return (p);
}

static struct pf_op *
pf_op_new(struct pf_ino *p, off_t size)
{
	struct pf_op	*o;

	if (p->nops == p->cap) {
		p->cap = p->cap ? p->cap * 2 : 16;
		if ((p->ops = realloc(p->ops, p->cap * sizeof *o)) == NULL)
			abort();
	}
	o = &p->ops[p->nops++];
	memset(o, 0, sizeof *o);
	o->old_size = size;
	return (o);
}

/* Saves what [off, off + len) holds now (up to the file's size). */
static int
pf_save_old(struct pf_op *o, int fd, off_t off, size_t len)
{
	ssize_t	 n;

	o->old_len = off >= o->old_size ? 0 :
	    (size_t)(o->old_size - off) < len ? (size_t)(o->old_size - off) :
	    len;
	o->old = pf_alloc(o->old_len);
	if (o->old_len > 0 &&
	    (n = pread(fd, o->old, o->old_len, off)) != (ssize_t)o->old_len)
		return (-EIO);
	pf.pending_bytes += o->old_len;
	return (0);
}

/* Before a write of len bytes at off through fd. */
int
pf_log_write(const char *rel, int fd, const void *b, size_t len, off_t off)
{
	struct pf_ino	*p;
	struct pf_op	*o;
	struct stat	 sb;

	(void)b;
	if ((p = pf_ino_get(NULL, fd)) == NULL || fstat(p->fd, &sb) == -1)
		return (-EIO);
	(void)rel;
	o = pf_op_new(p, sb.st_size);
	o->off = off;
	o->len = len;
	o->new_size = off + (off_t)len > sb.st_size ? off + (off_t)len :
	    sb.st_size;
	pf.writes++;
	return (pf_save_old(o, p->fd, off, len));
}

/* Before a truncate to size (of fd, or of rel when fd is -1). */
int
pf_log_trunc(const char *rel, int fd, off_t size)
{
	struct pf_ino	*p;
	struct pf_op	*o;
	struct stat	 sb;

	if ((p = pf_ino_get(fd >= 0 ? NULL : rel, fd)) == NULL ||
	    fstat(p->fd, &sb) == -1)
		return (-EIO);
	o = pf_op_new(p, sb.st_size);
	o->trunc = 1;
	o->off = size;
	o->len = size < sb.st_size ? (size_t)(sb.st_size - size) : 0;
	o->new_size = size;
	return (pf_save_old(o, p->fd, size, o->len));
}

static void
pf_ino_free(struct pf_ino *p)
{
	size_t	 i;

	for (i = 0; i < p->nops; i++) {
		pf.pending_bytes -= p->ops[i].old_len;
		free(p->ops[i].old);
	}
	free(p->ops);
	p->ops = NULL;
	p->nops = p->cap = 0;
}

/* An fsync or fdatasync of the file: its writes are durable. */
int
pf_file_sync(const char *rel, int fd)
{
	struct pf_ino	*p, **pp;
	struct stat	 sb;

	if ((fd >= 0 ? fstat(fd, &sb) : fstatat(pf.bk, rel, &sb, 0)) == -1)
		return (-errno);
	pf.fsyncs++;
	for (pp = &pf.inos; (p = *pp) != NULL; pp = &p->next)
		if (p->ino == sb.st_ino) {
			*pp = p->next;
			pf_ino_free(p);
			close(p->fd);
			free(p);
			break;
		}
	return (0);
}

/* Before an unlink or a rename over rel: its inode stays reachable. */
int
pf_keep(const char *rel)
{
	struct stat	 sb;
	char		 grave[64];

	if (fstatat(pf.bk, rel, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return (0);
	snprintf(grave, sizeof grave, "%s/%ju", PF_GRAVE, (uintmax_t)sb.st_ino);
	if (S_ISDIR(sb.st_mode))
		return (renameat(pf.bk, rel, pf.bk, grave) == -1 ? -errno : 1);
	if (linkat(pf.bk, rel, pf.bk, grave, 0) == -1 && errno != EEXIST)
		return (-errno);
	return (0);
}

/*
 * The cut of one file.  torn: ops before k stay, op k stays up to c (a
 * sector boundary of the file), the rest go.  sectors: the sector's bit of
 * a hash of (the cut's salt, the inode, the sector) says.
 */
struct pf_plan {
	size_t		 k;
	off_t		 c;
	uint64_t	 salt;
};

static int
pf_reverts(const struct pf_ino *p, size_t i, off_t x, const struct pf_plan *pl)
{
	uint64_t	 h;

	switch (pf.mode) {
	case PF_DROP:
		return (1);
	case PF_TORN:
		return (i > pl->k || (i == pl->k && x >= pl->c));
	case PF_SECTORS:
		h = pl->salt ^ ((uint64_t)p->ino * 0x9e3779b97f4a7c15ULL) ^
		    ((uint64_t)(x / PF_SECTOR) * 0xc2b2ae3d27d4eb4fULL);
		h = (h ^ (h >> 31)) * 0xbf58476d1ce4e5b9ULL;
		return ((int)((h >> 29) & 1));
	}
	return (1);
}

/* Undoes op i where the plan says so; returns the bytes put back. */
static uint64_t
pf_undo(const struct pf_ino *p, size_t i, const struct pf_plan *pl)
{
	static const unsigned char	 zero[PF_SECTOR];
	const struct pf_op		*o = &p->ops[i];
	off_t				 a = o->off, b = o->off + (off_t)o->len;
	off_t				 x, y, e;
	uint64_t			 n = 0;

	for (x = a; x < b; x = y) {
		y = (x / PF_SECTOR + 1) * PF_SECTOR;
		if (y > b)
			y = b;
		if (pf.mode == PF_TORN && i == pl->k && x < pl->c && y > pl->c)
			y = pl->c;
		if (!pf_reverts(p, i, x, pl))
			continue;
		e = a + (off_t)o->old_len;
		if (x < e && pwrite(p->fd, o->old + (x - a),
		    (size_t)((y < e ? y : e) - x), x) < 0)
			perror("powerfs: cut");
		if (y > e && pwrite(p->fd, zero, (size_t)(y - (x > e ? x : e)),
		    x > e ? x : e) < 0)
			perror("powerfs: cut");
		n += (uint64_t)(y - x);
	}
	return (n);
}

static void
pf_cut_file(struct pf_ino *p)
{
	struct pf_plan	 pl = { p->nops, 0, pf_rand() };
	struct pf_op	*o;
	off_t		 size, lo, nb;
	size_t		 i;

	if (p->nops == 0)
		return;
	size = p->ops[0].old_size;
	if (pf.mode == PF_TORN) {
		pl.k = (size_t)(pf_rand() % (p->nops + 1));
		if (pl.k < p->nops) {
			o = &p->ops[pl.k];
			/* c: the op's start or a sector boundary inside it. */
			lo = (o->off / PF_SECTOR + 1) * PF_SECTOR;
			nb = o->trunc || lo >= o->off + (off_t)o->len ? 0 :
			    (o->off + (off_t)o->len - 1 - lo) / PF_SECTOR + 1;
			pl.c = o->off;
			if (nb > 0 && pf_rand() % 2 == 0)
				pl.c = lo + (off_t)(pf_rand() % (uint64_t)nb) *
				    PF_SECTOR;
			if (pl.c > o->off)
				pf.torn_ops++;
			size = o->old_size;
			if (!o->trunc && pl.c > size)
				size = pl.c < o->new_size ? pl.c : o->new_size;
		} else
			size = p->ops[p->nops - 1].new_size;
	} else if (pf.mode == PF_SECTORS && pf_rand() % 2 == 0)
		size = p->ops[p->nops - 1].new_size;
	for (i = p->nops; i-- > 0;) {
		uint64_t n = pf_undo(p, i, &pl);

		pf.lost_bytes += n;
		if (n > 0)
			pf.lost_ops++;
		else
			pf.kept_ops++;
	}
	if (ftruncate(p->fd, size) == -1)
		perror("powerfs: cut: ftruncate");
}

/* The power cut: the files, then the tree; every call after it is EIO. */
int
pf_cut(void)
{
	struct pf_ino	*p;

	if (pf.frozen)
		return (0);
	pf.frozen = 1;
	pf.cuts++;
	while ((p = pf.inos) != NULL) {
		pf.inos = p->next;
		pf_cut_file(p);
		pf_ino_free(p);
		close(p->fd);
		free(p);
	}
	return (pf_tree_rebuild());
}

size_t
pf_status(char *buf, size_t len)
{
	int	 n;

	n = snprintf(buf, len, "mode %s\nfrozen %d\narm %ld\nfsyncs %" PRIu64
	    "\ndirsyncs %" PRIu64 "\nwrites %" PRIu64 "\npending_bytes %"
	    PRIu64 "\ncuts %" PRIu64 "\nlost_ops %" PRIu64 "\nkept_ops %"
	    PRIu64 "\ntorn_ops %" PRIu64 "\nlost_bytes %" PRIu64 "\nmissing %"
	    PRIu64 "\n", pf_mode_name(pf.mode), pf.frozen, pf.arm,
	    pf.fsyncs, pf.dirsyncs, pf.writes, pf.pending_bytes, pf.cuts,
	    pf.lost_ops, pf.kept_ops, pf.torn_ops, pf.lost_bytes,
	    pf.missing);
	return (n < 0 ? 0 : (size_t)n < len ? (size_t)n : len - 1);
}
