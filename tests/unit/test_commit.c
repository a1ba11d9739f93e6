/*
 * Unit tests of the group commit (daemon/core/commit.c) through commit.h,
 * on a real loop and memory store whose events go through events.c as in
 * the daemon.  The requests are a fake write op's (a put of its key;
 * "!key" puts it and then fails) with a fake done-callback that notes
 * each answer, in answer order, as "key@wrote_rev:bN" (N: the store batch
 * it was applied in) or "key@0:err".  The store is the memory store seen
 * through a copy of its backend that counts its batches (begin, commit)
 * and can fail the commit of one of them; batch_max and ordered are the
 * copy's, set by each test.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "md_fx.h"
#include "core/commit.h"
#include "core/events.h"
#include "core/req.h"
#include "util.h"

#define REQS_MAX	32

static struct {
	struct store_backend		 be;	/* the store's, counted */
	const struct store_backend	*real;
	struct store_head		 real_head;
	unsigned			 begins, commits;
	unsigned			 fail_commit;	/* its number; 0: none */
	struct buf			 log;	/* the answers, in order */
	int				 answered, want, reached;
	struct req			*reqs[REQS_MAX];
	int				 nreqs;
	/* Notifications held back to a later turn (as a remote store's). */
	struct event			*late;
	uint64_t			 late_from, late_to;
	unsigned			 late_n;
} T;

static void
late_cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	events_notify(arg, T.late_from, T.late_to);
	T.late_n++;
}

/* The store's notify, delayed: a write's events come after its commit. */
static void
late_notify(void *arg, uint64_t from, uint64_t to)
{
	struct timeval	 tv = { 0, 20000 };

	(void)arg;
	if (!evtimer_pending(T.late, NULL))
		T.late_from = from;
	T.late_to = to;
	evtimer_add(T.late, &tv);
}

static void
fake_begin(struct store *s, const struct store_keys *ks, store_done done,
    void *arg)
{
	T.begins++;
	T.real->begin(s, ks, done, arg);
}

static void
fake_commit(struct store *s, uint64_t rev, store_done done, void *arg)
{
	struct store_err	 se;

	if (++T.commits == T.fail_commit) {
		s->backend->rollback(s);
		store_err_set(&se, STORE_ERR_IO, "the test fails commit %u",
		    T.commits);
		done(arg, &se);
		return;
	}
	T.real->commit(s, rev, done, arg);
}

/* md's store seen through the counting backend. */
static void
fake_store(struct metad *md, unsigned batch_max, int ordered)
{
	free(T.log.data);
	memset(&T, 0, sizeof T);
	buf_init(&T.log);
	T.real = md->store->backend;
	T.be = *T.real;
	T.be.begin = fake_begin;
	T.be.commit = fake_commit;
	T.be.batch_max = batch_max;
	T.be.ordered = ordered;
	md->store->backend = &T.be;
	/* What the commit engine reads, copied from the backend at open. */
	T.real_head = md->store->head;
	md->store->head.batch_max = batch_max;
	md->store->head.ordered = ordered;
}

static int
fake_apply(struct req *r, uint64_t rev, int *wrote, struct store_err *se)
{
	const char	*k = r->wa.key;
	size_t		 n = r->wa.key_len;
	int		 bad = (*k == '!');
	struct store_kv	 meta;
	uint64_t	 prev;
	char		 b[16];

	if (r->order != NULL)
		assert_true(r->order->writes_out > 0);
	if (bad)
		k++, n--;
	if (store_put(r->md->store, rev, 0, k, n, "v", 1, &meta, &prev,
	    se) != 0)
		return (-1);
	if (bad)
		return (store_err_set(se, STORE_ERR_IO, "the test's bad write"));
	*wrote = 1;
	snprintf(b, sizeof b, "b%u", T.begins);
	buf_addstr(&r->resp, b);
	return (0);
}

static const struct op fake_op = {
	.name = "fake_put",
	.flags = OP_WRITE | OP_RW,
	.apply = fake_apply,
};

