/*
 * Unit tests of the versioned store (daemon/store*.c), run against both
 * backends: memory, and SQLite in a fresh temporary directory.  Results are
 * rendered as text ("key@version/create_rev/mod_rev=value", bytes outside
 * printable ASCII as \xHH) so that each expectation reads on one line.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/resource.h>

#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store.h"
#include "util.h"

struct fx {
	const char	*kind;		/* "memory" or "sqlite" */
	char		 dir[64];
	char		 spec[128];
	struct store	*s;
	struct buf	 out;
};

static struct fx	 fx_mem = { "memory", "", "", NULL, { NULL, 0, 0 } };
static struct fx	 fx_sql = { "sqlite", "", "", NULL, { NULL, 0, 0 } };

#define S(lit)	(lit), (sizeof(lit) - 1)

static struct store *
fx_open(struct fx *f)
{
	struct store_err	 err;
	struct store		*s;

	s = store_open(f->spec, NULL, &err);
	if (s == NULL)
		fail_msg("store_open %s: %s", f->spec, err.msg);
	return (s);
}

static int
fx_setup(void **state)
{
	struct fx	*f = *state;

	if (strcmp(f->kind, "memory") == 0)
		snprintf(f->spec, sizeof f->spec, "memory");
	else {
		snprintf(f->dir, sizeof f->dir, "/tmp/test_store.XXXXXX");
		if (mkdtemp(f->dir) == NULL)
			return (-1);
		snprintf(f->spec, sizeof f->spec, "sqlite:%s/a/b/meta.db",
		    f->dir);
	}
	f->s = fx_open(f);
	buf_init(&f->out);
	return (0);
}

static int
fx_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return (remove(path));
}

static int
fx_teardown(void **state)
{
	struct fx	*f = *state;

	store_close(f->s);
	f->s = NULL;
	buf_free(&f->out);
	if (f->dir[0] != '\0')
		nftw(f->dir, fx_rm, 16, FTW_DEPTH | FTW_PHYS);
	f->dir[0] = '\0';
	return (0);
}

static void
fmt_bytes(struct buf *b, const void *p, size_t len)
{
	const unsigned char	*u = p;
	size_t			 i;

	for (i = 0; i < len; i++) {
		if (u[i] > ' ' && u[i] < 0x7f && u[i] != '\\')
			buf_addc(b, (char)u[i]);
		else
			buf_printf(b, "\\x%02x", u[i]);
	}
}

/* Also checks what every kv handed to a callback promises. */
static void
fmt_kv(struct buf *b, const struct store_kv *kv)
{
	assert_true(kv->key_len > 0);
	assert_int_equal(kv->key[kv->key_len], '\0');
	fmt_bytes(b, kv->key, kv->key_len);
	buf_printf(b, "@%llu/%llu/%llu", (unsigned long long)kv->version,
	    (unsigned long long)kv->create_rev,
	    (unsigned long long)kv->mod_rev);
	if (kv->value != NULL) {
		buf_addc(b, '=');
		fmt_bytes(b, kv->value, kv->value_len);
	}
}

static int
kv_cb(const struct store_kv *kv, void *arg)
{
	struct buf	*b = arg;

	if (b->len > 0)
		buf_addc(b, ' ');
	fmt_kv(b, kv);
	return (0);
}

static int
kv_stop_cb(const struct store_kv *kv, void *arg)
{
	kv_cb(kv, arg);
	return (1);
}

static int
ev_cb(const struct store_event *ev, void *arg)
{
	struct buf	*b = arg;

	if (b->len > 0)
		buf_addc(b, ' ');
	buf_printf(b, "%llu.%u:", (unsigned long long)ev->rev, ev->seq);
	if (ev->type == STORE_EVENT_DELETE) {
		assert_null(ev->kv.value);
		assert_int_equal(ev->kv.version, 0);
		assert_int_equal(ev->kv.create_rev, 0);
		assert_int_equal(ev->kv.mod_rev, ev->rev);
		assert_int_equal(ev->kv.key[ev->kv.key_len], '\0');
		buf_addstr(b, "del:");
		fmt_bytes(b, ev->kv.key, ev->kv.key_len);
		return (0);
	}
	assert_int_equal(ev->kv.mod_rev, ev->rev);
	fmt_kv(b, &ev->kv);
	return (0);
}

