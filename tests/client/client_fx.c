#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "client_fx.h"

const char *
fx_socket(void)
{
	const char	*s = getenv("MD_TEST_SOCKET");

	if (s == NULL)
		fail_msg("MD_TEST_SOCKET is not set (tests/bats/client.bats "
		    "runs these tests against a daemon it starts)");
	return (s);
}

struct md_client *
fx_connect(void)
{
	struct md_client	*h = md_new();

	if (md_connect(h, fx_socket(), FX_TIMEOUT_MS) != 0)
		fail_msg("connect: %s", md_errmsg(h));
	return (h);
}

const char *
fx_prefix(void)
{
	static char	 p[64];

	if (p[0] == '\0')
		snprintf(p, sizeof p, "libtest/%ld/", (long)getpid());
	return (p);
}

const char *
fx_key(int slot, const char *name)
{
	static char	 k[4][256];

	snprintf(k[slot & 3], sizeof k[0], "%s%s", fx_prefix(), name);
	return (k[slot & 3]);
}
