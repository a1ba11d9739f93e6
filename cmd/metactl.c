/*
 * metactl: the command-line client of metad.
 *
 *	metactl [-s SOCKET] [-o text|json] [--timeout DURATION] COMMAND [ARGS]
 *
 * main() parses the global options up to the command, runs it (cmd_run())
 * and is the only place that decides the exit status.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits.h"
#include "log.h"
#include "metactl.h"

static void
metactl_usage(FILE *f)
{
	fprintf(f, "usage: metactl [-s SOCKET] [-o text|json] "
	    "[--timeout DURATION] COMMAND [ARGS]\n"
	    "       (metactl --help lists the commands)\n");
}

/*
 * The options before the command.  *first is the index of the command, or
 * -1 when there is nothing left to do (--help, --version).
 */
static enum cmd_status
metactl_globals(struct cmd_ctx *ctx, int argc, char **argv, int *first,
    char **cause)
{
	enum cmd_status	 s;
	int		 ch, idx;

	*first = -1;
	opterr = 0;
	for (;;) {
		idx = -1;
		ch = getopt_long(argc, argv, "+:" CMD_GLOBAL_OPTSTRING,
		    cmd_global_longopts, &idx);
		if (ch == -1)
			break;
		if (ch == '?' || ch == ':') {
			args_bad_option(NULL, ch, argc, argv, cause);
			return (CMD_USAGE);
		}
		if (ch == 'h') {
			cmd_print_help(stdout);
			return (CMD_OK);
		}
		if (idx >= 0 && strcmp(cmd_global_longopts[idx].name,
		    "version") == 0) {
			printf("metactl %s (protocol %d)\n", METAD_VERSION,
			    METAD_PROTOCOL);
			return (CMD_OK);
		}
		for (idx = idx < 0 ? 0 : idx; ch != 0 &&
		    cmd_global_longopts[idx].val != ch; idx++)
			;	/* a short option: find its long name */
		s = cmd_global_option(ctx, cmd_global_longopts[idx].name,
		    optarg, cause);
		if (s != CMD_OK)
			return (s);
	}
	/* XXX the REPL becomes the default on a terminal (SPEC 7). */
	if (optind >= argc) {
		xasprintf(cause, "no command given");
		return (CMD_USAGE);
	}
	*first = optind;
	return (CMD_OK);
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
	if (cause != NULL)
		fprintf(stderr, "metactl: %s\n", cause);
	if (s == CMD_USAGE) {
		if (ctx->entry != NULL)
			cmd_print_usage(stderr, ctx->entry);
		else
			metactl_usage(stderr);
	}
	free(cause);
	cmd_ctx_free(ctx);
	return (s);
}

int
main(int argc, char **argv)
{
	struct cmd_ctx	 ctx;
	enum cmd_status	 s;
	char		*cause = NULL;
	int		 first;

	log_init("metactl", LOG_LEVEL_WARN);
	cmd_ctx_init(&ctx);
	s = metactl_globals(&ctx, argc, argv, &first, &cause);
	if (s == CMD_OK && first != -1)
		s = cmd_run(&ctx, argc - first, argv + first, &cause);
	return ((int)metactl_finish(&ctx, s, cause));
}
