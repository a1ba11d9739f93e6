/*
 * lock NAME [--ttl D] [--owner O] [--wait D] -- COMMAND [ARG...] (metactl(1)).
 *
 * The recipe is etcd's concurrency.Mutex over metad's leases:
 *
 * 1. A session lease L of --ttl (default 10s) on this metactl's
 *    connection, kept alive every TTL/3: if metactl dies, its connection
 *    closes and metad revokes L at once.
 * 2. A waiter key NAME/.lock/L (16 hex digits) put if absent with lease L.
 *    Its create_rev C is its place in the queue.
 * 3. The waiters are the keys under NAME/.lock/.  If none was created
 *    before C, the lock is ours; else we watch the one created just before
 *    ours (on a second connection) until it is deleted, and look again.
 *    Each waiter watches only its predecessor, so a release wakes one
 *    waiter, and they are served in the order they asked (FIFO).
 * 4. The epoch at NAME is bumped by a txn that holds only while our waiter
 *    key is still the one we created (mod_rev C) and NAME is unchanged
 *    since we read it: no holder can bump it after losing the lock.
 * 5. COMMAND runs with METAD_FENCE=NAME:EPOCH, METAD_LOCK_EPOCH and
 *    METAD_LOCK_KEY in its environment.  Meanwhile we keep L alive and
 *    watch our waiter key: if L is refused, our key deleted, or the
 *    connection lost, the lock is lost: COMMAND gets SIGTERM, SIGKILL
 *    LOCK_KILL_GRACE_MS later if it still runs, and metactl exits 1 once
 *    it has ended.  (COMMAND also gets SIGTERM if metactl itself dies.)
 * 6. When COMMAND ends, L is revoked (our key goes, the next waiter goes
 *    on) and metactl exits with COMMAND's status (128 + N for signal N).
 *    SIGINT and SIGTERM while COMMAND runs go on to it; the lock is kept
 *    until it ends, then metactl exits 130 or 143 (cmd_lock_run.c).
 */

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "lock.h"
#include "proto.h"

#define LOCK_TTL_DEFAULT_MS	10000
#define LOCK_BUMP_TRIES		20
#define LOCK_WAITERS_MAX	10000

static enum cmd_status	cmd_lock_exec(struct cmd_ctx *, char **);

