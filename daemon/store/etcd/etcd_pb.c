/*
 * etcd's messages: gateway JSON <-> protobuf (etcd_pb.h), driven by the
 * tables of each message's fields (etcd_pb_msg.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "store/etcd/etcd_pb.h"
#include "store/etcd/etcd_pb_int.h"
#include "util.h"

/* Encoding. */

static int	pb_encode_msg(const struct pb_msg *, const cJSON *, struct buf *,
		    int, const char **);

/* A JSON int64: a string of digits (the gateway's) or a number. */
static int
pb_json_int(const cJSON *it, uint64_t *v)
{
	char		*end;
	long long	 ll;

	if (cJSON_IsNumber(it)) {
		if (it->valuedouble < -9.2e18 || it->valuedouble > 9.2e18)
			return (-1);
		*v = (uint64_t)(long long)it->valuedouble;
		return (0);
	}
	if (!cJSON_IsString(it) || it->valuestring[0] == '\0')
		return (-1);
	errno = 0;
	ll = strtoll(it->valuestring, &end, 10);
	if (errno != 0 || *end != '\0')
		return (-1);
	*v = (uint64_t)ll;
	return (0);
}

static int
pb_encode_field(const struct pb_field *f, const cJSON *it, struct buf *b,
    int depth, const char **why)
{
	struct buf	 sub;
	unsigned char	*raw;
	uint64_t	 v = 0;
	long		 r;
	size_t		 n;
	unsigned	 i;

	switch (f->type) {
	case PB_BYTES:
		if (!cJSON_IsString(it))
			return (*why = "a bytes field is not a string", -1);
		n = strlen(it->valuestring);
		raw = xmalloc(n / 4 * 3 + 3);
		if ((r = b64_decode(it->valuestring, n, raw)) < 0) {
			free(raw);
			return (*why = "a bytes field is not base64", -1);
		}
		etcd_pb_put_bytes(b, f->no, raw, (size_t)r);
		free(raw);
		return (0);
	case PB_STRING:
		if (!cJSON_IsString(it))
			return (*why = "a string field is not a string", -1);
		etcd_pb_put_bytes(b, f->no, it->valuestring,
		    strlen(it->valuestring));
		return (0);
	case PB_INT:
	case PB_UINT:
		if (pb_json_int(it, &v) != 0)
			return (*why = "an int64 field is not an integer", -1);
		break;
	case PB_BOOL:
		if (!cJSON_IsBool(it))
			return (*why = "a bool field is not true or false", -1);
		v = cJSON_IsTrue(it);
		break;
	case PB_ENUM:
		if (cJSON_IsString(it)) {
			for (i = 0; f->names[i] != NULL; i++) {
				if (strcmp(f->names[i], it->valuestring) == 0)
					break;
			}
			if (f->names[i] == NULL)
				return (*why = "an unknown enum name", -1);
			v = i;
		} else if (pb_json_int(it, &v) != 0)
			return (*why = "an enum field is not a name", -1);
		break;
	case PB_MSG:
		if (!cJSON_IsObject(it))
			return (*why = "a message field is not an object", -1);
		buf_init(&sub);
		if (pb_encode_msg(f->msg, it, &sub, depth + 1, why) != 0) {
			buf_free(&sub);
			return (-1);
		}
		etcd_pb_put_bytes(b, f->no, sub.data, sub.len);
		buf_free(&sub);
		return (0);
	}
	etcd_pb_put_int(b, f->no, v);
	return (0);
}

static int
pb_encode_msg(const struct pb_msg *m, const cJSON *obj, struct buf *b,
    int depth, const char **why)
{
	const cJSON		*it, *el;
	const struct pb_field	*f;
	size_t			 i;

	if (depth > ETCD_PB_DEPTH_MAX)
		return (*why = "too deeply nested", -1);
	cJSON_ArrayForEach(it, obj) {
		for (i = 0, f = NULL; i < m->n && f == NULL; i++) {
			if (it->string != NULL &&
			    strcmp(m->f[i].name, it->string) == 0)
				f = &m->f[i];
		}
		if (f == NULL)
			return (*why = "an unknown field", -1);
		if (!f->repeated) {
			if (pb_encode_field(f, it, b, depth, why) != 0)
				return (-1);
			continue;
		}
		if (!cJSON_IsArray(it))
			return (*why = "a repeated field is not an array", -1);
		cJSON_ArrayForEach(el, it) {
			if (pb_encode_field(f, el, b, depth, why) != 0)
				return (-1);
		}
	}
	return (0);
}

