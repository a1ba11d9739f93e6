/*
 * load [FILE|-] [--if-absent]: write the keys of a dump (dump's format:
 * a header line {"dump":1,...}, then one kv object a line) in txns of at
 * most TXN_MAX_OPS puts and LOAD_TXN_BYTES of request; values only, the
 * target assigns its own versions and revisions.  Prints the number of
 * keys written.
 *
 * Every line is checked before its txn is sent: a line that is not a kv
 * (or is truncated, or has a key over the limit) stops the load with the
 * line's number, and nothing of the txn it would have joined, nor after
 * it, is written.  A txn metad refuses stops it the same way.
 *
 * --if-absent: each txn puts only keys that are absent, atomically: its
 * compares say "version 0" for every key, and when one fails, the else
 * branch's gets tell which keys exist; the txn is sent again without them.
 * Its puts and gets share the txn's TXN_MAX_OPS: half as many puts a txn.
 */
#include <sys/stat.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

/* The dump format this metactl reads (and dump writes). */
#define LOAD_DUMP_FORMAT	1
/* A txn's request, below metad's default --max-request-bytes. */
#define LOAD_TXN_BYTES		(1024 * 1024)
/* Longest input line: a kv with a value of metactl's largest. */
#define LOAD_LINE_MAX_BYTES	REQUEST_MAX_BYTES_FOR(METACTL_VALUE_MAX_BYTES)
/* What a compare and a get of a key add to a txn, besides the key. */
#define LOAD_KEY_OVERHEAD	64

static enum cmd_status	cmd_load_exec(struct cmd_ctx *, char **);

