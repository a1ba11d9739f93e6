/*
 * Unit tests of the etcd client's set-up (daemon/store/etcd/etcd_client.c,
 * etcd_auth.c, store_tls.c) that need no etcd: endpoint URLs (http and
 * https, IPv6 literals in brackets, what is refused), the options of TLS
 * and authentication checked together, the password file's one line, the
 * answers that mean etcd refused the token, Authenticate's messages in
 * protobuf, and a watch's cancel reason read in place.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/etcd/etcd_client.h"
#include "store/etcd/etcd_client_int.h"
#include "util.h"

static int
parse(const char *url, struct etcd_endpoint *ep, int *https,
    struct store_err *err)
{
	memset(ep, 0, sizeof *ep);
	return (etcd_client_parse_url(ep, url, strlen(url), https, err));
}

static void
test_urls(void **state)
{
	struct etcd_endpoint	 ep;
	struct store_err	 err;
	int			 https;

	assert_int_equal(parse("http://127.0.0.1:2379", &ep, &https, &err), 0);
	assert_string_equal(ep.host, "127.0.0.1");
	assert_int_equal(ep.port, 2379);
	assert_int_equal(https, 0);
	assert_int_equal(parse("https://etcd.example:2379/", &ep, &https,
	    &err), 0);
	assert_string_equal(ep.host, "etcd.example");
	assert_string_equal(ep.url, "https://etcd.example:2379");
	assert_int_equal(https, 1);
	/* An IPv6 literal: the brackets are not the host's. */
	assert_int_equal(parse("http://[::1]:2379", &ep, &https, &err), 0);
	assert_string_equal(ep.host, "::1");
	assert_int_equal(ep.port, 2379);
	assert_int_equal(parse("https://[fe80::1:2]:12", &ep, &https, &err),
	    0);
	assert_string_equal(ep.host, "fe80::1:2");
	assert_int_equal(ep.port, 12);
	assert_int_equal(https, 1);
}

static void
test_urls_bad(void **state)
{
	static const char *const bad[] = {
		"ftp://h:1", "http://", "https://", "http://h", "http://:1",
		"http://h:", "http://h:0", "http://h:65536", "http://h:-1",
		"http://h: 1", "http://h:1x", "http://::1:2379",
		"http://[::1]2379", "http://[::1", "http://[]:1",
		"httpx://h:1",
	};
	struct etcd_endpoint	 ep;
	struct store_err	 err;
	size_t			 i;
	int			 https;

	for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		err.msg[0] = '\0';
		if (parse(bad[i], &ep, &https, &err) != -1)
			fail_msg("%s was taken", bad[i]);
		assert_true(strstr(err.msg, "etcd endpoint") != NULL);
	}
	assert_int_equal(parse("http://::1:2379", &ep, &https, &err), -1);
	assert_non_null(strstr(err.msg, "brackets"));
}

/* A client's options checked at init, before any etcd is asked. */
static int
open_with(const char *urls, const struct store_options *o,
    struct store_err *err)
{
	struct etcd_client	 h;
	int			 rc;

	memset(&h, 0, sizeof h);
	rc = etcd_client_init(&h, urls, o, NULL, err);
	etcd_client_close(&h);
	return (rc);
}

static void
test_options_together(void **state)
{
	struct store_options	 o;
	struct store_err	 err;

	memset(&o, 0, sizeof o);
	o.cert = "c.pem";
	assert_int_equal(open_with("https://127.0.0.1:1", &o, &err), -1);
	assert_non_null(strstr(err.msg, "--store-cert and --store-key"));
	memset(&o, 0, sizeof o);
	o.user = "u";
	assert_int_equal(open_with("http://127.0.0.1:1", &o, &err), -1);
	assert_non_null(strstr(err.msg, "--store-password-file"));
	memset(&o, 0, sizeof o);
	o.cacert = "/dev/null";
	assert_int_equal(open_with("http://127.0.0.1:1", &o, &err), -1);
	assert_non_null(strstr(err.msg, "https:// endpoints"));
	o.cacert = "/nonexistent/ca.pem";
	assert_int_equal(open_with("https://127.0.0.1:1", &o, &err), -1);
	assert_non_null(strstr(err.msg, "--store-cacert /nonexistent/ca.pem: "
	    "No such file"));
	o.cacert = "/dev/null";
	assert_int_equal(open_with("https://127.0.0.1:1", &o, &err), -1);
	assert_non_null(strstr(err.msg, "no CA certificate read"));
}

/* The password file holding content: the open's error, or "" if none. */
static void
password_of(const char *content, size_t n, char *msg, size_t msglen,
    char **password)
{
	struct store_options	 o;
	struct store_err	 err;
	struct etcd_client	 h;
	char			 path[] = "/tmp/metad-test-pw.XXXXXX";
	int			 fd;

	assert_true((fd = mkstemp(path)) >= 0);
	assert_int_equal(write(fd, content, n), (ssize_t)n);
	close(fd);
	memset(&o, 0, sizeof o);
	memset(&h, 0, sizeof h);
	o.user = "metad";
	o.password_file = path;
	msg[0] = '\0';
	*password = NULL;
	if (etcd_auth_open(&h, &o, &err) != 0)
		snprintf(msg, msglen, "%s", err.msg);
	else
		*password = xstrdup(h.password);
	etcd_auth_close(&h);
	unlink(path);
}

