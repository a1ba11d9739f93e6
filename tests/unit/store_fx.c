/*
 * The store tests' fixture and helpers (see store_fx.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/wait.h>

#include <ftw.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <sqlite3.h>

#include "store_fx.h"
#include "store/sqlite/store_sqlite.h"

const char *
fx_etcd_url(void)
{
	const char	*url = getenv("METAD_TEST_ETCD");

	return (url != NULL && *url != '\0' ? url : NULL);
}

int
fx_remote(const struct fx *f)
{
	return (f->base != NULL);
}

uint64_t
fx_abs(const struct fx *f, uint64_t rev)
{
	return (f->r0 + rev);
}

uint64_t
fx_rev(const struct fx *f)
{
	assert_true(store_rev(f->s) >= f->r0);
	return (store_rev(f->s) - f->r0);
}

/* etcd's compactions are the cluster's: one of an earlier test is 0. */
uint64_t
fx_compact_rev(const struct fx *f)
{
	return (store_compact_rev(f->s) > f->r0 ?
	    store_compact_rev(f->s) - f->r0 : 0);
}

static void	fx_notify(void *, uint64_t, uint64_t);

static struct store *
fx_open(struct fx *f, const struct store_options *opts)
{
	struct store_options	 o = *opts;
	struct store_err	 err;
	struct store		*s;

	o.notify = fx_notify;
	o.notify_arg = f;
	memset(&err, 0, sizeof err);
	s = store_open(f->spec, &o, &err);
	if (s == NULL)
		fail_msg("store_open %s: %s", f->spec, err.msg);
	f->notified = store_rev(s);
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
	f->opts.view_max_bytes = f->view_max_bytes;
	f->dir[0] = '\0';
	f->base = NULL;
	f->r0 = 0;
	f->hist_max = FX_HISTORY_CHUNK;
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
	buf_init(&f->notes);
	f->s = fx_open(f, &f->opts);
	f->r0 = store_rev(f->s);
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
	buf_free(&f->notes);
	if (f->dir[0] != '\0')
		nftw(f->dir, fx_rm, 16, FTW_DEPTH | FTW_PHYS);
	f->dir[0] = '\0';
	if (f->base != NULL)
		event_base_free(f->base);
	f->base = NULL;
	return (0);
}

int
fx_loop_setup(void **state, enum store_sync sync)
{
	struct fx		*f = *state;
	struct event_base	*base;

	if (fx_setup(state) != 0 || (base = event_base_new()) == NULL)
		return (-1);
	f->opts.base = base;
	f->opts.sync = sync;
	fx_reopen(f, NULL);
	return (0);
}

int
fx_loop_teardown(void **state)
{
	struct fx		*f = *state;
	struct event_base	*base = f->opts.base;

	fx_teardown(state);	/* closes the store while the loop is there */
	f->opts.base = NULL;
	if (base != NULL)
		event_base_free(base);
	return (0);
}

void
fx_reopen(struct fx *f, const struct store_options *opts)
{
	struct store_options	 o = opts != NULL ? *opts : f->opts;

	o.prefix = f->opts.prefix;
	o.base = f->opts.base;
	store_close(f->s);
	f->s = NULL;
	f->s = fx_open(f, &o);
}

