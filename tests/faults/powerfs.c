/*
 * powerfs: a FUSE file system over a backing directory that loses power,
 * for the power-loss test (scripts/powerloss.sh, tests/bats/powerloss.bats).
 * kill -9 keeps the page cache, so it cannot tell a missing fsync from a
 * present one; this can.  The way LazyFS and SQLite's crash-test VFS do
 * it: every write since a file's last fsync may be lost, and a name is
 * durable only once its directory is fsynced (powerfs_cut.c says how).
 *
 *   powerfs [-m drop|torn|sectors] [-S SEED] [-a N] BACKING MOUNTPOINT
 *       [FUSE OPTION...]
 * It runs in the foreground, single-threaded; fusermount3 -u MOUNTPOINT
 * (or SIGTERM) stops it.  The control file MOUNTPOINT/.powerloss (not
 * listed) takes one command a write:
 *   cut         the power cut, now
 *   arm N       the cut at the Nth fsync (file or directory) from now,
 *               instead of that fsync, which fails (EIO)
 *   mode M      the mode of the cut (-m: drop, the default)
 *   seed N      the seed of its randomness (-S: the pid)
 * and reads as counts, "name value" lines (mode, frozen, fsyncs, writes,
 * lost_ops, torn_ops, lost_bytes, missing, ...).  After the cut the
 * backing directory holds what survived, and every call but the control
 * file's fails with EIO until the file system is unmounted; mount it
 * again to power on.  Exit: 0 unmounted, 1 error, 2 usage error.
 */
#define FUSE_USE_VERSION 31

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powerfs.h"

#define PF_CTL_FH	UINT64_MAX

static int
pf_is_ctl(const char *path)
{
	return (path != NULL && strcmp(path, "/" PF_CTL) == 0);
}

/* The state directory's name at the root is no one's. */
static int
pf_hidden(const char *path)
{
	size_t	 n = strlen("/" PF_STATE);

	return (path != NULL && strncmp(path, "/" PF_STATE, n) == 0 &&
	    (path[n] == '\0' || path[n] == '/'));
}

#define PF_ENTER(path) do {						\
	if (pf.frozen)							\
		return (-EIO);						\
	if (pf_hidden(path))						\
		return (-ENOENT);					\
} while (0)

static int
pf_errno(int rc)
{
	return (rc == -1 ? -errno : 0);
}

static void *
pf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	(void)conn;
	cfg->use_ino = 1;
	cfg->hard_remove = 1;
	/* A path for every call but those on an unlinked file's handle. */
	cfg->nullpath_ok = 0;
	cfg->entry_timeout = cfg->attr_timeout = cfg->negative_timeout = 0;
	return (NULL);
}

/* Unmounted with the power on: the state directory goes. */
static void
pf_destroy(void *arg)
{
	(void)arg;
	pf_rm_rf(pf.bk, PF_STATE);
}

static int
pf_getattr(const char *path, struct stat *sb, struct fuse_file_info *fi)
{
	if (pf_is_ctl(path) || (fi != NULL && fi->fh == PF_CTL_FH)) {
		memset(sb, 0, sizeof *sb);
		sb->st_mode = S_IFREG | 0600;
		sb->st_nlink = 1;
		return (0);
	}
	if (pf.frozen && path != NULL && strcmp(path, "/") == 0)
		return (pf_errno(fstat(pf.bk, sb)));
	PF_ENTER(path);
	if (fi != NULL)
		return (pf_errno(fstat((int)fi->fh, sb)));
	return (pf_errno(fstatat(pf.bk, pf_rel(path), sb,
	    AT_SYMLINK_NOFOLLOW)));
}

static int
pf_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
    struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	struct pf_dir	 d = { 0 };
	size_t		 i;
	int		 rc;

	(void)off;
	(void)fi;
	(void)flags;
	PF_ENTER(path);
	if (path == NULL)
		return (-ENOENT);
	if ((rc = pf_read_dir(pf_rel(path), &d)) != 0)
		return (rc);
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (i = 0; i < d.n; i++)
		fill(buf, d.ents[i].name, NULL, 0, 0);
	pf_dir_free(&d);
	return (0);
}

