/*
 * The direct decoder of the common requests: get, put and delete in their
 * plain forms, read without building a cJSON tree (no allocation but the
 * request's own).  It decodes only lines that the general decoder
 * (ops_decode: proto_parse, the id, the op's fields, its prepare) accepts,
 * into the same arguments; anything else, valid or not, it leaves to that
 * decoder, which answers every error.  So it can change nothing in what is
 * accepted, rejected or answered: tests/unit/test_ops_fast.c and the fuzz
 * target (tests/fuzz/fuzz_request.c) check, on generated and mutated
 * lines, that each line it takes is taken by the general decoder with the
 * same op, id and arguments.
 *
 * What it takes: one JSON object, blanks (space, tab) between tokens and
 * space, tab or CR after it; at most OPS_FAST_MEMBERS members, each named
 * once, without escapes, among
 *   get:    op, id, key, consistency
 *   put:    op, id, key, value, if_absent, if_version, if_mod_rev, lease,
 *           idem
 *   delete: op, id, key, if_absent, if_version, if_mod_rev, idem
 * strings of bytes from 0x20 with the escapes \" \\ \/ \b \f \n \r \t (no
 * \u: a \u0000 goes the general way), integers without sign, fraction or
 * exponent; an id as a string without escapes or an integer of at most 20
 * characters.  Every argument valid: a key of 1 to
 * KEY_MAX_BYTES bytes of UTF-8, a value of UTF-8 within --max-value-bytes,
 * at most one precondition, a lease from 1, "linearizable" or
 * "serializable", a write on a read-write connection, a token ("idem") as
 * ops_idem_take() takes it: a string without escapes of 1 to
 * IDEM_TOKEN_MAX_BYTES bytes of UTF-8, on a store that keeps its records
 * or forwards writes, named by idem_name_make() (its request has a peer
 * identity).  A write on a store that forwards is sent as its line came,
 * spliced (core/forward.c): no tree is needed for it either.
 */
#include <string.h>

#include "core/idem.h"
#include "enc.h"
#include "jscan.h"
#include "metad.h"
#include "metad_limits.h"
#include "ops/ops.h"
#include "store/store_forward.h"

#define OPS_FAST_MEMBERS	8
#define OPS_FAST_ID_NUM_MAX	20

static const char *const fast_names[] = {
	"op", "id", "key", "value", "if_absent", "if_version", "if_mod_rev",
	"lease", "consistency", "idem"
};
#define F_OP		0x01
#define F_ID		0x02
#define F_KEY		0x04
#define F_VALUE		0x08
#define F_ABSENT	0x10
#define F_VERSION	0x20
#define F_MOD_REV	0x40
#define F_LEASE		0x80
#define F_CONSISTENCY	0x100
#define F_IDEM		0x200

static int
fast_id(const struct jscan_tok *t, struct ops_fast *f)
{
	switch (t->kind) {
	case JSCAN_STR:
		if (t->esc || t->n > ID_MAX_BYTES || !utf8_valid(t->p, t->n))
			return (-1);
		f->id = t->p - 1;	/* with its quotes */
		f->id_len = t->n + 2;
		return (0);
	case JSCAN_INT:
		if (t->n > OPS_FAST_ID_NUM_MAX)
			return (-1);
		f->id = t->p;
		f->id_len = t->n;
		return (0);
	default:
		return (-1);	/* true, false, null: bad_request */
	}
}

/* The one precondition of a write, as write_args_precond() reads it. */
static int
fast_precond(const struct jscan_member *m, unsigned bit, struct precond *pc,
    int *n)
{
	switch (bit) {
	case F_ABSENT:
		if (m->v.kind != JSCAN_TRUE && m->v.kind != JSCAN_FALSE)
			return (-1);
		if (m->v.kind == JSCAN_TRUE) {
			pc->kind = PRECOND_ABSENT;
			(*n)++;
		}
		return (0);
	case F_VERSION:
	case F_MOD_REV:
		if (jscan_u64(&m->v, &pc->n) != 0)
			return (-1);
		pc->kind = bit == F_VERSION ? PRECOND_VERSION :
		    PRECOND_MOD_REV;
		(*n)++;
		return (0);
	}
	return (-1);
}

/* A read's "consistency", as ops_read_args() reads it. */
static int
fast_consistency(const struct jscan_tok *t, struct ops_fast *f)
{
	if (t->kind != JSCAN_STR || t->esc)
		return (-1);
	if (t->n == 12 && memcmp(t->p, "serializable", 12) == 0)
		f->serializable = 1;
	else if (t->n != 12 || memcmp(t->p, "linearizable", 12) != 0)
		return (-1);
	return (0);
}

/* A write's "idem", as ops_idem_take() reads it (escapes: the general way). */
static int
fast_idem(const struct jscan_tok *t, struct ops_fast *f)
{
	if (t->kind != JSCAN_STR || t->esc || t->n == 0 ||
	    t->n > IDEM_TOKEN_MAX_BYTES || !utf8_valid(t->p, t->n))
		return (-1);
	f->idem = t->p;
	f->idem_len = t->n;
	return (0);
}

/* Which of fast_names m is (its bit), or 0. */
static unsigned
fast_name(const struct jscan_member *m)
{
	size_t	 i;

	for (i = 0; i < sizeof fast_names / sizeof fast_names[0]; i++) {
		if (strlen(fast_names[i]) == m->name_len &&
		    memcmp(fast_names[i], m->name, m->name_len) == 0)
			return (1U << i);
	}
	return (0);
}

