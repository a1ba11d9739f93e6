/* tls://HOST:PORT addresses (tlsaddr.h). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tlsaddr.h"
#include "util.h"

int
tlsaddr_is(const char *s)
{
	return (strncmp(s, TLSADDR_SCHEME, strlen(TLSADDR_SCHEME)) == 0);
}

int
tlsaddr_parse(const char *s, struct tlsaddr *a, char **why)
{
	const char	*p, *end, *colon;
	size_t		 n;
	uint64_t	 port;

	memset(a, 0, sizeof *a);
	if (!tlsaddr_is(s)) {
		xasprintf(why, "expected tls://HOST:PORT");
		return (-1);
	}
	p = s + strlen(TLSADDR_SCHEME);
	if (*p == '[') {
		if ((end = strchr(p, ']')) == NULL || end[1] != ':') {
			xasprintf(why, "expected tls://[IPV6]:PORT");
			return (-1);
		}
		p++;
		n = (size_t)(end - p);
		colon = end + 1;
	} else {
		if ((colon = strrchr(p, ':')) == NULL) {
			xasprintf(why, "no port (expected tls://HOST:PORT)");
			return (-1);
		}
		n = (size_t)(colon - p);
		if (memchr(p, ':', n) != NULL) {
			xasprintf(why, "an IPv6 address goes in brackets "
			    "(tls://[::1]:PORT)");
			return (-1);
		}
	}
	if (n == 0 || n >= sizeof a->host || memchr(p, '/', n) != NULL) {
		xasprintf(why, "no valid host (expected tls://HOST:PORT)");
		return (-1);
	}
	memcpy(a->host, p, n);
	if (parse_u64(colon + 1, &port) != 0 || port == 0 || port > 65535) {
		xasprintf(why, "the port must be a number from 1 to 65535");
		return (-1);
	}
	snprintf(a->port, sizeof a->port, "%u", (unsigned)port);
	return (0);
}
