/*
 * dump [PREFIX]: the keys under PREFIX as JSON Lines, all as of one
 * revision R however many pages it takes: a header
 * {"dump":1,"rev":R,"backend":B}, then one kv object a line (key, value or
 * value_b64, version, create_rev, mod_rev; no lease), in key order.
 * load reads it back.
 *
 * R is the rev a first, linearizable list answers at (it sees every write
 * acknowledged before it); every page is then a list at rev R.  A page
 * asks for as many keys as fit DUMP_PAGE_BYTES at the size of the keys
 * seen so far (DUMP_PAGE_FIRST at first), at most LIST_LIMIT_DEFAULT, so
 * that large values never make an answer too long.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

/* The dump format written (load reads it). */
#define DUMP_FORMAT		1
#define DUMP_PAGE_BYTES		(4 * 1024 * 1024)
#define DUMP_PAGE_FIRST		16

static enum cmd_status	cmd_dump_exec(struct cmd_ctx *, char **);

const struct cmd_entry cmd_dump_entry = {
	.name = "dump",
	.optstring = "",
	.args_min = 0,
	.args_max = 1,
	.usage = "[PREFIX]",
	.help = "write the keys under PREFIX as JSON Lines, all at one "
	    "revision (for load)",
	.exec = cmd_dump_exec
};

struct dump {
	struct cmd_ctx	*ctx;
	const char	*prefix;
	uint64_t	 rev;
	char		*after;
	uint64_t	 keys;
	uint64_t	 bytes;		/* of the kvs received */
	int		 more;
	struct progress	 progress;
};

/* A request of ctx's with no arguments but op; its answer in *resp. */
static enum cmd_status
cmd_dump_call(struct dump *d, const char *op, cJSON **resp, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	enum cmd_status	 s;

	buf_init(&b);
	cmd_request_open(d->ctx, &w, &b, op);
	jw_obj_close(&w);
	s = cmd_call(d->ctx, &b, resp, cause);
	buf_free(&b);
	return (s);
}

/* The rev of a linearizable read: every page is read at it. */
static enum cmd_status
cmd_dump_rev(struct dump *d, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;

	buf_init(&b);
	cmd_request_open(d->ctx, &w, &b, "list");
	jw_name(&w, "prefix");
	jw_cstr(&w, d->prefix);
	jw_name(&w, "limit");
	jw_u64(&w, 1);
	jw_name(&w, "keys_only");
	jw_bool(&w, 1);
	jw_obj_close(&w);
	s = cmd_call(d->ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp, "rev"),
	    &d->rev) != 0) {
		xasprintf(cause, "metad's list answer has no rev");
		s = CMD_ERROR;
	}
	cJSON_Delete(resp);
	return (s);
}

/* {"dump":1,"rev":R,"backend":B}, B from hello. */
static enum cmd_status
cmd_dump_header(struct dump *d, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*hello;
	const cJSON	*backend;
	enum cmd_status	 s;

	if ((s = cmd_dump_call(d, "hello", &hello, cause)) != CMD_OK)
		return (s);
	if ((s = cmd_dump_rev(d, cause)) != CMD_OK) {
		cJSON_Delete(hello);
		return (s);
	}
	backend = cJSON_GetObjectItemCaseSensitive(hello, "backend");
	buf_init(&b);
	jw_init(&w, &b);
	jw_obj_open(&w);
	jw_name(&w, "dump");
	jw_u64(&w, DUMP_FORMAT);
	jw_name(&w, "rev");
	jw_u64(&w, d->rev);
	jw_name(&w, "backend");
	jw_cstr(&w, cJSON_IsString(backend) ? backend->valuestring :
	    "unknown");
	jw_obj_close(&w);
	buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
	cJSON_Delete(hello);
	return (CMD_OK);
}

