/*
 * powerfs's tree after the cut: built again from the directories' durable
 * entries (powerfs_cut.c) in PF_NEW, of hard links to the files' inodes
 * (found where they are now, or in PF_GRAVE), then put in place of the
 * backing tree.  A directory made since its parent's last fsync is not
 * there, nor anything under it; one whose own entries were never fsynced
 * is there, empty.
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

/* Where each inode not a directory is now: (inode, path) pairs. */
struct pf_paths {
	ino_t		*ino;
	char		**rel;
	size_t		 n, cap;
};

static void
pf_paths_at(struct pf_paths *ps, const char *rel, int depth)
{
	struct pf_dir	 d = { 0 };
	char		 sub[4096];
	size_t		 i;

	if (depth > 64 || pf_read_dir(rel, &d) != 0)
		return;
	for (i = 0; i < d.n; i++) {
		snprintf(sub, sizeof sub, "%s/%s", rel, d.ents[i].name);
		if (S_ISDIR(d.ents[i].mode)) {
			if (strcmp(rel, PF_GRAVE) != 0)
				pf_paths_at(ps, sub, depth + 1);
			continue;
		}
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? ps->cap * 2 : 64;
			ps->ino = realloc(ps->ino, ps->cap * sizeof *ps->ino);
			ps->rel = realloc(ps->rel, ps->cap * sizeof *ps->rel);
			if (ps->ino == NULL || ps->rel == NULL)
				abort();
		}
		ps->ino[ps->n] = d.ents[i].ino;
		ps->rel[ps->n++] = strdup(sub);
	}
	pf_dir_free(&d);
}

/* The durable entries of directory dino, made again under rel. */
static void
pf_build(const struct pf_paths *ps, ino_t dino, const char *rel, int depth)
{
	const struct pf_dir	*d = pf_dir_find(dino);
	const struct pf_ent	*e;
	char			 sub[4096];
	size_t			 i, j;

	if (d == NULL || depth > 64)
		return;		/* made since the last fsync of its parent */
	for (i = 0; i < d->n; i++) {
		e = &d->ents[i];
		snprintf(sub, sizeof sub, "%s/%s", rel, e->name);
		if (S_ISDIR(e->mode)) {
			if (mkdirat(pf.bk, sub, e->mode & 07777) == 0)
				pf_build(ps, e->ino, sub, depth + 1);
			continue;
		}
		for (j = 0; j < ps->n && ps->ino[j] != e->ino; j++)
			;
		if (j == ps->n || linkat(pf.bk, ps->rel[j], pf.bk, sub, 0)) {
			fprintf(stderr, "powerfs: cut: %s: inode %ju lost\n",
			    sub + strlen(PF_NEW) + 1, (uintmax_t)e->ino);
			pf.missing++;
		}
	}
}

void
pf_rm_rf(int dfd, const char *name)
{
	struct dirent	*de;
	struct stat	 sb;
	DIR		*dp;
	int		 fd;

	if (fstatat(dfd, name, &sb, AT_SYMLINK_NOFOLLOW) == -1)
		return;
	if (S_ISDIR(sb.st_mode) &&
	    (fd = openat(dfd, name, O_RDONLY | O_DIRECTORY)) != -1) {
		if ((dp = fdopendir(fd)) == NULL) {
			close(fd);
			return;
		}
		while ((de = readdir(dp)) != NULL)
			if (strcmp(de->d_name, ".") != 0 &&
			    strcmp(de->d_name, "..") != 0)
				pf_rm_rf(fd, de->d_name);
		closedir(dp);
	}
	if (unlinkat(dfd, name, S_ISDIR(sb.st_mode) ? AT_REMOVEDIR : 0) == -1)
		perror("powerfs: cut: unlink");
}

/* Replaces the backing tree with the durable one. */
int
pf_tree_rebuild(void)
{
	struct pf_paths	 ps = { 0 };
	struct pf_dir	 d = { 0 };
	char		 sub[4096];
	size_t		 i;

	pf_paths_at(&ps, ".", 0);
	pf_paths_at(&ps, PF_GRAVE, 0);
	pf_rm_rf(pf.bk, PF_NEW);
	if (mkdirat(pf.bk, PF_NEW, 0700) == -1)
		return (-errno);
	pf_build(&ps, pf.root, PF_NEW, 0);
	if (pf_read_dir(".", &d) == 0)
		for (i = 0; i < d.n; i++)
			pf_rm_rf(pf.bk, d.ents[i].name);
	pf_dir_free(&d);
	if (pf_read_dir(PF_NEW, &d) == 0)
		for (i = 0; i < d.n; i++) {
			snprintf(sub, sizeof sub, "%s/%s", PF_NEW,
			    d.ents[i].name);
			if (renameat(pf.bk, sub, pf.bk, d.ents[i].name) == -1)
				perror("powerfs: cut: rename");
		}
	pf_dir_free(&d);
	pf_rm_rf(pf.bk, PF_STATE);
	for (i = 0; i < ps.n; i++)
		free(ps.rel[i]);
	free(ps.rel);
	free(ps.ino);
	return (pf.missing > 0 ? -EIO : 0);
}
