/*
 * The remote backend (store_remote.h): open (the connection, the
 * replica's first load, the stream up to the rev then) and close; writes
 * forwarded whole; the vtable.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <event2/event.h>

#include "store/remote/remote_conn.h"
#include "store/remote/store_remote.h"
#include "log.h"
#include "proto.h"
#include "util.h"

#define R(st)	((struct store_remote *)(st)->impl)

cJSON *
remote_answer(const char *line, size_t len, const struct store_err *se,
    struct store_err *err)
{
	struct proto_err	 e;
	cJSON			*j;

	if (se != NULL) {
		*err = *se;
		return (NULL);
	}
	if ((j = proto_parse(line, len, &e)) == NULL)
		store_err_set(err, STORE_ERR_INTERNAL, "the metad used sent a "
		    "line that is not JSON: %s", e.msg);
	return (j);
}

void
remote_answer_error(const cJSON *j, struct store_err *err)
{
	const cJSON	*e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const cJSON	*code = cJSON_GetObjectItemCaseSensitive(e, "code");
	const cJSON	*msg = cJSON_GetObjectItemCaseSensitive(e, "message");
	const char	*c = cJSON_IsString(code) ? code->valuestring : "";
	enum store_errcode ec = STORE_ERR_INTERNAL;

	if (strcmp(c, "unavailable") == 0)
		ec = STORE_ERR_UNAVAILABLE;
	else if (strcmp(c, "compacted") == 0)
		ec = STORE_ERR_COMPACTED;
	else if (strcmp(c, "storage_full") == 0)
		ec = STORE_ERR_FULL;
	else if (strcmp(c, "not_found") == 0)
		ec = STORE_ERR_NO_LEASE;
	else if (strcmp(c, "value_too_large") == 0)
		ec = STORE_ERR_TOO_LARGE;
	store_err_set(err, ec, "the metad used: %s%s%s", c,
	    cJSON_IsString(msg) ? ": " : "",
	    cJSON_IsString(msg) ? msg->valuestring : "");
}

/* The view's rev and compact_rev moved: ours follow (feed's notify). */
static void
remote_up(void *arg)
{
	struct store_remote	*sr = arg;

	if (!sr->loaded)
		remote_load(sr);
	else if (!sr->loading)
		remote_feed_up(sr);
}

static void
remote_down(void *arg)
{
	remote_feed_down(arg);
}

static int
remote_open(struct store *st, const char *arg,
    const struct store_options *opts, struct store_err *err)
{
	struct store_remote	*sr = xcalloc(1, sizeof *sr);
	struct rconn_tls	 tls = { opts->cacert, opts->cert, opts->key };
	struct rconn_cbs	 cbs;
	int64_t			 deadline = mono_ms() + REMOTE_OPEN_MS;

	st->impl = sr;
	sr->st = st;
	sr->opts = *opts;
	TAILQ_INIT(&sr->waits);
	if (opts->base == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "the metad "
		    "backend needs the daemon's loop"));
	if (opts->user != NULL || opts->password_file != NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "--store-user "
		    "and --store-password-file are for etcd: a metad knows "
		    "its clients by their certificates (--store-cert)"));
	memset(&cbs, 0, sizeof cbs);
	cbs.up = remote_up;
	cbs.down = remote_down;
	cbs.line = remote_feed_line;
	cbs.answer = remote_feed_answer;
	cbs.arg = sr;
	if ((sr->conn = rconn_open(opts->base, arg, &tls, &cbs, err)) == NULL)
		return (-1);
	/*
	 * The daemon's loop runs nothing else yet: the load runs on it, and
	 * the stream up to the rev the metad used had then.
	 */
	rconn_start(sr->conn);
	while ((!sr->loaded || store_rev(st) < sr->open_rev) &&
	    !sr->open_failed && !rconn_refused(sr->conn) &&
	    mono_ms() < deadline) {
		if (event_base_loop(opts->base, EVLOOP_ONCE) != 0)
			break;
	}
	if (sr->open_failed) {
		*err = sr->open_err;
		return (-1);
	}
	sr->opened = 1;
	if (rconn_refused(sr->conn))
		return (store_err_set(err, STORE_ERR_UNAVAILABLE, "%s",
		    rconn_why(sr->conn)));
	if (!sr->loaded || store_rev(st) < sr->open_rev)
		return (store_err_set(err, STORE_ERR_UNAVAILABLE, "the metad "
		    "used did not answer in %d s%s%s", REMOTE_OPEN_MS / 1000,
		    rconn_why(sr->conn)[0] != '\0' ? ": " : "",
		    rconn_why(sr->conn)));
	return (0);
}

