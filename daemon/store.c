/*
 * The generic layer of the versioned store: picks a backend from the store
 * spec, keeps the committed rev and compact rev, checks the batch protocol,
 * and forwards everything else to the backend.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metad_limits.h"
#include "store.h"
#include "util.h"

static const struct store_options store_default_options = {
	STORE_SYNC_FULL, 0, NULL, NULL, NULL, NULL
};

int
store_err_set(struct store_err *err, enum store_errcode code,
    const char *fmt, ...)
{
	va_list	 ap;

	if (err == NULL)
		return (-1);
	err->code = code;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	return (-1);
}

static const struct store_backend *
store_pick(const char *spec, const char **arg, struct store_err *err)
{
	if (strcmp(spec, "memory") == 0 || strcmp(spec, "memory:") == 0) {
		*arg = "";
		return (&store_mem_backend);
	}
	if (strncmp(spec, "sqlite:", 7) == 0 && spec[7] != '\0') {
		*arg = spec + 7;
		return (&store_sqlite_backend);
	}
	if (strncmp(spec, "etcd:", 5) == 0 && spec[5] != '\0') {
		*arg = spec + 5;
		return (&store_etcd_backend);
	}
	store_err_set(err, STORE_ERR_INTERNAL, "invalid store \"%.64s\": "
	    "expected sqlite:PATH, memory or etcd:URL[,URL...]", spec);
	return (NULL);
}

struct store *
store_open(const char *spec, const struct store_options *opts,
    struct store_err *err)
{
	const struct store_backend	*backend;
	struct store			*s;
	const char			*arg;

	if ((backend = store_pick(spec, &arg, err)) == NULL)
		return (NULL);
	if (opts == NULL)
		opts = &store_default_options;
	s = xcalloc(1, sizeof *s);
	s->backend = backend;
	if (backend->open(s, arg, opts, err) != 0) {
		free(s);
		return (NULL);
	}
	return (s);
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->in_batch)
		store_rollback(s);
	s->backend->close(s);
	free(s);
}

int
store_get(struct store *s, const char *key, size_t key_len, store_kv_cb cb,
    void *arg, struct store_err *err)
{
	return (s->backend->get(s, key, key_len, cb, arg, err));
}

/* r as the backends take it (a prefix, a limit), in *rr. */
static int
store_range_norm(const struct store_range *r, struct store_range *rr,
    struct store_err *err)
{
	*rr = *r;
	if (rr->limit == 0)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "range limit is 0"));
	if (rr->prefix == NULL) {
		rr->prefix = "";
		rr->prefix_len = 0;
	}
	return (0);
}

long
store_range(struct store *s, const struct store_range *r, store_kv_cb cb,
    void *arg, int *more, struct store_err *err)
{
	struct store_range	 rr;
	int			 dummy;

	if (store_range_norm(r, &rr, err) != 0)
		return (-1);
	if (more == NULL)
		more = &dummy;
	*more = 0;
	return (s->backend->range(s, &rr, cb, arg, more, err));
}

int
store_reads_async(const struct store *s)
{
	return (s->backend->get_async != NULL && !s->in_batch);
}

int
store_get_async(struct store *s, const char *key, size_t key_len,
    store_read_done done, void *arg, struct store_err *err)
{
	return (s->backend->get_async(s, key, key_len, done, arg, err));
}

int
store_range_async(struct store *s, const struct store_range *r,
    store_read_done done, void *arg, struct store_err *err)
{
	struct store_range	 rr;

	if (store_range_norm(r, &rr, err) != 0)
		return (-1);
	return (s->backend->range_async(s, &rr, done, arg, err));
}

int
store_begin(struct store *s, struct store_err *err)
{
	if (s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "a batch is already open"));
	s->base_rev = s->rev;
	if (s->backend->begin(s, err) != 0)
		return (-1);
	s->in_batch = 1;
	return (0);
}

static void
store_begun(void *arg, const struct store_err *err)
{
	struct store	*s = arg;

	if (err == NULL)
		s->in_batch = 1;
	s->begun(s->begun_arg, err);
}

int
store_begin_async(struct store *s, const struct store_keys *keys,
    store_commit_done done, void *arg, struct store_err *err)
{
	if (s->in_batch || s->backend->begin_async == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "no asynchronous batch here"));
	s->begun = done;
	s->begun_arg = arg;
	return (s->backend->begin_async(s, keys, store_begun, s, err));
}