static int
pf_mkdir(const char *path, mode_t mode)
{
	PF_ENTER(path);
	return (pf_errno(mkdirat(pf.bk, pf_rel(path), mode)));
}

static int
pf_unlink(const char *path)
{
	int	 rc;

	PF_ENTER(path);
	if (pf_is_ctl(path))
		return (-EPERM);
	if ((rc = pf_keep(pf_rel(path))) < 0)
		return (rc);
	return (pf_errno(unlinkat(pf.bk, pf_rel(path), 0)));
}

static int
pf_rmdir(const char *path)
{
	struct pf_dir	 d = { 0 };
	struct stat	 sb;
	int		 rc;

	PF_ENTER(path);
	if (fstatat(pf.bk, pf_rel(path), &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return (-errno);
	if (!S_ISDIR(sb.st_mode))
		return (-ENOTDIR);
	if (sb.st_ino == pf.root)
		return (-EBUSY);
	if ((rc = pf_read_dir(pf_rel(path), &d)) != 0)
		return (rc);
	rc = d.n > 0 ? -ENOTEMPTY : 0;
	pf_dir_free(&d);
	/* Moved into the grave: its inode is not made anew meanwhile. */
	return (rc != 0 ? rc : pf_keep(pf_rel(path)) < 0 ? -EIO : 0);
}

static int
pf_rename(const char *from, const char *to, unsigned int flags)
{
	struct pf_dir	 d = { 0 };
	struct stat	 fs, ts;
	int		 rc;

	PF_ENTER(from);
	PF_ENTER(to);
	if (pf_is_ctl(from) || pf_is_ctl(to))
		return (-EPERM);
	if (fstatat(pf.bk, pf_rel(from), &fs, AT_SYMLINK_NOFOLLOW) == -1)
		return (-errno);
	if (flags == 0 &&
	    fstatat(pf.bk, pf_rel(to), &ts, AT_SYMLINK_NOFOLLOW) == 0 &&
	    ts.st_ino != fs.st_ino) {
		if (S_ISDIR(ts.st_mode) != S_ISDIR(fs.st_mode))
			return (S_ISDIR(ts.st_mode) ? -EISDIR : -ENOTDIR);
		if (S_ISDIR(ts.st_mode)) {
			if ((rc = pf_read_dir(pf_rel(to), &d)) != 0)
				return (rc);
			rc = d.n > 0 ? -ENOTEMPTY : 0;
			pf_dir_free(&d);
			if (rc != 0)
				return (rc);
		}
		if ((rc = pf_keep(pf_rel(to))) < 0)
			return (rc);
	}
	return (pf_errno(renameat2(pf.bk, pf_rel(from), pf.bk, pf_rel(to),
	    flags)));
}

static int
pf_link(const char *from, const char *to)
{
	PF_ENTER(from);
	PF_ENTER(to);
	return (pf_errno(linkat(pf.bk, pf_rel(from), pf.bk, pf_rel(to), 0)));
}

static int
pf_symlink(const char *target, const char *path)
{
	PF_ENTER(path);
	return (pf_errno(symlinkat(target, pf.bk, pf_rel(path))));
}

static int
pf_readlink(const char *path, char *buf, size_t len)
{
	ssize_t	 n;

	PF_ENTER(path);
	if (len == 0)
		return (-EINVAL);
	if ((n = readlinkat(pf.bk, pf_rel(path), buf, len - 1)) == -1)
		return (-errno);
	buf[n] = '\0';
	return (0);
}

static int
pf_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	PF_ENTER(path);
	if (fi != NULL)
		return (pf_errno(fchmod((int)fi->fh, mode)));
	return (pf_errno(fchmodat(pf.bk, pf_rel(path), mode, 0)));
}

static int
pf_chown(const char *path, uid_t uid, gid_t gid, struct fuse_file_info *fi)
{
	PF_ENTER(path);
	if (fi != NULL)
		return (pf_errno(fchown((int)fi->fh, uid, gid)));
	return (pf_errno(fchownat(pf.bk, pf_rel(path), uid, gid,
	    AT_SYMLINK_NOFOLLOW)));
}

static int
pf_utimens(const char *path, const struct timespec tv[2],
    struct fuse_file_info *fi)
{
	PF_ENTER(path);
	if (fi != NULL)
		return (pf_errno(futimens((int)fi->fh, tv)));
	return (pf_errno(utimensat(pf.bk, pf_rel(path), tv,
	    AT_SYMLINK_NOFOLLOW)));
}

static int
pf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
	int	 fd, rc;

	if (pf_is_ctl(path) || (fi != NULL && fi->fh == PF_CTL_FH))
		return (0);
	PF_ENTER(path);
	if ((rc = pf_log_trunc(path != NULL ? pf_rel(path) : NULL,
	    fi != NULL ? (int)fi->fh : -1, size)) != 0)
		return (rc);
	if (fi != NULL)
		return (pf_errno(ftruncate((int)fi->fh, size)));
	if ((fd = openat(pf.bk, pf_rel(path), O_WRONLY)) == -1)
		return (-errno);
	rc = pf_errno(ftruncate(fd, size));
	close(fd);
	return (rc);
}