static void
remote_close(struct store *st)
{
	struct store_remote	*sr = R(st);

	if (sr == NULL)
		return;
	rconn_free(sr->conn);
	remote_feed_free(sr);
	store_close(sr->view);
	store_kvbuf_free(&sr->load_kvs);
	free(sr);
	st->impl = NULL;
}

/* A read's rev on the view: ours may be ahead of it by revs without keys. */
struct remote_fwd {
	struct store_remote	*sr;
	store_forward_done	 done;
	void			*arg;
};

static void
remote_forwarded(void *arg, const char *line, size_t len,
    const struct store_err *se)
{
	static const char	 key[] = "{\"ok\":true,\"compact_rev\":";
	const struct remote_fwd	*f = arg;
	const char		*p;
	uint64_t		 rev = 0;

	/* Only a compact answers a compact_rev, first after "ok"
	 * (reply_begin(); an error has it in its detail). */
	if (se == NULL && len > sizeof key - 1 &&
	    memcmp(line, key, sizeof key - 1) == 0) {
		for (p = line + sizeof key - 1; p < line + len && *p >= '0' &&
		    *p <= '9'; p++)
			rev = rev * 10 + (uint64_t)(*p - '0');
		remote_compacted(f->sr, rev);
	}
	f->done(f->arg, line, len, se);
}

static void
remote_forward(struct store *st, const char *line, size_t len,
    store_forward_done done, void *arg)
{
	struct remote_fwd	 f = { R(st), done, arg };

	rconn_call_with(R(st)->conn, line, len, RCONN_RETRY | RCONN_WRITE,
	    remote_forwarded, &f, sizeof f);
}

/* No batch is ever opened here: every write goes whole (forward). */
static void
remote_begin(struct store *st, const struct store_keys *keys,
    store_done done, void *arg)
{
	struct store_err	 err;

	store_err_set(&err, STORE_ERR_INTERNAL, "the metad backend opens no "
	    "batch: its writes are forwarded whole");
	done(arg, &err);
}

static int
remote_no_write(struct store *st, struct store_err *err)
{
	return (store_err_set(err, STORE_ERR_INTERNAL, "the metad backend "
	    "writes nothing itself"));
}

static void
remote_commit(struct store *st, uint64_t rev, store_done done, void *arg)
{
	struct store_err	 err;

	remote_no_write(st, &err);
	done(arg, &err);
}

static void
remote_rollback(struct store *st)
{
}

const struct store_backend store_remote_backend = {
	.name = "metad",
	.open = remote_open,
	.close = remote_close,
	/* Batches: none (remote_begin fails); writes go whole. */
	.batch_max = 1,
	.batches_out = 1,
	.ordered = 1,
	.begin = remote_begin,
	.mark = remote_no_write,
	.undo = remote_no_write,
	.commit = remote_commit,
	.rollback = remote_rollback,
	.forward = remote_forward,
	/* Reads, from the replica. */
	.read_get = remote_read_get,
	.read_range = remote_read_range,
	.read_history = remote_read_history,
	.read_key_history = remote_read_key_history,
	.read_lease_keys = remote_read_lease_keys,
	/* Leases, kept by the metad used. */
	.read_leases = remote_read_leases,
	.lease_grant = remote_lease_grant,
	.lease_keepalive = remote_lease_keepalive,
	.lease_get = remote_lease_get,
	.lease_revoke_now = remote_lease_revoke_now,
	.lease_idem_get = remote_lease_idem_get,
	.lease_count = remote_lease_count,
	.read_stats = remote_read_stats,
};
