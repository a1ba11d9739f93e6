/*
 * libmetad-client against a live daemon: connecting, every read and write
 * call with its preconditions and fences, txn, epochs, leases, raw
 * requests, and the error of each (tests/bats/client.bats runs it).
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client_fx.h"

static void
test_connect_errors(void **state)
{
	struct md_client	*h = md_new();
	struct sockaddr_un	 sun;
	char			 path[108];
	uint64_t		 rev;
	int			 fd;

	assert_md_err(h, md_connect(h, "/nonexistent/metad.sock", 1000),
	    MD_E_CONNECT);
	assert_non_null(strstr(md_errmsg(h), "is metad running"));
	assert_false(md_connected(h));
	assert_md_err(h, md_ping(h, &rev), MD_E_CONNECT);

	/* A listener that never answers: the handle's timeout. */
	snprintf(path, sizeof path, "/tmp/md-test-%ld.sock", (long)getpid());
	unlink(path);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	strcpy(sun.sun_path, path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof sun), 0);
	assert_int_equal(listen(fd, 4), 0);
	assert_md_ok(h, md_connect(h, path, 200));
	assert_string_equal(md_path(h), path);
	assert_md_err(h, md_ping(h, &rev), MD_E_DEADLINE);
	assert_non_null(strstr(md_errmsg(h), "within 200ms"));
	assert_false(md_connected(h));	/* its answers would not match */
	close(fd);
	unlink(path);

	/* No path: metactl's resolution, $METACTL_SOCKET first. */
	setenv("METACTL_SOCKET", fx_socket(), 1);
	assert_md_ok(h, md_connect(h, NULL, FX_TIMEOUT_MS));
	assert_string_equal(md_path(h), fx_socket());
	assert_md_ok(h, md_ping(h, &rev));
	unsetenv("METACTL_SOCKET");
	md_free(h);
}

static void
test_interrupt(void **state)
{
	struct md_client	*h = fx_connect();
	volatile sig_atomic_t	 flag = 1;
	sigset_t		 mask;

	sigemptyset(&mask);
	md_set_interrupt(h, &flag, &mask);
	assert_md_err(h, md_ping(h, NULL), MD_E_INTERRUPTED);
	md_set_interrupt(h, NULL, NULL);
	assert_md_err(h, md_ping(h, NULL), MD_E_CONNECT);
	md_free(h);
}

