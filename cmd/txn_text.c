/*
 * The etcdctl-style text form of a txn, read by "metactl txn" when stdin
 * does not start with '{'.  Three sections, each ended by one blank line:
 *
 *	version("cfg") = 3		compares: TARGET("KEY") OP VALUE
 *	value("owner") = "node a"
 *
 *	put cfg v4			then: put KEY VALUE, del KEY, get KEY
 *	get owner
 *
 *	get cfg				else
 *
 * TARGET is version (ver), create_rev (create), mod_rev (mod) or value
 * (val); OP is =, !=, < or >; VALUE is an integer for the first three.  A
 * section may be empty (a txn with no compare starts with a blank line);
 * missing trailing sections are empty; lines starting with '#' are
 * comments.  KEY and VALUE are tokens as metactl prints them (output.h):
 * a bare word (no space, not starting with '"' or '('), a JSON string
 * literal ("two words", "", "a\nb", "a\u0000b": a NUL byte in a value),
 * or, for a value, b64:BASE64 bytes.
 * Key and value are quoted in etcdctl's examples (put k "v"), which works
 * here too.
 *
 * txn_text_parse() returns the request as a cJSON object ("if", "then",
 * "else") that the caller frees, or NULL with a cause naming the line.
 */
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

struct txn_text {
	const char	*p;		/* the rest of the current line */
	const char	*end;
	size_t		 lineno;
	char		*err;		/* the first error */
};

struct txn_token {
	char		*s;		/* NUL-terminated, owned */
	size_t		 len;
	int		 b64;		/* s is base64 (b64:...) */
};

static const struct {
	const char	*name;
	const char	*field;
} txn_text_targets[] = {
	{ "version", "version" }, { "ver", "version" },
	{ "create_rev", "create_rev" }, { "create", "create_rev" },
	{ "mod_rev", "mod_rev" }, { "mod", "mod_rev" },
	{ "value", "value" }, { "val", "value" }
};

static int
txn_text_fail(struct txn_text *t, const char *what)
{
	if (t->err == NULL)
		xasprintf(&t->err, "txn on stdin, line %zu: %s", t->lineno,
		    what);
	return (-1);
}

static void
txn_text_space(struct txn_text *t)
{
	while (t->p < t->end && (*t->p == ' ' || *t->p == '\t'))
		t->p++;
}

/*
 * A JSON string literal at t->p, read as metad reads a "value"
 * (proto_parse, proto_get_value): a \u0000 in it is a NUL byte, kept in
 * tok->s as proto_parse's C0 80, which the request writes as \u0000 again
 * (proto_print); a key refuses it (txn_text_key).
 */
static int
txn_text_quoted(struct txn_text *t, struct txn_token *tok)
{
	const char		*q = t->p + 1;
	const cJSON		*str;
	struct proto_bytes	 v;
	struct proto_err	 e;
	struct buf		 b;
	cJSON			*j;
	int			 ok;

	while (q < t->end && *q != '"')
		q += *q == '\\' ? 2 : 1;
	if (q >= t->end)
		return (txn_text_fail(t, "a string has no closing '\"'"));
	buf_init(&b);
	buf_addstr(&b, "{\"value\":");
	buf_add(&b, t->p, (size_t)(q + 1 - t->p));
	buf_addc(&b, '}');
	j = proto_parse(b.data, b.len, &e);
	buf_free(&b);
	str = cJSON_GetObjectItemCaseSensitive(j, "value");
	ok = cJSON_IsString(str) && proto_get_value(j, 1, SIZE_MAX, &v,
	    &e) == 1;
	if (ok) {
		proto_bytes_free(&v);
		tok->s = xstrdup(str->valuestring);
		tok->len = strlen(tok->s);
	}
	cJSON_Delete(j);
	if (!ok)
		return (txn_text_fail(t, "invalid string (JSON escapes and "
		    "UTF-8 only)"));
	t->p = q + 1;
	return (0);
}