static const struct option cmd_load_longopts[] = {
	{ "if-absent",	no_argument,		NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_load_entry = {
	.name = "load",
	.optstring = "",
	.longopts = cmd_load_longopts,
	.args_min = 0,
	.args_max = 1,
	.usage = "[FILE|-] [--if-absent]",
	.help = "write the keys of a dump (stdin by default); prints the "
	    "number written",
	.details = "Transactions of at most 128 puts.  --if-absent skips keys "
	    "that exist.\nA bad line stops the load: nothing from its "
	    "transaction on is written.\n",
	.exec = cmd_load_exec
};

/* A put waiting in the batch: its key, and its txn op in load->ops. */
struct load_put {
	char		*key;
	size_t		 off;
	size_t		 len;
	unsigned long	 line;
	int		 skip;		/* exists (--if-absent) */
};

struct load {
	struct cmd_ctx		*ctx;
	const char		*name;		/* for messages */
	int			 if_absent;
	struct load_put		 puts[TXN_MAX_OPS];
	size_t			 nputs;
	size_t			 max_puts;	/* a txn */
	struct buf		 ops;		/* the batch's put ops */
	struct buf		 one;		/* the line's put op */
	size_t			 bytes;		/* its request's size */
	uint64_t		 written;
	uint64_t		 skipped;
	unsigned long		 line;
	struct progress		 progress;
	uint64_t		 read;		/* bytes of the input */
	uint64_t		 size;		/* a regular file's, or 0 */
};

static void
cmd_load_clear(struct load *l)
{
	size_t	 i;

	for (i = 0; i < l->nputs; i++)
		free(l->puts[i].key);
	l->nputs = 0;
	l->bytes = 0;
	buf_reset(&l->ops);
}

/* "nothing from line N on was written (K keys before it)". */
static void
cmd_load_stopped(struct load *l, unsigned long from, const char *why,
    char **cause)
{
	xasprintf(cause, "%s: %s; load stopped: nothing from line %lu on was "
	    "written (%" PRIu64 " keys were, before it)", l->name, why, from,
	    l->written);
}

static void
cmd_load_request(struct load *l, struct buf *b)
{
	struct jw	 w;
	size_t		 i;
	int		 any = 0;

	cmd_request_open(l->ctx, &w, b, "txn");
	if (l->if_absent) {
		jw_name(&w, "if");
		jw_arr_open(&w);
		for (i = 0; i < l->nputs; i++) {
			if (l->puts[i].skip)
				continue;
			jw_obj_open(&w);
			jw_name(&w, "key");
			jw_cstr(&w, l->puts[i].key);
			jw_name(&w, "version");
			jw_u64(&w, 0);
			jw_obj_close(&w);
		}
		jw_arr_close(&w);
	}
	jw_name(&w, "then");
	jw_arr_open(&w);
	for (i = 0; i < l->nputs; i++) {
		if (l->puts[i].skip)
			continue;
		if (any++)
			buf_addc(b, ',');
		buf_add(b, l->ops.data + l->puts[i].off, l->puts[i].len);
	}
	jw_arr_close(&w);
	if (l->if_absent) {
		jw_name(&w, "else");
		jw_arr_open(&w);
		for (i = 0; i < l->nputs; i++) {
			if (l->puts[i].skip)
				continue;
			jw_obj_open(&w);
			jw_name(&w, "op");
			jw_cstr(&w, "get");
			jw_name(&w, "key");
			jw_cstr(&w, l->puts[i].key);
			jw_obj_close(&w);
		}
		jw_arr_close(&w);
	}
	jw_obj_close(&w);
}

/* After a failed compare: mark the keys the else branch found. */
static int
cmd_load_mark_present(struct load *l, const cJSON *resp)
{
	const cJSON	*results, *r, *kv;
	size_t		 i = 0;
	int		 marked = 0;

	results = cJSON_GetObjectItemCaseSensitive(resp, "results");
	r = cJSON_IsArray(results) ? results->child : NULL;
	for (; r != NULL; r = r->next) {
		while (i < l->nputs && l->puts[i].skip)
			i++;
		if (i == l->nputs)
			break;
		kv = cJSON_GetObjectItemCaseSensitive(r, "kv");
		if (cJSON_IsObject(kv)) {
			l->puts[i].skip = 1;
			l->skipped++;
			marked++;
		}
		i++;
	}
	return (marked);
}

/* Sends the batch (again without the keys that exist, --if-absent). */
static enum cmd_status
cmd_load_flush(struct load *l, char **cause)
{
	struct buf	 b;
	cJSON		*resp;
	enum cmd_status	 s = CMD_OK;
	size_t		 i, n;
	char		*why;

	buf_init(&b);
	for (;;) {
		for (i = n = 0; i < l->nputs; i++)
			n += !l->puts[i].skip;
		if (n == 0)
			break;
		cmd_load_request(l, &b);
		if ((s = cmd_roundtrip(l->ctx, &b, &resp, cause)) != CMD_OK)
			break;
		if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
		    "ok"))) {
			s = cmd_response_error(l->ctx, resp);
			xasprintf(&why, "lines %lu-%lu: metad refused their "
			    "transaction", l->puts[0].line,
			    l->puts[l->nputs - 1].line);
			cmd_load_stopped(l, l->puts[0].line, why, cause);
			free(why);
		} else if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
		    "succeeded")))
			l->written += n;
		else if (cmd_load_mark_present(l, resp) == 0) {
			xasprintf(cause, "metad's txn answer named no existing "
			    "key, yet its compare failed");
			s = CMD_ERROR;
		} else {
			cJSON_Delete(resp);
			continue;
		}
		cJSON_Delete(resp);
		break;
	}
	buf_free(&b);
	if (s == CMD_OK)
		cmd_load_clear(l);
	return (s);
}

/*
 * One kv line as a txn put op in l->one.  -1 with *why (the caller frees)
 * when it is not a kv.
 */
static int
cmd_load_parse(struct load *l, const char *line, size_t len,
    struct load_put *p, char **why)
{
	static const char	*fields[] = { "key", "value", "value_b64",
	    "version", "create_rev", "mod_rev", "lease", NULL };
	struct proto_err	 e;
	struct proto_bytes	 v = { NULL, 0, NULL };
	const cJSON		*f;
	const char		*key;
	size_t			 key_len, i;
	struct jw		 w;
	cJSON			*obj;

