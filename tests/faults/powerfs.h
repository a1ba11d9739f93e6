/*
 * powerfs: a FUSE file system that loses power (tests/faults/powerfs.c).
 * The model of what is durable, and the power cut: powerfs_cut.c.
 */
#ifndef POWERFS_H
#define POWERFS_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#define PF_SECTOR	512
#define PF_STATE	".powerfs"		/* in the backing dir, hidden */
#define PF_GRAVE	PF_STATE "/grave"	/* unlinked, still durable */
#define PF_NEW		PF_STATE "/new"		/* the tree after the cut */
#define PF_CTL		".powerloss"		/* the control file, at / */

enum pf_mode {
	PF_DROP,	/* every write since the file's last fsync is lost */
	PF_TORN,	/* an in-order prefix is kept, its last write torn */
	PF_SECTORS	/* a random subset of the 512-byte sectors is kept */
};

/* One write or truncate since the file's last fsync: its undo. */
struct pf_op {
	off_t		 off;		/* a write's offset; a truncate's size */
	size_t		 len;		/* bytes written; bytes cut off */
	off_t		 old_size, new_size;
	unsigned char	*old;		/* what was there, up to old_size */
	size_t		 old_len;
	int		 trunc;
};

/* A file with writes since its last fsync. */
struct pf_ino {
	ino_t		 ino;
	int		 fd;		/* our own, O_RDWR */
	struct pf_op	*ops;
	size_t		 nops, cap;
	struct pf_ino	*next;
};

/* A directory's entries as of its last fsync (or the mount). */
struct pf_ent {
	char		*name;
	ino_t		 ino;
	mode_t		 mode;
};

struct pf_dir {
	ino_t		 ino;
	struct pf_ent	*ents;
	size_t		 n;
	struct pf_dir	*next;
};

struct pf {
	int		 bk;		/* the backing directory */
	ino_t		 root;
	enum pf_mode	 mode;
	uint64_t	 seed;
	int		 frozen;	/* after the cut: every call is EIO */
	long		 arm;		/* cut at the arm'th fsync from now */
	struct pf_ino	*inos;
	struct pf_dir	*dirs;
	/* Counts, for the control file. */
	uint64_t	 fsyncs, dirsyncs, writes, cuts;
	uint64_t	 lost_ops, kept_ops, lost_bytes, torn_ops;
	uint64_t	 pending_bytes, missing;
};

extern struct pf	 pf;

const char	*pf_mode_name(enum pf_mode);
int		 pf_mode_parse(const char *, enum pf_mode *);
/* The model: the mount's scan, the log of writes, fsyncs, the cut. */
int		 pf_scan(void);
int		 pf_dir_sync(const char *);
int		 pf_log_write(const char *, int, const void *, size_t, off_t);
int		 pf_log_trunc(const char *, int, off_t);
int		 pf_file_sync(const char *, int);
int		 pf_keep(const char *);
int		 pf_cut(void);
size_t		 pf_status(char *, size_t);
int		 pf_read_dir(const char *, struct pf_dir *);
void		 pf_dir_free(struct pf_dir *);
struct pf_dir	*pf_dir_find(ino_t);
int		 pf_tree_rebuild(void);
void		 pf_rm_rf(int, const char *);
/* Paths under the backing directory ("/a/b" -> "a/b", "/" -> "."). */
const char	*pf_rel(const char *);

#endif
