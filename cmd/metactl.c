/*
 * metactl: the command-line client of metad.
 *
 *	metactl [-s SOCKET] [-o text|json] [--timeout DURATION] COMMAND [ARGS]
 *
 * main() parses the global options up to the command, runs it (cmd_run())
 * and is the only place that decides the exit status.  Without a command,
 * on a terminal, the command is "repl" (repl.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "metactl.h"

static void
metactl_usage(FILE *f)
{
	fprintf(f, "usage: metactl [-s SOCKET] [-o text|json] "
	    "[--timeout DURATION] COMMAND [ARGS]\n"
	    "       (metactl --help lists the commands)\n");
}

static enum cmd_status
metactl_finish(struct cmd_ctx *ctx, enum cmd_status s, char *cause)
{
	if (fflush(stdout) != 0 || ferror(stdout)) {
		if (cause == NULL)
			xasprintf(&cause, "cannot write the output: %s",
			    strerror(errno));
		if (s == CMD_OK || s == CMD_FALSE)
			s = CMD_ERROR;
	}
	report_failure(ctx, s, cause);
	if (s == CMD_USAGE && !ctx->reported &&
	    cmd_print_usage_ctx(stderr, ctx) != 0)
		metactl_usage(stderr);
	free(cause);
	cmd_ctx_free(ctx);
	return (s);
}

int
main(int argc, char **argv)
{
	struct cmd_ctx	 ctx;
	enum cmd_status	 s;
	static char	 repl_name[] = "repl";
	char		*repl_argv[] = { repl_name, NULL };
	char		*cause = NULL;
	int		 first;

	intr_startup();		/* before anything changes a signal */
	log_init("metactl", LOG_LEVEL_WARN);
	cmd_ctx_init(&ctx);
	s = cmd_parse_globals(&ctx, argc, argv, &first, &cause);
	if (s == CMD_OK && first != -1) {
		if (first < argc)
			s = cmd_run(&ctx, argc - first, argv + first, &cause);
		else if (isatty(STDIN_FILENO))
			s = cmd_run(&ctx, 1, repl_argv, &cause);
		else {
			xasprintf(&cause, "no command given");
			s = CMD_USAGE;
		}
	}
	return ((int)metactl_finish(&ctx, s, cause));
}