static int
fast_op(const struct jscan_tok *t, struct ops_fast *f, unsigned *allowed)
{
	static const struct {
		const char	*op;
		unsigned	 fields;
	} ops[] = {
		{ "get", F_OP | F_ID | F_KEY | F_CONSISTENCY },
		{ "put", F_OP | F_ID | F_KEY | F_VALUE | F_ABSENT | F_VERSION |
		    F_MOD_REV | F_LEASE | F_IDEM },
		{ "delete", F_OP | F_ID | F_KEY | F_ABSENT | F_VERSION |
		    F_MOD_REV | F_IDEM },
	};
	size_t	 i;

	if (t->kind != JSCAN_STR || t->esc)
		return (-1);
	for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
		if (strlen(ops[i].op) == t->n &&
		    memcmp(ops[i].op, t->p, t->n) == 0) {
			f->op = ops[i].op;
			*allowed = ops[i].fields;
			return (0);
		}
	}
	return (-1);
}

int
ops_fast_decode(const char *line, size_t len, size_t max_value, char *out,
    struct ops_fast *f)
{
	struct jscan_member	 m[OPS_FAST_MEMBERS];
	const struct jscan_tok	*key = NULL, *value = NULL;
	unsigned		 seen = 0, allowed = 0, bit;
	int			 i, n, npc = 0;

	memset(f, 0, sizeof *f);
	if ((n = jscan_members(line, len, m, OPS_FAST_MEMBERS)) <= 0)
		return (0);
	for (i = 0; i < n; i++) {
		if ((bit = fast_name(&m[i])) == 0 || (seen & bit))
			return (0);
		seen |= bit;
		if (bit == F_OP && fast_op(&m[i].v, f, &allowed) != 0)
			return (0);
	}
	if (f->op == NULL || (seen & ~allowed) || !(seen & F_KEY))
		return (0);
	for (i = 0; i < n; i++) {
		switch ((bit = fast_name(&m[i]))) {
		case F_OP:
			break;
		case F_ID:
			if (fast_id(&m[i].v, f) != 0)
				return (0);
			break;
		case F_KEY:
			key = &m[i].v;
			break;
		case F_VALUE:
			value = &m[i].v;
			break;
		case F_LEASE:
			if (jscan_u64(&m[i].v, &f->lease) != 0 || f->lease == 0)
				return (0);
			break;
		case F_CONSISTENCY:
			if (fast_consistency(&m[i].v, f) != 0)
				return (0);
			break;
		case F_IDEM:
			if (fast_idem(&m[i].v, f) != 0)
				return (0);
			break;
		default:
			if (fast_precond(&m[i], bit, &f->pc, &npc) != 0)
				return (0);
			break;
		}
	}
	if (npc > 1 || key->kind != JSCAN_STR ||
	    ((allowed & F_VALUE) && (value == NULL || value->kind != JSCAN_STR)))
		return (0);
	f->key = out;
	f->key_len = jscan_unescape(key, out);
	if (f->key_len == 0 || f->key_len > KEY_MAX_BYTES ||
	    !utf8_valid(f->key, f->key_len))
		return (0);
	if (value == NULL)
		return (1);
	f->value = out + f->key_len + 1;
	f->value_len = jscan_unescape(value, out + f->key_len + 1);
	if (f->value_len > max_value || !utf8_valid(f->value, f->value_len))
		return (0);
	return (1);
}

/* r's token from f, copied to at (a NUL after it): 0, or -1, r untouched. */
static int
fast_idem_take(struct req *r, const struct ops_fast *f, char *at)
{
	if (!(r->op->flags & OP_IDEM) || (!store_has_idem(r->md->store) &&
	    !store_forwards(r->md->store)))
		return (-1);
	memcpy(at, f->idem, f->idem_len);
	at[f->idem_len] = '\0';
	r->idem = at;
	r->idem_len = f->idem_len;
	if (idem_name_make(r) != 0) {
		r->idem = NULL;
		r->idem_len = 0;
		return (-1);
	}
	return (0);
}

int
ops_fast(struct req *r, const char *line, size_t len)
{
	struct ops_fast	 f;
	char		*at;

	if (!ops_fast_decode(line, len, r->md->cfg.max_value_bytes, r->strs,
	    &f))
		return (0);
	r->op = ops_find(r->md, f.op);
	/* after the key and value: the id, then the token (OPS_FAST_ROOM) */
	at = r->strs + f.key_len + 1 + (f.value != NULL ? f.value_len + 1 : 0);
	if (((r->op->flags & OP_WRITE) && r->access != CONN_ACCESS_RW) ||
	    (f.idem != NULL && fast_idem_take(r, &f, at + f.id_len) != 0)) {
		r->op = NULL;
		return (0);
	}
	if (f.id != NULL) {
		memcpy(at, f.id, f.id_len);
		r->id = at;
		r->id_len = f.id_len;
	}
	r->wa.key = f.key;
	r->wa.key_len = f.key_len;
	r->wa.value.data = (const unsigned char *)f.value;
	r->wa.value.len = f.value_len;
	r->wa.pc = f.pc;
	r->wa.lease = f.lease;
	r->serializable = f.serializable;
	return (1);
}