/* The kv at key as text, or "" when absent. */
static const char *
get(struct fx *f, const char *key, size_t len)
{
	struct store_err	 err;
	int			 rc;

	buf_reset(&f->out);
	rc = store_get(f->s, key, len, kv_cb, &f->out, &err);
	assert_int_equal(rc, f->out.len > 0 ? 1 : 0);
	return (buf_cstr(&f->out));
}

static const char *
list(struct fx *f, const struct store_range *r, long n, int more)
{
	struct store_err	 err;
	long			 got;
	int			 m = -1;

	buf_reset(&f->out);
	got = store_range(f->s, r, kv_cb, &f->out, &m, &err);
	assert_int_equal(got, n);
	assert_int_equal(m, more);
	return (buf_cstr(&f->out));
}

static const char *
history(struct fx *f, uint64_t from)
{
	struct store_err	 err;

	buf_reset(&f->out);
	assert_int_equal(store_history(f->s, from, ev_cb, &f->out, &err), 0);
	return (buf_cstr(&f->out));
}

static uint64_t
nkeys(struct fx *f)
{
	struct store_stats	 st;
	struct store_err	 err;

	assert_int_equal(store_stats(f->s, &st, &err), 0);
	return (st.keys);
}

static void
begin(struct fx *f)
{
	struct store_err	 err;

	if (store_begin(f->s, &err) != 0)
		fail_msg("begin: %s", err.msg);
}

static void
commit(struct fx *f, uint64_t rev)
{
	struct store_err	 err;

	if (store_commit(f->s, rev, &err) != 0)
		fail_msg("commit: %s", err.msg);
	assert_int_equal(f->s->rev, rev);
}

static uint64_t
put(struct fx *f, uint64_t rev, uint32_t seq, const char *key, size_t klen,
    const char *value, size_t vlen)
{
	struct store_err	 err;
	struct store_kv		 meta;
	uint64_t		 prev = 99;

	if (store_put(f->s, rev, seq, key, klen, value, vlen, &meta, &prev,
	    &err) != 0)
		fail_msg("put: %s", err.msg);
	assert_null(meta.value);
	assert_int_equal(meta.mod_rev, rev);
	assert_memory_equal(meta.key, key, klen);
	assert_int_equal(meta.version, prev + 1);
	return (prev);
}

static int
del(struct fx *f, uint64_t rev, uint32_t seq, const char *key, size_t klen)
{
	struct store_err	 err;
	int			 deleted = -1;

	if (store_delete(f->s, rev, seq, key, klen, &deleted, &err) != 0)
		fail_msg("delete: %s", err.msg);
	return (deleted);
}

/* One committed put of a string key and value at the next rev. */
static void
put1(struct fx *f, const char *key, const char *value)
{
	uint64_t	 rev = f->s->rev + 1;

	begin(f);
	put(f, rev, 0, key, strlen(key), value, strlen(value));
	commit(f, rev);
}

