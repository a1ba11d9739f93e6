/*
 * A TLS address, tls://HOST:PORT (metad(8), --listen; metactl(1), -s):
 * HOST a name, an IPv4 address or an IPv6 one in brackets
 * (tls://[::1]:7000), PORT a number from 1 to 65535.
 */
#ifndef METAD_TLSADDR_H
#define METAD_TLSADDR_H

#define TLSADDR_SCHEME	"tls://"

struct tlsaddr {
	char	 host[256];	/* without the brackets */
	char	 port[6];
};

/* 1 if s is meant as a TLS address (it starts with tls://). */
int	tlsaddr_is(const char *s);
/* 0, or -1 with *why (allocated) saying what is wrong. */
int	tlsaddr_parse(const char *s, struct tlsaddr *, char **why);

#endif