static void
cmd_dump_request(struct dump *d, struct buf *b)
{
	struct jw	 w;
	uint64_t	 n = DUMP_PAGE_FIRST;

	if (d->keys > 0) {
		n = DUMP_PAGE_BYTES / (d->bytes / d->keys + 1);
		if (n > LIST_LIMIT_DEFAULT)
			n = LIST_LIMIT_DEFAULT;
		if (n == 0)
			n = 1;
	}
	cmd_request_open(d->ctx, &w, b, "list");
	jw_name(&w, "prefix");
	jw_cstr(&w, d->prefix);
	if (d->after != NULL) {
		jw_name(&w, "after");
		jw_cstr(&w, d->after);
	}
	jw_name(&w, "limit");
	jw_u64(&w, n);
	jw_name(&w, "rev");
	jw_u64(&w, d->rev);
	jw_obj_close(&w);
}

/*
 * "dump: 1234 keys at rev R, 850 keys/s", after every key: a slow reader
 * of stdout holds each write, and a page is up to 1000 of them.
 */
static void
cmd_dump_progress(struct dump *d)
{
	if (progress_due(&d->progress))
		progress_show(&d->progress, "dump: %" PRIu64 " keys at rev %"
		    PRIu64 ", %" PRIu64 " keys/s", d->keys, d->rev,
		    progress_rate(&d->progress, d->keys));
}

static enum cmd_status
cmd_dump_page(struct dump *d, const cJSON *resp, size_t *n, char **cause)
{
	const cJSON	*kvs, *kv, *key;
	struct buf	 b;

	kvs = cJSON_GetObjectItemCaseSensitive(resp, "kvs");
	if (!cJSON_IsArray(kvs)) {
		xasprintf(cause, "metad's list answer has no kvs array");
		return (CMD_ERROR);
	}
	d->more = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
	    "more"));
	*n = 0;
	buf_init(&b);
	cJSON_ArrayForEach(kv, kvs) {
		key = cJSON_GetObjectItemCaseSensitive(kv, "key");
		if (!cJSON_IsString(key)) {
			xasprintf(cause, "metad listed an entry without key");
			buf_free(&b);
			return (CMD_ERROR);
		}
		buf_reset(&b);
		output_json_append(&b, kv);
		d->bytes += b.len;
		output_json_without(kv, "lease");
		free(d->after);
		d->after = xstrdup(key->valuestring);
		d->keys++;
		(*n)++;
		cmd_dump_progress(d);
	}
	buf_free(&b);
	return (CMD_OK);
}

static enum cmd_status
cmd_dump_run(struct dump *d, char **cause)
{
	struct buf	 b;
	cJSON		*resp;
	enum cmd_status	 s;
	size_t		 n;

	if ((s = cmd_dump_header(d, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	d->more = d->rev > 0;	/* nothing at all at rev 0 */
	while (d->more) {
		buf_reset(&b);
		cmd_dump_request(d, &b);
		if ((s = cmd_call(d->ctx, &b, &resp, cause)) != CMD_OK)
			break;
		s = cmd_dump_page(d, resp, &n, cause);
		cJSON_Delete(resp);
		if (s != CMD_OK)
			break;
		if (n == 0)
			d->more = 0;
	}
	buf_free(&b);
	if (s == CMD_OK && (fflush(stdout) != 0 || ferror(stdout))) {
		xasprintf(cause, "cannot write the dump to stdout");
		s = CMD_ERROR;
	}
	return (s);
}

static enum cmd_status
cmd_dump_exec(struct cmd_ctx *ctx, char **cause)
{
	struct dump	 d;
	enum cmd_status	 s;

	memset(&d, 0, sizeof d);
	d.ctx = ctx;
	d.prefix = ctx->args->argc > 0 ? ctx->args->argv[0] : "";
	if (strlen(d.prefix) > KEY_MAX_BYTES ||
	    !utf8_valid(d.prefix, strlen(d.prefix))) {
		xasprintf(cause, "PREFIX must be UTF-8 of at most %d bytes",
		    KEY_MAX_BYTES);
		return (CMD_USAGE);
	}
	progress_start(&d.progress, ctx);
	s = cmd_dump_run(&d, cause);
	progress_end(&d.progress);
	free(d.after);
	return (s);
}