static void
test_versions(void **state)
{
	struct fx	*f = *state;

	assert_int_equal(f->s->rev, 0);
	assert_string_equal(get(f, S("k")), "");
	begin(f);
	assert_int_equal(put(f, 1, 0, S("k"), S("v1")), 0);
	commit(f, 1);
	assert_string_equal(get(f, S("k")), "k@1/1/1=v1");
	begin(f);
	assert_int_equal(put(f, 2, 0, S("k"), S("v2")), 1);
	commit(f, 2);
	assert_string_equal(get(f, S("k")), "k@2/1/2=v2");
	begin(f);
	assert_int_equal(del(f, 3, 0, S("k")), 1);
	assert_int_equal(del(f, 3, 1, S("k")), 0);
	assert_int_equal(del(f, 3, 2, S("never")), 0);
	commit(f, 3);
	assert_string_equal(get(f, S("k")), "");
	begin(f);
	assert_int_equal(put(f, 4, 0, S("k"), S("v3")), 0);
	assert_int_equal(put(f, 4, 1, S("k"), S("v4")), 1);
	commit(f, 4);
	assert_string_equal(get(f, S("k")), "k@2/4/4=v4");
	assert_string_equal(history(f, 0), "1.0:k@1/1/1=v1 2.0:k@2/1/2=v2 "
	    "3.0:del:k 4.0:k@1/4/4=v3 4.1:k@2/4/4=v4");
	assert_int_equal(nkeys(f), 1);
}

static void
test_batch_reads(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0 };

	put1(f, "a", "1");
	begin(f);
	put(f, 2, 0, S("b"), S("2"));
	put(f, 2, 1, S("a"), S("3"));
	assert_string_equal(get(f, S("b")), "b@1/2/2=2");
	assert_string_equal(list(f, &r, 2, 0), "a@2/1/2=3 b@1/2/2=2");
	assert_string_equal(history(f, 2), "2.0:b@1/2/2=2 2.1:a@2/1/2=3");
	assert_int_equal(nkeys(f), 2);
	assert_int_equal(f->s->rev, 1);
	commit(f, 2);
	assert_string_equal(list(f, &r, 2, 0), "a@2/1/2=3 b@1/2/2=2");
}

static void
test_rollback(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0 };
	struct store_err	 err;
	char			 before[256], hist[256];

	put1(f, "a", "1");
	put1(f, "b", "2");
	put1(f, "c", "3");
	snprintf(before, sizeof before, "%s", list(f, &r, 3, 0));
	snprintf(hist, sizeof hist, "%s", history(f, 0));
	begin(f);
	put(f, 4, 0, S("a"), S("x"));
	assert_int_equal(del(f, 4, 1, S("b")), 1);
	put(f, 4, 2, S("d"), S("new"));
	assert_int_equal(del(f, 4, 3, S("d")), 1);
	put(f, 4, 4, S("d"), S("again"));
	assert_int_equal(store_compact(f->s, 3, &err), 0);
	assert_int_equal(f->s->compact_rev, 3);
	store_rollback(f->s);
	assert_int_equal(f->s->in_batch, 0);
	assert_int_equal(f->s->rev, 3);
	assert_int_equal(f->s->compact_rev, 0);
	assert_string_equal(list(f, &r, 3, 0), before);
	assert_string_equal(history(f, 0), hist);
	assert_int_equal(nkeys(f), 3);
	put1(f, "d", "4");
	assert_string_equal(get(f, S("d")), "d@1/4/4=4");
}

static void
test_mark_undo(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0 };
	struct store_err	 err;

	put1(f, "c", "keep");
	begin(f);
	assert_int_equal(store_undo(f->s, &err), -1);
	put(f, 2, 0, S("a"), S("1"));
	assert_int_equal(store_mark(f->s, &err), 0);
	put(f, 3, 0, S("a"), S("2"));
	assert_int_equal(store_mark(f->s, &err), 0);
	put(f, 4, 0, S("b"), S("x"));
	put(f, 4, 1, S("a"), S("3"));
	assert_int_equal(del(f, 4, 2, S("c")), 1);
	assert_int_equal(nkeys(f), 2);
	assert_int_equal(store_undo(f->s, &err), 0);
	assert_string_equal(list(f, &r, 2, 0), "a@2/2/3=2 c@1/1/1=keep");
	assert_int_equal(nkeys(f), 2);
	assert_string_equal(history(f, 2), "2.0:a@1/2/2=1 3.0:a@2/2/3=2");
	assert_int_equal(store_mark(f->s, &err), 0);
	put(f, 4, 0, S("e"), S("5"));
	commit(f, 4);
	assert_string_equal(list(f, &r, 3, 0),
	    "a@2/2/3=2 c@1/1/1=keep e@1/4/4=5");
	assert_string_equal(history(f, 2),
	    "2.0:a@1/2/2=1 3.0:a@2/2/3=2 4.0:e@1/4/4=5");
	assert_int_equal(nkeys(f), 3);
}

