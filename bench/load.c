/*
 * The client workloads: which request each operation sends, and what an
 * answer means.  Answers are recognised by their first bytes (requests carry
 * no "id", so a success starts with {"ok":true); only cas reads a number out
 * of an answer.
 *
 * cas is read-modify-write: get the key, put it with if_version; on
 * failed_precondition, put again with the version the error reports as
 * "current", up to BENCH_CAS_RETRIES_MAX times.  Its latency is that of the
 * whole operation.
 */
#include <stdlib.h>
#include <string.h>

#include "metabench.h"

enum load_kind {
	LK_PUT,
	LK_GET,
	LK_ECHO,
	LK_CAS_GET,
	LK_CAS_PUT
};

#define LOAD_OK		"{\"ok\":true"
#define LOAD_FAILED	"\"code\":\"failed_precondition\""

/* A ticket for one more operation: 0 when the budget is spent. */
int
load_take(struct bench *b, uint64_t *ticket)
{
	*ticket = __atomic_fetch_add(&b->issued, 1, __ATOMIC_RELAXED);
	return (b->budget == 0 || *ticket < b->budget);
}

static void
load_put(struct bench *b, struct bconn *bc, uint64_t key, int64_t version)
{
	struct buf	*o = &bc->out;

	buf_addstr(o, "{\"op\":\"put\",\"key\":\"");
	bench_key(o, BENCH_KEY_PREFIX, key);
	buf_addstr(o, "\",\"value\":\"");
	buf_add(o, b->value, b->o.value_size);
	if (version >= 0)
		buf_printf(o, "\",\"if_version\":%lld}\n", (long long)version);
	else
		buf_add(o, "\"}\n", 3);
}

static void
load_get(struct bench *b, struct bconn *bc, uint64_t key)
{
	buf_addstr(&bc->out, "{\"op\":\"get\",\"key\":\"");
	bench_key(&bc->out, BENCH_KEY_PREFIX, key);
	buf_addc(&bc->out, '"');
	if (b->o.wl != WL_CAS && b->o.serializable)
		buf_addstr(&bc->out, ",\"consistency\":\"serializable\"");
	if (b->o.wl != WL_CAS && b->o.at_rev != 0)
		buf_printf(&bc->out, ",\"rev\":%llu",
		    (unsigned long long)b->o.at_rev);
	buf_add(&bc->out, "}\n", 2);
}

/* The echo line has the size of a get answer with its value. */
static void
load_echo(struct bench *b, struct bconn *bc, uint64_t key)
{
	buf_addstr(&bc->out, "{\"op\":\"echo\",\"key\":\"");
	bench_key(&bc->out, BENCH_KEY_PREFIX, key);
	buf_addstr(&bc->out, "\",\"value\":\"");
	buf_add(&bc->out, b->value, b->o.value_size);
	buf_add(&bc->out, "\"}\n", 3);
}

static uint64_t
load_pick(struct bench *b, struct bconn *bc)
{
	uint64_t	 r = bconn_rand(bc), per;

	if (b->o.wl == WL_CAS && b->o.own_keys) {
		per = b->o.keys / b->o.clients;
		return (bc->index + (uint64_t)b->o.clients *
		    (per > 0 ? r % per : 0));
	}
	return (r % b->o.keys);
}

static void
load_push(struct bconn *bc, enum load_kind kind, uint64_t key, uint64_t t_op,
    unsigned tries)
{
	struct inflight	*f;

	if ((f = bconn_push(bc)) == NULL)
		abort();	/* the caller keeps qlen below qcap */
	f->kind = (uint16_t)kind;
	f->key = (uint32_t)key;
	f->t_op = t_op;
	f->tries = (uint16_t)tries;
}

/* Start one operation (ticket from load_take) at time now. */
void
load_start(struct bench *b, struct bconn *bc, uint64_t ticket, uint64_t now)
{
	uint64_t	 key;

	key = b->o.wl == WL_PRELOAD ? ticket : load_pick(b, bc);
	switch (b->o.wl) {
	case WL_GET:
		load_get(b, bc, key);
		load_push(bc, LK_GET, key, now, 0);
		break;
	case WL_MIXED:
		if (bconn_rand(bc) % 100 < b->o.get_pct) {
			load_get(b, bc, key);
			load_push(bc, LK_GET, key, now, 0);
			break;
		}
		load_put(b, bc, key, -1);
		load_push(bc, LK_PUT, key, now, 0);
		break;
	case WL_CAS:
		load_get(b, bc, key);
		load_push(bc, LK_CAS_GET, key, now, 0);
		break;
	case WL_ECHO:
		load_echo(b, bc, key);
		load_push(bc, LK_ECHO, key, now, 0);
		break;
	default:
		load_put(b, bc, key, -1);
		load_push(bc, LK_PUT, key, now, 0);
		break;
	}
}

/* The "version" of the kv object named field; 0 if it is null, -1. */
static int64_t
load_version(const char *line, const char *field)
{
	const char	*p;

	if ((p = strstr(line, field)) == NULL)
		return (-1);
	p += strlen(field);
	if (strncmp(p, "null", 4) == 0)
		return (0);
	if ((p = strstr(p, "\"version\":")) == NULL)
		return (-1);
	return (strtoll(p + 10, NULL, 10));
}

static void
load_done(struct bthread *th, uint64_t t_op, uint64_t now)
{
	th->c.ops++;
	hist_add(&th->lat, now - t_op);
}

/* A cas answer: done, or the next put of the same operation. */
static void
load_cas(struct bench *b, struct bthread *th, struct bconn *bc,
    struct inflight f, const char *line, int ok, uint64_t now)
{
	int64_t	 v;

	if (f.kind == LK_CAS_PUT && ok) {
		load_done(th, f.t_op, now);
		return;
	}
	if (f.kind == LK_CAS_GET && ok)
		v = load_version(line, "\"kv\":");
	else if (f.kind == LK_CAS_PUT && strstr(line, LOAD_FAILED) != NULL) {
		th->c.conflicts++;
		v = load_version(line, "\"current\":");
	} else
		v = -1;
	if (v < 0 || f.tries >= BENCH_CAS_RETRIES_MAX) {
		th->c.errors++;
		return;
	}
	load_put(b, bc, f.key, v);
	load_push(bc, LK_CAS_PUT, f.key, f.t_op, f.tries + 1U);
}

void
load_answer(struct bench *b, struct bthread *th, struct bconn *bc,
    const char *line, size_t len, uint64_t now)
{
	struct inflight	*head, f;
	int		 ok;

	th->c.requests++;
	if ((head = bconn_head(bc)) == NULL) {
		th->c.errors++;		/* an answer to nothing */
		return;
	}
	f = *head;
	bconn_pop(bc);
	ok = len >= sizeof LOAD_OK - 1 &&
	    memcmp(line, LOAD_OK, sizeof LOAD_OK - 1) == 0;
	switch (f.kind) {
	case LK_CAS_GET:
	case LK_CAS_PUT:
		load_cas(b, th, bc, f, line, ok, now);
		return;
	case LK_ECHO:
		load_done(th, f.t_op, now);
		return;
	default:
		break;
	}
	if (!ok) {
		th->c.errors++;
		return;
	}
	if (f.kind == LK_GET && strstr(line, "\"kv\":null") != NULL)
		th->c.misses++;
	load_done(th, f.t_op, now);
}
