/*
 * repl: metactl's interactive shell, and the runner of scripts of metactl
 * commands (metactl repl < script).  See repl.h.
 *
 * Exit status: on a terminal, 0 (every error was printed as it happened);
 * otherwise 0 when every line succeeded, else the status of the last line
 * that failed.  A command stopped by SIGINT (a watch, in a script) ends
 * the script with 130 at once.  In a script every message of a line
 * starts with its number: "metactl: line 3: k: not found".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "repl.h"
#include "shlex.h"

static enum cmd_status	repl_exec(struct cmd_ctx *, char **);

const struct cmd_entry cmd_repl_entry = {
	.name = "repl",
	.optstring = "",
	.args_min = 0,
	.args_max = 0,
	.usage = "",
	.help = "the interactive shell (the default on a terminal without a "
	    "command)",
	.details =
	    "Runs commands line by line with the syntax of the command line, "
	    "over one\nconnection (reopened when metad restarts; a request "
	    "that failed is never\nsent again).  Global options may start a "
	    "line (-o json get k) and apply\nto it alone.  Words split as in "
	    "sh: 'single quotes', \"double quotes\" (in\nwhich \\\" and "
	    "\\\\ escape), a backslash quotes the next character, and #\n"
	    "starts a comment.  quit, exit or Ctrl-D leave.\n"
	    "On a terminal: GNU readline (\"metactl\" in inputrc); Tab "
	    "completes commands,\noptions and keys (asking metad); Ctrl-C "
	    "clears the line, or stops the running\ncommand (watch, wait, or "
	    "one metad is slow to answer); the history is in\n"
	    "$XDG_STATE_HOME/metactl/history (default "
	    "~/.local/state/metactl/history).\n"
	    "Otherwise (metactl repl < script): no prompt, lines of at most 1 "
	    "MiB, each\nmessage starting with \"line N:\", and stdin is the "
	    "script, so put takes\n--file FILE, not -.\n"
	    "Exit status: on a terminal 0; otherwise 0 when every line "
	    "succeeded, else\nthat of the last line that failed (130 at once "
	    "when Ctrl-C stops a command).\n",
	.exec = repl_exec
};

static int
repl_same_socket(const char *a, const char *b)
{
	if (a == NULL || b == NULL)
		return (a == b);
	return (strcmp(a, b) == 0);
}

/* Back to the session's options: a line's own were for that line. */
static void
repl_restore(struct repl *r)
{
	struct cmd_ctx	*ctx = r->ctx;

	if (!repl_same_socket(ctx->socket, r->socket))
		client_close(&ctx->client);
	ctx->socket = r->socket;
	ctx->timeout_ms = r->timeout_ms;
	ctx->client.timeout_ms = r->timeout_ms;
	ctx->mode = r->mode;
}

/* Prints what a line left to say; remembers and returns its status. */
static enum cmd_status
repl_report(struct repl *r, enum cmd_status s, char *cause)
{
	char	*msg = NULL;

	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (cause == NULL)
			xasprintf(&cause, "cannot write the output: %s",
			    strerror(errno));
		s = CMD_ERROR;
		r->quit = 1;
	}
	if (s == CMD_INTERRUPTED && r->interactive) {
		putchar('\n');		/* after the terminal's ^C */
		fflush(stdout);
	}
	if (cause != NULL && r->lineno > 0) {
		xasprintf(&msg, "line %lu: %s", r->lineno, cause);
		report_failure(r->ctx, s, msg);
		free(msg);
	} else
		report_failure(r->ctx, s, cause);
	if (s == CMD_USAGE && cmd_print_usage_ctx(stderr, r->ctx) != 0)
		fprintf(stderr, "(help lists the commands)\n");
	free(cause);
	if (s != CMD_OK)
		r->failed = s;
	if (s == CMD_INTERRUPTED && !r->interactive)
		r->quit = 1;
	return (s);
}

/* A line that is no command: in a script, the message names the line. */
static void
repl_syntax_error(struct repl *r, char *cause)
{
	char	*msg = NULL;

	if (r->lineno > 0)
		xasprintf(&msg, "line %lu: %s", r->lineno, cause);
	report_failure(r->ctx, CMD_USAGE, msg != NULL ? msg : cause);
	free(msg);
	free(cause);
	r->failed = CMD_USAGE;
}

