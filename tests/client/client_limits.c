/*
 * The library's codes for the daemon's limits (metad_client(3), Errors):
 * answer_too_large and resource_exhausted are codes of their own, not
 * MD_E_OTHER, and the values of the codes before them are as they were
 * (ABI).  Against a daemon started with --max-answer-bytes 4k and
 * --max-leases 1 (tests/bats/client_limits.bats).
 */
#include <stdint.h>
#include <string.h>

#include "client_fx.h"

static void
test_codes(void **state)
{
	/* Added after MD_E_OTHER: every older value is unchanged. */
	assert_int_equal(MD_E_INTERNAL, 14);
	assert_int_equal(MD_E_OTHER, 15);
	assert_int_equal(MD_E_ANSWER_TOO_LARGE, 16);
	assert_int_equal(MD_E_RESOURCE_EXHAUSTED, 17);
	assert_int_equal(MD_E_CONNECT, 100);
	assert_string_equal(md_errname(MD_E_ANSWER_TOO_LARGE),
	    "answer_too_large");
	assert_string_equal(md_errname(MD_E_RESOURCE_EXHAUSTED),
	    "resource_exhausted");
	assert_string_equal(md_errname(MD_E_OTHER), "other");
}

static void
test_answer_too_large(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_list_opts	 o;
	struct md_list		 l;
	static char		 v[3000];
	const char		*line;
	size_t			 len;

	memset(v, 'v', sizeof v);
	assert_md_ok(h, md_put(h, fx_key(0, "big/1"), v, sizeof v, NULL,
	    NULL));
	assert_md_ok(h, md_put(h, fx_key(0, "big/2"), v, sizeof v, NULL,
	    NULL));
	memset(&o, 0, sizeof o);
	o.prefix = fx_key(1, "big/");
	assert_md_err(h, md_list(h, &o, &l), MD_E_ANSWER_TOO_LARGE);
	assert_non_null(strstr(md_errmsg(h), "--max-answer-bytes"));
	assert_non_null(strstr(md_errjson(h), "\"answer_too_large\""));
	/* Paged, it fits; the connection went on. */
	o.limit = 1;
	assert_md_ok(h, md_list(h, &o, &l));
	assert_int_equal(l.n, 1);
	assert_true(l.more);
	md_list_free(&l);
	assert_md_ok(h, md_request(h, "{\"op\":\"ping\"}", 13, &line, &len));
	md_free(h);
}

static void
test_resource_exhausted(void **state)
{
	struct md_client	*h = fx_connect();
	uint64_t		 id, other, ttl, rev;

	assert_md_ok(h, md_lease_grant(h, 60000, 0, &id, &ttl));
	assert_md_err(h, md_lease_grant(h, 60000, 0, &other, &ttl),
	    MD_E_RESOURCE_EXHAUSTED);
	assert_non_null(strstr(md_errmsg(h), "--max-leases"));
	assert_md_ok(h, md_lease_revoke(h, id, &rev));
	assert_md_ok(h, md_lease_grant(h, 60000, 0, &id, &ttl));
	assert_md_ok(h, md_lease_revoke(h, id, &rev));
	md_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_codes),
		cmocka_unit_test(test_answer_too_large),
		cmocka_unit_test(test_resource_exhausted),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