static int
store_check_write(struct store *s, const char *what, uint64_t rev,
    size_t key_len, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "%s outside a batch", what));
	/* A batch opened again replays writes its store already has. */
	if (rev <= s->rev && !s->reopened)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s at rev "
		    "%llu, not above the store rev %llu", what,
		    (unsigned long long)rev, (unsigned long long)s->rev));
	if (key_len == 0 || key_len > KEY_MAX_BYTES)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s: key of "
		    "%zu bytes (the limit is 1..%d)", what, key_len,
		    KEY_MAX_BYTES));
	return (0);
}

int
store_put(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, const void *value, size_t value_len,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	struct store_kv	 m;
	uint64_t	 pv;

	if (store_check_write(s, "put", rev, key_len, err) != 0)
		return (-1);
	if (value == NULL)
		value = "";
	return (s->backend->put(s, rev, seq, key, key_len, value, value_len,
	    meta != NULL ? meta : &m, prev_version != NULL ? prev_version : &pv,
	    err));
}

int
store_delete(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, int *deleted, struct store_err *err)
{
	int	 d;

	if (store_check_write(s, "delete", rev, key_len, err) != 0)
		return (-1);
	return (s->backend->del(s, rev, seq, key, key_len,
	    deleted != NULL ? deleted : &d, err));
}

int
store_mark(struct store *s, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "mark outside a batch"));
	return (s->backend->mark(s, err));
}

int
store_undo(struct store *s, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "undo outside a batch"));
	return (s->backend->undo(s, err));
}

int
store_commit(struct store *s, uint64_t rev, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "commit outside a batch"));
	if (rev < s->rev) {
		store_rollback(s);
		return (store_err_set(err, STORE_ERR_INTERNAL, "commit at rev "
		    "%llu, below the store rev %llu", (unsigned long long)rev,
		    (unsigned long long)s->rev));
	}
	s->in_batch = 0;
	if (s->backend->commit(s, rev, err) != 0)
		return (-1);
	if (!(s->backend->caps & STORE_CAP_PER_REQUEST))
		s->rev = s->commit_rev = rev;
	return (0);
}

/*
 * A per-request store: open a committed batch again, reading at its
 * base_rev, so that a request can be run once more to answer with the
 * revision its commit landed at (then store_rollback()).
 */
int
store_reopen_batch(struct store *s, uint64_t base_rev, struct store_err *err)
{
	if (s->in_batch || !(s->backend->caps & STORE_CAP_PER_REQUEST))
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "no batch to open again"));
	s->base_rev = base_rev;
	s->in_batch = s->reopened = 1;
	return (0);
}

int
store_commit_async(struct store *s, uint64_t rev, store_commit_done done,
    void *arg, struct store_err *err)
{
	if (!s->in_batch || s->backend->commit_async == NULL) {
		store_rollback(s);
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "no asynchronous commit here"));
	}
	s->in_batch = 0;
	return (s->backend->commit_async(s, rev, done, arg, err));
}

void
store_rollback(struct store *s)
{
	if (!s->in_batch)
		return;
	s->backend->rollback(s);
	s->in_batch = s->reopened = 0;
}

int
store_history(struct store *s, uint64_t from_rev, store_event_cb cb,
    void *arg, struct store_err *err)
{
	return (s->backend->history(s, from_rev, cb, arg, err));
}

/*
 * Inside a batch the compaction is part of the batch (a rollback or undo
 * restores the compact rev); outside, it is a batch of its own.
 */
int
store_compact(struct store *s, uint64_t rev, struct store_err *err)
{
	if (rev <= s->compact_rev)
		return (0);
	if (rev > s->rev)
		return (store_err_set(err, STORE_ERR_INTERNAL, "compact rev "
		    "%llu is beyond the current rev %llu",
		    (unsigned long long)rev, (unsigned long long)s->rev));
	if (s->in_batch) {
		if (s->backend->compact(s, rev, err) != 0)
			return (-1);
		s->compact_rev = rev;
		return (0);
	}
	if (store_begin(s, err) != 0)
		return (-1);
	if (s->backend->compact(s, rev, err) != 0) {
		store_rollback(s);
		return (-1);
	}
	s->compact_rev = rev;
	return (store_commit(s, s->rev, err));
}

int
store_stats(struct store *s, struct store_stats *st, struct store_err *err)
{
	memset(st, 0, sizeof *st);
	return (s->backend->stats(s, st, err));
}