/* Always O_RDWR underneath (the undo log reads what a write replaces). */
static int
pf_openat(const char *path, int flags, mode_t mode,
    struct fuse_file_info *fi)
{
	int	 fd, trunc = (flags & O_TRUNC) != 0, rc;

	flags &= ~(O_ACCMODE | O_APPEND | O_TRUNC);
	if ((fd = openat(pf.bk, pf_rel(path), flags | O_RDWR, mode)) == -1)
		return (-errno);
	if (trunc && (rc = pf_log_trunc(NULL, fd, 0)) != 0) {
		close(fd);
		return (rc);
	}
	if (trunc && ftruncate(fd, 0) == -1) {
		rc = -errno;
		close(fd);
		return (rc);
	}
	fi->fh = (uint64_t)fd;
	return (0);
}

static int
pf_open(const char *path, struct fuse_file_info *fi)
{
	if (pf_is_ctl(path)) {
		fi->fh = PF_CTL_FH;
		fi->direct_io = 1;
		return (0);
	}
	PF_ENTER(path);
	return (pf_openat(path, fi->flags, 0, fi));
}

static int
pf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
	PF_ENTER(path);
	if (pf_is_ctl(path))
		return (-EEXIST);
	return (pf_openat(path, fi->flags | O_CREAT, mode, fi));
}

static int
pf_read(const char *path, char *buf, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	char	 st[1024];
	size_t	 n;
	ssize_t	 r;

	if (fi->fh == PF_CTL_FH) {
		n = pf_status(st, sizeof st);
		if (off >= (off_t)n)
			return (0);
		n -= (size_t)off;
		memcpy(buf, st + off, n < len ? n : len);
		return ((int)(n < len ? n : len));
	}
	PF_ENTER(path);
	r = pread((int)fi->fh, buf, len, off);
	return (r == -1 ? -errno : (int)r);
}

/* The control file's commands (see the top). */
static int
pf_control(const char *buf, size_t len)
{
	char	 cmd[64], arg[64];
	int	 n;

	if (len >= 128)
		return (-EINVAL);
	{
		char	 line[128];

		memcpy(line, buf, len);
		line[len] = '\0';
		n = sscanf(line, "%63s %63s", cmd, arg);
	}
	if (n == 1 && strcmp(cmd, "cut") == 0)
		pf_cut();
	else if (n == 2 && strcmp(cmd, "arm") == 0)
		pf.arm = strtol(arg, NULL, 10);
	else if (n == 2 && strcmp(cmd, "mode") == 0) {
		if (pf_mode_parse(arg, &pf.mode) != 0)
			return (-EINVAL);
	} else if (n == 2 && strcmp(cmd, "seed") == 0)
		pf.seed = strtoull(arg, NULL, 10);
	else
		return (-EINVAL);
	return ((int)len);
}

static int
pf_write(const char *path, const char *buf, size_t len, off_t off,
    struct fuse_file_info *fi)
{
	ssize_t	 r;
	int	 rc;

