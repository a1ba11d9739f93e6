/*
 * The JSON gateway's encodings (etcd_http.h): bytes as base64, int64s as
 * strings, and a prefix's range_end, apart from the HTTP transport; and
 * the endpoints' URLs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "store/etcd/etcd_http.h"
#include "util.h"

char *
etcd_b64(const void *p, size_t n)
{
	char	*s;

	s = xmalloc(b64_encoded_len(n) + 1);
	b64_encode(p, n, s);
	return (s);
}

unsigned char *
etcd_unb64(const cJSON *obj, const char *name, size_t *len)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(obj, name);
	unsigned char	*out;
	size_t		 n;
	long		 r;

	*len = 0;
	if (!cJSON_IsString(it)) {
		out = xmalloc(1);
		out[0] = '\0';
		return (out);
	}
	n = strlen(it->valuestring);
	out = xmalloc(n / 4 * 3 + 1);
	if ((r = b64_decode(it->valuestring, n, out)) < 0)
		r = 0;
	out[r] = '\0';
	*len = (size_t)r;
	return (out);
}

uint64_t
etcd_u64(const cJSON *obj, const char *name)
{
	const cJSON	*it = cJSON_GetObjectItemCaseSensitive(obj, name);
	uint64_t	 v = 0;

	if (cJSON_IsString(it) && parse_u64(it->valuestring, &v) == 0)
		return (v);
	if (cJSON_IsNumber(it) && it->valuedouble >= 0)
		return ((uint64_t)it->valuedouble);
	return (0);
}

/* The base64 of the first key after every key starting with p. */
char *
etcd_prefix_end64(const char *p, size_t n)
{
	unsigned char	*e = xmemdup(p, n);
	char		*s;

	while (n > 0 && e[n - 1] == 0xff)
		n--;
	if (n == 0) {
		free(e);
		return (xstrdup("AA=="));	/* "\0": to the end */
	}
	e[n - 1]++;
	s = etcd_b64(e, n);
	free(e);
	return (s);
}

int
etcd_http_parse_url(struct etcd_endpoint *ep, const char *url, size_t len,
    struct store_err *err)
{
	const char	*hp, *colon;
	char		*end;
	unsigned long	 port;

	if (len >= sizeof ep->url || len < 8 || strncmp(url, "http://", 7) != 0)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd endpoint "
		    "\"%.*s\": expected http://HOST:PORT", (int)(len > 64 ?
		    64 : len), url));
	memcpy(ep->url, url, len);
	ep->url[len] = '\0';
	if (ep->url[len - 1] == '/')
		ep->url[len - 1] = '\0';
	hp = ep->url + 7;
	colon = strrchr(hp, ':');
	if (colon == NULL || (size_t)(colon - hp) >= sizeof ep->host ||
	    colon == hp)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd endpoint "
		    "\"%s\": expected http://HOST:PORT", ep->url));
	errno = 0;
	port = strtoul(colon + 1, &end, 10);
	if (errno != 0 || *end != '\0' || port == 0 || port > 65535)
		return (store_err_set(err, STORE_ERR_INTERNAL, "etcd endpoint "
		    "\"%s\": bad port", ep->url));
	memcpy(ep->host, hp, colon - hp);
	ep->host[colon - hp] = '\0';
	ep->port = (unsigned short)port;
	ep->healthy = 1;
	return (0);
}