void
fx_db_exec(struct fx *f, const char *sql, int fresh)
{
	sqlite3	*db;

	store_close(f->s);
	f->s = NULL;
	if (fresh)
		unlink(f->spec + 7);
	assert_int_equal(sqlite3_open(f->spec + 7, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	fx_reopen(f, NULL);
}

long long
fx_db_scalar(struct fx *f, const char *sql)
{
	sqlite3_stmt	*st;
	sqlite3		*db;
	long long	 v = -1;

	store_close(f->s);
	f->s = NULL;
	assert_int_equal(sqlite3_open(f->spec + 7, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL),
	    SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	sqlite3_close(db);
	fx_reopen(f, NULL);
	return (v);
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
	g->hist_max = f->hist_max;
	buf_init(&g->out);
	buf_init(&g->notes);
	g->r0 = f->r0;
	g->s = fx_open(g, &g->opts);
}

void
fx_twin_close(struct fx *g)
{
	store_close(g->s);
	g->s = NULL;
	buf_free(&g->out);
	buf_free(&g->notes);
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

	if (ready(f, arg))
		return (0);
	if (f->base == NULL)
		return (-1);
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

static int
fx_rev_ready(struct fx *f, void *arg)
{
	return (store_rev(f->s) >= *(uint64_t *)arg);
}

static int
fx_flag_ready(struct fx *f, void *arg)
{
	return (*(int *)arg != 0);
}

void
fx_wait(struct fx *f, int *flag)
{
	if (fx_run(f, fx_flag_ready, flag) == 0)
		return;
	if (f->base == NULL)
		fail_msg("%s: the callback did not run before the call "
		    "returned", f->kind);
	fail_msg("no answer from etcd in %d s", FX_WAIT_S);
}

static void
fx_wait_abs(struct fx *f, uint64_t abs)
{
	if (fx_run(f, fx_rev_ready, &abs) != 0)
		fail_msg("the events of rev %" PRIu64 " did not come in %d s "
		    "(the store is at %" PRIu64 ")", abs - f->r0, FX_WAIT_S,
		    store_rev(f->s) - f->r0);
}

void
fx_wait_rev(struct fx *f, uint64_t rev)
{
	fx_wait_abs(f, fx_abs(f, rev));
}

/*
 * A local store's notify: the events it announces are in the history,
 * readable from inside the notification (the daemon reads them there).
 */
struct fx_hcheck {
	int		 calls;
	long		 n;
	int		 more;
	uint64_t	 from, to, last;
	struct store_err err;
};

static void
fx_hcheck_done(void *arg, long n, const struct store_event *evs, int more,
    const struct store_err *err)
{
	struct fx_hcheck	*h = arg;
	long			 i;

	h->calls++;
	h->n = n;
	h->more = more;
	if (n < 0) {
		h->err = *err;
		return;
	}
	for (i = 0; i < n; i++) {
		assert_true(evs[i].rev > h->from && evs[i].rev <= h->to);
		assert_true(evs[i].rev >= h->last);
		h->last = evs[i].rev;
	}
}

static void
fx_notify_history(struct fx *f, uint64_t from, uint64_t to)
{
	struct fx_hcheck	 h;
	uint64_t		 at = from + 1;

	memset(&h, 0, sizeof h);
	h.from = from;
	h.to = to;
	do {
		h.calls = 0;
		store_read_history(f->s, at, 4096, fx_hcheck_done, &h);
		assert_int_equal(h.calls, 1);
		if (h.n < 0)
			fail_msg("notify(%" PRIu64 ", %" PRIu64 "): the history "
			    "from %" PRIu64 " cannot be read: %s",
			    from - f->r0, to - f->r0, at - f->r0, h.err.msg);
		at = h.last + 1;
	} while (h.more && h.n > 0);
}

static void
fx_notify(void *arg, uint64_t from, uint64_t to)
{
	struct fx	*f = arg;

	if (f->s == NULL)
		fail_msg("notify(%" PRIu64 ", %" PRIu64 ") while the store "
		    "opens", from, to);
	if (from != f->notified || to <= from || to != store_rev(f->s))
		fail_msg("notify(%" PRIu64 ", %" PRIu64 "): the last was to %"
		    PRIu64 ", the store is at %" PRIu64, from - f->r0,
		    to - f->r0, f->notified - f->r0, store_rev(f->s) - f->r0);
	f->notified = to;
	buf_printf(&f->notes, "%s%" PRIu64 "-%" PRIu64, f->notes.len > 0 ?
	    " " : "", from - f->r0, to - f->r0);
	if (!fx_remote(f))
		fx_notify_history(f, from, to);
}

const char *
fx_notes(struct fx *f)
{
	buf_reset(&f->out);
	buf_add(&f->out, f->notes.data, f->notes.len);
	buf_reset(&f->notes);
	return (buf_cstr(&f->out));
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
	if (kv->lease != 0)
		buf_printf(&f->out, "~%" PRIu64, kv->lease);
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

/* The answer of a get or a range outside a batch. */
struct fx_read {
	struct fx		*f;
	int			 calls;
	long			 n;
	int			 more;
	struct store_err	 err;
};

static void
fx_read_done(void *arg, long n, const struct store_kv *kvs, int more,
    const struct store_err *err)
{
	struct fx_read	*r = arg;
	long		 i;

	r->calls++;
	r->n = n;
	r->more = more;
	if (n < 0) {
		assert_non_null(err);
		r->err = *err;
		return;
	}
	assert_null(err);
	for (i = 0; i < n; i++)
		fx_kv_cb(&kvs[i], r->f);
}

static void
fx_read_wait(struct fx *f, struct fx_read *r)
{
	fx_wait(f, &r->calls);
	assert_int_equal(r->calls, 1);
}

const char *
fx_get(struct fx *f, const char *key, size_t len)
{
	struct store_err	 err;
	struct fx_read		 r;
	int			 rc;

	buf_reset(&f->out);
	if (f->s->in_batch) {
		rc = store_get(f->s, key, len, fx_kv_cb, f, &err);
		if (rc == -1)
			fail_msg("get in a batch: %s", err.msg);
		assert_int_equal(rc, f->out.len > 0 ? 1 : 0);
		return (buf_cstr(&f->out));
	}
	memset(&r, 0, sizeof r);
	r.f = f;
	store_read_get(f->s, key, len, fx_read_done, &r);
	fx_read_wait(f, &r);
	if (r.n == -1)
		fail_msg("get: %s", r.err.msg);
	assert_true(r.n == 0 || r.n == 1);
	return (buf_cstr(&f->out));
}

int
fx_get_at_err(struct fx *f, const char *key, size_t len, uint64_t rev,
    struct store_err *err)
{
	struct fx_read	 r;

	buf_reset(&f->out);
	memset(&r, 0, sizeof r);
	r.f = f;
	store_read_get_at(f->s, key, len, fx_abs(f, rev), 0, fx_read_done,
	    &r);
	fx_read_wait(f, &r);
	if (r.n == -1) {
		*err = r.err;
		return (-1);
	}
	assert_true(r.n == 0 || r.n == 1);
	return (0);
}

const char *
fx_get_at(struct fx *f, const char *key, size_t len, uint64_t rev)
{
	struct store_err	 err;

	if (fx_get_at_err(f, key, len, rev, &err) != 0)
		fail_msg("get at %" PRIu64 ": %s", rev, err.msg);
	return (buf_cstr(&f->out));
}

const char *
fx_list(struct fx *f, const struct store_range *range, long n, int more)
{
	struct fx_read	 r;

	buf_reset(&f->out);
	memset(&r, 0, sizeof r);
	r.f = f;
	r.more = -1;
	store_read_range(f->s, range, fx_read_done, &r);
	fx_read_wait(f, &r);
	if (r.n == -1 && n != -1)
		fail_msg("range: %s", r.err.msg);
	if (n == -2)
		return (buf_cstr(&f->out));
	assert_int_equal(r.n, n);
	if (n != -1)
		assert_int_equal(r.more, more);
	return (buf_cstr(&f->out));
}

/*
 * A history read: the events rendered into f->out, each chunk checked
 * against what store.h promises of it.
 */
struct fx_hist {
	struct fx		*f;
	int			 calls;
	uint64_t		 from;
	size_t			 max;
	long			 n;
	int			 more;
	uint64_t		 first, last;	/* revs of the chunk */
	struct store_err	 err;
};

static void
fx_hist_done(void *arg, long n, const struct store_event *evs, int more,
    const struct store_err *err)
{
	struct fx_hist	*h = arg;
	size_t		 cut = h->max > 0 ? h->max : 1;
	long		 i;

	h->calls++;
	h->n = n;
	h->more = more;
	if (n < 0) {
		assert_non_null(err);
		h->err = *err;
		return;
	}
	assert_null(err);
	for (i = 0; i < n; i++) {
		assert_true(evs[i].rev >= h->from);
		/* (rev, seq) order, each event once. */
		if (i > 0)
			assert_true(evs[i].rev > evs[i - 1].rev ||
			    (evs[i].rev == evs[i - 1].rev &&
			    evs[i].seq > evs[i - 1].seq));
		/* Past max_events only to finish the revision. */
		if ((size_t)i >= cut && evs[i].rev != evs[cut - 1].rev)
			fail_msg("history from %" PRIu64 ", max %zu: event %ld "
			    "(rev %" PRIu64 ") is past the max and starts a new "
			    "revision", h->from - h->f->r0, h->max, i,
			    evs[i].rev - h->f->r0);
		fx_ev_cb(&evs[i], h->f);
	}
	if (n > 0) {
		h->first = evs[0].rev;
		h->last = evs[n - 1].rev;
	}
}

/* store_read_history() from the absolute rev from: n, or -1 and h->err. */
static long
fx_hist_read(struct fx *f, struct fx_hist *h, uint64_t from, size_t max)
{
	memset(h, 0, sizeof *h);
	h->f = f;
	h->from = from;
	h->max = max;
	h->more = -1;
	store_read_history(f->s, from, max, fx_hist_done, h);
	fx_wait(f, &h->calls);
	assert_int_equal(h->calls, 1);
	return (h->n);
}

long
fx_history_chunk(struct fx *f, uint64_t from, size_t max, int *more)
{
	struct fx_hist	 h;

	if (fx_hist_read(f, &h, fx_abs(f, from), max) < 0)
		fail_msg("history from %" PRIu64 ", max %zu: %s", from, max,
		    h.err.msg);
	*more = h.more;
	return (h.n);
}

long
fx_key_history(struct fx *f, const char *key, size_t len, uint64_t from,
    size_t limit, int *more, struct store_err *err)
{
	struct fx_hist	 h;

	buf_reset(&f->out);
	memset(&h, 0, sizeof h);
	h.f = f;
	h.from = fx_abs(f, from);
	h.max = limit;
	h.more = -1;
	store_read_key_history(f->s, key, len, h.from, limit, fx_hist_done,
	    &h);
	fx_wait(f, &h.calls);
	assert_int_equal(h.calls, 1);
	if (h.n < 0)
		*err = h.err;
	*more = h.more;
	return (h.n);
}

int
fx_history_err(struct fx *f, uint64_t from, struct store_err *err)
{
	struct fx_hist	 h;

	buf_reset(&f->out);
	if (fx_hist_read(f, &h, fx_abs(f, from), f->hist_max) >= 0)
		return (0);
	*err = h.err;
	return (-1);
}

const char *
fx_history(struct fx *f, uint64_t from)
{
	struct fx_hist	 h;
	uint64_t	 at = fx_abs(f, from), last = 0;

	buf_reset(&f->out);
	for (;;) {
		if (fx_hist_read(f, &h, at, f->hist_max) < 0)
			fail_msg("history from %" PRIu64 ": %s", at - f->r0,
			    h.err.msg);
		if (h.n == 0) {
			if (h.more)
				fail_msg("history from %" PRIu64 ": no event, "
				    "but more", at - f->r0);
			break;
		}
		/* Whole revisions: the next chunk starts a new one. */
		assert_true(last == 0 || h.first > last);
		last = h.last;
		if (!h.more)
			break;
		at = last + 1;
	}
	return (buf_cstr(&f->out));
}

/* The answer of store_read_stats(). */
struct fx_statsq {
	int			 calls;
	int			 failed;
	struct store_stats	 st;
	struct store_err	 err;
};

static void
fx_stats_done(void *arg, const struct store_stats *st,
    const struct store_err *err)
{
	struct fx_statsq	*q = arg;

	q->calls++;
	if (err != NULL) {
		assert_null(st);
		q->failed = 1;
		q->err = *err;
	} else {
		assert_non_null(st);
		q->st = *st;
	}
}

void
fx_stats(struct fx *f, struct store_stats *st)
{
	struct fx_statsq	 q;

	memset(&q, 0, sizeof q);
	store_read_stats(f->s, fx_stats_done, &q);
	fx_wait(f, &q.calls);
	assert_int_equal(q.calls, 1);
	if (q.failed)
		fail_msg("stats: %s", q.err.msg);
	*st = q.st;
}

uint64_t
fx_nkeys(struct fx *f)
{
	struct store_stats	 st;

	fx_stats(f, &st);
	return (st.keys);
}

/* The answer of a begin or a commit. */
struct fx_call {
	int			 calls;
	int			 failed;
	struct store_err	 err;
};

static void
fx_call_done(void *arg, const struct store_err *err)
{
	struct fx_call	*c = arg;

	c->calls++;
	if (err != NULL) {
		c->failed = 1;
		c->err = *err;
	}
}

int
fx_try_begin(struct fx *f, const struct store_keys *ks,
    struct store_err *err)
{
	struct fx_call	 c;

	memset(&c, 0, sizeof c);
	store_begin(f->s, ks, fx_call_done, &c);
	fx_wait(f, &c.calls);
	assert_int_equal(c.calls, 1);
	if (c.failed) {
		*err = c.err;
		return (-1);
	}
	assert_true(f->s->in_batch);
	return (0);
}

void
fx_begin_keys(struct fx *f, const struct store_keys *ks)
{
	struct store_err	 err;

	if (fx_try_begin(f, ks, &err) != 0)
		fail_msg("begin: %s", err.msg);
	if (store_base_rev(f->s) != store_rev(f->s))
		fail_msg("etcd is at rev %" PRIu64 ", this test's writes "
		    "brought it to %" PRIu64 ": a writer outside the test "
		    "moved it (these tests need an etcd of their own)",
		    store_base_rev(f->s), store_rev(f->s));
}

void
fx_begin_list(struct fx *f, ...)
{
	struct store_keys	 ks;
	const char		*k;
	va_list			 ap;

	ks.n = 0;
	ks.rkey = NULL;
	va_start(ap, f);
	while ((k = va_arg(ap, const char *)) != NULL) {
		assert_true(ks.n < STORE_PREFETCH_MAX);
		store_keys_add(&ks, k, strlen(k));
	}
	va_end(ap);
	fx_begin_keys(f, &ks);
}

int
fx_try_commit(struct fx *f, uint64_t rev, struct store_err *err)
{
	struct fx_call	 c;

	memset(&c, 0, sizeof c);
	store_commit(f->s, fx_abs(f, rev), fx_call_done, &c);
	fx_wait(f, &c.calls);
	assert_int_equal(c.calls, 1);
	assert_int_equal(f->s->in_batch, 0);
	if (c.failed) {
		*err = c.err;
		return (-1);
	}
	fx_wait_abs(f, store_commit_rev(f->s));
	return (0);
}

void
fx_commit(struct fx *f, uint64_t rev)
{
	struct store_err	 err;

	if (fx_try_commit(f, rev, &err) != 0)
		fail_msg("commit at %" PRIu64 ": %s", rev, err.msg);
	assert_int_equal(store_commit_rev(f->s), fx_abs(f, rev));
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

	fx_begin(f, key);
	fx_put(f, rev, 0, key, strlen(key), value, strlen(value));
	fx_commit(f, rev);
}

int
fx_compact(struct fx *f, uint64_t rev, struct store_err *err)
{
	if (f->s->in_batch)
		return (store_compact(f->s, fx_abs(f, rev), err));
	fx_begin(f);
	if (store_compact(f->s, fx_abs(f, rev), err) != 0) {
		store_rollback(f->s);
		return (-1);
	}
	return (fx_try_commit(f, fx_rev(f), err));
}

/*
 * Runs fn on f's store in a child that dies without closing it: once fn is
 * done, the child says so on a pipe and waits, and the parent kills it
 * with SIGKILL, as a crash does (valgrind, which follows children, has no
 * say in a process killed from outside, so what it never freed is no leak).
 */
void
fx_crash_after(struct fx *f, void (*fn)(struct fx *))
{
	pid_t	 pid;
	int	 status, p[2];
	char	 c = 0;

	store_close(f->s);
	f->s = NULL;
	assert_int_equal(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		fx_reopen(f, NULL);
		fn(f);
		if (write(p[1], "k", 1) == 1)
			for (;;)
				pause();
		_exit(1);
	}
	assert_true(pid > 0);
	close(p[1]);
	assert_int_equal(read(p[0], &c, 1), 1);	/* 0: fn failed */
	close(p[0]);
	assert_int_equal(kill(pid, SIGKILL), 0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	fx_reopen(f, NULL);
}

void
fx_ckpt_slices(struct fx *f, int max)
{
	int	 n = 0;

	while (store_sqlite_ckpt_slice(f->s) > 0)
		assert_true(++n < max);
}