static const struct option cmd_lock_longopts[] = {
	{ "ttl",	required_argument,	NULL, 0 },
	{ "owner",	required_argument,	NULL, 0 },
	{ "wait",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_lock_entry = {
	.name = "lock",
	.optstring = "",
	.longopts = cmd_lock_longopts,
	.args_min = 2,
	.args_max = -1,
	.usage = "NAME [--ttl D] [--owner O] [--wait D] -- COMMAND [ARG...]",
	.help = "run COMMAND holding the lock NAME, fenced by a new epoch",
	.details =
	    "Waits its turn (first come, first served), bumps the epoch at "
	    "NAME and runs\nCOMMAND with METAD_FENCE=NAME:EPOCH (for put "
	    "--fence), METAD_LOCK_EPOCH and\nMETAD_LOCK_KEY; exits with "
	    "COMMAND's status.  The lock is held through a\nsession lease of "
	    "--ttl (default 10s) kept alive by metactl.  If the lock is\nlost "
	    "while COMMAND runs, COMMAND gets SIGTERM (SIGKILL 10s later) and "
	    "metactl\nexits 1.  --wait D: give up after D, exit 1.  --owner "
	    "(default host:pid)\ngoes into the epoch document.  Waiters are "
	    "the keys NAME/.lock/*.\nCtrl-C (SIGINT) or SIGTERM goes on to "
	    "COMMAND; metactl keeps the lock until\nCOMMAND ends, then "
	    "releases it and exits 130 (143 for SIGTERM).\n",
	.exec = cmd_lock_exec
};



static uint64_t
lock_u64(const cJSON *o, const char *name)
{
	uint64_t	 v = 0;

	proto_number_u64(cJSON_GetObjectItemCaseSensitive(o, name), &v);
	return (v);
}

/* One request on the main connection; error answers are printed. */
static enum cmd_status
lock_call(struct lock *lk, struct buf *b, struct jw *w, cJSON **resp,
    char **cause)
{
	enum cmd_status	 s;

	jw_obj_close(w);
	s = cmd_call(lk->ctx, b, resp, cause);
	buf_reset(b);
	return (s);
}

enum cmd_status
lock_keepalive(struct lock *lk, char **cause)
{
	cJSON		*resp;
	enum cmd_status	 s;

	if (mono_ms() < lk->next_ka)
		return (CMD_OK);
	s = cmd_lease_call(lk->ctx, "lease_keepalive", lk->lease, 0, 0, &resp,
	    cause);
	if (s != CMD_OK) {
		if (s != CMD_INTERRUPTED)
			lk->why = "its lease could not be kept alive";
		return (s);
	}
	cJSON_Delete(resp);
	lk->next_ka = mono_ms() + (int64_t)lk->ttl_ms / 3;
	return (CMD_OK);
}

/* Watch key from rev on the watch connection; lk->watch its id. */
static enum cmd_status
lock_watch(struct lock *lk, const char *key, uint64_t from_rev, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	const char	*line;
	size_t		 len;
	cJSON		*resp;
	struct proto_err e;
	int		 rc;

	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "op");
	jw_cstr(&w, "watch");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	jw_name(&w, "from_rev");
	jw_u64(&w, from_rev);
	jw_obj_close(&w);
	rc = client_send(&lk->w, &b, client_deadline(&lk->w), cause);
	buf_free(&b);
	if (rc != 0)
		return (cmd_client_status(&lk->w));
	/* Events of older watches may come first: skip them. */
	for (;;) {
		if (client_read_line(&lk->w, client_deadline(&lk->w), &line,
		    &len, cause) != 0)
			return (cmd_client_status(&lk->w));
		if ((resp = proto_parse(line, len, &e)) == NULL)
			continue;
		if (cJSON_GetObjectItemCaseSensitive(resp, "event") == NULL)
			break;
		cJSON_Delete(resp);
	}
	rc = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"));
	lk->watch = lock_u64(resp, "watch");
	if (!rc)
		cmd_response_error(lk->ctx, resp);
	cJSON_Delete(resp);
	return (rc ? CMD_OK : CMD_ERROR);
}

/*
 * Waits until deadline for the watched key's delete: 1 deleted, 0 not
 * yet, -1 the watch connection failed.
 */
int
lock_deleted(struct lock *lk, int64_t deadline, char **cause)
{
	const char		*line;
	const cJSON		*ev;
	cJSON			*o;
	struct proto_err	 e;
	size_t			 len;
	int			 del;

	for (;;) {
		if (client_read_line(&lk->w, deadline, &line, &len,
		    cause) != 0) {
			if (mono_ms() >= deadline &&
			    lk->w.fail == CLIENT_FAIL_UNREACHABLE &&
			    client_connected(&lk->w)) {
				free(*cause);
				*cause = NULL;
				return (0);	/* only the deadline */
			}
			return (-1);
		}
		if ((o = proto_parse(line, len, &e)) == NULL)
			continue;
		ev = cJSON_GetObjectItemCaseSensitive(o, "event");
		del = lock_u64(o, "watch") == lk->watch && cJSON_IsString(ev) &&
		    (strcmp(ev->valuestring, "delete") == 0 ||
		    strcmp(ev->valuestring, "cancelled") == 0);
		cJSON_Delete(o);
		if (del)
			return (1);
	}
}

/* The waiters' create_revs: *mine found, *pred the one before (0: none). */
static enum cmd_status
lock_queue(struct lock *lk, int *mine, char **pred, uint64_t *rev,
    char **cause)
{
	const cJSON	*kv, *k;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	uint64_t	 cr, best = 0;
	enum cmd_status	 s;

	*mine = 0;
	*pred = NULL;
	buf_init(&b);
	cmd_request_open(lk->ctx, &w, &b, "list");
	jw_name(&w, "prefix");
	jw_cstr(&w, lk->prefix);
	jw_name(&w, "keys_only");
	jw_bool(&w, 1);
	jw_name(&w, "limit");
	jw_u64(&w, LOCK_WAITERS_MAX);
	s = lock_call(lk, &b, &w, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	*rev = lock_u64(resp, "rev");
	cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(resp, "kvs")) {
		k = cJSON_GetObjectItemCaseSensitive(kv, "key");
		cr = lock_u64(kv, "create_rev");
		if (!cJSON_IsString(k))
			continue;
		if (strcmp(k->valuestring, lk->key) == 0)
			*mine = cr == lk->create_rev;
		else if (cr < lk->create_rev && cr >= best) {
			best = cr;
			free(*pred);
			*pred = xstrdup(k->valuestring);
		}
	}
	cJSON_Delete(resp);
	return (CMD_OK);
}

/* Our turn: 0 got it, or an exit status (lk->why when lost). */
static enum cmd_status
lock_acquire(struct lock *lk, char **cause)
{
	char		*pred;
	uint64_t	 rev;
	int64_t		 until;
	int		 mine, rc, told = 0;
	enum cmd_status	 s;

	for (;;) {
		if ((s = lock_queue(lk, &mine, &pred, &rev, cause)) != CMD_OK)
			return (s);
		if (!mine) {
			free(pred);
			lk->why = "its waiter key was deleted";
			return (CMD_FALSE);
		}
		if (pred == NULL)
			return (CMD_OK);
		lock_tell_wait(lk, &told);
		s = lock_watch(lk, pred, rev + 1, cause);
		free(pred);
		if (s != CMD_OK)
			return (s);
		for (;;) {
			until = lk->next_ka;
			if (lk->give_up != -1 && lk->give_up < until)
				until = lk->give_up;
			if ((rc = lock_deleted(lk, until, cause)) == -1)
				return (cmd_client_status(&lk->w));
			if (rc == 1)
				break;
			if (lk->give_up != -1 && mono_ms() >= lk->give_up)
				return (lock_gave_up(lk, cause));
			if ((s = lock_keepalive(lk, cause)) != CMD_OK)
				return (s);
		}
	}
}

enum cmd_status
lock_epoch_read(struct lock *lk, uint64_t *epoch, uint64_t *mod_rev,
    char **owner, char **cause)
{
	const cJSON		*kv, *o;
	cJSON			*resp, *doc;
	struct proto_bytes	 v;
	struct proto_err	 e;
	struct buf		 b;
	struct jw		 w;
	enum cmd_status		 s;

	*epoch = *mod_rev = 0;
	if (owner != NULL)
		*owner = NULL;
	buf_init(&b);
	cmd_request_open(lk->ctx, &w, &b, "get");
	jw_name(&w, "key");
	jw_cstr(&w, lk->name);
	s = lock_call(lk, &b, &w, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	kv = cJSON_GetObjectItemCaseSensitive(resp, "kv");
	if (cJSON_IsObject(kv)) {
		*mod_rev = lock_u64(kv, "mod_rev");
		/* Its bytes, read as metad reads an epoch document. */
		doc = NULL;
		if (proto_kv_value(kv, &v) == 1)
			doc = proto_parse((const char *)v.data, v.len, &e);
		proto_bytes_free(&v);
		if (doc == NULL || proto_number_u64(
		    cJSON_GetObjectItemCaseSensitive(doc, "epoch"),
		    epoch) != 0) {
			xasprintf(cause, "lock %s: the key %s holds no epoch "
			    "document", lk->name, lk->name);
			s = CMD_ERROR;
		}
		o = cJSON_GetObjectItemCaseSensitive(doc, "owner");
		if (owner != NULL && cJSON_IsString(o))
			*owner = xstrdup(o->valuestring);
		cJSON_Delete(doc);
	}
	cJSON_Delete(resp);
	return (s);
}

/* Bump the epoch while our waiter key is ours; the txn's rev in *rev. */
static enum cmd_status
lock_bump(struct lock *lk, uint64_t *rev, char **cause)
{
	struct buf	 b, doc;
	struct jw	 w, dw;
	cJSON		*resp;
	char		*pred;
	uint64_t	 epoch, mod_rev;
	int		 tries, ok;
	enum cmd_status	 s;

	buf_init(&b);
	buf_init(&doc);
	for (tries = 0; tries < LOCK_BUMP_TRIES; tries++) {
		if ((s = lock_epoch_read(lk, &epoch, &mod_rev, NULL,
		    cause)) != CMD_OK)
			break;
		buf_reset(&doc);
		jw_init(&dw, &doc);
		jw_obj_open(&dw);
		jw_name(&dw, "epoch");
		jw_u64(&dw, epoch + 1);
		jw_name(&dw, "owner");
		jw_cstr(&dw, lk->owner);
		jw_obj_close(&dw);
		cmd_request_open(lk->ctx, &w, &b, "txn");
		jw_name(&w, "if");
		jw_arr_open(&w);
		jw_obj_open(&w);
		jw_name(&w, "key");
		jw_cstr(&w, lk->name);
		jw_name(&w, mod_rev ? "mod_rev" : "version");
		jw_u64(&w, mod_rev);
		jw_obj_close(&w);
		jw_obj_open(&w);
		jw_name(&w, "key");
		jw_cstr(&w, lk->key);
		jw_name(&w, "mod_rev");
		jw_u64(&w, lk->create_rev);
		jw_obj_close(&w);
		jw_arr_close(&w);
		jw_name(&w, "then");
		jw_arr_open(&w);
		jw_obj_open(&w);
		jw_name(&w, "op");
		jw_cstr(&w, "put");
		jw_name(&w, "key");
		jw_cstr(&w, lk->name);
		jw_name(&w, "value");
		jw_str(&w, doc.data, doc.len);
		jw_obj_close(&w);
		jw_arr_close(&w);
		if ((s = lock_call(lk, &b, &w, &resp, cause)) != CMD_OK)
			break;
		ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
		    "succeeded"));
		*rev = lock_u64(resp, "rev");
		cJSON_Delete(resp);
		if (ok) {
			lk->epoch = epoch + 1;
			break;
		}
		/* Lost the lock, or NAME moved under us: look again. */
		s = lock_queue(lk, &ok, &pred, rev, cause);
		free(pred);
		if (s != CMD_OK)
			break;
		if (!ok) {
			lk->why = "its waiter key was deleted";
			s = CMD_FALSE;
			break;
		}
	}
	if (s == CMD_OK && lk->epoch == 0) {
		xasprintf(cause, "lock %s: the epoch kept changing under the "
		    "lock (someone bumps it without the lock?)", lk->name);
		s = CMD_ERROR;
	}
	buf_free(&b);
	buf_free(&doc);
	return (s);
}

