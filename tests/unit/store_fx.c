/*
 * The store tests' fixture and helpers (see store_fx.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "store_fx.h"

const char *
fx_etcd_url(void)
{
	const char	*url = getenv("METAD_TEST_ETCD");

	return (url != NULL && *url != '\0' ? url : NULL);
}

int
fx_per_request(const struct fx *f)
{
	return ((f->s->backend->caps & STORE_CAP_PER_REQUEST) != 0);
}

uint64_t
fx_abs(const struct fx *f, uint64_t rev)
{
	return (f->r0 + rev);
}

uint64_t
fx_rev(const struct fx *f)
{
	assert_true(f->s->rev >= f->r0);
	return (f->s->rev - f->r0);
}

/* etcd's compactions are the cluster's: one of an earlier test is 0. */
uint64_t
fx_compact_rev(const struct fx *f)
{
	return (f->s->compact_rev > f->r0 ? f->s->compact_rev - f->r0 : 0);
}

static struct store *
fx_open(struct fx *f, const struct store_options *opts)
{
	struct store_err	 err;
	struct store		*s;

	memset(&err, 0, sizeof err);
	s = store_open(f->spec, opts, &err);
	if (s == NULL)
		fail_msg("store_open %s: %s", f->spec, err.msg);
	return (s);
}

/* A prefix of its own for each etcd test, of each run. */
static void
fx_etcd_init(struct fx *f, const char *url)
{
	static unsigned	 n;

	snprintf(f->prefix, sizeof f->prefix, "metad-test/%lld.%ld.%u/",
	    (long long)time(NULL), (long)getpid(), n++);
	snprintf(f->spec, sizeof f->spec, "etcd:%s", url);
	if ((f->base = event_base_new()) == NULL)
		fail_msg("event_base_new failed");
	f->opts.prefix = f->prefix;
	f->opts.base = f->base;
}

int
fx_setup(void **state)
{
	struct fx	*f = *state;

	memset(&f->opts, 0, sizeof f->opts);
	f->opts.sync = STORE_SYNC_FULL;
	f->dir[0] = '\0';
	f->base = NULL;
	f->r0 = 0;
	if (strcmp(f->kind, "memory") == 0)
		snprintf(f->spec, sizeof f->spec, "memory");
	else if (strcmp(f->kind, "sqlite") == 0) {
		snprintf(f->dir, sizeof f->dir, "/tmp/test_store.XXXXXX");
		if (mkdtemp(f->dir) == NULL)
			return (-1);
		snprintf(f->spec, sizeof f->spec, "sqlite:%s/a/b/meta.db",
		    f->dir);
	} else if (strcmp(f->kind, "etcd") == 0 && fx_etcd_url() != NULL)
		fx_etcd_init(f, fx_etcd_url());
	else
		return (-1);
	buf_init(&f->out);
	f->s = fx_open(f, &f->opts);
	f->r0 = f->s->rev;
	if (fx_nkeys(f) != 0)
		fail_msg("%s: the prefix %s is not empty", f->spec, f->prefix);
	return (0);
}

static int
fx_rm(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return (remove(path));
}

int
fx_teardown(void **state)
{
	struct fx	*f = *state;

	store_close(f->s);
	f->s = NULL;
	buf_free(&f->out);
	if (f->dir[0] != '\0')
		nftw(f->dir, fx_rm, 16, FTW_DEPTH | FTW_PHYS);
	f->dir[0] = '\0';
	if (f->base != NULL)
		event_base_free(f->base);
	f->base = NULL;
	return (0);
}

void
fx_reopen(struct fx *f, const struct store_options *opts)
{
	struct store_options	 o = opts != NULL ? *opts : f->opts;

	o.prefix = f->opts.prefix;
	o.base = f->opts.base;
	store_close(f->s);
	f->s = fx_open(f, &o);
}

void
fx_twin(struct fx *f, struct fx *g, const char *prefix)
{
	memset(g, 0, sizeof *g);
	g->kind = f->kind;
	snprintf(g->spec, sizeof g->spec, "%s", f->spec);
	snprintf(g->prefix, sizeof g->prefix, "%s", prefix);
	g->opts = f->opts;
	g->opts.prefix = g->prefix;
	g->base = f->base;
	buf_init(&g->out);
	g->s = fx_open(g, &g->opts);
	g->r0 = f->r0;
}

void
fx_twin_close(struct fx *g)
{
	store_close(g->s);
	g->s = NULL;
	buf_free(&g->out);
}

