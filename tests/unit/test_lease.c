/*
 * Unit tests of the lease table (daemon/lease/lease.c) through lease.h, on
 * a real loop and memory store, with a fake on_due that notes each lease
 * handed to it (and, as an applied revoke does, removes it).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "md_fx.h"
#include "lease/lease.h"
#include "util.h"

#define DUE_MAX		16
/* Timers are not exact to the ms: a lease may fire this much late. */
#define LATE_MS		500

struct due {
	struct lease_table	*lt;
	int			 remove;	/* remove each lease handed */
	int			 n, want;
	int			 reached;	/* n == want */
	uint64_t		 id[DUE_MAX];
	uint64_t		 deadline[DUE_MAX];
	int64_t			 at[DUE_MAX];	/* mono_ms() when handed */
	int			 revoking[DUE_MAX];
};

static void
fake_on_due(struct lease *l, void *arg)
{
	struct due	*d = arg;

	assert_true(d->n < DUE_MAX);
	d->id[d->n] = l->id;
	d->deadline[d->n] = l->deadline;
	d->at[d->n] = mono_ms();
	d->revoking[d->n] = l->revoking;
	d->n++;
	if (d->n >= d->want)
		d->reached = 1;
	if (d->remove)
		lease_remove(d->lt, l);
}

static struct due *
due_new(struct metad *md, int remove)
{
	struct due	*d = xcalloc(1, sizeof *d);

	d->lt = lease_table_create(md, 0, fake_on_due, d);
	d->remove = remove;
	md->leases = d->lt;
	return (d);
}

static void
due_free(struct metad *md, struct due *d)
{
	lease_table_free(d->lt);
	md->leases = NULL;
	free(d);
}

/* Run until want leases in all were handed to on_due. */
static void
due_wait(struct metad *md, struct due *d, int want)
{
	d->want = want;
	d->reached = d->n >= want;
	md_fx_run(md, &d->reached);
	assert_int_equal(d->n, want);
}

/* Handed at its deadline: not before it, and not much after. */
static void
assert_on_time(const struct due *d, int i)
{
	assert_true(d->at[i] >= (int64_t)d->deadline[i]);
	assert_true(d->at[i] < (int64_t)d->deadline[i] + LATE_MS);
	assert_true(d->revoking[i]);
}

/* Three leases added out of order are handed in deadline order, each at
 * its deadline and not before. */
static void
test_lease_due_in_deadline_order(void **state)
{
	struct metad	*md = *state;
	struct due	*d = due_new(md, 1);
	struct lease	*a, *b, *c;
	uint64_t	 ida, idb, idc;
	int64_t		 t0 = mono_ms();

	a = lease_add(d->lt, 600, 0, NULL);
	b = lease_add(d->lt, 200, 0, NULL);
	c = lease_add(d->lt, 400, 0, NULL);
	ida = a->id, idb = b->id, idc = c->id;
	assert_int_not_equal(ida, idb);
	assert_int_equal(lease_count(d->lt), 3);
	assert_ptr_equal(lease_find(d->lt, idb), b);

	md_fx_run_ms(md, 60);		/* none is due yet */
	assert_int_equal(d->n, 0);
	assert_ptr_equal(lease_find(d->lt, ida), a);

	due_wait(md, d, 1);
	assert_int_equal(d->id[0], idb);
	assert_true(d->at[0] >= t0 + 200);
	due_wait(md, d, 3);
	assert_int_equal(d->id[1], idc);
	assert_int_equal(d->id[2], ida);
	assert_on_time(d, 0);
	assert_on_time(d, 1);
	assert_on_time(d, 2);
	assert_true(d->at[2] >= t0 + 600);
	assert_null(lease_lookup(d->lt, ida));
	assert_int_equal(lease_count(d->lt), 0);

	md_fx_run_ms(md, 50);		/* each once */
	assert_int_equal(d->n, 3);
	due_free(md, d);
}

/* A keepalive (lease_refresh) moves the deadline a whole TTL on: the
 * lease kept alive is handed after one that was due later. */
static void
test_lease_keepalive_moves_deadline(void **state)
{
	struct metad	*md = *state;
	struct due	*d = due_new(md, 1);
	struct lease	*a, *b;
	uint64_t	 ida, idb, before;

	a = lease_add(d->lt, 400, 0, NULL);
	b = lease_add(d->lt, 500, 0, NULL);
	ida = a->id, idb = b->id;
	md_fx_run_ms(md, 200);
	assert_int_equal(d->n, 0);
	before = a->deadline;
	lease_refresh(d->lt, a);	/* now due at about 600 */
	assert_true(a->deadline >= before + 200);

	due_wait(md, d, 1);
	assert_int_equal(d->id[0], idb);
	assert_ptr_equal(lease_find(d->lt, ida), a);
	due_wait(md, d, 2);
	assert_int_equal(d->id[1], ida);
	assert_on_time(d, 0);
	assert_on_time(d, 1);
	assert_true(d->deadline[1] >= before + 200);
	due_free(md, d);
}

