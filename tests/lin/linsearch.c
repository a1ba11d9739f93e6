/*
 * The checker of lincheck: a Wing-Gong search for a linearization of one
 * key's history against a sequential versioned register (see linsearch.h),
 * and the self-test that shows it rejects what it must.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linsearch.h"

#define LIN_MEMO_BYTES		(256u << 20)	/* the search's memo table */

/* Applies op to s: 1 and *out if op's result fits s, else 0. */
static int
linsearch_step(const struct lin_state *s, const struct lin_op *op,
    struct lin_state *out)
{
	*out = *s;
	switch (op->kind) {
	case LIN_GET:
		if (!op->ok)
			return (s->ver == 0);
		return (s->ver != 0 && op->res_val == s->val &&
		    op->res_ver == s->ver);
	case LIN_CAS:
		if (!op->ok)
			return (s->ver != op->arg_ver && op->res_ver == s->ver);
		if (s->ver != op->arg_ver)
			return (0);
		/* FALLTHROUGH */
	case LIN_PUT:
		if (op->prev_ver != s->ver || op->res_ver != s->ver + 1)
			return (0);
		out->val = op->arg_val;
		out->ver = s->ver + 1;
		return (1);
	case LIN_DEL:
		if (op->ok != (s->ver != 0))
			return (0);
		out->val = 0;
		out->ver = 0;
		return (1);
	}
	return (0);
}

/* The call and return of every operation, in a doubly linked list. */
struct lin_entry {
	int		 op;		/* index into the key's ops */
	int		 is_call;
	int64_t		 t;
	int		 match;		/* the other entry of op */
	int		 prev, next;	/* -1: none; 0 is the head */
};

struct lin_memo {
	size_t		 words;		/* of the bitset */
	size_t		 cap, n;
	uint64_t	*slots;		/* words + 2 each; all 0: empty */
};

static uint64_t
linsearch_hash(const uint64_t *bits, size_t words, const struct lin_state *s)
{
	uint64_t	 h = 1469598103934665603ULL;
	size_t		 i;

	for (i = 0; i < words; i++)
		h = (h ^ bits[i]) * 1099511628211ULL;
	h = (h ^ s->val) * 1099511628211ULL;
	h = (h ^ s->ver) * 1099511628211ULL;
	return (h ^ (h >> 29));
}

static int	linsearch_memo_add(struct lin_memo *, const uint64_t *,
		    const struct lin_state *);

/* Doubles the table; -1 when that would pass the budget. */
static int
linsearch_memo_grow(struct lin_memo *m)
{
	struct lin_state	 st;
	size_t			 w = m->words + 2, i, j, old_cap = m->cap;
	uint64_t		*old = m->slots, *slot;

	m->cap = m->cap == 0 ? 1024 : m->cap * 2;
	if (m->cap * w * sizeof *m->slots > LIN_MEMO_BYTES) {
		m->cap = old_cap;
		return (-1);
	}
	if ((m->slots = calloc(m->cap, w * sizeof *m->slots)) == NULL) {
		m->slots = old;
		return (-1);
	}
	m->n = 0;
	for (j = 0; j < old_cap; j++) {
		slot = old + j * w;
		for (i = 0; i < w && slot[i] == 0; i++)
			;
		if (i == w)
			continue;
		st.val = (uint32_t)slot[m->words];
		st.ver = slot[m->words + 1] - 1;
		linsearch_memo_add(m, slot, &st);
	}
	free(old);
	return (0);
}

/* Adds (bits, s); 1 if new, 0 if already there, -1 over budget. */
static int
linsearch_memo_add(struct lin_memo *m, const uint64_t *bits,
    const struct lin_state *s)
{
	size_t		 w = m->words + 2, i, j;
	uint64_t	*slot;

	if ((m->n + 1) * 2 > m->cap && linsearch_memo_grow(m) != 0)
		return (-1);
	i = linsearch_hash(bits, m->words, s) & (m->cap - 1);
	for (;; i = (i + 1) & (m->cap - 1)) {
		slot = m->slots + i * w;
		for (j = 0; j < w && slot[j] == 0; j++)
			;
		if (j == w)
			break;		/* empty */
		if (memcmp(slot, bits, m->words * sizeof *bits) == 0 &&
		    slot[m->words] == s->val && slot[m->words + 1] == s->ver + 1)
			return (0);
	}
	memcpy(slot, bits, m->words * sizeof *bits);
	slot[m->words] = s->val;
	slot[m->words + 1] = s->ver + 1;	/* never all zero */
	m->n++;
	return (1);
}