static void
test_list_paging(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "a/", 2, NULL, 0, 2, 0 };

	put1(f, "a/3", "3");
	put1(f, "a/1", "1");
	put1(f, "b", "b");
	put1(f, "a/2", "2");
	put1(f, "a", "a");
	put1(f, "a/", "slash");
	assert_string_equal(list(f, &r, 2, 1), "a/@1/6/6=slash a/1@1/2/2=1");
	r.after = "a/1";
	r.after_len = 3;
	assert_string_equal(list(f, &r, 2, 0), "a/2@1/4/4=2 a/3@1/1/1=3");
	r.limit = 1;
	assert_string_equal(list(f, &r, 1, 1), "a/2@1/4/4=2");
	r.after = "a";			/* below the prefix */
	r.after_len = 1;
	r.keys_only = 1;
	assert_string_equal(list(f, &r, 1, 1), "a/@1/6/6");
	r.after = "a/3";
	r.after_len = 3;
	assert_string_equal(list(f, &r, 0, 0), "");
	r.after = "zz";
	r.after_len = 2;
	assert_string_equal(list(f, &r, 0, 0), "");
	r.prefix = "c";
	r.prefix_len = 1;
	r.after = NULL;
	assert_string_equal(list(f, &r, 0, 0), "");
	r.prefix = "";
	r.prefix_len = 0;
	r.limit = 100;
	assert_string_equal(list(f, &r, 6, 0), "a@1/5/5 a/@1/6/6 a/1@1/2/2 "
	    "a/2@1/4/4 a/3@1/1/1 b@1/3/3");
}

static void
test_list_stop(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 1 };
	struct store_err	 err;
	int			 more = -1;

	put1(f, "x", "1");
	put1(f, "y", "2");
	buf_reset(&f->out);
	assert_int_equal(store_range(f->s, &r, kv_stop_cb, &f->out, &more,
	    &err), 1);
	assert_int_equal(more, 1);
	assert_string_equal(buf_cstr(&f->out), "x@1/1/1");
	r.limit = 0;
	assert_int_equal(store_range(f->s, &r, kv_cb, &f->out, &more, &err),
	    -1);
}

static void
test_list_bytewise(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 100, 1 };
	static const char	*keys[] = {
		"\xff\xff", "a\xff\x01", "a", "\xff", "a\xff", "\x01",
		"a\xff\xff", "a\x80", "b", "a\xff\xff\x7f", "A"
	};
	size_t			 i;

	for (i = 0; i < sizeof keys / sizeof keys[0]; i++)
		put1(f, keys[i], "");
	assert_string_equal(list(f, &r, 11, 0), "\\x01@1/6/6 A@1/11/11 "
	    "a@1/3/3 a\\x80@1/8/8 a\\xff@1/5/5 a\\xff\\x01@1/2/2 "
	    "a\\xff\\xff@1/7/7 a\\xff\\xff\\x7f@1/10/10 b@1/9/9 "
	    "\\xff@1/4/4 \\xff\\xff@1/1/1");
	r.prefix = "a\xff";
	r.prefix_len = 2;
	assert_string_equal(list(f, &r, 4, 0), "a\\xff@1/5/5 "
	    "a\\xff\\x01@1/2/2 a\\xff\\xff@1/7/7 a\\xff\\xff\\x7f@1/10/10");
	r.prefix = "a\xff\xff";
	r.prefix_len = 3;
	assert_string_equal(list(f, &r, 2, 0),
	    "a\\xff\\xff@1/7/7 a\\xff\\xff\\x7f@1/10/10");
	r.prefix = "\xff";
	r.prefix_len = 1;
	r.after = "\xff";
	r.after_len = 1;
	assert_string_equal(list(f, &r, 1, 0), "\\xff\\xff@1/1/1");
	r.keys_only = 0;
	r.prefix = "a";
	r.prefix_len = 1;
	r.after = "a\xff";
	r.after_len = 2;
	assert_string_equal(list(f, &r, 3, 0), "a\\xff\\x01@1/2/2= "
	    "a\\xff\\xff@1/7/7= a\\xff\\xff\\x7f@1/10/10=");
}