static enum cmd_status
lock_options(struct lock *lk, char **cause)
{
	struct args	*a = lk->ctx->args;
	const char	*v;
	char		 host[256];
	uint64_t	 ms;
	enum cmd_status	 s;

	lk->ttl_ms = LOCK_TTL_DEFAULT_MS;
	lk->give_up = -1;
	if ((v = args_get(a, "ttl")) != NULL) {
		if ((s = args_ttl(v, "--ttl", &lk->ttl_ms, cause)) != CMD_OK)
			return (s);
	}
	if ((v = args_get(a, "wait")) != NULL) {
		if ((s = args_duration(v, &ms, cause)) != CMD_OK)
			return (s);
		lk->give_up = mono_ms() + (int64_t)ms;
	}
	if ((v = args_get(a, "owner")) != NULL) {
		if (strlen(v) > OWNER_MAX_BYTES || !utf8_valid(v, strlen(v))) {
			xasprintf(cause, "invalid --owner: it must be UTF-8 "
			    "of at most %d bytes", OWNER_MAX_BYTES);
			return (CMD_USAGE);
		}
		snprintf(lk->owner, sizeof lk->owner, "%s", v);
	} else {
		if (gethostname(host, sizeof host) != 0)
			snprintf(host, sizeof host, "localhost");
		host[sizeof host - 1] = '\0';
		snprintf(lk->owner, sizeof lk->owner, "%s:%ld", host,
		    (long)getpid());
	}
	xasprintf(&lk->prefix, "%s/.lock/", lk->name);
	if (strlen(lk->prefix) + 16 > KEY_MAX_BYTES) {
		xasprintf(cause, "lock %s: NAME is too long for its waiter "
		    "keys (%d bytes at most)", lk->name, KEY_MAX_BYTES - 23);
		return (CMD_USAGE);
	}
	return (CMD_OK);
}

