/*
 * The generic layer of the versioned store: picks a backend from the store
 * spec (one table), checks the batch protocol, and forwards everything
 * else to the backend.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metad_limits.h"
#include "store/store_backend.h"
#include "store/store_local.h"
#include "util.h"

/* store.h's accessors read the head as the store itself. */
_Static_assert(offsetof(struct store, head) == 0,
    "struct store_head is the first member of struct store");

static const struct store_options store_default_options = {
	.sync = STORE_SYNC_FULL
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

/*
 * The backends, one row each, in the order the usage names them: a spec
 * is "prefix:arg", or the prefix alone for a backend without an argument
 * ("prefix:" too).
 */
static const struct {
	const char			*prefix;
	const char			*arg;	/* its usage, NULL: none */
	const struct store_backend	*backend;
} store_backends[] = {
	{ "sqlite",	"PATH",			&store_sqlite_backend },
	{ "memory",	NULL,			&store_mem_backend },
	{ "etcd",	"URL[,URL...]",		&store_etcd_backend },
	{ "metad",	"URL[,URL...]",		&store_remote_backend },
};

#define STORE_NBACKENDS	(sizeof store_backends / sizeof store_backends[0])

/* "sqlite:PATH, memory or etcd:URL[,URL...]" */
static void
store_usage(char *buf, size_t size)
{
	size_t	 i, len = 0;

	buf[0] = '\0';
	for (i = 0; i < STORE_NBACKENDS && len < size; i++)
		len += snprintf(buf + len, size - len, "%s%s%s%s",
		    i == 0 ? "" : i + 1 < STORE_NBACKENDS ? ", " : " or ",
		    store_backends[i].prefix,
		    store_backends[i].arg != NULL ? ":" : "",
		    store_backends[i].arg != NULL ? store_backends[i].arg : "");
}

static const struct store_backend *
store_pick(const char *spec, const char **arg, struct store_err *err)
{
	char		 usage[128];
	const char	*rest;
	size_t		 i, len;

	for (i = 0; i < STORE_NBACKENDS; i++) {
		len = strlen(store_backends[i].prefix);
		if (strncmp(spec, store_backends[i].prefix, len) != 0)
			continue;
		rest = spec + len;
		if (*rest == ':')
			rest++;
		else if (*rest != '\0')
			continue;
		if ((store_backends[i].arg != NULL) != (*rest != '\0'))
			continue;
		*arg = rest;
		return (store_backends[i].backend);
	}
	store_usage(usage, sizeof usage);
	if (strchr(spec, ':') == NULL && strchr(spec, '/') != NULL)
		store_err_set(err, STORE_ERR_INTERNAL, "expected %s (a "
		    "database file: sqlite:%.200s)", usage, spec);
	else
		store_err_set(err, STORE_ERR_INTERNAL, "expected %s", usage);
	return (NULL);
}

int
store_spec_check(const char *spec, struct store_err *err)
{
	const char	*arg;

	return (store_pick(spec, &arg, err) != NULL ? 0 : -1);
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
	if (backend->local != NULL && (opts->cacert != NULL ||
	    opts->cert != NULL || opts->key != NULL || opts->user != NULL ||
	    opts->password_file != NULL)) {
		store_err_set(err, STORE_ERR_INTERNAL, "--store-cacert, "
		    "--store-cert, --store-key, --store-user and "
		    "--store-password-file are for a remote store (etcd:URL)");
		return (NULL);
	}
	s = xcalloc(1, sizeof *s);
	s->backend = backend;
	s->head.batch_max = backend->batch_max;
	s->head.batches_out = backend->batches_out;
	s->head.ordered = backend->ordered;
	s->opts = *opts;
	if (backend->local != NULL)
		store_local_init(s);
	if (backend->open(s, arg, opts, err) != 0) {
		store_local_free(s);
		free(s);
		return (NULL);
	}
	return (s);
}

const char *
store_name(const struct store *s)
{
	return (s->backend->name);
}

void
store_close(struct store *s)
{
	if (s == NULL)
		return;
	if (s->in_batch)
		store_rollback(s);
	s->backend->close(s);
	store_local_free(s);
	free(s);
}

int
store_kv_copy_cb(const struct store_kv *kv, void *arg)
{
	struct store_kv	*dst = arg;
	char		*p;

	*dst = *kv;
	p = xmalloc(kv->key_len + kv->value_len + 2);
	memcpy(p, kv->key, kv->key_len);
	p[kv->key_len] = '\0';
	dst->key = p;
	if (kv->value != NULL) {
		memcpy(p + kv->key_len + 1, kv->value, kv->value_len);
		p[kv->key_len + 1 + kv->value_len] = '\0';
		dst->value = (unsigned char *)p + kv->key_len + 1;
	}
	return (0);
}

void
store_kv_copy_free(struct store_kv *kv)
{
	free((char *)kv->key);
	kv->key = NULL;
	kv->value = NULL;
}

void
store_evbuf_add(struct store_evbuf *b, const struct store_event *ev)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->v = xrealloc(b->v, b->cap * sizeof *b->v);
	}
	b->v[b->n] = *ev;
	store_kv_copy_cb(&ev->kv, &b->v[b->n].kv);
	if (ev->prev_state == STORE_PREV_KV)
		store_kv_copy_cb(&ev->prev, &b->v[b->n].prev);
	b->n++;
}