/* A bare word up to a space (or to stop). */
static int
txn_text_bare(struct txn_text *t, struct txn_token *tok, char stop)
{
	const char	*q = t->p;
	unsigned char	*dec;

	while (q < t->end && *q != ' ' && *q != '\t' && *q != stop)
		q++;
	if (!utf8_valid(t->p, (size_t)(q - t->p)))
		return (txn_text_fail(t, "a word is not valid UTF-8"));
	tok->len = (size_t)(q - t->p);
	if (tok->len >= OUTPUT_B64_PREFIX_LEN && memcmp(t->p,
	    OUTPUT_B64_PREFIX, OUTPUT_B64_PREFIX_LEN) == 0) {
		tok->b64 = 1;
		tok->len -= OUTPUT_B64_PREFIX_LEN;
		t->p += OUTPUT_B64_PREFIX_LEN;
		dec = xmalloc(tok->len / 4 * 3 + 1);
		if (b64_decode(t->p, tok->len, dec) < 0) {
			free(dec);
			return (txn_text_fail(t, "invalid base64 after b64:"));
		}
		free(dec);
	}
	/* Not tok->len + 1 bytes of the line: the word may end the input. */
	tok->s = xmalloc(tok->len + 1);
	memcpy(tok->s, t->p, tok->len);
	tok->s[tok->len] = '\0';
	t->p = q;
	return (0);
}

/* The next token; 0 and tok->s == NULL at the end of the line. */
static int
txn_text_token(struct txn_text *t, struct txn_token *tok, char stop)
{
	memset(tok, 0, sizeof *tok);
	txn_text_space(t);
	if (t->p == t->end)
		return (0);
	if (*t->p == '"')
		return (txn_text_quoted(t, tok));
	if (*t->p == '(')
		return (txn_text_fail(t, "a word may not start with '(' (quote "
		    "it)"));
	return (txn_text_bare(t, tok, stop));
}

static int
txn_text_key(struct txn_text *t, struct txn_token *tok, char stop)
{
	if (txn_text_token(t, tok, stop) != 0)
		return (-1);
	if (tok->s == NULL || tok->len == 0 || tok->b64 ||
	    tok->len > KEY_MAX_BYTES) {
		free(tok->s);
		tok->s = NULL;
		return (txn_text_fail(t, "expected a key (a non-empty word or "
		    "string of at most 4096 bytes, not b64:)"));
	}
	if (memmem(tok->s, tok->len, "\xc0\x80", 2) != NULL) {
		free(tok->s);
		tok->s = NULL;
		return (txn_text_fail(t, "a key may not hold \\u0000"));
	}
	return (0);
}

/* Adds "value" or "value_b64" to obj; frees the token. */
static void
txn_text_add_value(cJSON *obj, struct txn_token *tok)
{
	cJSON_AddStringToObject(obj, tok->b64 ? "value_b64" : "value",
	    tok->s);
	free(tok->s);
	tok->s = NULL;
}

static int
txn_text_eol(struct txn_text *t, const char *what)
{
	txn_text_space(t);
	if (t->p != t->end)
		return (txn_text_fail(t, what));
	return (0);
}

/* "=", "!=", "<" or ">" (also "=="); NULL if none. */
static const char *
txn_text_cmp_op(struct txn_text *t)
{
	static const char *ops[] = { "==", "!=", "=", "<", ">" };
	size_t		   i, n;

	txn_text_space(t);
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		n = strlen(ops[i]);
		if ((size_t)(t->end - t->p) >= n && memcmp(t->p, ops[i],
		    n) == 0) {
			t->p += n;
			return (i == 0 ? "=" : ops[i]);
		}
	}
	return (NULL);
}

static const char *
txn_text_target(struct txn_text *t)
{
	const char	*q = t->p;
	size_t		 i, n;

	while (q < t->end && ((*q >= 'a' && *q <= 'z') || *q == '_'))
		q++;
	n = (size_t)(q - t->p);
	for (i = 0; i < sizeof txn_text_targets / sizeof txn_text_targets[0];
	    i++) {
		if (strlen(txn_text_targets[i].name) == n &&
		    memcmp(t->p, txn_text_targets[i].name, n) == 0) {
			t->p = q;
			return (txn_text_targets[i].field);
		}
	}
	txn_text_fail(t, "expected a compare such as version(\"k\") = 3 "
	    "(version, create_rev, mod_rev or value; a blank line ends the "
	    "compares)");
	return (NULL);
}

/* The number or value a compare wants, added to cmp. */
static int
txn_text_cmp_value(struct txn_text *t, const char *field, cJSON *cmp)
{
	struct txn_token	 tok;
	uint64_t		 n;

	if (txn_text_token(t, &tok, '\0') != 0)
		return (-1);
	if (tok.s == NULL)
		return (txn_text_fail(t, "the compare has no value"));
	if (strcmp(field, "value") == 0) {
		txn_text_add_value(cmp, &tok);
		return (0);
	}
	if (tok.b64 || parse_u64(tok.s, &n) != 0 || n > JSON_INT_MAX) {
		free(tok.s);
		return (txn_text_fail(t, "expected an integer"));
	}
	free(tok.s);
	cJSON_AddNumberToObject(cmp, field, (double)n);
	return (0);
}