static void
fx_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	*(int *)arg = 1;
}

/* Run f's loop until ready(f, arg), for FX_WAIT_S at most: 0 if ready. */
static int
fx_run(struct fx *f, int (*ready)(struct fx *, void *), void *arg)
{
	struct timeval	 tv = { FX_WAIT_S, 0 };
	struct event	*timer;
	int		 late = 0;

	timer = evtimer_new(f->base, fx_timeout_cb, &late);
	assert_non_null(timer);
	evtimer_add(timer, &tv);
	while (!ready(f, arg) && !late) {
		if (event_base_loop(f->base, EVLOOP_ONCE) == -1)
			break;
	}
	event_free(timer);
	return (ready(f, arg) ? 0 : -1);
}

/* The answer of an asynchronous begin or commit. */
struct fx_call {
	int			 done;
	int			 failed;
	struct store_err	 err;
};

static void
fx_call_done(void *arg, const struct store_err *err)
{
	struct fx_call	*c = arg;

	c->done = 1;
	if (err != NULL) {
		c->failed = 1;
		c->err = *err;
	}
}

static int
fx_rev_ready(struct fx *f, void *arg)
{
	return (f->s->rev >= *(uint64_t *)arg);
}

static int
fx_flag_ready(struct fx *f, void *arg)
{
	return (*(int *)arg);
}

void
fx_wait(struct fx *f, int *flag)
{
	if (fx_run(f, fx_flag_ready, flag) != 0)
		fail_msg("no answer from etcd in %d s", FX_WAIT_S);
}

void
fx_wait_rev(struct fx *f, uint64_t rev)
{
	uint64_t	 abs = fx_abs(f, rev);

	if (fx_run(f, fx_rev_ready, &abs) != 0)
		fail_msg("the events of rev %" PRIu64 " did not come in %d s",
		    rev, FX_WAIT_S);
}

static void
fx_fmt_bytes(struct buf *b, const void *p, size_t len)
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
fx_fmt_kv(struct fx *f, const struct store_kv *kv)
{
	assert_true(kv->key_len > 0);
	assert_int_equal(kv->key[kv->key_len], '\0');
	assert_true(kv->create_rev > f->r0);
	assert_true(kv->mod_rev >= kv->create_rev);
	fx_fmt_bytes(&f->out, kv->key, kv->key_len);
	buf_printf(&f->out, "@%" PRIu64 "/%" PRIu64 "/%" PRIu64, kv->version,
	    kv->create_rev - f->r0, kv->mod_rev - f->r0);
	if (kv->value != NULL) {
		buf_addc(&f->out, '=');
		fx_fmt_bytes(&f->out, kv->value, kv->value_len);
	}
}

int
fx_kv_cb(const struct store_kv *kv, void *arg)
{
	struct fx	*f = arg;

	if (f->out.len > 0)
		buf_addc(&f->out, ' ');
	fx_fmt_kv(f, kv);
	return (0);
}

int
fx_ev_cb(const struct store_event *ev, void *arg)
{
	struct fx	*f = arg;

	if (f->out.len > 0)
		buf_addc(&f->out, ' ');
	assert_true(ev->rev > f->r0);
	assert_int_equal(ev->kv.mod_rev, ev->rev);
	buf_printf(&f->out, "%" PRIu64 ".%u:", ev->rev - f->r0, ev->seq);
	if (ev->type == STORE_EVENT_DELETE) {
		assert_null(ev->kv.value);
		assert_int_equal(ev->kv.version, 0);
		assert_int_equal(ev->kv.create_rev, 0);
		assert_int_equal(ev->kv.key[ev->kv.key_len], '\0');
		buf_addstr(&f->out, "del:");
		fx_fmt_bytes(&f->out, ev->kv.key, ev->kv.key_len);
		return (0);
	}
	fx_fmt_kv(f, &ev->kv);
	return (0);
}

const char *
fx_get(struct fx *f, const char *key, size_t len)
{
	struct store_err	 err;
	int			 rc;

	buf_reset(&f->out);
	rc = store_get(f->s, key, len, fx_kv_cb, f, &err);
	if (rc == -1)
		fail_msg("get: %s", err.msg);
	assert_int_equal(rc, f->out.len > 0 ? 1 : 0);
	return (buf_cstr(&f->out));
}