	if ((obj = proto_parse(line, len, &e)) == NULL) {
		xasprintf(why, "not a kv: %s", e.msg);
		return (-1);
	}
	for (f = obj->child; f != NULL; f = f->next) {
		for (i = 0; fields[i] != NULL &&
		    strcmp(fields[i], f->string) != 0; i++)
			;
		if (fields[i] == NULL) {
			xasprintf(why, "not a kv: unknown field \"%s\"",
			    f->string);
			goto fail;
		}
	}
	if (proto_get_key(obj, "key", 1, &key, &key_len, &e) != 1 ||
	    proto_get_value(obj, 1, METACTL_VALUE_MAX_BYTES, &v, &e) != 1) {
		xasprintf(why, "not a kv: %s", e.msg);
		goto fail;
	}
	p->key = xstrdup(key);
	p->line = l->line;
	p->skip = 0;
	buf_reset(&l->one);
	jw_init(&w, &l->one);
	jw_obj_open(&w);
	jw_name(&w, "op");
	jw_cstr(&w, "put");
	jw_name(&w, "key");
	jw_str(&w, key, key_len);
	jw_value_req(&w, v.data, v.len);
	jw_obj_close(&w);
	p->len = l->one.len;
	proto_bytes_free(&v);
	cJSON_Delete(obj);
	return (0);
fail:
	proto_bytes_free(&v);
	cJSON_Delete(obj);
	return (-1);
}

/* The header: {"dump":N,...} with N a format this metactl reads. */
static int
cmd_load_header(const char *line, size_t len, char **why)
{
	struct proto_err	 e;
	uint64_t		 format;
	cJSON			*obj;
	int			 r;

	if ((obj = proto_parse(line, len, &e)) == NULL) {
		xasprintf(why, "not a dump header: %s", e.msg);
		return (-1);
	}
	r = proto_get_u64(obj, "dump", 1, &format, &e);
	cJSON_Delete(obj);
	if (r != 1)
		xasprintf(why, "not a dump header ({\"dump\":%d,...}): %s",
		    LOAD_DUMP_FORMAT, e.msg);
	else if (format > LOAD_DUMP_FORMAT)
		xasprintf(why, "the dump has format version %" PRIu64 ", "
		    "newer than this metactl reads (%d): load it with a "
		    "newer metactl", format, LOAD_DUMP_FORMAT);
	else if (format != LOAD_DUMP_FORMAT)
		xasprintf(why, "unknown dump format version %" PRIu64,
		    format);
	else
		return (0);
	return (-1);
}

/* Checks and queues one line; a full batch is sent first. */
static enum cmd_status
cmd_load_line(struct load *l, char *line, size_t len, char **cause)
{
	struct load_put	 p;
	enum cmd_status	 s;
	size_t		 i, cost;
	char		*why = NULL, *msg;
	int		 truncated = len == 0 || line[len - 1] != '\n';

	if (!truncated)
		line[--len] = '\0';
	if (len > LOAD_LINE_MAX_BYTES)
		xasprintf(&why, "the line is %zu bytes, over metactl's limit "
		    "of %d", len, LOAD_LINE_MAX_BYTES);
	else if (l->line == 1)
		cmd_load_header(line, len, &why);
	else if (cmd_load_parse(l, line, len, &p, &why) == 0) {
		cost = p.len + (l->if_absent ? 2 * (strlen(p.key) +
		    LOAD_KEY_OVERHEAD) : 0);
		for (i = 0; i < l->nputs &&
		    strcmp(l->puts[i].key, p.key) != 0; i++)
			;
		/* A key twice in one txn is refused: send the first. */
		if ((i < l->nputs || l->nputs == l->max_puts ||
		    l->bytes + cost > LOAD_TXN_BYTES) && l->nputs > 0 &&
		    (s = cmd_load_flush(l, cause)) != CMD_OK) {
			free(p.key);
			return (s);
		}
		p.off = l->ops.len;
		buf_add(&l->ops, l->one.data, l->one.len);
		l->puts[l->nputs++] = p;
		l->bytes += cost;
		return (CMD_OK);
	}
	if (why == NULL)
		return (CMD_OK);	/* a good header */
	if (truncated && l->line > 1 && len <= LOAD_LINE_MAX_BYTES) {
		free(why);
		xasprintf(&why, "the input ends inside it (truncated)");
	}
	xasprintf(&msg, "line %lu: %s", l->line, why);
	cmd_load_stopped(l, l->nputs > 0 ? l->puts[0].line : l->line, msg,
	    cause);
	free(msg);
	free(why);
	return (report_input(l->ctx));
}