static void
test_binary_values(void **state)
{
	struct fx		*f = *state;
	static const char	 bin[] = "\0a\0\xff\x01";
	struct store_range	 r = { "", 0, NULL, 0, 10, 0 };

	begin(f);
	put(f, 1, 0, S("bin"), bin, sizeof bin);
	put(f, 1, 1, S("empty"), NULL, 0);
	commit(f, 1);
	assert_string_equal(get(f, S("bin")),
	    "bin@1/1/1=\\x00a\\x00\\xff\\x01\\x00");
	assert_string_equal(get(f, S("empty")), "empty@1/1/1=");
	assert_string_equal(list(f, &r, 2, 0),
	    "bin@1/1/1=\\x00a\\x00\\xff\\x01\\x00 empty@1/1/1=");
	assert_string_equal(history(f, 1),
	    "1.0:bin@1/1/1=\\x00a\\x00\\xff\\x01\\x00 1.1:empty@1/1/1=");
}

static void
test_history_order(void **state)
{
	struct fx	*f = *state;

	begin(f);
	put(f, 1, 0, S("b"), S("1"));
	put(f, 1, 1, S("a"), S("2"));
	put(f, 2, 0, S("c"), S("3"));
	commit(f, 2);
	begin(f);
	assert_int_equal(del(f, 3, 0, S("b")), 1);
	put(f, 3, 1, S("b"), S("4"));
	put(f, 5, 0, S("a"), S("5"));
	commit(f, 5);
	assert_string_equal(history(f, 0), "1.0:b@1/1/1=1 1.1:a@1/1/1=2 "
	    "2.0:c@1/2/2=3 3.0:del:b 3.1:b@1/3/3=4 5.0:a@2/1/5=5");
	assert_string_equal(history(f, 3), "3.0:del:b 3.1:b@1/3/3=4 "
	    "5.0:a@2/1/5=5");
	assert_string_equal(history(f, 4), "5.0:a@2/1/5=5");
	assert_string_equal(history(f, 6), "");
}

static void
test_compact(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	int			 i;
	char			 k[16];

	for (i = 1; i <= 5; i++) {
		snprintf(k, sizeof k, "k%d", i);
		put1(f, k, "v");
	}
	assert_int_equal(store_compact(f->s, 3, &err), 0);
	assert_int_equal(f->s->compact_rev, 3);
	assert_string_equal(history(f, 0), "3.0:k3@1/3/3=v 4.0:k4@1/4/4=v "
	    "5.0:k5@1/5/5=v");
	assert_int_equal(store_compact(f->s, 2, &err), 0);
	assert_int_equal(f->s->compact_rev, 3);
	assert_int_equal(store_compact(f->s, 6, &err), -1);
	assert_int_equal(err.code, STORE_ERR_INTERNAL);
	assert_non_null(strstr(err.msg, "beyond the current rev 5"));
	begin(f);
	put(f, 6, 0, S("k6"), S("v"));
	assert_int_equal(store_compact(f->s, 5, &err), 0);
	assert_string_equal(history(f, 0), "5.0:k5@1/5/5=v 6.0:k6@1/6/6=v");
	commit(f, 6);
	assert_int_equal(f->s->compact_rev, 5);
	assert_string_equal(history(f, 0), "5.0:k5@1/5/5=v 6.0:k6@1/6/6=v");
	assert_int_equal(store_compact(f->s, 6, &err), 0);
	assert_string_equal(history(f, 0), "6.0:k6@1/6/6=v");
	assert_int_equal(nkeys(f), 6);
}