static void
test_put_get(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_put_result	 pr, pr2;
	struct md_read_opts	 ro;
	struct md_kv		*kv, *dup;
	const char		 bin[] = { 'a', 0, (char)0xff, 'b' };
	uint64_t		 rev;

	assert_md_ok(h, md_put(h, fx_key(0, "a"), "one", 3, NULL, &pr));
	assert_int_equal(pr.version, 1);
	assert_int_equal(pr.prev_version, 0);
	assert_int_equal(pr.mod_rev, pr.rev);
	assert_int_equal(pr.create_rev, pr.rev);
	assert_md_ok(h, md_put(h, fx_key(0, "a"), "two", 3, NULL, &pr2));
	assert_int_equal(pr2.version, 2);
	assert_int_equal(pr2.prev_version, 1);
	assert_true(pr2.rev > pr.rev);

	assert_md_ok(h, md_get(h, fx_key(0, "a"), NULL, &kv, &rev));
	assert_non_null(kv);
	assert_string_equal(kv->key, fx_key(0, "a"));
	assert_string_equal(kv->value, "two");
	assert_int_equal(kv->value_len, 3);
	assert_int_equal(kv->version, 2);
	assert_int_equal(kv->create_rev, pr.rev);
	assert_int_equal(kv->mod_rev, pr2.rev);
	assert_true(rev >= pr2.rev);
	dup = md_kv_dup(kv);
	assert_memory_equal(dup->value, "two", 4);
	md_kv_free(dup);
	md_kv_free(kv);

	/* Bytes that are not UTF-8 travel as value_b64, both ways. */
	assert_md_ok(h, md_put(h, fx_key(0, "bin"), bin, sizeof bin, NULL,
	    NULL));
	memset(&ro, 0, sizeof ro);
	ro.min_rev = pr2.rev;
	ro.serializable = 1;
	assert_md_ok(h, md_get(h, fx_key(0, "bin"), &ro, &kv, NULL));
	assert_int_equal(kv->value_len, sizeof bin);
	assert_memory_equal(kv->value, bin, sizeof bin);
	md_kv_free(kv);

	assert_md_ok(h, md_get(h, fx_key(0, "absent"), NULL, &kv, &rev));
	assert_null(kv);

	/*
	 * As of a past revision (metad-protocol(7), READS AT A REVISION), and
	 * above the current one.
	 */
	memset(&ro, 0, sizeof ro);
	ro.rev = pr.rev;
	assert_md_ok(h, md_get(h, fx_key(0, "a"), &ro, &kv, NULL));
	assert_string_equal(kv->value, "one");
	assert_int_equal(kv->version, 1);
	md_kv_free(kv);
	ro.rev = rev + 1000;
	assert_md_err(h, md_get(h, fx_key(0, "a"), &ro, &kv, NULL),
	    MD_E_BAD_REQUEST);

	/* Refused before anything is sent; the connection goes on. */
	assert_md_err(h, md_put(h, "", "x", 1, NULL, NULL), MD_E_INVALID);
	assert_md_err(h, md_get(h, NULL, NULL, &kv, NULL), MD_E_INVALID);
	assert_true(md_connected(h));
	md_free(h);
}

static void
test_preconditions(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_write_opts	 o;
	struct md_put_result	 pr;
	uint64_t		 ver, mod, rev;
	int			 deleted;
	const char		*k = fx_key(0, "pre");

	memset(&o, 0, sizeof o);
	o.pre = MD_PRE_ABSENT;
	assert_md_ok(h, md_put(h, k, "v1", 2, &o, &pr));
	assert_md_err(h, md_put(h, k, "v2", 2, &o, NULL),
	    MD_E_FAILED_PRECONDITION);
	assert_int_equal(md_err_current(h, &ver, &mod), 1);
	assert_int_equal(ver, 1);
	assert_int_equal(mod, pr.mod_rev);
	assert_non_null(strstr(md_errjson(h), "\"current\""));

	o.pre = MD_PRE_VERSION;
	o.pre_arg = 5;
	assert_md_err(h, md_put(h, k, "v2", 2, &o, NULL),
	    MD_E_FAILED_PRECONDITION);
	o.pre_arg = 1;
	assert_md_ok(h, md_put(h, k, "v2", 2, &o, &pr));
	o.pre = MD_PRE_MOD_REV;
	o.pre_arg = pr.mod_rev - 1;
	assert_md_err(h, md_delete(h, k, &o, &deleted, NULL),
	    MD_E_FAILED_PRECONDITION);
	o.pre_arg = pr.mod_rev;
	assert_md_ok(h, md_delete(h, k, &o, &deleted, &rev));
	assert_true(deleted);
	assert_true(rev > pr.rev);

	/* Absent: version 0 holds, the current is null. */
	o.pre = MD_PRE_VERSION;
	o.pre_arg = 3;
	assert_md_err(h, md_delete(h, k, &o, &deleted, NULL),
	    MD_E_FAILED_PRECONDITION);
	assert_int_equal(md_err_current(h, &ver, NULL), 0);
	assert_md_ok(h, md_delete(h, k, NULL, &deleted, NULL));
	assert_false(deleted);

	o.pre = 9;
	assert_md_err(h, md_put(h, k, "x", 1, &o, NULL), MD_E_INVALID);
	memset(&o, 0, sizeof o);
	o.lease = 7;
	assert_md_err(h, md_delete(h, k, &o, NULL, NULL), MD_E_INVALID);
	md_free(h);
}