/* A revoke: lease_expire hands it to on_due at once, revoking (unknown
 * to lease_find, still in the table until lease_remove); a removed
 * lease is never handed. */
static void
test_lease_revoke_removes(void **state)
{
	struct metad	*md = *state;
	struct due	*d = due_new(md, 0);
	struct lease	*a, *b, *c;
	uint64_t	 ida, idb, idc;

	a = lease_add(d->lt, 100, 0, NULL);
	b = lease_add(d->lt, 150, 0, NULL);
	c = lease_add(d->lt, 10000, 0, NULL);
	ida = a->id, idb = b->id, idc = c->id;

	lease_remove(d->lt, a);		/* its revoke applied */
	assert_null(lease_lookup(d->lt, ida));
	lease_expire(d->lt, c);		/* revoked now, long before due */
	assert_int_equal(d->n, 1);
	assert_int_equal(d->id[0], idc);
	assert_true(d->revoking[0]);
	assert_null(lease_find(d->lt, idc));
	assert_ptr_equal(lease_lookup(d->lt, idc), c);
	assert_int_equal(lease_count(d->lt), 1);
	lease_remove(d->lt, c);

	due_wait(md, d, 2);
	assert_int_equal(d->id[1], idb);
	assert_on_time(d, 1);
	lease_remove(d->lt, lease_lookup(d->lt, idb));
	md_fx_run_ms(md, 150);		/* a's deadline passed: nothing */
	assert_int_equal(d->n, 2);
	assert_int_equal(lease_count(d->lt), 0);
	due_free(md, d);
}

/* A session lease goes with its connection, at once; another
 * connection's, and a lease that is not a session's, stay. */
static void
test_lease_session_goes_with_conn(void **state)
{
	struct metad	*md = *state;
	struct due	*d = due_new(md, 1);
	struct conn	*c1 = (struct conn *)&c1, *c2 = (struct conn *)&c2;
	struct lease	*s1, *s2, *s3, *plain;
	uint64_t	 id1, id2, id3, idp;

	s1 = lease_add(d->lt, 10000, 1, c1);
	s2 = lease_add(d->lt, 10000, 1, c1);
	s3 = lease_add(d->lt, 10000, 1, c2);
	plain = lease_add(d->lt, 10000, 0, c1);
	id1 = s1->id, id2 = s2->id, id3 = s3->id, idp = plain->id;
	assert_ptr_equal(s1->conn, c1);
	assert_null(plain->conn);

	lease_conn_closed(d->lt, c1);
	assert_int_equal(d->n, 2);
	assert_true((d->id[0] == id1 && d->id[1] == id2) ||
	    (d->id[0] == id2 && d->id[1] == id1));
	assert_null(lease_lookup(d->lt, id1));
	assert_null(lease_lookup(d->lt, id2));
	assert_ptr_equal(lease_find(d->lt, id3), s3);
	assert_ptr_equal(lease_find(d->lt, idp), plain);

	lease_conn_closed(d->lt, c1);	/* nothing more of c1's */
	assert_int_equal(d->n, 2);
	lease_conn_closed(d->lt, c2);
	assert_int_equal(d->n, 3);
	assert_int_equal(d->id[2], id3);
	assert_int_equal(lease_count(d->lt), 1);
	due_free(md, d);
}

/* A revoke that failed: the lease lives again, due when it was. */
static void
test_lease_unrevoke(void **state)
{
	struct metad	*md = *state;
	struct due	*d = due_new(md, 0);
	struct lease	*a;
	uint64_t	 ida, deadline;

	a = lease_add(d->lt, 150, 0, NULL);
	ida = a->id, deadline = a->deadline;
	lease_expire(d->lt, a);
	assert_int_equal(d->n, 1);
	assert_null(lease_find(d->lt, ida));
	lease_unrevoke(d->lt, a);
	assert_ptr_equal(lease_find(d->lt, ida), a);
	assert_int_equal(a->deadline, deadline);
	due_wait(md, d, 2);
	assert_int_equal(d->id[1], ida);
	assert_on_time(d, 1);
	lease_remove(d->lt, a);
	due_free(md, d);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(
		    test_lease_due_in_deadline_order, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_lease_keepalive_moves_deadline, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_revoke_removes,
		    md_fx_setup, md_fx_teardown),
		cmocka_unit_test_setup_teardown(
		    test_lease_session_goes_with_conn, md_fx_setup,
		    md_fx_teardown),
		cmocka_unit_test_setup_teardown(test_lease_unrevoke,
		    md_fx_setup, md_fx_teardown),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