/* Many compactions of a long history (exercises the memory trim). */
static void
test_compact_many(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	uint64_t		 rev;
	char			 k[16];

	for (rev = 1; rev <= 300; rev++) {
		snprintf(k, sizeof k, "k%03d", (int)(rev % 7));
		begin(f);
		put(f, rev, 0, k, strlen(k), k, strlen(k));
		put(f, rev, 1, S("z"), k, strlen(k));
		commit(f, rev);
		if (rev > 10)
			assert_int_equal(store_compact(f->s, rev - 10, &err),
			    0);
	}
	assert_int_equal(f->s->compact_rev, 290);
	history(f, 0);
	assert_int_equal(strncmp(f->out.data, "290.0:", 6), 0);
	assert_non_null(strstr(f->out.data, " 300.1:z@300/1/300=k006"));
}

static void
test_stats(void **state)
{
	struct fx		*f = *state;
	struct store_stats	 st;
	struct store_err	 err;

	assert_int_equal(nkeys(f), 0);
	put1(f, "a", "1");
	put1(f, "b", "2");
	put1(f, "a", "3");
	assert_int_equal(nkeys(f), 2);
	begin(f);
	assert_int_equal(del(f, 4, 0, S("a")), 1);
	assert_int_equal(del(f, 4, 1, S("a")), 0);
	commit(f, 4);
	assert_int_equal(nkeys(f), 1);
	assert_int_equal(store_stats(f->s, &st, &err), 0);
	assert_true(st.db_bytes > 0);
}

static void
test_batch_protocol(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;

	assert_int_equal(store_put(f->s, 1, 0, S("a"), S("1"), NULL, NULL,
	    &err), -1);
	assert_int_equal(store_commit(f->s, 1, &err), -1);
	assert_int_equal(store_mark(f->s, &err), -1);
	store_rollback(f->s);
	put1(f, "a", "1");
	begin(f);
	assert_int_equal(store_begin(f->s, &err), -1);
	assert_int_equal(store_put(f->s, 1, 0, S("a"), S("1"), NULL, NULL,
	    &err), -1);
	assert_int_equal(store_put(f->s, 2, 0, "", 0, S("1"), NULL, NULL,
	    &err), -1);
	put(f, 2, 0, S("b"), S("1"));
	assert_int_equal(store_commit(f->s, 0, &err), -1);
	assert_int_equal(f->s->in_batch, 0);
	assert_string_equal(get(f, S("b")), "");
	begin(f);
	commit(f, 1);		/* an empty batch */
	assert_int_equal(f->s->rev, 1);
}

static void
test_open_errors(void **state)
{
	static const char	*bad[] = {
		"", "mem", "memory:x", "sqlite", "sqlite:", "redis:x",
		"etcd", "etcd:", "etcd:ftp://x:1", "etcd:http://x", "etcd:,",
	};
	struct store_err	 err;
	size_t			 i;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		memset(&err, 0, sizeof err);
		assert_null(store_open(bad[i], NULL, &err));
		assert_int_not_equal(err.code, STORE_ERR_NONE);
		assert_true(err.msg[0] != '\0');
	}
	/* Nothing listens on port 1: etcd is unreachable, not a crash. */
	assert_null(store_open("etcd:http://127.0.0.1:1", NULL, &err));
	assert_int_equal(err.code, STORE_ERR_UNAVAILABLE);
	assert_null(store_open("sqlite:/dev/null/x/meta.db", NULL, &err));
	assert_int_equal(err.code, STORE_ERR_IO);
}

