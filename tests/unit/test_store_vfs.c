/*
 * Unit tests of the SQLite backend's VFS (store_sqlite_vfs.c), driven
 * directly: it gathers a commit's WAL writes in a buffer, and the fsync
 * thread's fdatasync goes around it (its own descriptor), so a commit's
 * frames must all be in the file when the write of its commit frame's
 * last byte returns, however SQLite cuts the frames into writes: header
 * and page apart (as SQLite does), together, several frames in one call,
 * a header in pieces, or a WAL whose header was written before it was
 * opened.  A frame that is not a commit's end may wait in the buffer.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"

#define PG	4096
#define FR	(24 + PG)		/* a frame: its header, its page */

struct vfx {
	char		 dir[64];
	char		 db[PATH_MAX];
	char		 wal[PATH_MAX];
	sqlite3_vfs	*vfs;
	sqlite3_file	*f;
	int		 fd;		/* our own, as the fsync thread's */
};

static void
be32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

/* Frame n (from 1): its header (commit: the db size after it) and page. */
static void
frame(unsigned char *b, uint32_t n, uint32_t commit)
{
	memset(b, 0, 24);
	be32(b, n);
	be32(b + 4, commit);
	be32(b + 8, 0x5a17);
	memset(b + 24, 'a' + (int)(n % 26), PG);
}

static void
vfx_open(struct vfx *x)
{
	int	 out;

	x->f = calloc(1, (size_t)x->vfs->szOsFile);
	assert_non_null(x->f);
	assert_int_equal(x->vfs->xOpen(x->vfs, x->wal, x->f, SQLITE_OPEN_WAL |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_READWRITE, &out), SQLITE_OK);
	if (x->fd == -1)
		assert_true((x->fd = open(x->wal, O_RDONLY)) != -1);
}

static void
vfx_close(struct vfx *x)
{
	assert_int_equal(x->f->pMethods->xClose(x->f), SQLITE_OK);
	free(x->f);
	x->f = NULL;
}

static int
setup(void **state)
{
	struct vfx	*x = calloc(1, sizeof *x);
	unsigned char	 h[32] = { 0 };
	int		 fd;

	assert_non_null(x);
	snprintf(x->dir, sizeof x->dir, "/tmp/metad-vfs.XXXXXX");
	assert_non_null(mkdtemp(x->dir));
	snprintf(x->db, sizeof x->db, "%s/t.db", x->dir);
	snprintf(x->wal, sizeof x->wal, "%s/t.db-wal", x->dir);
	assert_true((fd = open(x->db, O_CREAT | O_WRONLY, 0600)) != -1);
	close(fd);
	x->vfs = sqlite3_vfs_find(store_sqlite_vfs());
	assert_non_null(x->vfs);
	x->fd = -1;
	vfx_open(x);
	/* The WAL's header: magic, version, page size. */
	be32(h, 0x377f0682);
	be32(h + 4, 3007000);
	be32(h + 8, PG);
	assert_int_equal(x->f->pMethods->xWrite(x->f, h, 32, 0), SQLITE_OK);
	*state = x;
	return (0);
}

static int
teardown(void **state)
{
	struct vfx	*x = *state;

	if (x->f != NULL)
		vfx_close(x);
	close(x->fd);
	unlink(x->wal);
	unlink(x->db);
	rmdir(x->dir);
	free(x);
	return (0);
}

static void
put(struct vfx *x, const unsigned char *b, int n, sqlite3_int64 off)
{
	assert_int_equal(x->f->pMethods->xWrite(x->f, b, n, off), SQLITE_OK);
}

/* Whether frames from..to (from 1) are in the file as written. */
static int
in_file(struct vfx *x, uint32_t from, uint32_t to)
{
	unsigned char	 want[FR], got[FR];
	uint32_t	 n;
	uint32_t	 commit;

	for (n = from; n <= to; n++) {
		off_t off = 32 + (off_t)(n - 1) * FR;

		if (pread(x->fd, got, FR, off) != FR)
			return (0);
		commit = (uint32_t)got[4] << 24 | (uint32_t)got[5] << 16 |
		    (uint32_t)got[6] << 8 | got[7];
		frame(want, n, commit);
		if (memcmp(want, got, FR) != 0)
			return (0);
	}
	return (1);
}

static sqlite3_int64
at(uint32_t n)
{
	return (32 + (sqlite3_int64)(n - 1) * FR);
}

/* SQLite's way: each frame's header, then its page, two writes. */
static void
test_apart(void **state)
{
	struct vfx	*x = *state;
	unsigned char	 b[FR];

	frame(b, 1, 0);
	put(x, b, 24, at(1));
	put(x, b + 24, PG, at(1) + 24);
	assert_false(in_file(x, 1, 1));		/* gathered: no commit yet */
	frame(b, 2, 2);
	put(x, b, 24, at(2));
	assert_false(in_file(x, 1, 1));
	put(x, b + 24, PG, at(2) + 24);
	assert_true(in_file(x, 1, 2));
}

/* Header and page in one write: still in the file at the commit. */
static void
test_together(void **state)
{
	struct vfx	*x = *state;
	unsigned char	 b[FR];

	frame(b, 1, 0);
	put(x, b, FR, at(1));
	frame(b, 2, 0);
	put(x, b, FR, at(2));
	frame(b, 3, 3);
	put(x, b, FR, at(3));
	assert_true(in_file(x, 1, 3));
	/* The next commit, of one frame. */
	frame(b, 4, 4);
	put(x, b, FR, at(4));
	assert_true(in_file(x, 4, 4));
}

/* Several frames in one call, the commit's last among them. */
static void
test_several(void **state)
{
	struct vfx	*x = *state;
	unsigned char	*b = malloc(3 * FR);

	assert_non_null(b);
	frame(b, 1, 0);
	frame(b + FR, 2, 0);
	frame(b + 2 * FR, 3, 3);
	put(x, b, 3 * FR, at(1));
	assert_true(in_file(x, 1, 3));
	/* A commit frame, then the next commit's first frame, in one. */
	frame(b, 4, 4);
	frame(b + FR, 5, 0);
	put(x, b, 2 * FR, at(4));
	assert_true(in_file(x, 4, 4));
	frame(b, 6, 6);
	put(x, b, FR, at(6));
	assert_true(in_file(x, 5, 6));
	free(b);
}

/* A header in two pieces, then the page. */
static void
test_pieces(void **state)
{
	struct vfx	*x = *state;
	unsigned char	 b[FR];

	frame(b, 1, 1);
	put(x, b, 6, at(1));
	put(x, b + 6, 18, at(1) + 6);
	put(x, b + 24, 1000, at(1) + 24);
	assert_false(in_file(x, 1, 1));
	put(x, b + 1024, PG - 1000, at(1) + 1024);
	assert_true(in_file(x, 1, 1));
}

/* Opened on a WAL whose header it did not write: the page size is read. */
static void
test_reopened(void **state)
{
	struct vfx	*x = *state;
	unsigned char	 b[FR];

	frame(b, 1, 1);
	put(x, b, FR, at(1));
	assert_true(in_file(x, 1, 1));
	vfx_close(x);
	vfx_open(x);
	frame(b, 2, 0);
	put(x, b, FR, at(2));
	frame(b, 3, 3);
	put(x, b, FR, at(3));
	assert_true(in_file(x, 1, 3));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_apart, setup, teardown),
		cmocka_unit_test_setup_teardown(test_together, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_several, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reopened, setup,
		    teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
