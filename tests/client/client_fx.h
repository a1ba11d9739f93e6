/*
 * The fixture of the library's tests: a handle on the daemon the caller
 * started ($MD_TEST_SOCKET; tests/bats/client.bats starts it), and keys
 * under a prefix of this process's own.
 */
#ifndef CLIENT_FX_H
#define CLIENT_FX_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>

#include <cmocka.h>

#include <metad/client.h>

#define FX_TIMEOUT_MS	10000

/* A connected handle (the test fails if it cannot connect). */
struct md_client	*fx_connect(void);
const char		*fx_socket(void);
/* "PREFIX/name" in a static buffer (one at a time per slot 0..3). */
const char		*fx_key(int slot, const char *name);
const char		*fx_prefix(void);

/* Asserts a call failed with code e, printing the message if not. */
#define assert_md_err(h, rc, e) do {					\
	if ((rc) != -1 || md_errcode(h) != (e))				\
		fail_msg("wanted %s, got rc %d %s: %s", md_errname(e),	\
		    (int)(rc), md_errname(md_errcode(h)), md_errmsg(h)); \
} while (0)
#define assert_md_ok(h, rc) do {					\
	if ((rc) != 0)							\
		fail_msg("failed: %s: %s", md_errname(md_errcode(h)),	\
		    md_errmsg(h));					\
} while (0)

#endif