int
etcd_pb_encode(enum etcd_pb_rpc rpc, const char *json, struct buf *out,
    const char **why)
{
	cJSON	*j;
	int	 rc;

	if (rpc >= ETCD_PB_NONE)
		return (*why = "not a KV call", -1);
	if ((j = cJSON_Parse(json)) == NULL || !cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return (*why = "the request is not a JSON object", -1);
	}
	rc = pb_encode_msg(pb_rpcs[rpc].req, j, out, 0, why);
	cJSON_Delete(j);
	return (rc);
}

/* Decoding. */

static int	pb_walk(const struct pb_msg *, const uint8_t *, size_t, int,
		    cJSON *);

/*
 * A new string item that takes s (malloc'd: cJSON frees its strings with
 * free(), the hooks being its defaults), under the field's constant name.
 */
static void
pb_add_string(cJSON *obj, const char *name, char *s)
{
	cJSON	*it = cJSON_CreateNull();

	it->type = cJSON_String;
	it->valuestring = s;
	cJSON_AddItemToObjectCS(obj, name, it);
}

/* v in decimal, as a string item (an int64's sign if signed). */
static void
pb_add_int(cJSON *obj, const char *name, uint64_t v, int is_signed)
{
	char	 t[24], *s;
	size_t	 n = 0, i;
	int	 neg = is_signed && (int64_t)v < 0;

	if (neg)
		v = (uint64_t)0 - v;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	s = xmalloc(n + neg + 1);
	if (neg)
		s[0] = '-';
	for (i = 0; i < n; i++)
		s[neg + i] = t[n - 1 - i];
	s[n + neg] = '\0';
	pb_add_string(obj, name, s);
}

/* it, an element of the repeated field name, after those seen before. */
static void
pb_add_elem(cJSON *obj, const char *name, int seen, cJSON *it)
{
	cJSON	*arr;

	arr = seen ? cJSON_GetObjectItemCaseSensitive(obj, name) : NULL;
	if (arr == NULL) {
		arr = cJSON_CreateArray();
		cJSON_AddItemToObjectCS(obj, name, arr);
	}
	cJSON_AddItemToArray(arr, it);
}

/* A bytes field in base64, a string as it is: malloc'd. */
static char *
pb_str(enum pb_type type, const uint8_t *p, size_t n)
{
	char	*s;

	if (type == PB_BYTES) {
		s = xmalloc(b64_encoded_len(n) + 1);
		b64_encode(p, n, s);
	} else {
		s = xmalloc(n + 1);
		memcpy(s, p, n);
		s[n] = '\0';
	}
	return (s);
}

/*
 * A field's value into obj; with obj NULL, only checked.  seen: the fields
 * of obj given before (a bit per index in the table): only those can be
 * there already, to be replaced (proto3: the last one wins).
 */
static int
pb_decode_value(const struct pb_field *f, cJSON *obj, int wt, uint64_t v,
    const uint8_t *p, size_t n, int depth, int seen)
{
	cJSON	*sub = NULL;
	char	*s;
	int	 k;

	if ((f->type == PB_BYTES || f->type == PB_STRING ||
	    f->type == PB_MSG) != (wt == 2))
		return (-1);	/* the wrong wire type */
	/* A JSON string here is a C string: a NUL in one is refused, not
	 * cut (no field metad reads or sends as a string holds one). */
	if (f->type == PB_STRING && n > 0 && memchr(p, 0, n) != NULL)
		return (-1);
	if (obj == NULL)
		return (f->type == PB_MSG ? pb_walk(f->msg, p, n, depth + 1,
		    NULL) : 0);
	if (seen && !f->repeated)
		cJSON_DeleteItemFromObjectCaseSensitive(obj, f->name);
	switch (f->type) {
	case PB_BYTES:
	case PB_STRING:
		if (n == 0 && !f->repeated)
			return (0);
		s = pb_str(f->type, p, n);
		if (!f->repeated) {
			pb_add_string(obj, f->name, s);
			return (0);
		}
		sub = cJSON_CreateNull();
		sub->type = cJSON_String;
		sub->valuestring = s;
		break;
	case PB_INT:
	case PB_UINT:
		if (v != 0)
			pb_add_int(obj, f->name, v, f->type == PB_INT);
		return (0);
	case PB_BOOL:
		if (v != 0)
			cJSON_AddItemToObjectCS(obj, f->name, cJSON_CreateTrue());
		return (0);
	case PB_ENUM:
		for (k = 0; v != 0 && f->names[k] != NULL && (uint64_t)k < v;
		    k++)
			;
		if (v != 0 && f->names[k] != NULL)
			cJSON_AddItemToObjectCS(obj, f->name,
			    cJSON_CreateString(f->names[k]));
		else if (v != 0)
			cJSON_AddItemToObjectCS(obj, f->name,
			    cJSON_CreateNumber((double)v));
		return (0);
	case PB_MSG:
		sub = cJSON_CreateObject();
		if (pb_walk(f->msg, p, n, depth + 1, sub) != 0) {
			cJSON_Delete(sub);
			return (-1);
		}
		if (!f->repeated) {
			/* Proto3: a message given twice is merged; rare. */
			cJSON_AddItemToObjectCS(obj, f->name, sub);
			return (0);
		}
		break;
	}
	pb_add_elem(obj, f->name, seen, sub);
	return (0);
}