/* An answer: after its batch landed and its events were delivered. */
static void
fake_done(struct req *r)
{
	char	 s[64];
	int	 ok = r->resp.len > 0 && r->resp.data[0] == 'b';

	if (r->wrote_rev != 0) {
		assert_true(store_commit_rev(r->md->store) >= r->wrote_rev);
		assert_true(events_delivered(r->md->events) >= r->wrote_rev);
	}
	snprintf(s, sizeof s, "%.*s@%llu:%.*s ", (int)r->wa.key_len,
	    r->wa.key, (unsigned long long)r->wrote_rev,
	    ok ? (int)r->resp.len : 3, ok ? r->resp.data : "err");
	buf_addstr(&T.log, s);
	if (++T.answered >= T.want)
		T.reached = 1;
}

/* A write of key from the connection of order (NULL: the daemon's). */
static void
wr(struct metad *md, struct commit_order *order, const char *key)
{
	struct req	*r = xcalloc(1, sizeof *r);

	assert_true(T.nreqs < REQS_MAX);
	r->md = md;
	r->op = &fake_op;
	r->order = order;
	r->wa.key = key;
	r->wa.key_len = strlen(key);
	r->on_done = fake_done;
	buf_init(&r->resp);
	T.reqs[T.nreqs++] = r;
	commit_enqueue(md->commit, r);
}

/* Run until n requests in all were answered; the answers so far. */
static const char *
answers(struct metad *md, int n)
{
	T.want = n;
	T.reached = T.answered >= n;
	md_fx_run(md, &T.reached);
	assert_int_equal(T.answered, n);
	buf_addc(&T.log, '\0');
	T.log.len--;
	return (T.log.data);
}

static void
reqs_free(struct metad *md)
{
	int	 i;

	assert_int_equal(commit_queued(md->commit), 0);
	for (i = 0; i < T.nreqs; i++)
		req_free(T.reqs[i]);
	T.nreqs = 0;
	buf_free(&T.log);
	md->store->backend = T.real;
	md->store->head.batch_max = T.real_head.batch_max;
	md->store->head.ordered = T.real_head.ordered;
	if (T.late != NULL) {
		event_free(T.late);
		T.late = NULL;
		md->store->opts.notify = events_notify;
	}
}

static void
get_cb(void *arg, long n, const struct store_kv *kv, int more,
    const struct store_err *se)
{
	uint64_t	*rev = arg;

	(void)more;
	if (n < 0)
		fail_msg("get: %s", se->msg);
	*rev = n > 0 ? kv[0].mod_rev : 0;
}

/* The key's mod_rev in the store, 0 when absent. */
static uint64_t
mod_rev(struct metad *md, const char *key)
{
	uint64_t	 rev = UINT64_MAX;

	store_read_get(md->store, key, strlen(key), get_cb, &rev);
	assert_true(rev != UINT64_MAX);		/* local: at once */
	return (rev);
}

/* Writes queued together go in one store batch, and are answered in
 * request order once it landed; writes that come later go in the
 * next. */
static void
test_commit_batches_together(void **state)
{
	struct metad	*md = *state;

	fake_store(md, 0, 1);
	wr(md, NULL, "a");
	wr(md, NULL, "b");
	wr(md, NULL, "c");
	assert_int_equal(commit_queued(md->commit), 3);
	assert_int_equal(T.begins, 0);		/* not in the caller's turn */
	assert_string_equal(answers(md, 3), "a@1:b1 b@2:b1 c@3:b1 ");
	assert_int_equal(T.begins, 1);
	assert_int_equal(T.commits, 1);
	assert_int_equal(commit_out(md->commit), 0);
	wr(md, NULL, "d");
	wr(md, NULL, "b");
	assert_string_equal(answers(md, 5),
	    "a@1:b1 b@2:b1 c@3:b1 d@4:b2 b@5:b2 ");
	assert_int_equal(T.commits, 2);
	assert_int_equal(mod_rev(md, "b"), 5);
	reqs_free(md);
}

/* A write is answered only once its events were delivered, when they
 * come back from the store after its commit. */