static int
txn_text_compare(struct txn_text *t, cJSON *list)
{
	struct txn_token	 key;
	const char		*field, *op;
	cJSON			*cmp;

	if ((field = txn_text_target(t)) == NULL)
		return (-1);
	txn_text_space(t);
	if (t->p == t->end || *t->p++ != '(')
		return (txn_text_fail(t, "expected '(' after the target"));
	if (txn_text_key(t, &key, ')') != 0)
		return (-1);
	cmp = cJSON_CreateObject();
	cJSON_AddItemToArray(list, cmp);
	cJSON_AddStringToObject(cmp, "key", key.s);
	free(key.s);
	txn_text_space(t);
	if (t->p == t->end || *t->p++ != ')')
		return (txn_text_fail(t, "expected ')' after the key"));
	if ((op = txn_text_cmp_op(t)) == NULL)
		return (txn_text_fail(t, "expected =, !=, < or >"));
	if (txn_text_cmp_value(t, field, cmp) != 0)
		return (-1);
	if (strcmp(op, "=") != 0)
		cJSON_AddStringToObject(cmp, "result", op);
	return (txn_text_eol(t, "unexpected text after the compare (quote a "
	    "value with spaces)"));
}

static int
txn_text_op(struct txn_text *t, cJSON *list)
{
	struct txn_token	 tok;
	const char		*op;
	cJSON			*o;

	if (txn_text_token(t, &tok, '\0') != 0)
		return (-1);
	op = tok.s == NULL ? "" : strcmp(tok.s, "put") == 0 ? "put" :
	    strcmp(tok.s, "get") == 0 ? "get" : (strcmp(tok.s, "del") == 0 ||
	    strcmp(tok.s, "delete") == 0) ? "delete" : "";
	free(tok.s);
	if (*op == '\0')
		return (txn_text_fail(t, "expected put KEY VALUE, del KEY or "
		    "get KEY"));
	if (txn_text_key(t, &tok, '\0') != 0)
		return (-1);
	o = cJSON_CreateObject();
	cJSON_AddItemToArray(list, o);
	cJSON_AddStringToObject(o, "op", op);
	cJSON_AddStringToObject(o, "key", tok.s);
	free(tok.s);
	if (strcmp(op, "put") == 0) {
		if (txn_text_token(t, &tok, '\0') != 0)
			return (-1);
		if (tok.s == NULL)
			return (txn_text_fail(t, "put needs KEY VALUE (\"\" for "
			    "an empty value)"));
		txn_text_add_value(o, &tok);
	}
	return (txn_text_eol(t, "unexpected text after the op (quote a value "
	    "with spaces)"));
}

/* One line; *section moves on at a blank line. */
static int
txn_text_line(struct txn_text *t, cJSON *lists[3], int *section)
{
	txn_text_space(t);
	if (t->p < t->end && *t->p == '#')
		return (0);
	if (t->p == t->end) {
		(*section)++;
		return (0);
	}
	if (*section > 2)
		return (txn_text_fail(t, "more than three sections (compares, "
		    "then, else), each ended by one blank line"));
	if (*section == 0)
		return (txn_text_compare(t, lists[0]));
	return (txn_text_op(t, lists[*section]));
}

cJSON *
txn_text_parse(const char *data, size_t len, char **cause)
{
	struct txn_text	 t;
	const char	*line = data, *nl, *end = data + len;
	cJSON		*req, *lists[3];
	int		 section = 0;

	memset(&t, 0, sizeof t);
	req = cJSON_CreateObject();
	lists[0] = cJSON_AddArrayToObject(req, "if");
	lists[1] = cJSON_AddArrayToObject(req, "then");
	lists[2] = cJSON_AddArrayToObject(req, "else");
	while (line < end) {
		if ((nl = memchr(line, '\n', (size_t)(end - line))) == NULL)
			nl = end;
		t.p = line;
		t.end = nl;
		if (t.end > t.p && t.end[-1] == '\r')
			t.end--;
		t.lineno++;
		if (txn_text_line(&t, lists, &section) != 0) {
			*cause = t.err;
			cJSON_Delete(req);
			return (NULL);
		}
		line = nl + 1;
	}
	return (req);
}