static void
test_epoch_fence(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_epoch		 ep;
	struct md_write_opts	 o;
	const char		*ek = fx_key(0, "leader"), *k = fx_key(1, "data");
	uint64_t		 rev;

	assert_md_ok(h, md_epoch_get(h, ek, &ep));
	assert_int_equal(ep.epoch, 0);
	assert_md_ok(h, md_epoch_bump(h, ek, "me", -1, &ep, &rev));
	assert_int_equal(ep.epoch, 1);
	assert_string_equal(ep.owner, "me");
	assert_int_equal(ep.mod_rev, rev);
	md_epoch_clear(&ep);
	assert_md_err(h, md_epoch_bump(h, ek, "you", 0, &ep, NULL),
	    MD_E_FAILED_PRECONDITION);
	assert_md_ok(h, md_epoch_bump(h, ek, "you", 1, &ep, NULL));
	assert_int_equal(ep.epoch, 2);
	md_epoch_clear(&ep);
	assert_md_ok(h, md_epoch_get(h, ek, &ep));
	assert_int_equal(ep.epoch, 2);
	assert_string_equal(ep.owner, "you");
	md_epoch_clear(&ep);

	memset(&o, 0, sizeof o);
	o.fence_key = ek;
	o.fence_epoch = 2;
	assert_md_ok(h, md_put(h, k, "x", 1, &o, NULL));
	o.fence_epoch = 1;	/* a deposed leader */
	assert_md_err(h, md_put(h, k, "y", 1, &o, NULL), MD_E_FENCED);
	assert_int_equal(md_err_epoch(h), 2);
	assert_md_err(h, md_delete(h, k, &o, NULL, NULL), MD_E_FENCED);

	/* Not an epoch document. */
	assert_md_err(h, md_epoch_bump(h, k, NULL, -1, &ep, NULL),
	    MD_E_BAD_REQUEST);
	assert_md_err(h, md_epoch_get(h, NULL, &ep), MD_E_INVALID);
	md_free(h);
}

static void
test_list_paging(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_list_opts	 o;
	struct md_list		 l;
	struct md_put_result	 pr;
	char			 name[32], after[256] = "";
	int			 i, pages = 0, seen = 0;

	for (i = 0; i < 25; i++) {
		snprintf(name, sizeof name, "ls/%02d", i);
		assert_md_ok(h, md_put(h, fx_key(0, name), name, strlen(name),
		    NULL, &pr));
	}
	memset(&o, 0, sizeof o);
	o.prefix = fx_key(1, "ls/");
	o.limit = 10;
	do {
		o.after = after[0] != '\0' ? after : NULL;
		assert_md_ok(h, md_list(h, &o, &l));
		pages++;
		for (i = 0; i < (int)l.n; i++, seen++) {
			snprintf(name, sizeof name, "ls/%02d", seen);
			assert_string_equal(l.kvs[i].key, fx_key(0, name));
			assert_string_equal(l.kvs[i].value, name);
			assert_int_equal(l.kvs[i].version, 1);
		}
		assert_true(l.rev > 0);
		if (l.n > 0)
			snprintf(after, sizeof after, "%s", l.kvs[l.n - 1].key);
		i = l.more;
		md_list_free(&l);
	} while (i);
	assert_int_equal(pages, 3);
	assert_int_equal(seen, 25);

	o.after = NULL;
	o.limit = 0;
	o.keys_only = 1;
	assert_md_ok(h, md_list(h, &o, &l));
	assert_int_equal(l.n, 25);
	assert_false(l.more);
	assert_null(l.kvs[0].value);

	/* At a past revision: the keys as they were. */
	o.keys_only = 0;
	o.read.rev = pr.rev - 1;	/* before the last put */
	md_list_free(&l);
	assert_md_ok(h, md_list(h, &o, &l));
	assert_int_equal(l.n, 24);
	assert_true(l.rev >= pr.rev);
	md_list_free(&l);

	o.read.rev = 0;
	o.limit = 10001;
	assert_md_err(h, md_list(h, &o, &l), MD_E_BAD_REQUEST);
	md_free(h);
}