/* The session lease, our waiter key, and the watch connection. */
static enum cmd_status
lock_enter(struct lock *lk, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_lease_call(lk->ctx, "lease_grant", 0, lk->ttl_ms, 1,
	    &resp, cause)) != CMD_OK)
		return (s == CMD_FALSE ? CMD_ERROR : s);
	lk->lease = lock_u64(resp, "lease");
	cJSON_Delete(resp);
	lk->next_ka = mono_ms() + (int64_t)lk->ttl_ms / 3;
	xasprintf(&lk->key, "%s%016" PRIx64, lk->prefix, lk->lease);
	buf_init(&b);
	cmd_request_open(lk->ctx, &w, &b, "put");
	jw_name(&w, "key");
	jw_cstr(&w, lk->key);
	jw_name(&w, "value");
	jw_cstr(&w, lk->owner);
	jw_name(&w, "if_absent");
	jw_bool(&w, 1);
	jw_name(&w, "lease");
	jw_u64(&w, lk->lease);
	s = lock_call(lk, &b, &w, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s == CMD_FALSE ? CMD_ERROR : s);
	lk->create_rev = lock_u64(cJSON_GetObjectItemCaseSensitive(resp,
	    "kv"), "create_rev");
	cJSON_Delete(resp);
	if (client_connect(&lk->w, lk->ctx->client.path, lk->ctx->timeout_ms,
	    cause) != 0)
		return (CMD_UNREACHABLE);
	return (CMD_OK);
}