/* The words of a line, as argv of "metactl": global options, command. */
static enum cmd_status
repl_words(struct repl *r, struct shlex *sh, char **cause)
{
	static char	 name[] = "metactl";
	struct cmd_ctx	*ctx = r->ctx;
	enum cmd_status	 s;
	char		**argv;
	int		 argc = sh->nwords + 1, first;

	ctx->entry = NULL;
	ctx->family = NULL;
	argv = xcalloc((size_t)argc + 1, sizeof *argv);
	argv[0] = name;
	memcpy(argv + 1, sh->words, (size_t)sh->nwords * sizeof *argv);
	s = cmd_parse_globals(ctx, argc, argv, &first, cause);
	if (s == CMD_OK && first != -1) {
		if (first == argc) {
			xasprintf(cause, "no command given");
			s = CMD_USAGE;
		} else {
			if (client_stale(&ctx->client))
				client_close(&ctx->client);
			s = cmd_run(ctx, argc - first, argv + first, cause);
		}
	}
	free(argv);
	return (s);
}

/*
 * Runs one line: a command, quit, or nothing (blank, comment).  Returns
 * its status.
 */
enum cmd_status
repl_line(struct repl *r, const char *line, size_t len)
{
	struct shlex	 sh;
	enum cmd_status	 s;
	char		*cause = NULL;

	if (len > REPL_LINE_MAX_BYTES) {
		xasprintf(&cause, "the line is longer than %d bytes",
		    REPL_LINE_MAX_BYTES);
		repl_syntax_error(r, cause);
		return (CMD_USAGE);
	}
	if (shlex_split(&sh, line, len, 0, &cause) != 0) {
		repl_syntax_error(r, cause);
		return (CMD_USAGE);
	}
	s = CMD_OK;
	if (sh.nwords == 0) {
		shlex_free(&sh);
		return (s);
	}
	if (strcmp(sh.words[0], "quit") == 0 ||
	    strcmp(sh.words[0], "exit") == 0) {
		if (sh.nwords == 1)
			r->quit = 1;
		else {
			xasprintf(&cause, "%s takes no arguments",
			    sh.words[0]);
			repl_syntax_error(r, cause);
			s = CMD_USAGE;
		}
		shlex_free(&sh);
		return (s);
	}
	output_error_lineno = r->lineno;	/* 0 on a terminal */
	s = repl_words(r, &sh, &cause);
	output_error_lineno = 0;
	s = repl_report(r, s, cause);
	repl_restore(r);	/* before the words it points into go */
	shlex_free(&sh);
	return (s);
}

/*
 * The next line of f, without its newline, in b; -1 at the end.  A line
 * longer than the limit is read to its end and kept one byte too long.
 */
static int
repl_read_line(FILE *f, struct buf *b)
{
	int	 c;

	buf_reset(b);
	while ((c = getc(f)) != EOF && c != '\n') {
		if (b->len <= REPL_LINE_MAX_BYTES)
			buf_addc(b, (char)c);
	}
	buf_cstr(b);
	return (c == EOF && b->len == 0 ? -1 : 0);
}

static enum cmd_status
repl_script(struct repl *r, char **cause)
{
	struct buf	 b;
	char		*msg;

	buf_init(&b);
	while (!r->quit && repl_read_line(stdin, &b) == 0) {
		r->lineno++;
		if (memchr(b.data, '\0', b.len) != NULL) {
			xasprintf(&msg, "the line holds a NUL byte");
			repl_syntax_error(r, msg);
		} else
			repl_line(r, b.data, b.len);
	}
	buf_free(&b);
	if (ferror(stdin)) {
		xasprintf(cause, "cannot read the commands on stdin: %s",
		    strerror(errno));
		return (CMD_ERROR);
	}
	return (r->failed);
}

static enum cmd_status
repl_exec(struct cmd_ctx *ctx, char **cause)
{
	struct repl	 r;
	enum cmd_status	 s;

	if (ctx->in_repl) {
		xasprintf(cause, "repl: already in the REPL");
		return (CMD_USAGE);
	}
	memset(&r, 0, sizeof r);
	r.ctx = ctx;
	r.socket = ctx->socket;
	r.timeout_ms = ctx->timeout_ms;
	r.mode = ctx->mode;
	r.interactive = isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);
	ctx->in_repl = 1;
	ctx->stdin_script = !r.interactive;
	if (r.interactive)
		s = repl_tty_run(&r);
	else
		s = repl_script(&r, cause);
	ctx->in_repl = 0;
	ctx->stdin_script = 0;
	ctx->entry = &cmd_repl_entry;
	ctx->reported = 1;
	free(r.history);
	return (s);
}