static void
test_ranges(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_write_opts	 wo;
	struct md_list		 l;
	struct md_put_result	 pr;
	const char		*keys[3];
	char			 k[3][64], name[32];
	uint64_t		 n, rev;
	int			 i;

	for (i = 0; i < 4; i++) {
		snprintf(name, sizeof name, "rg/%d", i);
		assert_md_ok(h, md_put(h, fx_key(0, name), name, strlen(name),
		    NULL, &pr));
	}
	/* Several keys at one rev, in key order, the missing one left out. */
	snprintf(k[0], sizeof k[0], "%s", fx_key(0, "rg/2"));
	snprintf(k[1], sizeof k[1], "%s", fx_key(0, "rg/none"));
	snprintf(k[2], sizeof k[2], "%s", fx_key(0, "rg/0"));
	for (i = 0; i < 3; i++)
		keys[i] = k[i];
	assert_md_ok(h, md_get_many(h, keys, 3, NULL, &l));
	assert_int_equal(l.n, 2);
	assert_string_equal(l.kvs[0].key, k[2]);
	assert_string_equal(l.kvs[1].value, "rg/2");
	assert_true(l.rev >= pr.rev);
	md_list_free(&l);
	assert_md_err(h, md_get_many(h, keys, 129, NULL, &l), MD_E_INVALID);

	/* [rg/1, rg/3): two keys at one rev. */
	snprintf(k[0], sizeof k[0], "%s", fx_key(0, "rg/1"));
	snprintf(k[1], sizeof k[1], "%s", fx_key(0, "rg/3"));
	assert_md_ok(h, md_delete_range(h, k[0], k[1], NULL, &n, &rev));
	assert_int_equal(n, 2);
	assert_int_equal(rev, pr.rev + 1);
	/* A prefix: what is left; then nothing, and the rev stays. */
	assert_md_ok(h, md_delete_prefix(h, fx_key(0, "rg/"), NULL, &n, &rev));
	assert_int_equal(n, 2);
	assert_int_equal(rev, pr.rev + 2);
	assert_md_ok(h, md_delete_prefix(h, fx_key(0, "rg/"), NULL, &n, &rev));
	assert_int_equal(n, 0);
	assert_int_equal(rev, pr.rev + 2);
	memset(&wo, 0, sizeof wo);
	wo.pre = MD_PRE_ABSENT;
	assert_md_err(h, md_delete_prefix(h, fx_key(0, "rg/"), &wo, &n, NULL),
	    MD_E_INVALID);
	assert_md_err(h, md_delete_range(h, k[0], NULL, NULL, &n, NULL),
	    MD_E_INVALID);
	md_free(h);
}

static void
test_txn(void **state)
{
	struct md_client	*h = fx_connect();
	char			 body[1024], *resp;
	const char		*k = fx_key(0, "txn");
	uint64_t		 rev;
	int			 ok;

	snprintf(body, sizeof body, "{\"if\":[{\"key\":\"%s\",\"version\":0}],"
	    "\"then\":[{\"op\":\"put\",\"key\":\"%s\",\"value\":\"t\"}],"
	    "\"else\":[{\"op\":\"get\",\"key\":\"%s\"}]}", k, k, k);
	assert_md_ok(h, md_txn(h, body, &ok, &rev, NULL));
	assert_true(ok);
	assert_true(rev > 0);
	assert_md_ok(h, md_txn(h, body, &ok, NULL, &resp));
	assert_false(ok);
	assert_non_null(strstr(resp, "\"results\""));
	assert_non_null(strstr(resp, "\"value\":\"t\""));
	free(resp);

	assert_md_err(h, md_txn(h, "not json", &ok, NULL, NULL), MD_E_INVALID);
	assert_md_err(h, md_txn(h, "{\"then\":[{\"op\":\"frob\"}]}", &ok,
	    NULL, NULL), MD_E_BAD_REQUEST);
	md_free(h);
}