void
store_evbuf_free(struct store_evbuf *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++) {
		store_kv_copy_free(&b->v[i].kv);
		if (b->v[i].prev_state == STORE_PREV_KV)
			store_kv_copy_free(&b->v[i].prev);
	}
	free(b->v);
	memset(b, 0, sizeof *b);
}

int
store_kvbuf_add(const struct store_kv *kv, void *arg)
{
	struct store_kvbuf	*b = arg;

	if (b->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 16;
		b->v = xrealloc(b->v, b->cap * sizeof *b->v);
	}
	store_kv_copy_cb(kv, &b->v[b->n]);
	b->n++;
	return (0);
}

void
store_kvbuf_free(struct store_kvbuf *b)
{
	size_t	 i;

	for (i = 0; i < b->n; i++)
		store_kv_copy_free(&b->v[i]);
	free(b->v);
	memset(b, 0, sizeof *b);
}

/* 0 if a read at rev may go to the backend; else err is why not. */
static int
store_check_rev(struct store *s, uint64_t rev, struct store_err *err)
{
	if (rev != 0 && rev < s->head.compact_rev)
		return (store_err_set(err, STORE_ERR_COMPACTED, "rev %llu is "
		    "compacted (kept from %llu)", (unsigned long long)rev,
		    (unsigned long long)s->head.compact_rev));
	return (0);
}

void
store_read_get(struct store *s, const char *key, size_t key_len,
    store_read_done done, void *arg)
{
	s->backend->read_get(s, key, key_len, 0, 0, done, arg);
}

void
store_read_get_at(struct store *s, const char *key, size_t key_len,
    uint64_t rev, int serializable, store_read_done done, void *arg)
{
	struct store_err	 err;

	if (store_check_rev(s, rev, &err) != 0) {
		done(arg, -1, NULL, 0, &err);
		return;
	}
	s->backend->read_get(s, key, key_len, rev, serializable, done, arg);
}

void
store_read_key_history(struct store *s, const char *key, size_t key_len,
    uint64_t from_rev, size_t limit, store_history_done done, void *arg)
{
	struct store_err	 err;

	if (from_rev < s->head.compact_rev) {
		store_err_set(&err, STORE_ERR_COMPACTED, "history from rev "
		    "%llu is compacted (kept from %llu)",
		    (unsigned long long)from_rev,
		    (unsigned long long)s->head.compact_rev);
		done(arg, -1, NULL, 0, &err);
		return;
	}
	s->backend->read_key_history(s, key, key_len, from_rev,
	    limit > 0 ? limit : 1, done, arg);
}

void
store_read_range(struct store *s, const struct store_range *r,
    store_read_done done, void *arg)
{
	struct store_range	 rr = *r;
	struct store_err	 err;

	if (rr.limit == 0) {
		store_err_set(&err, STORE_ERR_INTERNAL, "range limit is 0");
		done(arg, -1, NULL, 0, &err);
		return;
	}
	if (store_check_rev(s, rr.rev, &err) != 0) {
		done(arg, -1, NULL, 0, &err);
		return;
	}
	if (rr.prefix == NULL) {
		rr.prefix = "";
		rr.prefix_len = 0;
	}
	s->backend->read_range(s, &rr, done, arg);
}

void
store_want_prev(struct store *s, int on)
{
	s->head.want_prev = on;
}

void
store_read_history(struct store *s, uint64_t from_rev, size_t max_events,
    store_history_done done, void *arg)
{
	s->backend->read_history(s, from_rev, max_events, done, arg);
}