/* The message m in p[0..n) into obj (NULL: only checked); -1: malformed. */
static int
pb_walk(const struct pb_msg *m, const uint8_t *p, size_t n, int depth,
    cJSON *obj)
{
	const struct pb_field	*f;
	const uint8_t		*end = p + n, *data = NULL;
	uint64_t		 v = 0, seen = 0;
	uint32_t		 no;
	size_t			 i, len = 0;
	int			 rc, wt;

	if (depth > ETCD_PB_DEPTH_MAX)
		return (-1);
	while ((rc = etcd_pb_next(&p, end, &no, &wt, &v, &data, &len)) == 1) {
		for (i = 0, f = NULL; i < m->n && f == NULL; i++) {
			if (m->f[i].no == no)
				f = &m->f[i];
		}
		if (f == NULL)
			continue;	/* unknown: skipped */
		i--;	/* f's index: < 64 (the tables are short) */
		if ((wt == 1 || wt == 5) ||
		    pb_decode_value(f, obj, wt, v, data, len, depth,
		    (seen >> i & 1) != 0) != 0)
			return (-1);
		seen |= (uint64_t)1 << i;
	}
	return (rc);
}

static cJSON *
pb_decode_msg(const struct pb_msg *m, const uint8_t *p, size_t n, int depth)
{
	cJSON	*obj = cJSON_CreateObject();

	if (pb_walk(m, p, n, depth, obj) != 0) {
		cJSON_Delete(obj);
		return (NULL);
	}
	return (obj);
}

cJSON *
etcd_pb_decode(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (NULL);
	return (pb_decode_msg(pb_rpcs[rpc].resp, p, n, 0));
}

cJSON *
etcd_pb_decode_request(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (NULL);
	return (pb_decode_msg(pb_rpcs[rpc].req, p, n, 0));
}

/* A cJSON item and the malloc around it, at least. */
#define PB_COST_ITEM	(sizeof(cJSON) + 16)

/* What pb_decode_msg would allocate for m in p[0..n), about (not checked). */
static size_t
pb_cost(const struct pb_msg *m, const uint8_t *p, size_t n, int depth)
{
	const struct pb_field	*f;
	const uint8_t		*end = p + n, *data = NULL;
	uint64_t		 v = 0;
	uint32_t		 no;
	size_t			 i, len = 0, cost = PB_COST_ITEM;
	int			 wt;

	if (depth > ETCD_PB_DEPTH_MAX)
		return (cost);
	while (etcd_pb_next(&p, end, &no, &wt, &v, &data, &len) == 1) {
		for (i = 0, f = NULL; i < m->n && f == NULL; i++) {
			if (m->f[i].no == no)
				f = &m->f[i];
		}
		if (f == NULL)
			continue;
		if (f->type == PB_MSG && wt == 2)
			cost += pb_cost(f->msg, data, len, depth + 1);
		else if (f->type == PB_BYTES && wt == 2)
			cost += PB_COST_ITEM + b64_encoded_len(len) + 16;
		else if (wt == 2)
			cost += PB_COST_ITEM + len + 16;
		else		/* an int64 in decimal, a bool, an enum */
			cost += PB_COST_ITEM + 24 + 16;
	}
	return (cost);
}

size_t
etcd_pb_decode_cost(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (0);
	return (pb_cost(pb_rpcs[rpc].resp, p, n, 0));
}

int
etcd_pb_check(enum etcd_pb_rpc rpc, const void *p, size_t n)
{
	if (rpc >= ETCD_PB_NONE)
		return (-1);
	return (pb_walk(pb_rpcs[rpc].resp, p, n, 0, NULL));
}

/* The gateway's encodings of bytes and int64s, for the callers' JSON. */

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