static void
test_sqlite_reopen(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 0 };
	struct store_options	 opts;
	struct store_err	 err;
	char			 kvs[256], hist[256];

	memset(&opts, 0, sizeof opts);
	opts.sync = STORE_SYNC_NORMAL;
	opts.cache_bytes = 1024 * 1024;
	put1(f, "a", "1");
	put1(f, "b", "2");
	put1(f, "a", "3");
	begin(f);
	assert_int_equal(del(f, 4, 0, S("b")), 1);
	commit(f, 4);
	assert_int_equal(store_compact(f->s, 2, &err), 0);
	snprintf(kvs, sizeof kvs, "%s", list(f, &r, 1, 0));
	snprintf(hist, sizeof hist, "%s", history(f, 0));
	store_close(f->s);
	f->s = store_open(f->spec, &opts, &err);
	assert_non_null(f->s);
	assert_int_equal(f->s->rev, 4);
	assert_int_equal(f->s->compact_rev, 2);
	assert_string_equal(list(f, &r, 1, 0), kvs);
	assert_string_equal(history(f, 0), hist);
	assert_string_equal(hist, "2.0:b@1/2/2=2 3.0:a@2/1/3=3 4.0:del:b");
	assert_int_equal(nkeys(f), 1);
	put1(f, "c", "5");
	assert_string_equal(get(f, S("c")), "c@1/5/5=5");
}

static void
test_sqlite_not_a_db(void **state)
{
	struct fx		*f = *state;
	struct store_err	 err;
	char			 path[128], spec[160];
	FILE			*fp;

	snprintf(path, sizeof path, "%s/junk.db", f->dir);
	fp = fopen(path, "w");
	assert_non_null(fp);
	fprintf(fp, "%4096s\n", "this is not an SQLite database");
	fclose(fp);
	snprintf(spec, sizeof spec, "sqlite:%s", path);
	assert_null(store_open(spec, NULL, &err));
	assert_int_equal(err.code, STORE_ERR_IO);
}

/*
 * A batch of "b" and a big value under a 256 KiB file size limit: returns 1
 * if the put failed, 2 if only the commit did, 0 if neither.
 */
static int
sqlite_big_batch(struct fx *f, size_t big, struct store_err *err)
{
	struct rlimit	 old, lim;
	char		*value;
	int		 failed = 0;

	value = xcalloc(1, big);
	signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
	lim = old;
	lim.rlim_cur = 256 * 1024;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	begin(f);
	put(f, 2, 0, S("b"), S("2"));
	if (store_put(f->s, 2, 1, S("big"), value, big, NULL, NULL, err) != 0)
		failed = 1;
	if (store_commit(f->s, 2, err) != 0 && failed == 0)
		failed = 2;
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
	signal(SIGXFSZ, SIG_DFL);
	free(value);
	return (failed);
}

/* A batch that cannot be written leaves the store as it was. */
static void
test_sqlite_write_fails(void **state)
{
	struct fx		*f = *state;
	struct store_range	 r = { "", 0, NULL, 0, 10, 1 };
	struct store_err	 err;

	put1(f, "a", "1");
	/* Fits in the page cache: the commit fails writing the WAL. */
	assert_int_equal(sqlite_big_batch(f, 1024 * 1024, &err), 2);
	assert_int_equal(err.code, STORE_ERR_FULL);	/* EFBIG */
	/* Spills the cache: the put fails, then the commit refuses. */
	assert_int_equal(sqlite_big_batch(f, 16 * 1024 * 1024, &err), 1);
	assert_int_equal(err.code, STORE_ERR_FULL);	/* EFBIG */
	assert_non_null(strstr(err.msg, "aborted"));
	assert_int_equal(f->s->in_batch, 0);
	assert_int_equal(f->s->rev, 1);
	assert_string_equal(list(f, &r, 1, 0), "a@1/1/1");
	assert_string_equal(history(f, 0), "1.0:a@1/1/1=1");
	assert_int_equal(nkeys(f), 1);
	put1(f, "c", "3");
	assert_string_equal(list(f, &r, 2, 0), "a@1/1/1 c@1/2/2");
}

/*
 * Random batches of puts, deletes, marks, undos and rollbacks applied to
 * both backends at once: every listing and the history must agree.
 */