void
store_read_stats(struct store *s, store_stats_done done, void *arg)
{
	s->backend->read_stats(s, done, arg);
}

/* A begin or a commit out: whose callback to call. */
struct store_call {
	struct store	*s;
	store_done	 done;
	void		*arg;
	int64_t		 compact_us;	/* a commit's compaction began */
};

static struct store_call *
store_call_new(struct store *s, store_done done, void *arg)
{
	struct store_call	*c = xmalloc(sizeof *c);

	c->s = s;
	c->done = done;
	c->arg = arg;
	c->compact_us = 0;
	s->out++;
	return (c);
}

/* The end of a begin or a commit: the batch state, then the caller. */
static void
store_call_end(struct store_call *c, int in_batch, const struct store_err *err)
{
	struct store	*s = c->s;
	store_done	 done = c->done;
	void		*arg = c->arg;

	free(c);
	s->out--;
	s->ends++;
	s->in_batch = in_batch;
	s->dirty = s->reopened = 0;
	s->batch_rev = 0;
	done(arg, err);
}

static void
store_begun(void *arg, const struct store_err *err)
{
	struct store_call	*c = arg;

	c->s->head.answer_again = 0;
	store_call_end(c, err == NULL, err);
}

void
store_begin(struct store *s, const struct store_keys *keys, store_done done,
    void *arg)
{
	static const struct store_keys	 none;
	unsigned			 max = s->backend->batches_out;
	struct store_err		 err;

	if (s->in_batch || s->out >= (max > 0 ? max : 1)) {
		store_err_set(&err, STORE_ERR_INTERNAL, s->in_batch ?
		    "a batch is already open" : "%u batches are out already",
		    s->out);
		done(arg, &err);
		return;
	}
	s->backend->begin(s, keys != NULL ? keys : &none, store_begun,
	    store_call_new(s, done, arg));
}

int
store_get(struct store *s, const char *key, size_t key_len, store_kv_cb cb,
    void *arg, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "get outside a batch"));
	return (s->backend->get(s, key, key_len, cb, arg, err));
}

int
store_check_write(struct store *s, const char *what, uint64_t rev,
    size_t key_len, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "%s outside a batch", what));
	/* A batch opened again replays writes its store already has. */
	if (rev <= s->head.base_rev && !s->reopened)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s at rev "
		    "%llu, not above the batch's base rev %llu", what,
		    (unsigned long long)rev,
		    (unsigned long long)s->head.base_rev));
	if (key_len == 0 || key_len > KEY_MAX_BYTES)
		return (store_err_set(err, STORE_ERR_INTERNAL, "%s: key of "
		    "%zu bytes (the limit is 1..%d)", what, key_len,
		    KEY_MAX_BYTES));
	s->dirty = 1;
	return (0);
}

/* A write at rev was made: the batch's newest so far. */
void
store_wrote(struct store *s, uint64_t rev)
{
	if (rev > s->batch_rev)
		s->batch_rev = rev;
}

int
store_put(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, const void *value, size_t value_len,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	return (store_put_lease(s, rev, seq, key, key_len, value, value_len,
	    0, meta, prev_version, err));
}

int
store_put_lease(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, const void *value, size_t value_len, uint64_t lease,
    struct store_kv *meta, uint64_t *prev_version, struct store_err *err)
{
	struct store_kv	 m;
	uint64_t	 pv;

	if (meta == NULL)
		meta = &m;
	if (store_check_write(s, "put", rev, key_len, err) != 0)
		return (-1);
	if (lease != 0 && !store_has_leases(s))
		return (store_err_set(err, STORE_ERR_INTERNAL, "leases are "
		    "not available on the %s backend yet", s->backend->name));
	if (value == NULL)
		value = "";
	if (s->backend->put(s, rev, seq, key, key_len, value, value_len,
	    lease, meta, prev_version != NULL ? prev_version : &pv, err) != 0)
		return (-1);
	store_wrote(s, rev);
	if (s->backend->lease_attach != NULL &&
	    s->backend->lease_attach(s, key, key_len, lease, err) != 0)
		return (-1);
	meta->lease = lease;
	return (0);
}