	if (fi->fh == PF_CTL_FH)
		return (pf_control(buf, len));
	PF_ENTER(path);
	if ((rc = pf_log_write(NULL, (int)fi->fh, buf, len, off)) != 0)
		return (rc);
	r = pwrite((int)fi->fh, buf, len, off);
	return (r == -1 ? -errno : (int)r);
}

/* Whether this fsync is the one armed: then the power goes instead. */
static int
pf_armed(void)
{
	if (pf.arm <= 0 || --pf.arm > 0)
		return (0);
	pf_cut();
	return (1);
}

static int
pf_fsync(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	if (fi->fh == PF_CTL_FH)
		return (0);
	PF_ENTER(path);
	if (pf_armed())
		return (-EIO);
	return (pf_file_sync(NULL, (int)fi->fh));
}

static int
pf_fsyncdir(const char *path, int datasync, struct fuse_file_info *fi)
{
	(void)datasync;
	(void)fi;
	PF_ENTER(path);
	if (pf_armed())
		return (-EIO);
	return (path == NULL ? 0 : pf_dir_sync(pf_rel(path)));
}

static int
pf_release(const char *path, struct fuse_file_info *fi)
{
	(void)path;
	if (fi->fh != PF_CTL_FH)
		close((int)fi->fh);
	return (0);
}

static int
pf_statfs(const char *path, struct statvfs *sv)
{
	(void)path;
	if (pf.frozen)
		return (-EIO);
	return (pf_errno(fstatvfs(pf.bk, sv)));
}

static const struct fuse_operations pf_ops = {
	.init = pf_init,
	.destroy = pf_destroy,
	.getattr = pf_getattr,
	.readdir = pf_readdir,
	.mkdir = pf_mkdir,
	.unlink = pf_unlink,
	.rmdir = pf_rmdir,
	.rename = pf_rename,
	.link = pf_link,
	.symlink = pf_symlink,
	.readlink = pf_readlink,
	.chmod = pf_chmod,
	.chown = pf_chown,
	.utimens = pf_utimens,
	.truncate = pf_truncate,
	.open = pf_open,
	.create = pf_create,
	.read = pf_read,
	.write = pf_write,
	.fsync = pf_fsync,
	.fsyncdir = pf_fsyncdir,
	.release = pf_release,
	.statfs = pf_statfs,
};

static void
pf_usage(void)
{
	fprintf(stderr, "usage: powerfs [-m drop|torn|sectors] [-S seed] "
	    "[-a N] backing mountpoint [fuse option...]\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	char	*fargv[16];
	int	 c, fargc = 0, i;

	pf.seed = (uint64_t)getpid();
	while ((c = getopt(argc, argv, "+a:m:S:")) != -1) {
		switch (c) {
		case 'a':
			pf.arm = strtol(optarg, NULL, 10);
			break;
		case 'm':
			if (pf_mode_parse(optarg, &pf.mode) != 0)
				pf_usage();
			break;
		case 'S':
			pf.seed = strtoull(optarg, NULL, 10);
			break;
		default:
			pf_usage();
		}
	}
	argc -= optind;
	argv += optind;
	if (argc < 2 || argc > 10)
		pf_usage();
	if ((pf.bk = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1) {
		fprintf(stderr, "powerfs: %s: %s\n", argv[0], strerror(errno));
		return (1);
	}
	/* A state directory left by an earlier run is nothing of ours. */
	pf_rm_rf(pf.bk, PF_STATE);
	if (mkdirat(pf.bk, PF_STATE, 0700) == -1 ||
	    mkdirat(pf.bk, PF_GRAVE, 0700) == -1 || pf_scan() != 0) {
		fprintf(stderr, "powerfs: %s: %s\n", argv[0], strerror(errno));
		return (1);
	}
	fargv[fargc++] = (char *)"powerfs";
	fargv[fargc++] = argv[1];
	fargv[fargc++] = (char *)"-f";
	fargv[fargc++] = (char *)"-s";
	fargv[fargc++] = (char *)"-ofsname=powerfs,subtype=powerfs";
	for (i = 2; i < argc; i++)
		fargv[fargc++] = argv[i];
	fargv[fargc] = NULL;
	return (fuse_main(fargc, fargv, &pf_ops, NULL) == 0 ? 0 : 1);
}