static void
test_password_file(void **state)
{
	char	 msg[STORE_ERR_MSG_MAX], *pw, *big;

	password_of("s3cret pw\n", 10, msg, sizeof msg, &pw);
	assert_string_equal(pw, "s3cret pw");	/* not its newline */
	free(pw);
	password_of("no newline", 10, msg, sizeof msg, &pw);
	assert_string_equal(pw, "no newline");
	free(pw);
	password_of("keeps \r and  spaces \r\n", 22, msg, sizeof msg, &pw);
	assert_string_equal(pw, "keeps \r and  spaces \r");
	free(pw);
	password_of("one\ntwo\n", 8, msg, sizeof msg, &pw);
	assert_null(pw);
	assert_non_null(strstr(msg, "more than one line"));
	password_of("a\n\n", 3, msg, sizeof msg, &pw);
	assert_null(pw);
	assert_non_null(strstr(msg, "more than one line"));
	password_of("\n", 1, msg, sizeof msg, &pw);
	assert_null(pw);
	assert_non_null(strstr(msg, "empty"));
	password_of("nul\0in it", 9, msg, sizeof msg, &pw);
	assert_null(pw);
	big = xmalloc(ETCD_PASSWORD_MAX + 2);
	memset(big, 'x', ETCD_PASSWORD_MAX + 1);
	big[ETCD_PASSWORD_MAX] = '\n';		/* the longest, and a newline */
	password_of(big, ETCD_PASSWORD_MAX + 1, msg, sizeof msg, &pw);
	assert_non_null(pw);
	assert_int_equal(strlen(pw), ETCD_PASSWORD_MAX);
	free(pw);
	big[ETCD_PASSWORD_MAX] = 'x';
	password_of(big, ETCD_PASSWORD_MAX + 1, msg, sizeof msg, &pw);
	assert_null(pw);
	assert_non_null(strstr(msg, "longer than"));
	free(big);
}

static void
test_refused(void **state)
{
	static const char tok[] = "{\"error\":\"etcdserver: invalid auth "
	    "token\",\"code\":16}";
	static const char old[] = "etcdserver: revision of auth store is old";
	static const char denied[] = "etcdserver: permission denied";

	assert_true(etcd_auth_refused(401, tok, strlen(tok)));
	assert_true(etcd_auth_refused(400, old, strlen(old)));
	assert_false(etcd_auth_refused(200, tok, strlen(tok)));
	/* A call's "permission denied" is its user's lack of one... */
	assert_false(etcd_auth_refused(403, denied, strlen(denied)));
	/* ...but etcd 3.4 cancels a watch so for an invalid token too. */
	assert_true(etcd_auth_refused(0, denied, strlen(denied)));
	assert_false(etcd_auth_refused(0, NULL, 0));
	assert_false(etcd_auth_refused(500, "etcdserver: request timed out",
	    29));
}

static void
test_authenticate_pb(void **state)
{
	struct buf	 b;
	const char	*why;
	cJSON		*j;
	char		*s;

	buf_init(&b);
	assert_int_equal(etcd_pb_rpc_of("/v3/auth/authenticate"),
	    ETCD_PB_AUTH);
	assert_string_equal(etcd_pb_method(ETCD_PB_AUTH),
	    "/etcdserverpb.Auth/Authenticate");
	assert_int_equal(etcd_pb_encode(ETCD_PB_AUTH,
	    "{\"name\":\"u\",\"password\":\"p w\"}", &b, &why), 0);
	assert_int_equal(b.len, 8);
	assert_memory_equal(b.data, "\x0a\x01u\x12\x03p w", 8);
	/* AuthenticateResponse: header { revision 5 }, token "t.1". */
	j = etcd_pb_decode(ETCD_PB_AUTH, "\x0a\x02\x18\x05\x12\x03t.1", 9);
	assert_non_null(j);
	s = cJSON_PrintUnformatted(j);
	assert_string_equal(s, "{\"header\":{\"revision\":\"5\"},"
	    "\"token\":\"t.1\"}");
	free(s);
	cJSON_Delete(j);
	buf_free(&b);
}

static void
test_watch_reason(void **state)
{
	/* header {}, canceled, cancel_reason "no". */
	static const uint8_t m[] = { 0x0a, 0x00, 0x20, 0x01, 0x32, 0x02, 'n',
	    'o' };
	struct etcd_pb_watch	 w;

	assert_int_equal(etcd_pb_watch_read(m, sizeof m, &w), 0);
	assert_true(w.canceled);
	assert_int_equal(w.reason_len, 2);
	assert_memory_equal(w.reason, "no", 2);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_urls),
		cmocka_unit_test(test_urls_bad),
		cmocka_unit_test(test_options_together),
		cmocka_unit_test(test_password_file),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_authenticate_pb),
		cmocka_unit_test(test_watch_reason),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