static enum cmd_status
cmd_lock_exec(struct cmd_ctx *ctx, char **cause)
{
	struct args	*a = ctx->args;
	struct lock	 lk;
	cJSON		*resp;
	char		*ignored = NULL;
	uint64_t	 rev;
	int		 s;

	memset(&lk, 0, sizeof lk);
	lk.ctx = ctx;
	lk.name = a->argv[0];
	client_init(&lk.w);
	/* In the REPL, Ctrl-C stops the wait for the lock (intr.c). */
	lk.w.intr = ctx->client.intr;
	lk.w.tls_cacert = ctx->tls_cacert;
	lk.w.tls_cert = ctx->tls_cert;
	lk.w.tls_key = ctx->tls_key;
	lk.w.intr_mask = ctx->client.intr_mask;
	if ((s = cmd_check_key(lk.name, "NAME", cause)) != CMD_OK ||
	    (s = lock_options(&lk, cause)) != CMD_OK)
		goto out;
	if ((s = lock_enter(&lk, cause)) != CMD_OK ||
	    (s = lock_acquire(&lk, cause)) != CMD_OK ||
	    (s = lock_watch(&lk, lk.key, lk.create_rev + 1,
	    cause)) != CMD_OK ||
	    (s = lock_bump(&lk, &rev, cause)) != CMD_OK)
		goto release;
	s = lock_run(&lk, a->argv + 1, cause);
	/* COMMAND's own status 2 is no usage error of ours. */
	if (s == CMD_USAGE && !ctx->in_repl)
		ctx->reported = 1;
release:
	if (lk.why != NULL && *cause == NULL)
		xasprintf(cause, "lock %s lost: %s", lk.name, lk.why);
	/* Our key goes, the next waiter goes on. */
	if (lk.lease != 0 && client_connected(&ctx->client)) {
		if (cmd_lease_call(ctx, "lease_revoke", lk.lease, 0, 0, &resp,
		    &ignored) == CMD_OK)
			cJSON_Delete(resp);
		free(ignored);
	}
	lock_terminate(&lk, cause);
out:
	client_close(&lk.w);
	free(lk.prefix);
	free(lk.key);
	return (s);
}