int
store_lease_revoke(struct store *s, uint64_t rev, uint64_t lease,
    uint64_t *n, struct store_err *err)
{
	uint64_t	 dn;

	if (n == NULL)
		n = &dn;
	*n = 0;
	if (store_check_write(s, "lease revoke", rev, 1, err) != 0)
		return (-1);
	if (s->backend->lease_put == NULL)	/* remote */
		return (store_err_set(err, STORE_ERR_INTERNAL, "the %s "
		    "backend keeps no lease records for the daemon",
		    s->backend->name));
	if (s->backend->lease_revoke(s, rev, lease, n, err) != 0)
		return (-1);
	if (*n > 0)
		store_wrote(s, rev);
	return (0);
}

int
store_delete(struct store *s, uint64_t rev, uint32_t seq, const char *key,
    size_t key_len, int *deleted, struct store_err *err)
{
	int	 d;

	if (store_check_write(s, "delete", rev, key_len, err) != 0)
		return (-1);
	if (deleted == NULL)
		deleted = &d;
	if (s->backend->del(s, rev, seq, key, key_len, deleted, err) != 0)
		return (-1);
	if (*deleted)
		store_wrote(s, rev);
	return (0);
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

/* A rollback or undo restores the compact rev with the rest. */
int
store_compact(struct store *s, uint64_t rev, struct store_err *err)
{
	if (!s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "compact outside a batch"));
	if (rev <= s->head.compact_rev)
		return (0);
	if (rev > s->head.rev && rev > s->batch_rev)
		return (store_err_set(err, STORE_ERR_INTERNAL, "compact rev "
		    "%llu is beyond the current rev %llu",
		    (unsigned long long)rev, (unsigned long long)(s->head.rev >
		    s->batch_rev ? s->head.rev : s->batch_rev)));
	if (s->compact_us == 0)
		s->compact_us = mono_us();
	if (s->backend->compact(s, rev, err) != 0)
		return (-1);
	s->head.compact_rev = rev;
	s->dirty = 1;
	return (0);
}

static void
store_committed(void *arg, const struct store_err *err)
{
	struct store_call	*c = arg;

	if (err == NULL && c->compact_us != 0)
		store_report(c->s, STORE_REPORT_COMPACTION, NULL,
		    STORE_ERR_NONE, (double)(mono_us() - c->compact_us) / 1e6);
	store_call_end(c, 0, err);
}

/*
 * The batch leaves the open state when it is handed over: another may
 * open while it is out.
 */
void
store_commit(struct store *s, uint64_t rev, store_done done, void *arg)
{
	struct store_err	 err;
	struct store_call	*c;
	unsigned		 ends;

	if (!s->in_batch || s->reopened) {
		store_err_set(&err, STORE_ERR_INTERNAL,
		    "commit outside a batch");
		done(arg, &err);
		return;
	}
	if (rev < s->head.base_rev || rev < s->batch_rev) {
		store_rollback(s);
		store_err_set(&err, STORE_ERR_INTERNAL, "commit at rev %llu, "
		    "below the batch's rev %llu", (unsigned long long)rev,
		    (unsigned long long)(s->batch_rev > s->head.base_rev ?
		    s->batch_rev : s->head.base_rev));
		done(arg, &err);
		return;
	}
	/* Nothing to write: done, unless it must land behind batches out. */
	if (!s->dirty && !(s->backend->ordered && s->out > 0)) {
		store_rollback(s);
		done(arg, NULL);
		return;
	}
	s->head.answer_again = 0;
	ends = s->ends;
	c = store_call_new(s, done, arg);
	c->compact_us = s->compact_us;
	s->compact_us = 0;
	s->backend->commit(s, rev, store_committed, c);
	if (s->ends == ends)
		s->in_batch = 0;	/* out: the backend holds what it needs */
}

void
store_rollback(struct store *s)
{
	if (!s->in_batch)
		return;
	s->backend->rollback(s);
	s->compact_us = 0;
	s->in_batch = s->dirty = s->reopened = 0;
	s->batch_rev = 0;
}

int
store_reopen(struct store *s, uint64_t base_rev, struct store_err *err)
{
	if (s->in_batch)
		return (store_err_set(err, STORE_ERR_INTERNAL,
		    "no batch to open again"));
	if (s->backend->reopen == NULL)
		return (store_err_set(err, STORE_ERR_INTERNAL, "a %s store "
		    "lands every batch where it was planned: nothing to open "
		    "again", s->backend->name));
	s->backend->reopen(s);
	s->head.base_rev = base_rev;
	s->in_batch = s->reopened = 1;
	return (0);
}