/* Leases (metad-protocol(7), LEASES): every backend has them. */
static void
test_leases(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_lease_info	 li;
	struct md_write_opts	 o;
	uint64_t		 id, ttl, rev;

	assert_md_ok(h, md_lease_grant(h, 5000, 0, &id, &ttl));
	assert_true(id > 0);
	assert_int_equal(ttl, 5000);
	memset(&o, 0, sizeof o);
	o.lease = id;
	assert_md_ok(h, md_put(h, fx_key(0, "leased"), "x", 1, &o, NULL));
	assert_md_ok(h, md_lease_keepalive(h, id, &ttl));
	assert_md_ok(h, md_lease_info(h, id, &li));
	assert_int_equal(li.nkeys, 1);
	md_lease_info_clear(&li);
	assert_md_ok(h, md_lease_revoke(h, id, &rev));
	assert_md_err(h, md_lease_keepalive(h, id, &ttl), MD_E_NOT_FOUND);
	md_free(h);
}

static void
test_raw(void **state)
{
	struct md_client	*h = fx_connect();
	const char		*line;
	size_t			 len;
	static char		 big[2 * 1024 * 1024 + 64];
	int			 n;

	assert_md_ok(h, md_request(h, "{\"id\":7,\"op\":\"ping\"}", 20, &line,
	    &len));
	assert_int_equal(strlen(line), len);
	assert_non_null(strstr(line, "\"id\":7"));
	assert_non_null(strstr(line, "\"ok\":true"));
	assert_md_ok(h, md_request(h, "{\"op\":\"frob\"}", 13, &line, &len));
	assert_non_null(strstr(line, "unknown_op"));
	assert_md_ok(h, md_request(h, "nonsense", 8, &line, &len));
	assert_non_null(strstr(line, "bad_request"));

	/* Pipelined through md_send, answered in order. */
	assert_md_ok(h, md_send(h, "{\"id\":1,\"op\":\"ping\"}", 20));
	assert_md_ok(h, md_send(h, "{\"id\":2,\"op\":\"ping\"}", 20));
	assert_md_ok(h, md_recv(h, 5000, &line, &len));
	assert_non_null(strstr(line, "\"id\":1"));
	assert_md_ok(h, md_recv(h, 5000, &line, &len));
	assert_non_null(strstr(line, "\"id\":2"));
	/* A quiet stream is no desync: the connection stays. */
	assert_md_err(h, md_recv(h, 100, &line, &len), MD_E_DEADLINE);
	assert_true(md_connected(h));
	assert_md_ok(h, md_ping(h, NULL));

	/* A value over the daemon's limit (1 MiB): refused, and the
	 * connection goes on. */
	h = (md_free(h), fx_connect());
	memset(big, 'v', sizeof big);
	n = snprintf(big, 64, "{\"op\":\"put\",\"key\":\"%s\",\"value\":\"",
	    fx_key(0, "big"));
	big[n] = 'v';
	memcpy(big + 1024 * 1024 + 256, "\"}", 2);
	assert_md_ok(h, md_request(h, big, 1024 * 1024 + 258, &line, &len));
	assert_non_null(strstr(line, "value_too_large"));
	assert_md_err(h, md_put(h, fx_key(0, "big"), big, 1024 * 1024 + 1,
	    NULL, NULL), MD_E_VALUE_TOO_LARGE);
	assert_md_ok(h, md_ping(h, NULL));
	md_free(h);
}

/*
 * metad-protocol(7), KEYS, VALUES AND KV OBJECTS: a value holding NUL bytes
 * is valid UTF-8, answered as "value" with \u0000 escapes; the library hands
 * out its bytes with their length, in get, list and a txn's answer, and sends
 * such values itself.
 */
