/*
 * txn [--fence KEY:EPOCH]: one atomic transaction read from stdin.
 *
 * stdin is either the JSON request object (it starts with '{'; "op":"txn"
 * may be left out, "id" is replaced by metactl's own), e.g.
 *	{"if":[{"key":"k","version":2}],
 *	 "then":[{"op":"put","key":"k","value":"v3"}],"else":[{"op":"get","key":"k"}]}
 * or the etcdctl-style text form (txn_text.c).  --fence adds the request's
 * "fence" (refused when the JSON already has one).  Typed on a terminal,
 * it is read after a one-line hint, with a "txn> " prompt a line.
 *
 * Text output: SUCCEEDED or FAILED, then one line per result of the branch
 * that ran, keys and values as tokens (output.h):
 *	put KEY vVERSION
 *	del KEY deleted		del KEY (not found)
 *	get KEY VALUE		get KEY (not found)
 * -o json prints the daemon's response.  Exit status: 0 when the compares
 * held, 1 when they did not (the else branch ran), 3 when fenced.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metactl.h"
#include "proto.h"

/* Typed on a terminal (the REPL's, or metactl txn's). */
#define TXN_PROMPT	"txn> "
#define TXN_HINT	"(txn: compares, a blank line, then-ops, a blank " \
			"line, else-ops; Ctrl-D on a new line runs it)"

static enum cmd_status	cmd_txn_exec(struct cmd_ctx *, char **);

static const struct option cmd_txn_longopts[] = {
	{ "fence",	required_argument,	NULL, 0 },
	{ "idem",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_txn_entry = {
	.name = "txn",
	.optstring = "",
	.longopts = cmd_txn_longopts,
	.args_min = 0,
	.args_max = 0,
	.usage = "[--fence KEY:EPOCH] [--idem TOKEN] < TXN",
	.help = "run a transaction read from stdin (JSON or etcdctl-style "
	    "text)",
	.details =
	    "stdin starting with '{' is the JSON request: {\"if\":[compares],"
	    "\"then\":[ops],\n\"else\":[ops]} (metad-protocol(7); "
	    "\"op\":\"txn\" may be left out).\nOtherwise the text form, "
	    "three sections each ended by one blank line:\n"
	    "  version(\"k\") = 2            compares: TARGET(\"KEY\") OP "
	    "VALUE, TARGET one of\n"
	    "  value(\"owner\") = \"node a\"   version create_rev mod_rev value,"
	    " OP one of = != < >\n"
	    "\n"
	    "  put k v3                    then: put KEY VALUE, del KEY, get "
	    "KEY\n"
	    "\n"
	    "  get k                       else\n"
	    "A key or value with spaces is a JSON string (\"a b\"); b64:BASE64 "
	    "gives bytes;\n'#' starts a comment line.  Output: SUCCEEDED or "
	    "FAILED, then per result\n\"put KEY vVERSION\", \"del KEY deleted\","
	    " \"get KEY VALUE\" or \"get KEY (not found)\".\nExit status: 0 "
	    "succeeded, 1 compares failed, 3 fenced.\n",
	.exec = cmd_txn_exec
};

/* Waits for stdin; -1 when Ctrl-C (intr.c, in the REPL) stopped it. */
static int
cmd_txn_tty_wait(struct cmd_ctx *ctx)
{
	struct pollfd	 pfd;

	pfd.fd = STDIN_FILENO;
	pfd.events = POLLIN;
	for (;;) {
		if (ctx->client.intr != NULL && *ctx->client.intr)
			return (-1);
		if (ppoll(&pfd, 1, NULL, ctx->client.intr_mask) >= 0 ||
		    errno != EINTR)
			return (0);
	}
}

/*
 * The transaction typed on a terminal: a hint, then TXN_PROMPT on stderr
 * before each line, up to Ctrl-D (an empty read).  In the REPL Ctrl-C
 * gives up (intr.c); one-shot it ends metactl as usual.
 */
static enum cmd_status
cmd_txn_read_tty(struct cmd_ctx *ctx, struct buf *in, char **cause)
{
	ssize_t	 n;
	int	 at_start = 1;	/* of a line: show the prompt */

	fprintf(stderr, "%s\n", TXN_HINT);
	for (;;) {
		if (at_start)
			fputs(TXN_PROMPT, stderr);
		fflush(stderr);
		if (cmd_txn_tty_wait(ctx) != 0)
			return (CMD_INTERRUPTED);
		buf_reserve(in, 4096);
		if ((n = read(STDIN_FILENO, in->data + in->len, 4096)) == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xasprintf(cause, "cannot read stdin: %s",
			    strerror(errno));
			return (CMD_ERROR);
		}
		in->len += (size_t)n;
		at_start = in->data[in->len - 1] == '\n';
		if (in->len > METACTL_VALUE_MAX_BYTES) {
			xasprintf(cause, "the txn on stdin is larger than "
			    "metactl's limit of %d bytes",
			    METACTL_VALUE_MAX_BYTES);
			return (CMD_USAGE);
		}
	}
	fputc('\n', stderr);	/* Ctrl-D left the cursor after the prompt */
	return (CMD_OK);
}

/* The request object from stdin: JSON or the text form. */
static enum cmd_status
cmd_txn_input(struct cmd_ctx *ctx, cJSON **req, char **cause)
{
	struct buf		 in;
	struct proto_err	 e;
	size_t			 i;
	enum cmd_status		 s;

	buf_init(&in);
	if (!ctx->stdin_script && isatty(STDIN_FILENO))
		s = cmd_txn_read_tty(ctx, &in, cause);
	else
		s = cmd_read_stdin(ctx, &in, cause);
	if (s != CMD_OK) {
		buf_free(&in);
		return (s);
	}
	for (i = 0; i < in.len && strchr(" \t\r\n", in.data[i]) != NULL; i++)
		;
	if (i < in.len && in.data[i] == '{') {
		if ((*req = proto_parse(in.data, in.len, &e)) == NULL)
			xasprintf(cause, "txn on stdin: %s", e.msg);
	} else
		*req = txn_text_parse(in.data, in.len, cause);
	buf_free(&in);
	return (*req == NULL ? report_input(ctx) : CMD_OK);
}

/* The request line: req's members in order, our id, the fence. */
static enum cmd_status
cmd_txn_request(struct cmd_ctx *ctx, const cJSON *req,
    const struct cmd_cond *cond, struct buf *b, char **cause)
{
	const cJSON	*op = cJSON_GetObjectItemCaseSensitive(req, "op"), *c;
	struct jw	 w;
	struct buf	 v;

	if (op != NULL && (!cJSON_IsString(op) || strcmp(op->valuestring,
	    "txn") != 0)) {
		xasprintf(cause, "txn on stdin: \"op\" must be \"txn\" (or "
		    "left out)");
		return (report_input(ctx));
	}
	if (cond->fence_key != NULL &&
	    cJSON_GetObjectItemCaseSensitive(req, "fence") != NULL) {
		xasprintf(cause, "txn: give the fence in the JSON or as "
		    "--fence, not both");
		return (CMD_USAGE);
	}
	cmd_request_open(ctx, &w, b, "txn");
	buf_init(&v);
	for (c = req->child; c != NULL; c = c->next) {
		if (strcmp(c->string, "op") == 0 || strcmp(c->string,
		    "id") == 0)
			continue;
		buf_reset(&v);
		output_json_append(&v, c);
		jw_name(&w, c->string);
		jw_raw(&w, v.data, v.len);
	}
	buf_free(&v);
	cmd_cond_write(cond, &w);
	jw_obj_close(&w);
	return (CMD_OK);
}

/* The key of op i of the branch that ran, as a token. */
static void
cmd_txn_key(struct buf *b, const cJSON *branch, int i, const cJSON *kv)
{
	const cJSON	*key;

	key = cJSON_GetObjectItemCaseSensitive(kv, "key");
	if (!cJSON_IsString(key))
		key = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(branch, i), "key");
	if (cJSON_IsString(key))
		output_token(b, key->valuestring, strlen(key->valuestring));
	else
		buf_addstr(b, "?");
}

static void
cmd_txn_result(struct buf *b, const cJSON *r, const cJSON *branch, int i)
{
	const cJSON	*op, *kv;
	uint64_t	 version;

	op = cJSON_GetObjectItemCaseSensitive(r, "op");
	kv = cJSON_GetObjectItemCaseSensitive(r, "kv");
	if (!cJSON_IsString(op))
		op = cJSON_GetObjectItemCaseSensitive(
		    cJSON_GetArrayItem(branch, i), "op");
	if (!cJSON_IsString(op))
		return;
	if (strcmp(op->valuestring, "delete") == 0)
		buf_addstr(b, "del ");
	else
		buf_printf(b, "%s ", op->valuestring);
	cmd_txn_key(b, branch, i, kv);
	if (strcmp(op->valuestring, "put") == 0 && proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(kv, "version"), &version) == 0)
		buf_printf(b, " v%" PRIu64, version);
	else if (strcmp(op->valuestring, "delete") == 0)
		buf_addstr(b, cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r,
		    "deleted")) ? " deleted" : " (not found)");
	else if (strcmp(op->valuestring, "get") == 0) {
		buf_addc(b, ' ');
		if (!cJSON_IsObject(kv) || output_token_value(b, kv) != 0)
			buf_addstr(b, "(not found)");
	}
	buf_addc(b, '\n');
}