const char *
fx_list(struct fx *f, const struct store_range *r, long n, int more)
{
	struct store_err	 err;
	long			 got;
	int			 m = -1;

	buf_reset(&f->out);
	got = store_range(f->s, r, fx_kv_cb, f, &m, &err);
	if (got == -1 && n != -1)
		fail_msg("range: %s", err.msg);
	assert_int_equal(got, n);
	assert_int_equal(m, more);
	return (buf_cstr(&f->out));
}

const char *
fx_history(struct fx *f, uint64_t from)
{
	struct store_err	 err;

	buf_reset(&f->out);
	if (store_history(f->s, fx_abs(f, from), fx_ev_cb, f, &err) != 0)
		fail_msg("history from %" PRIu64 ": %s", from, err.msg);
	return (buf_cstr(&f->out));
}

uint64_t
fx_nkeys(struct fx *f)
{
	struct store_stats	 st;
	struct store_err	 err;

	if (store_stats(f->s, &st, &err) != 0)
		fail_msg("stats: %s", err.msg);
	return (st.keys);
}

void
fx_begin(struct fx *f)
{
	struct store_keys	 ks;

	ks.n = 0;
	fx_begin_keys(f, &ks);
}

void
fx_begin_keys(struct fx *f, const struct store_keys *ks)
{
	struct store_err	 err;
	struct fx_call		 c;

	if (!fx_per_request(f)) {
		if (store_begin(f->s, &err) != 0)
			fail_msg("begin: %s", err.msg);
		return;
	}
	memset(&c, 0, sizeof c);
	if (store_begin_async(f->s, ks, fx_call_done, &c, &err) != 0)
		fail_msg("begin: %s", err.msg);
	fx_wait(f, &c.done);
	if (c.failed)
		fail_msg("begin: %s", c.err.msg);
	if (f->s->base_rev != f->s->rev)
		fail_msg("etcd is at rev %" PRIu64 ", this test's writes "
		    "brought it to %" PRIu64 ": a writer outside the test "
		    "moved it (these tests need an etcd of their own)",
		    f->s->base_rev, f->s->rev);
}

int
fx_try_commit(struct fx *f, uint64_t rev, struct store_err *err)
{
	struct fx_call	 c;

	if (!fx_per_request(f))
		return (store_commit(f->s, fx_abs(f, rev), err));
	memset(&c, 0, sizeof c);
	if (store_commit_async(f->s, fx_abs(f, rev), fx_call_done, &c,
	    err) != 0)
		return (-1);
	fx_wait(f, &c.done);
	if (c.failed) {
		*err = c.err;
		return (-1);
	}
	fx_wait_rev(f, f->s->commit_rev - f->r0);
	return (0);
}

void
fx_commit(struct fx *f, uint64_t rev)
{
	struct store_err	 err;

	if (fx_try_commit(f, rev, &err) != 0)
		fail_msg("commit at %" PRIu64 ": %s", rev, err.msg);
	assert_int_equal(f->s->commit_rev, fx_abs(f, rev));
	assert_int_equal(fx_rev(f), rev);
}

uint64_t
fx_put(struct fx *f, uint64_t rev, uint32_t seq, const char *key,
    size_t klen, const char *value, size_t vlen)
{
	struct store_err	 err;
	struct store_kv		 meta;
	uint64_t		 prev = 99;

	if (store_put(f->s, fx_abs(f, rev), seq, key, klen, value, vlen,
	    &meta, &prev, &err) != 0)
		fail_msg("put: %s", err.msg);
	assert_null(meta.value);
	assert_int_equal(meta.mod_rev, fx_abs(f, rev));
	assert_memory_equal(meta.key, key, klen);
	assert_int_equal(meta.version, prev + 1);
	return (prev);
}

int
fx_del(struct fx *f, uint64_t rev, uint32_t seq, const char *key,
    size_t klen)
{
	struct store_err	 err;
	int			 deleted = -1;

	if (store_delete(f->s, fx_abs(f, rev), seq, key, klen, &deleted,
	    &err) != 0)
		fail_msg("delete: %s", err.msg);
	return (deleted);
}

void
fx_put1(struct fx *f, const char *key, const char *value)
{
	uint64_t	 rev = fx_rev(f) + 1;

	fx_begin(f);
	fx_put(f, rev, 0, key, strlen(key), value, strlen(value));
	fx_commit(f, rev);
}

int
fx_compact(struct fx *f, uint64_t rev, struct store_err *err)
{
	return (store_compact(f->s, fx_abs(f, rev), err));
}