static int
linsearch_entry_cmp(const void *a, const void *b)
{
	const struct lin_entry	*x = a, *y = b;

	if (x->t != y->t)
		return (x->t < y->t ? -1 : 1);
	/* At the same instant a call goes first: the two overlap. */
	return (y->is_call - x->is_call);
}

static void
linsearch_lift(struct lin_entry *e, int i)
{
	int	 m = e[i].match;

	e[e[i].prev].next = e[i].next;
	if (e[i].next != -1)
		e[e[i].next].prev = e[i].prev;
	e[e[m].prev].next = e[m].next;
	if (e[m].next != -1)
		e[e[m].next].prev = e[m].prev;
}

static void
linsearch_unlift(struct lin_entry *e, int i)
{
	int	 m = e[i].match;

	e[e[m].prev].next = m;
	if (e[m].next != -1)
		e[e[m].next].prev = m;
	e[e[i].prev].next = i;
	if (e[i].next != -1)
		e[e[i].next].prev = i;
}

/* Entry 0 is the head; then calls and returns in time order. */
static struct lin_entry *
linsearch_entries(const struct lin_op *ops, int n)
{
	struct lin_entry	*e;
	int			*where, i;

	e = calloc((size_t)(2 * n + 1), sizeof *e);
	where = calloc((size_t)(2 * n), sizeof *where);
	if (e == NULL || where == NULL) {
		free(e);
		free(where);
		return (NULL);
	}
	for (i = 0; i < n; i++) {
		e[1 + 2 * i] = (struct lin_entry){ i, 1, ops[i].call, 0, 0, 0 };
		e[2 + 2 * i] = (struct lin_entry){ i, 0, ops[i].ret, 0, 0, 0 };
	}
	qsort(e + 1, (size_t)(2 * n), sizeof *e, linsearch_entry_cmp);
	for (i = 1; i <= 2 * n; i++)
		where[2 * e[i].op + !e[i].is_call] = i;
	for (i = 1; i <= 2 * n; i++) {
		e[i].match = where[2 * e[i].op + e[i].is_call];
		e[i].prev = i - 1;
		e[i].next = i < 2 * n ? i + 1 : -1;
	}
	e[0].prev = -1;
	e[0].next = n > 0 ? 1 : -1;
	free(where);
	return (e);
}

struct lin_frame {
	int			 entry;
	struct lin_state	 state;
};

/*
 * Wing & Gong's search, as improved by Lowe: take the first pending call
 * that fits the state, lift it out, go on; at a return whose call was not
 * taken, undo the last choice.  Seen (linearized set, state) pairs are
 * never explored again.  1 linearizable, 0 not, -1 out of budget.
 */
static int
linsearch_search(const struct lin_op *ops, int n, uint64_t *steps)
{
	struct lin_entry	*e;
	struct lin_frame	*stack;
	struct lin_memo		 memo;
	struct lin_state	 state = { 0, 0 }, next;
	uint64_t		*bits;
	int			 top = 0, i, rc = 1, added;

	if (n == 0)
		return (1);
	memset(&memo, 0, sizeof memo);
	memo.words = ((size_t)n + 63) / 64;
	e = linsearch_entries(ops, n);
	stack = calloc((size_t)n, sizeof *stack);
	bits = calloc(memo.words, sizeof *bits);
	if (e == NULL || stack == NULL || bits == NULL) {
		rc = -1;
		goto out;
	}
	i = e[0].next;
	while (e[0].next != -1) {
		(*steps)++;
		if (i != -1 && e[i].is_call) {
			if (linsearch_step(&state, &ops[e[i].op], &next)) {
				bits[e[i].op / 64] |= 1ULL << (e[i].op % 64);
				added = linsearch_memo_add(&memo, bits, &next);
				if (added == -1) {
					rc = -1;
					goto out;
				}
				if (added) {
					stack[top++] = (struct lin_frame){ i,
					    state };
					state = next;
					linsearch_lift(e, i);
					i = e[0].next;
					continue;
				}
				bits[e[i].op / 64] &= ~(1ULL << (e[i].op % 64));
			}
			i = e[i].next;
			continue;
		}
		/* A return: its call must be linearized before it. */
		if (top == 0) {
			rc = 0;
			goto out;
		}
		top--;
		i = stack[top].entry;
		state = stack[top].state;
		bits[e[i].op / 64] &= ~(1ULL << (e[i].op % 64));
		linsearch_unlift(e, i);
		i = e[i].next;
	}
out:
	free(memo.slots);
	free(bits);
	free(stack);
	free(e);
	return (rc);
}