static void
test_commit_answers_after_events(void **state)
{
	struct metad	*md = *state;

	fake_store(md, 0, 1);
	T.late = evtimer_new(md->base, late_cb, md);
	md->store->opts.notify = late_notify;
	wr(md, NULL, "a");
	wr(md, NULL, "b");
	assert_string_equal(answers(md, 2), "a@1:b1 b@2:b1 ");
	assert_int_equal(T.late_n, 1);
	assert_int_equal(events_delivered(md->events), 2);
	reqs_free(md);
}

/* A batch takes at most the store's batch_max writes; the rest go in the
 * next batches, in order. */
static void
test_commit_batch_max(void **state)
{
	struct metad	*md = *state;

	fake_store(md, 2, 1);
	wr(md, NULL, "a");
	wr(md, NULL, "b");
	wr(md, NULL, "c");
	wr(md, NULL, "d");
	wr(md, NULL, "e");
	assert_string_equal(answers(md, 5),
	    "a@1:b1 b@2:b1 c@3:b2 d@4:b2 e@5:b3 ");
	assert_int_equal(T.commits, 3);
	reqs_free(md);
}

/* A connection's writes land in the order sent and are answered in it,
 * on an ordered store and on one that is not (one write at a time). */
static void
test_commit_conn_order(void **state)
{
	struct metad		*md = *state;
	struct commit_order	 c1, c2;
	int			 ordered;

	for (ordered = 1; ordered >= 0; ordered--) {
		memset(&c1, 0, sizeof c1);
		memset(&c2, 0, sizeof c2);
		fake_store(md, ordered ? 0 : 1, ordered);
		wr(md, &c1, ordered ? "k" : "m");
		wr(md, &c2, "x");
		wr(md, &c1, "k");
		wr(md, &c1, "k2");
		wr(md, &c2, "x");
		assert_string_equal(answers(md, 5), ordered ?
		    "k@1:b1 x@2:b1 k@3:b1 k2@4:b1 x@5:b1 " :
		    "m@6:b1 x@7:b2 k@8:b3 k2@9:b4 x@10:b5 ");
		assert_int_equal(c1.writes_out, 0);
		assert_int_equal(c2.writes_out, 0);
		reqs_free(md);
	}
	assert_int_equal(mod_rev(md, "k"), 8);
	assert_int_equal(mod_rev(md, "x"), 10);
}

/* A batch whose commit fails answers each of its writes with the error,
 * and nothing of it stays; the batches before and after it land. */
static void
test_commit_failed_batch(void **state)
{
	struct metad	*md = *state;

	fake_store(md, 2, 1);
	T.fail_commit = 2;
	wr(md, NULL, "a");
	wr(md, NULL, "b");
	wr(md, NULL, "c");
	wr(md, NULL, "d");
	wr(md, NULL, "e");
	assert_string_equal(answers(md, 5),
	    "a@1:b1 b@2:b1 c@0:err d@0:err e@3:b3 ");
	assert_int_equal(mod_rev(md, "b"), 2);
	assert_int_equal(mod_rev(md, "c"), 0);
	assert_int_equal(mod_rev(md, "d"), 0);
	assert_int_equal(mod_rev(md, "e"), 3);
	reqs_free(md);
}

/* A write that fails inside a batch fails alone: what it wrote is undone
 * and the others of its batch land at consecutive revs. */
static void
test_commit_failed_write(void **state)
{
	struct metad	*md = *state;

	fake_store(md, 0, 1);
	wr(md, NULL, "a");
	wr(md, NULL, "!x");
	wr(md, NULL, "b");
	assert_string_equal(answers(md, 3), "a@1:b1 !x@0:err b@2:b1 ");
	assert_int_equal(T.commits, 1);
	assert_int_equal(mod_rev(md, "x"), 0);
	assert_int_equal(mod_rev(md, "b"), 2);
	reqs_free(md);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_commit_batches_together,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_commit_answers_after_events, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_commit_batch_max,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_commit_conn_order,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_commit_failed_batch,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_commit_failed_write,
		    md_fx_setup, md_fx_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
