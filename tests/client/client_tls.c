/*
 * libmetad-client over TLS (md_connect("tls://..."), md_set_tls()), against
 * the daemon tests/bats/tls.bats starts: $MD_TEST_TLS_URL, its CA
 * $MD_TEST_TLS_CA, a read-write client's certificate and key
 * ($MD_TEST_TLS_RW: "CERT KEY" files named DIR/NAME.crt and .key), a
 * read-only one ($MD_TEST_TLS_RO) and a CA that did not sign the daemon's
 * ($MD_TEST_TLS_OTHER_CA).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client_fx.h"

static const char *
tls_env(const char *name)
{
	const char	*v = getenv(name);

	if (v == NULL || *v == '\0')
		fail_msg("%s is not set (tests/bats/tls.bats runs these tests)",
		    name);
	return (v);
}

/* A handle on the TLS listener as the client whose files are DIR/NAME. */
static struct md_client *
tls_connect(const char *who, const char *ca)
{
	struct md_client	*h = md_new();
	char			 cert[1024], key[1024];

	snprintf(cert, sizeof cert, "%s.crt", tls_env(who));
	snprintf(key, sizeof key, "%s.key", tls_env(who));
	md_set_tls(h, ca, cert, key);
	if (md_connect(h, tls_env("MD_TEST_TLS_URL"), FX_TIMEOUT_MS) != 0)
		fail_msg("connect as %s: %s", who, md_errmsg(h));
	return (h);
}

/* The read-write client writes, reads and watches. */
static void
test_tls_rw(void **state)
{
	struct md_client	*h, *w;
	struct md_watch		*watch;
	struct md_put_result	 pr;
	struct md_event		 ev;
	struct md_kv		*kv = NULL;
	uint64_t		 rev;
	int			 rc;

	h = tls_connect("MD_TEST_TLS_RW", tls_env("MD_TEST_TLS_CA"));
	w = tls_connect("MD_TEST_TLS_RW", tls_env("MD_TEST_TLS_CA"));
	assert_md_ok(h, md_ping(h, &rev));
	watch = md_watch_open(w, fx_key(0, "k"), 0, 0);
	assert_non_null(watch);
	rc = md_put(h, fx_key(0, "k"), "v1", 2, NULL, &pr);
	assert_md_ok(h, rc);
	assert_int_equal(pr.version, 1);
	assert_md_ok(h, md_get(h, fx_key(0, "k"), NULL, &kv, NULL));
	assert_non_null(kv);
	assert_memory_equal(kv->value, "v1", 2);
	assert_int_equal(kv->mod_rev, pr.rev);
	md_kv_free(kv);
	rc = md_watch_next(watch, FX_TIMEOUT_MS, &ev);
	if (rc != 1)
		fail_msg("watch: %d %s", rc, md_errmsg(w));
	assert_int_equal(ev.type, MD_EV_PUT);
	assert_int_equal(ev.mod_rev, pr.rev);
	assert_memory_equal(ev.value, "v1", 2);
	md_watch_close(watch);
	md_free(w);
	md_free(h);
}

/* The read-only client reads; its write answers read_only. */
static void
test_tls_ro(void **state)
{
	struct md_client	*h;
	struct md_put_result	 pr;
	uint64_t		 rev;

	h = tls_connect("MD_TEST_TLS_RO", tls_env("MD_TEST_TLS_CA"));
	assert_md_ok(h, md_ping(h, &rev));
	assert_md_err(h, md_put(h, fx_key(1, "ro"), "x", 1, NULL, &pr),
	    MD_E_READ_ONLY);
	assert_true(md_connected(h));	/* the connection stays usable */
	assert_md_ok(h, md_ping(h, &rev));
	md_free(h);
}

/* A CA that did not sign the daemon's certificate: no connection. */
static void
test_tls_untrusted(void **state)
{
	struct md_client	*h = md_new();
	char			 cert[1024], key[1024];

	snprintf(cert, sizeof cert, "%s.crt", tls_env("MD_TEST_TLS_RW"));
	snprintf(key, sizeof key, "%s.key", tls_env("MD_TEST_TLS_RW"));
	md_set_tls(h, tls_env("MD_TEST_TLS_OTHER_CA"), cert, key);
	assert_md_err(h, md_connect(h, tls_env("MD_TEST_TLS_URL"),
	    FX_TIMEOUT_MS), MD_E_CONNECT);
	if (strstr(md_errmsg(h), "not trusted") == NULL)
		fail_msg("%s", md_errmsg(h));
	assert_false(md_connected(h));
	md_free(h);
}

/* md_set_tls(NULL...) takes $METACTL_CACERT, $METACTL_CERT, $METACTL_KEY. */
static void
test_tls_env(void **state)
{
	struct md_client	*h = md_new();
	char			 cert[1024], key[1024];
	uint64_t		 rev;

	snprintf(cert, sizeof cert, "%s.crt", tls_env("MD_TEST_TLS_RW"));
	snprintf(key, sizeof key, "%s.key", tls_env("MD_TEST_TLS_RW"));
	setenv("METACTL_CACERT", tls_env("MD_TEST_TLS_CA"), 1);
	setenv("METACTL_CERT", cert, 1);
	setenv("METACTL_KEY", key, 1);
	assert_md_ok(h, md_connect(h, tls_env("MD_TEST_TLS_URL"),
	    FX_TIMEOUT_MS));
	assert_md_ok(h, md_ping(h, &rev));
	unsetenv("METACTL_CERT");
	unsetenv("METACTL_KEY");
	md_close(h);
	/* No certificate now: the daemon refuses the handshake. */
	if (md_connect(h, tls_env("MD_TEST_TLS_URL"), FX_TIMEOUT_MS) == 0)
		assert_md_err(h, md_ping(h, &rev), MD_E_CONNECT);
	else
		assert_int_equal(md_errcode(h), MD_E_CONNECT);
	unsetenv("METACTL_CACERT");
	md_free(h);
}

/* 500 puts pipelined with md_queue/md_flush/md_fill, answered in order. */
static void
test_tls_pipeline(void **state)
{
	struct md_client	*h;
	struct pollfd		 pfd;
	char			 req[256], *line;
	size_t			 len;
	int			 i, n = 500, got = 0, rc;
	long			 id;

	h = tls_connect("MD_TEST_TLS_RW", tls_env("MD_TEST_TLS_CA"));
	for (i = 0; i < n; i++) {
		snprintf(req, sizeof req, "{\"id\":%d,\"op\":\"put\",\"key\":"
		    "\"%s\",\"value\":\"eA==\"}\n", i, fx_key(2, "pipe"));
		md_queue(h, req, strlen(req));
	}
	while (got < n) {
		rc = md_flush(h);
		assert_true(rc >= 0);
		pfd.fd = md_fd(h);
		pfd.events = POLLIN | (rc == 1 ? POLLOUT : 0);
		assert_true(poll(&pfd, 1, FX_TIMEOUT_MS) > 0);
		if (!(pfd.revents & POLLIN))
			continue;
		assert_int_equal(md_fill(h), 1);
		while ((line = md_next_line(h, &len)) != NULL) {
			if (sscanf(line, "{\"id\":%ld,\"ok\":true", &id) != 1)
				fail_msg("answer %d: %s", got, line);
			assert_int_equal(id, got);
			got++;
		}
	}
	md_free(h);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tls_rw),
		cmocka_unit_test(test_tls_ro),
		cmocka_unit_test(test_tls_untrusted),
		cmocka_unit_test(test_tls_env),
		cmocka_unit_test(test_tls_pipeline),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