static void
test_nul_values(void **state)
{
	struct md_client	*h = fx_connect();
	struct md_list_opts	 lo;
	struct md_list		 l;
	struct md_kv		*kv;
	static char		 zeros[300000];
	char			 body[1024], *resp;
	const char		*k = fx_key(0, "nul"), *line;
	size_t			 len;
	int			 ok;

	assert_md_ok(h, md_put(h, k, "a\0b", 3, NULL, NULL));
	assert_md_ok(h, md_get(h, k, NULL, &kv, NULL));
	assert_int_equal(kv->value_len, 3);
	assert_memory_equal(kv->value, "a\0b", 4);	/* NUL-terminated */
	md_kv_free(kv);
	/* On the wire: "value", \u0000. */
	snprintf(body, sizeof body, "{\"op\":\"get\",\"key\":\"%s\"}", k);
	assert_md_ok(h, md_request(h, body, strlen(body), &line, &len));
	assert_non_null(strstr(line, "\"value\":\"a\\u0000b\""));

	memset(&lo, 0, sizeof lo);
	lo.prefix = k;
	assert_md_ok(h, md_list(h, &lo, &l));
	assert_int_equal(l.n, 1);
	assert_int_equal(l.kvs[0].value_len, 3);
	assert_memory_equal(l.kvs[0].value, "a\0b", 4);
	md_list_free(&l);

	/* A txn body with \u0000 goes out as such; its answer keeps it. */
	snprintf(body, sizeof body, "{\"if\":[{\"key\":\"%s\",\"value\":"
	    "\"a\\u0000b\"}],\"then\":[{\"op\":\"get\",\"key\":\"%s\"}]}",
	    k, k);
	assert_md_ok(h, md_txn(h, body, &ok, NULL, &resp));
	assert_true(ok);
	assert_non_null(strstr(resp, "\"value\":\"a\\u0000b\""));
	assert_null(memchr(resp, 0xc0, strlen(resp)));
	free(resp);

	/* All NUL, under the daemon's value limit (1 MiB) but 6 times
	 * that escaped: sent as value_b64, answered as "value". */
	assert_md_ok(h, md_put(h, k, zeros, sizeof zeros, NULL, NULL));
	assert_md_ok(h, md_get(h, k, NULL, &kv, NULL));
	assert_int_equal(kv->value_len, sizeof zeros);
	assert_memory_equal(kv->value, zeros, sizeof zeros);
	md_kv_free(kv);
	md_free(h);
}

static void
test_compact(void **state)
{
	struct md_client	*h = fx_connect();
	uint64_t		 rev, crev;

	assert_md_ok(h, md_ping(h, &rev));
	assert_md_ok(h, md_compact(h, rev, &crev));
	assert_int_equal(crev, rev);
	assert_md_err(h, md_compact(h, rev + 1000, &crev), MD_E_BAD_REQUEST);
	md_free(h);
}

static void
test_errnames(void **state)
{
	assert_string_equal(md_errname(MD_OK), "ok");
	assert_string_equal(md_errname(MD_E_FENCED), "fenced");
	assert_string_equal(md_errname(MD_E_INTERNAL), "internal");
	assert_string_equal(md_errname(MD_E_DEADLINE), "deadline");
	assert_string_equal(md_errname(MD_E_INVALID), "invalid");
	assert_string_equal(md_errname((enum md_err)99), "unknown");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errnames),
		cmocka_unit_test(test_connect_errors),
		cmocka_unit_test(test_interrupt),
		cmocka_unit_test(test_put_get),
		cmocka_unit_test(test_preconditions),
		cmocka_unit_test(test_epoch_fence),
		cmocka_unit_test(test_list_paging),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_txn),
		cmocka_unit_test(test_nul_values),
		cmocka_unit_test(test_leases),
		cmocka_unit_test(test_raw),
		cmocka_unit_test(test_compact),
	};

	return (cmocka_run_group_tests(tests, NULL, NULL));
}