/* "loading: 42%, 0:12 left: 1234 keys written, line 1235". */
static void
cmd_load_progress(struct load *l)
{
	char	 eta[64];

	if (!progress_due(&l->progress))
		return;
	if (l->size == 0) {
		progress_show(&l->progress, "loading: %" PRIu64 " keys "
		    "written, line %lu", l->written, l->line);
		return;
	}
	progress_eta(&l->progress, l->read, l->size, eta, sizeof eta);
	progress_show(&l->progress, "loading: %s: %" PRIu64 " keys written, "
	    "line %lu", eta, l->written, l->line);
}

static enum cmd_status
cmd_load_run(struct load *l, FILE *f, char **cause)
{
	enum cmd_status	 s = CMD_OK;
	char		*line = NULL;
	size_t		 cap = 0;
	ssize_t		 n;

	while ((n = getline(&line, &cap, f)) != -1) {
		l->line++;
		l->read += (uint64_t)n;
		if ((s = cmd_load_line(l, line, (size_t)n, cause)) != CMD_OK)
			break;
		cmd_load_progress(l);
	}
	free(line);
	if (s == CMD_OK && ferror(f)) {
		xasprintf(cause, "cannot read %s: %s", l->name,
		    strerror(errno));
		return (report_input(l->ctx));
	}
	if (s == CMD_OK && l->line == 0) {
		xasprintf(cause, "%s: empty input, not a dump", l->name);
		return (report_input(l->ctx));
	}
	if (s == CMD_OK)
		s = cmd_load_flush(l, cause);
	return (s);
}

static void
cmd_load_print(struct load *l)
{
	if (l->ctx->mode == OUTPUT_JSON)
		printf("{\"ok\":true,\"written\":%" PRIu64 ",\"skipped\":%"
		    PRIu64 "}\n", l->written, l->skipped);
	else
		printf("%" PRIu64 "\n", l->written);
}

static enum cmd_status
cmd_load_exec(struct cmd_ctx *ctx, char **cause)
{
	struct load	 l;
	struct stat	 st;
	const char	*file = ctx->args->argc > 0 ? ctx->args->argv[0] : "-";
	enum cmd_status	 s;
	FILE		*f;

	memset(&l, 0, sizeof l);
	l.ctx = ctx;
	l.if_absent = args_has(ctx->args, "if-absent");
	l.max_puts = l.if_absent ? TXN_MAX_OPS / 2 : TXN_MAX_OPS;
	buf_init(&l.ops);
	buf_init(&l.one);
	if (strcmp(file, "-") == 0) {
		if (ctx->stdin_script) {
			xasprintf(cause, "load: stdin is the REPL's script "
			    "here: name a FILE");
			return (CMD_USAGE);
		}
		f = stdin;
		l.name = "stdin";
	} else if ((f = fopen(file, "re")) == NULL) {
		xasprintf(cause, "cannot open %s: %s", file, strerror(errno));
		return (report_input(ctx));
	} else
		l.name = file;
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0)
		l.size = (uint64_t)st.st_size;	/* for the percent done */
	progress_start(&l.progress, ctx);
	s = cmd_load_run(&l, f, cause);
	progress_end(&l.progress);
	if (s == CMD_OK)
		cmd_load_print(&l);
	cmd_load_clear(&l);
	buf_free(&l.ops);
	buf_free(&l.one);
	if (f != stdin)
		fclose(f);
	return (s);
}