static void
cmd_txn_print(const cJSON *req, const cJSON *resp, int succeeded)
{
	const cJSON	*branch, *r;
	struct buf	 b;
	int		 i = 0;

	branch = cJSON_GetObjectItemCaseSensitive(req, succeeded ? "then" :
	    "else");
	buf_init(&b);
	buf_addstr(&b, succeeded ? "SUCCEEDED\n" : "FAILED\n");
	cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(resp,
	    "results"))
		cmd_txn_result(&b, r, branch, i++);
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
}

static enum cmd_status
cmd_txn_exec(struct cmd_ctx *ctx, char **cause)
{
	struct cmd_cond	 cond;
	struct buf	 b;
	cJSON		*req = NULL, *resp;
	const cJSON	*ok;
	enum cmd_status	 s;

	if ((s = cmd_cond_parse(ctx->args, &cond, cause)) != CMD_OK ||
	    (s = cmd_txn_input(ctx, &req, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	if ((s = cmd_txn_request(ctx, req, &cond, &b, cause)) == CMD_OK)
		s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s == CMD_OK) {
		ok = cJSON_GetObjectItemCaseSensitive(resp, "succeeded");
		if (!cJSON_IsBool(ok)) {
			xasprintf(cause, "metad's answer to txn has no "
			    "\"succeeded\"");
			s = CMD_ERROR;
		} else if (ctx->mode == OUTPUT_JSON)
			output_json(resp);
		else
			cmd_txn_print(req, resp, cJSON_IsTrue(ok));
		if (s == CMD_OK && !cJSON_IsTrue(ok))
			s = CMD_FALSE;
		cJSON_Delete(resp);
	}
	cJSON_Delete(req);
	return (s);
}
