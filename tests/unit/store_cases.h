/*
 * What the unit tests of the versioned store's contract share
 * (test_store.c, test_store_history.c, test_store_batch.c,
 * test_store_backend.c): each runs its cases against each backend,
 * memory, SQLite in a fresh temporary directory and, when METAD_TEST_ETCD
 * holds an etcd client URL (as tests/run-etcd --unit sets it), etcd under
 * a key prefix of each test's own; without it no etcd case is registered.
 * The fixture and the helpers that render results as text, one
 * expectation a line, are in store_fx.c; they also check every callback's
 * answer (once, before the call returns on a local store) and every
 * notification.
 *
 * Where etcd's contract differs, the test says so and asserts what etcd
 * does:
 * - a batch holds one write request (batch_max 1): it lands at one
 *   revision, the one after its base, and writes each key at most once
 *   (metad refuses a key twice in one request: ops_txn.c); batches of
 *   several revs are the local stores' only;
 * - a batch reads only the keys named at store_begin(): a test names
 *   every key its batch gets, puts or deletes;
 * - only etcd's writes make revisions: a batch committed at a rev it did
 *   not write moves nothing.
 * Inside a batch only store_get() is promised to see the batch's writes;
 * the tests read ranges, history and stats outside batches.
 *
 * A file defines its fixtures fx_mem, fx_sql and fx_etcd (struct fx with
 * their kind: the Makefile's ETCD_UNIT_TESTS finds the files with an etcd
 * one), lists its cases with MEM(), SQL(), ETCD(), LOCAL() and ALL(), and
 * runs them with store_cases_run().
 */
#ifndef METAD_TEST_STORE_CASES_H
#define METAD_TEST_STORE_CASES_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "store_fx.h"

/* Case t on one backend, or on the local ones, or on all three. */
#define MEM(t)	{ #t "/memory", t, fx_setup, fx_teardown, &fx_mem }
#define SQL(t)	{ #t "/sqlite", t, fx_setup, fx_teardown, &fx_sql }
#define ETCD(t)	{ #t "/etcd", t, fx_setup, fx_teardown, &fx_etcd }
#define LOCAL(t) MEM(t), SQL(t)
#define ALL(t)	MEM(t), SQL(t), ETCD(t)

/*
 * The history from the compact rev on: below it every store answers
 * STORE_ERR_COMPACTED (test_compact).
 */
static inline const char *
history_kept(struct fx *f)
{
	return (fx_history(f, fx_compact_rev(f)));
}

/*
 * The n cases of tests run as group name; those on etcd (their state
 * etcd) only when there is an etcd: else they are not there at all (nor
 * counted skipped).
 */
static inline int
store_cases_run(const char *name, const struct CMUnitTest *tests, size_t n,
    const struct fx *etcd)
{
	struct CMUnitTest	*run = xcalloc(n, sizeof *run);
	size_t			 i, m = 0;
	int			 rc;

	for (i = 0; i < n; i++) {
		if (tests[i].initial_state != etcd || fx_etcd_url() != NULL)
			run[m++] = tests[i];
	}
	rc = _cmocka_run_group_tests(name, run, m, NULL, NULL);
	free(run);
	return (rc);
}

#endif