static const char *
linsearch_kind_name(enum lin_kind k)
{
	static const char	*names[] = { "get", "put", "cas", "delete" };

	return (names[k]);
}

static void
linsearch_value_str(uint32_t id, char *s, size_t size)
{
	if (id == 0 || id == UINT32_MAX)
		snprintf(s, size, "?");
	else
		snprintf(s, size, "c%u.%u", (id - 1) / LIN_VALUE_BASE,
		    (id - 1) % LIN_VALUE_BASE);
}

static void
linsearch_print_op(FILE *f, const struct lin_op *op)
{
	char	 a[32], r[32];

	linsearch_value_str(op->arg_val, a, sizeof a);
	linsearch_value_str(op->res_val, r, sizeof r);
	fprintf(f, "  [%10.3f .. %10.3f ms] client %d %-6s ",
	    (double)op->call / 1e6, (double)op->ret / 1e6, op->client,
	    linsearch_kind_name(op->kind));
	switch (op->kind) {
	case LIN_GET:
		if (op->ok)
			fprintf(f, "-> %s version %" PRIu64 "\n", r,
			    op->res_ver);
		else
			fprintf(f, "-> absent\n");
		break;
	case LIN_PUT:
		fprintf(f, "%s -> version %" PRIu64 " (prev %" PRIu64 ")\n",
		    a, op->res_ver, op->prev_ver);
		break;
	case LIN_CAS:
		fprintf(f, "%s if_version %" PRIu64 " -> ", a, op->arg_ver);
		if (op->ok)
			fprintf(f, "version %" PRIu64 " (prev %" PRIu64 ")\n",
			    op->res_ver, op->prev_ver);
		else
			fprintf(f, "failed_precondition, current version %"
			    PRIu64 "\n", op->res_ver);
		break;
	case LIN_DEL:
		fprintf(f, "-> deleted %s\n", op->ok ? "true" : "false");
		break;
	}
}

static int
linsearch_call_cmp(const void *a, const void *b)
{
	const struct lin_op	*x = a, *y = b;

	return (x->call < y->call ? -1 : x->call > y->call);
}

/* The most operations in flight at once: how much the search must try. */
static int
linsearch_overlap(const struct lin_op *ops, int n)
{
	struct lin_entry	*e;
	int			 i, open = 0, most = 0;

	if ((e = linsearch_entries(ops, n)) == NULL)
		return (0);
	for (i = e[0].next; i != -1; i = e[i].next) {
		open += e[i].is_call ? 1 : -1;
		most = open > most ? open : most;
	}
	free(e);
	return (most);
}

/* Checks one key's history; prints it when it is not linearizable. */
int
linsearch_key(const char *name, struct lin_op *ops, int n, int verbose)
{
	uint64_t	 steps = 0;
	int		 rc, i;

	rc = linsearch_search(ops, n, &steps);
	if (verbose || rc != 1)
		fprintf(rc == 1 ? stdout : stderr, "key %s: %d ops, at most "
		    "%d at once, %" PRIu64 " search steps: %s\n", name, n,
		    linsearch_overlap(ops, n), steps, rc == 1 ?
		    "linearizable" : rc == 0 ? "NOT LINEARIZABLE" :
		    "search budget exhausted");
	if (rc == 0) {
		qsort(ops, (size_t)n, sizeof *ops, linsearch_call_cmp);
		fprintf(stderr, "history of %s (invocation .. completion):\n",
		    name);
		for (i = 0; i < n; i++)
			linsearch_print_op(stderr, &ops[i]);
	}
	return (rc);
}

/* ---- self-test: histories whose verdict is known ---- */

#define OP(c, k, a, v, ok, rv, rver, pv, t0, t1) \
	{ c, 0, LIN_##k, a, v, ok, rv, rver, pv, (t0) * 1000000LL, \
	    (t1) * 1000000LL }

