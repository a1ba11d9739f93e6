/*
 * Unit tests of the SQLite backend's WAL (store_sqlite_vfs.c): it grows
 * SQ_WAL_GROW bytes of zeros at a time ahead of its frames, so that an
 * fdatasync writes over blocks the file has; no zero lands on a frame,
 * and a WAL killed with zeros past its last frame replays every commit.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/stat.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_fx.h"
#include "store/sqlite/store_sqlite.h"
#include "util.h"

static struct fx	 fx_sql = { .kind = "sqlite" };

/* The WAL's size. */
static off_t
wal_size(struct fx *f)
{
	struct stat	 st;

	assert_int_equal(stat(((struct store_sqlite *)f->s->impl)->wal_path,
	    &st), 0);
	return (st.st_size);
}

/* Where its frames end: the header, then a frame header and page each. */
static off_t
wal_frames_end(struct fx *f)
{
	struct store_sqlite	*q = f->s->impl;
	struct store_err	 err;
	uint64_t		 page;

	assert_int_equal(store_sqlite_scalar(q, "PRAGMA page_size", &page,
	    &err), 0);
	return (32 + (off_t)q->wal_pages * (off_t)(page + 24));
}

/* Whether the WAL is all zeros from off on. */
static int
wal_zero_from(struct fx *f, off_t off)
{
	FILE	*fp;
	int	 c, zero = 1;

	fp = fopen(((struct store_sqlite *)f->s->impl)->wal_path, "rb");
	assert_non_null(fp);
	assert_int_equal(fseeko(fp, off, SEEK_SET), 0);
	while ((c = getc(fp)) != EOF)
		zero = zero && c == 0;
	fclose(fp);
	return (zero);
}

/* Puts of 60 KiB values, one a commit: 15 frames each. */
#define BIG_VALUE	(60 * 1024)
#define BIG_PUTS	40

static void
write_big(struct fx *f)
{
	char	*v = xmalloc(BIG_VALUE + 1), key[16];
	int	 i;

	for (i = 0; i < BIG_PUTS; i++) {
		memset(v, 'a' + i % 26, BIG_VALUE);
		v[BIG_VALUE] = '\0';
		snprintf(key, sizeof key, "big%02d", i);
		fx_put1(f, key, v);
	}
	free(v);
}

/*
 * Its size is always a multiple of SQ_WAL_GROW, past the frames by less
 * than that, and the bytes past them are zeros until frames go there.
 */
static void
test_wal_grows(void **state)
{
	struct fx		*f = *state;
	const char		*got;
	char			 key[16];
	off_t			 frames;
	int			 i;

	fx_put1(f, "a", "1");
	assert_int_equal(wal_size(f), SQ_WAL_GROW);
	frames = wal_frames_end(f);
	assert_true(wal_zero_from(f, frames));
	assert_false(wal_zero_from(f, frames - 4096));
	write_big(f);
	frames = wal_frames_end(f);
	assert_true(frames > 2 * SQ_WAL_GROW);
	assert_int_equal(wal_size(f) % SQ_WAL_GROW, 0);
	assert_true(wal_size(f) >= frames);
	assert_true(wal_size(f) - frames < SQ_WAL_GROW);
	assert_true(wal_zero_from(f, frames));
	/*
	 * Killed with zeros past its last frame: the replay reads every
	 * commit, and none of them lost a byte to the zeros.
	 */
	fx_crash_after(f, write_big);
	assert_int_equal(fx_nkeys(f), BIG_PUTS + 1);
	for (i = 0; i < BIG_PUTS; i++) {
		snprintf(key, sizeof key, "big%02d", i);
		got = strchr(fx_get(f, key, strlen(key)), '=');
		assert_non_null(got);
		assert_int_equal(strlen(got + 1), BIG_VALUE);
		assert_int_equal(strspn(got + 1, (char []){ 'a' + i % 26, 0 }),
		    BIG_VALUE);
	}
}

#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }

int
main(void)
{
	const struct CMUnitTest	 tests[] = {
		SQL(test_wal_grows),
	};

	return (cmocka_run_group_tests_name("test_store_wal", tests, NULL,
	    NULL));
}