static void
model_check(struct fx *a, struct fx *b)
{
	struct store_range	 r = { "", 0, NULL, 0, 1000, 0 };
	struct store_err	 err;
	int			 ma, mb;

	buf_reset(&a->out);
	buf_reset(&b->out);
	assert_true(store_range(a->s, &r, kv_cb, &a->out, &ma, &err) >= 0);
	assert_true(store_range(b->s, &r, kv_cb, &b->out, &mb, &err) >= 0);
	assert_string_equal(buf_cstr(&a->out), buf_cstr(&b->out));
	buf_reset(&a->out);
	buf_reset(&b->out);
	assert_int_equal(store_history(a->s, 0, ev_cb, &a->out, &err), 0);
	assert_int_equal(store_history(b->s, 0, ev_cb, &b->out, &err), 0);
	assert_string_equal(buf_cstr(&a->out), buf_cstr(&b->out));
	assert_int_equal(nkeys(a), nkeys(b));
	assert_int_equal(a->s->rev, b->s->rev);
	assert_int_equal(a->s->compact_rev, b->s->compact_rev);
}

static void
model_step(struct fx **fs, int op, uint64_t rev, uint32_t seq, char *k,
    struct store_err *err)
{
	int	 i, d[2];

	for (i = 0; i < 2; i++) {
		switch (op) {
		case 0:
		case 1:
		case 2:
			put(fs[i], rev, seq, k, strlen(k), k, seq % 3);
			break;
		case 3:
			d[i] = del(fs[i], rev, seq, k, strlen(k));
			break;
		case 4:
			assert_int_equal(store_mark(fs[i]->s, err), 0);
			break;
		case 5:
			store_undo(fs[i]->s, err);
			break;
		}
	}
	if (op == 3)
		assert_int_equal(d[0], d[1]);
}

static void
test_model(void **state)
{
	struct fx		*fs[2] = { &fx_mem, &fx_sql };
	struct store_err	 err;
	uint64_t		 rev;
	uint32_t		 seq;
	int			 batch, i, n;
	char			 k[8];

	srandom(42);
	for (batch = 0; batch < 200; batch++) {
		begin(fs[0]);
		begin(fs[1]);
		rev = fs[0]->s->rev + 1;
		n = (int)(random() % 12);
		for (seq = 0; seq < (uint32_t)n; seq++) {
			snprintf(k, sizeof k, "k%ld", random() % 40);
			model_step(fs, (int)(random() % 6), rev, seq, k, &err);
			if (random() % 4 == 0)
				rev++;
		}
		model_check(fs[0], fs[1]);
		for (i = 0; i < 2; i++) {
			if (batch % 5 == 4)
				store_rollback(fs[i]->s);
			else
				commit(fs[i], rev);
			if (batch % 7 == 6 && fs[i]->s->rev > 3)
				assert_int_equal(store_compact(fs[i]->s,
				    fs[i]->s->rev - 3, &err), 0);
		}
		model_check(fs[0], fs[1]);
	}
}

static int
model_setup(void **state)
{
	void	*m = &fx_mem, *q = &fx_sql;

	return (fx_setup(&m) || fx_setup(&q));
}

static int
model_teardown(void **state)
{
	void	*m = &fx_mem, *q = &fx_sql;

	return (fx_teardown(&m) || fx_teardown(&q));
}

#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define BOTH(t)	MEM(t), SQL(t)

int
main(void)
{
	const struct CMUnitTest tests[] = {
		BOTH(test_versions),
		BOTH(test_batch_reads),
		BOTH(test_rollback),
		BOTH(test_mark_undo),
		BOTH(test_list_paging),
		BOTH(test_list_stop),
		BOTH(test_list_bytewise),
		BOTH(test_binary_values),
		BOTH(test_history_order),
		BOTH(test_compact),
		BOTH(test_compact_many),
		BOTH(test_stats),
		BOTH(test_batch_protocol),
		cmocka_unit_test(test_open_errors),
		SQL(test_sqlite_reopen),
		SQL(test_sqlite_not_a_db),
		SQL(test_sqlite_write_fails),
		cmocka_unit_test_setup_teardown(test_model, model_setup,
		    model_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