/* put 1, then put 2, then a get that still sees 1: stale read. */
static const struct lin_op linsearch_stale_read[] = {
	OP(0, PUT, 1, 0, 1, 0, 1, 0, 0, 10),
	OP(1, PUT, 2, 0, 1, 0, 2, 1, 20, 30),
	OP(2, GET, 0, 0, 1, 1, 1, 0, 40, 50),
};

/* A write in flight: one read sees it, a later read does not. */
static const struct lin_op linsearch_new_old[] = {
	OP(0, PUT, 1, 0, 1, 0, 1, 0, 0, 10),
	OP(1, PUT, 2, 0, 1, 0, 2, 1, 20, 100),
	OP(2, GET, 0, 0, 1, 2, 2, 0, 30, 40),
	OP(3, GET, 0, 0, 1, 1, 1, 0, 50, 60),
};

/* Two concurrent cas from version 1 both succeed. */
static const struct lin_op linsearch_double_cas[] = {
	OP(0, PUT, 1, 0, 1, 0, 1, 0, 0, 10),
	OP(1, CAS, 2, 1, 1, 0, 2, 1, 20, 40),
	OP(2, CAS, 3, 1, 1, 0, 2, 1, 25, 45),
};

/* A delete completed, then a read still finds the key. */
static const struct lin_op linsearch_lost_delete[] = {
	OP(0, PUT, 1, 0, 1, 0, 1, 0, 0, 10),
	OP(1, DEL, 0, 0, 1, 0, 0, 0, 20, 30),
	OP(2, GET, 0, 0, 1, 1, 1, 0, 40, 50),
};

/* Concurrent writes and reads in an order only the search finds. */
static const struct lin_op linsearch_good_overlap[] = {
	OP(0, PUT, 1, 0, 1, 0, 1, 0, 0, 100),
	OP(1, PUT, 2, 0, 1, 0, 2, 1, 5, 100),
	OP(2, GET, 0, 0, 1, 2, 2, 0, 10, 20),
	OP(3, GET, 0, 0, 0, 0, 0, 0, 1, 3),
	OP(0, CAS, 3, 1, 0, 0, 2, 0, 110, 120),
	OP(1, DEL, 0, 0, 1, 0, 0, 0, 115, 130),
	OP(2, CAS, 4, 0, 1, 0, 1, 0, 125, 140),
	OP(3, GET, 0, 0, 1, 4, 1, 0, 131, 150),
};

/* The same, but with every op overlapping: still linearizable. */
static const struct lin_op linsearch_good_concurrent[] = {
	OP(0, GET, 0, 0, 1, 2, 1, 0, 0, 100),
	OP(1, PUT, 1, 0, 1, 0, 2, 1, 0, 100),
	OP(2, PUT, 2, 0, 1, 0, 1, 0, 0, 100),
	OP(3, DEL, 0, 0, 1, 0, 0, 0, 0, 100),
};

struct lin_sample {
	const char		*name;
	const struct lin_op	*ops;
	int			 n;
	int			 want;
};

#define SAMPLE(n, s, w) { n, s, (int)(sizeof s / sizeof s[0]), w }

int
linsearch_self_test(void)
{
	static const struct lin_sample	 samples[] = {
		SAMPLE("stale_read", linsearch_stale_read, 0),
		SAMPLE("new_old", linsearch_new_old, 0),
		SAMPLE("double_cas", linsearch_double_cas, 0),
		SAMPLE("lost_delete", linsearch_lost_delete, 0),
		SAMPLE("good_overlap", linsearch_good_overlap, 1),
		SAMPLE("good_concurrent", linsearch_good_concurrent, 1),
	};
	struct lin_op	 ops[16];
	size_t		 i;
	int		 got, bad = 0;

	for (i = 0; i < sizeof samples / sizeof samples[0]; i++) {
		memcpy(ops, samples[i].ops, (size_t)samples[i].n * sizeof *ops);
		got = linsearch_key(samples[i].name, ops, samples[i].n, 1);
		printf("%s %s: expected %s\n", got == samples[i].want ? "ok" :
		    "FAIL", samples[i].name, samples[i].want ?
		    "linearizable" : "rejection");
		bad += got != samples[i].want;
	}
	return (bad == 0 ? 0 : 1);
}
