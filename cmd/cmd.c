/*
 * The command table, running one command, its usage and help (see
 * metactl.h); the request helpers every command uses are cmd_call.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "metactl.h"
#include "sockpath.h"

const struct cmd_entry *cmd_table[] = {
	&cmd_get_entry,
	&cmd_put_entry,
	&cmd_cas_entry,
	&cmd_del_entry,
	&cmd_ls_entry,
	&cmd_history_entry,
	&cmd_watch_entry,
	&cmd_wait_entry,
	&cmd_txn_entry,
	&cmd_epoch_get_entry,
	&cmd_epoch_bump_entry,
	&cmd_lease_grant_entry,
	&cmd_lease_keepalive_entry,
	&cmd_lease_revoke_entry,
	&cmd_lease_info_entry,
	&cmd_lease_ls_entry,
	&cmd_lock_entry,
	&cmd_compact_entry,
	&cmd_status_entry,
	&cmd_metrics_entry,
	&cmd_ping_entry,
	&cmd_dump_entry,
	&cmd_load_entry,
	&cmd_snapshot_save_entry,
	&cmd_snapshot_status_entry,
	&cmd_repl_entry,
	&cmd_help_entry,
	NULL
};

const struct option cmd_global_longopts[] = {
	{ "socket",	required_argument,	NULL, 's' },
	{ "output",	required_argument,	NULL, 'o' },
	{ "timeout",	required_argument,	NULL, 0 },
	{ "cacert",	required_argument,	NULL, 0 },
	{ "cert",	required_argument,	NULL, 0 },
	{ "key",	required_argument,	NULL, 0 },
	{ "help",	no_argument,		NULL, 'h' },
	{ "version",	no_argument,		NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

#define CMD_GLOBAL_USAGE \
	"[-s SOCKET] [-o text|json] [--timeout DURATION]"

void
cmd_ctx_init(struct cmd_ctx *ctx)
{
	memset(ctx, 0, sizeof *ctx);
	ctx->timeout_ms = METACTL_TIMEOUT_DEFAULT_MS;
	ctx->mode = OUTPUT_TEXT;
	client_init(&ctx->client);
}

void
cmd_ctx_free(struct cmd_ctx *ctx)
{
	client_close(&ctx->client);
	args_free(ctx->args);
	ctx->args = NULL;
}

/* --cacert, --cert, --key: for a tls:// daemon, from the next connection. */
static void
cmd_tls_option(struct cmd_ctx *ctx, const char *name, const char *value)
{
	const char	**f = strcmp(name, "cacert") == 0 ? &ctx->tls_cacert :
	    strcmp(name, "cert") == 0 ? &ctx->tls_cert : &ctx->tls_key;

	if (*f == NULL || strcmp(*f, value) != 0)
		client_close(&ctx->client);
	*f = value;
}

/* Applies one global option; "help" and "version" are the caller's. */
enum cmd_status
cmd_global_option(struct cmd_ctx *ctx, const char *name, const char *value,
    char **cause)
{
	if (strcmp(name, "socket") == 0) {
		if (strlen(value) >= sockpath_max()) {
			xasprintf(cause, "socket path too long: %s (the limit "
			    "is %zu bytes)", value, sockpath_max() - 1);
			return (CMD_USAGE);
		}
		if (ctx->socket == NULL || strcmp(ctx->socket, value) != 0)
			client_close(&ctx->client);
		ctx->socket = value;
	} else if (strcmp(name, "output") == 0) {
		if (output_mode_parse(value, &ctx->mode) != 0) {
			xasprintf(cause, "invalid output format: \"%s\" "
			    "(expected text or json)", value);
			return (CMD_USAGE);
		}
	} else if (strcmp(name, "timeout") == 0) {
		if (args_duration(value, &ctx->timeout_ms, cause) != CMD_OK)
			return (CMD_USAGE);
		ctx->client.timeout_ms = ctx->timeout_ms;
	} else if (strcmp(name, "cacert") == 0 || strcmp(name, "cert") == 0 ||
	    strcmp(name, "key") == 0)
		cmd_tls_option(ctx, name, value);
	return (CMD_OK);
}

/*
 * After a usage error in parsing argv: the -o that argv gives last (before
 * any "--"), whether or not parsing reached it, so that the error is
 * reported in the format asked for.
 */
static void
cmd_scan_output(struct cmd_ctx *ctx, int argc, char **argv)
{
	const char	*v;
	int		 i;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		v = NULL;
		if ((strcmp(argv[i], "-o") == 0 ||
		    strcmp(argv[i], "--output") == 0) && i + 1 < argc)
			v = argv[++i];
		else if (strncmp(argv[i], "--output=", 9) == 0)
			v = argv[i] + 9;
		else if (strncmp(argv[i], "-o", 2) == 0)
			v = argv[i] + 2;
		if (v != NULL)
			output_mode_parse(v, &ctx->mode);
	}
}

/*
 * The global options before the command in argv (argv[0] is a program
 * name).  *first is the index of the command (argc when there is none), or
 * -1 when there is nothing left to do (--help, --version).
 */
enum cmd_status
cmd_parse_globals(struct cmd_ctx *ctx, int argc, char **argv, int *first,
    char **cause)
{
	enum cmd_status	 s;
	int		 ch, idx;

	*first = -1;
	optind = 0;	/* GNU: start afresh (the REPL parses many lines) */
	opterr = 0;
	for (;;) {
		idx = -1;
		ch = getopt_long(argc, argv, "+:" CMD_GLOBAL_OPTSTRING,
		    cmd_global_longopts, &idx);
		if (ch == -1)
			break;
		if (ch == '?' || ch == ':') {
			args_bad_option(NULL, ch, argc, argv, cause);
			cmd_scan_output(ctx, argc, argv);
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
		if (s != CMD_OK) {
			cmd_scan_output(ctx, argc, argv);
			return (s);
		}
	}
	*first = optind;
	return (CMD_OK);
}

/* 1 if argv starts with the entry's name (one or two words). */
static int
cmd_matches(const struct cmd_entry *e, int argc, char **argv, int *nwords)
{
	const char	*sp;
	size_t		 len;

	if ((sp = strchr(e->name, ' ')) == NULL) {
		*nwords = 1;
		return (strcmp(argv[0], e->name) == 0 ||
		    (e->alias != NULL && strcmp(argv[0], e->alias) == 0));
	}
	len = (size_t)(sp - e->name);
	*nwords = 2;
	return (argc >= 2 && strncmp(argv[0], e->name, len) == 0 &&
	    argv[0][len] == '\0' && strcmp(argv[1], sp + 1) == 0);
}

/* 1 if e is one of the family's commands: "epoch get" of "epoch". */
static int
cmd_in_family(const struct cmd_entry *e, const char *family)
{
	size_t	 len = strlen(family);

	return (strncmp(e->name, family, len) == 0 && e->name[len] == ' ');
}

/* 1 if word is the first word of two-word commands ("epoch"). */
static int
cmd_is_family(const char *word)
{
	const struct cmd_entry	**e;

	for (e = cmd_table; *e != NULL; e++) {
		if (cmd_in_family(*e, word))
			return (1);
	}
	return (0);
}

/* "get or bump": the second words of a family's commands. */
static void
cmd_family_list(struct buf *b, const char *family)
{
	const struct cmd_entry	**e, **last = NULL;
	int			 n = 0;

	for (e = cmd_table; *e != NULL; e++) {
		if (cmd_in_family(*e, family))
			last = e;
	}
	for (e = cmd_table; *e != NULL; e++) {
		if (!cmd_in_family(*e, family))
			continue;
		if (n++ > 0)
			buf_addstr(b, e == last ? " or " : ", ");
		buf_addstr(b, (*e)->name + strlen(family) + 1);
	}
}

/*
 * The entry argv names.  When none does, the cause says so and names the
 * closest commands; *family is then argv[0] if it starts two-word
 * commands (epoch, lease), whose usages the caller lists.
 */
static const struct cmd_entry *
cmd_find(int argc, char **argv, int *nwords, const char **family,
    char **cause)
{
	const struct cmd_entry	**e;
	struct buf		 b;

	*family = NULL;
	for (e = cmd_table; *e != NULL; e++) {
		if (cmd_matches(*e, argc, argv, nwords))
			return (*e);
	}
	buf_init(&b);
	if (cmd_is_family(argv[0])) {
		*family = argv[0];
		if (argc < 2 || argv[1][0] == '-') {
			buf_printf(&b, "%s needs a subcommand: ", argv[0]);
			cmd_family_list(&b, argv[0]);
		} else {
			buf_printf(&b, "unknown command: %s %s", argv[0],
			    argv[1]);
			suggest_command(&b, argv[1], argv[0]);
		}
	} else {
		buf_printf(&b, "unknown command: %s", argv[0]);
		suggest_command(&b, argv[0], NULL);
	}
	*cause = xstrdup(buf_cstr(&b));
	buf_free(&b);
	return (NULL);
}

static enum cmd_status
cmd_apply_globals(struct cmd_ctx *ctx, int *done, char **cause)
{
	const struct args	*a = ctx->args;
	size_t			 i;
	enum cmd_status		 s;

	*done = 0;
	for (i = 0; i < a->nglobals; i++) {
		if (strcmp(a->globals[i].name, "help") == 0) {
			cmd_print_command_help(stdout, ctx->entry);
			*done = 1;
		} else if (strcmp(a->globals[i].name, "version") == 0) {
			printf("metactl %s (protocol %d)\n", METAD_VERSION,
			    METAD_PROTOCOL);
			*done = 1;
		} else if ((s = cmd_global_option(ctx, a->globals[i].name,
		    a->globals[i].value, cause)) != CMD_OK)
			return (s);
	}
	return (CMD_OK);
}

/*
 * Runs the command in argv.  On CMD_USAGE, ctx->entry is the command whose
 * usage to show, or NULL when the command itself was not found.
 */
enum cmd_status
cmd_run(struct cmd_ctx *ctx, int argc, char **argv, char **cause)
{
	enum cmd_status	 s;
	int		 nwords, done;

	ctx->entry = NULL;
	ctx->family = NULL;
	args_free(ctx->args);
	ctx->args = NULL;
	if (argc < 1) {
		xasprintf(cause, "no command given");
		return (CMD_USAGE);
	}
	ctx->fail_code = NULL;
	ctx->json_reported = 0;
	/* getopt wants argv[0] to be a name: the command's last word. */
	if ((ctx->entry = cmd_find(argc, argv, &nwords, &ctx->family,
	    cause)) == NULL ||
	    (ctx->args = args_parse(ctx->entry, argc - nwords + 1,
	    argv + nwords - 1, cause)) == NULL) {
		cmd_scan_output(ctx, argc, argv);
		return (CMD_USAGE);
	}
	if ((s = cmd_apply_globals(ctx, &done, cause)) != CMD_OK || done) {
		if (s != CMD_OK)
			cmd_scan_output(ctx, argc, argv);
		return (s);
	}
	s = ctx->entry->exec(ctx, cause);
	args_free(ctx->args);
	ctx->args = NULL;
	return (s);
}

void
cmd_print_usage(FILE *f, const struct cmd_entry *e)
{
	fprintf(f, "usage: metactl %s %s%s%s\n", CMD_GLOBAL_USAGE, e->name,
	    *e->usage != '\0' ? " " : "", e->usage);
}

/*
 * After a usage error: the usage of the command run, or of each command
 * of the family named (metactl epoch); -1 when there is neither.
 */
int
cmd_print_usage_ctx(FILE *f, const struct cmd_ctx *ctx)
{
	const struct cmd_entry	**e;
	int			 n = 0;

	if (ctx->entry != NULL) {
		cmd_print_usage(f, ctx->entry);
		return (0);
	}
	if (ctx->family == NULL)
		return (-1);
	for (e = cmd_table; *e != NULL; e++) {
		if (cmd_in_family(*e, ctx->family))
			fprintf(f, "%s metactl %s%s%s\n", n++ == 0 ? "usage:" :
			    "      ", (*e)->name, *(*e)->usage != '\0' ? " " :
			    "", (*e)->usage);
	}
	return (0);
}

/* "help COMMAND" and "COMMAND --help": usage, summary, details. */
void
cmd_print_command_help(FILE *f, const struct cmd_entry *e)
{
	cmd_print_usage(f, e);
	fprintf(f, "%s\n", e->help);
	if (e->details != NULL)
		fprintf(f, "\n%s", e->details);
}

void
cmd_print_help(FILE *f)
{
	const struct cmd_entry	**e;
	char			 t[32];

	format_ms(METACTL_TIMEOUT_DEFAULT_MS, t, sizeof t);
	fprintf(f, "usage: metactl %s COMMAND [ARGS]\n\ncommands:\n",
	    CMD_GLOBAL_USAGE);
	for (e = cmd_table; *e != NULL; e++)
		fprintf(f, "  %s%s%s\n      %s\n", (*e)->name,
		    *(*e)->usage != '\0' ? " " : "", (*e)->usage, (*e)->help);
	fprintf(f, "\noptions (before or after the command):\n"
	    "  -s, --socket PATH    metad's socket (default: $METACTL_SOCKET,"
	    " $METAD_SOCKET,\n"
	    "                       $XDG_RUNTIME_DIR/metad.sock, "
	    "/tmp/metad-$UID/metad.sock)\n"
	    "                       or a TLS listener: tls://HOST:PORT\n"
	    "  --cacert FILE        tls://: the CA of metad's certificate "
	    "($METACTL_CACERT)\n"
	    "  --cert FILE          tls://: this client's certificate "
	    "($METACTL_CERT)\n"
	    "  --key FILE           tls://: its private key ($METACTL_KEY)\n"
	    "  -o, --output FORMAT  text (default) or json\n"
	    "  --timeout DURATION   for connecting and each answer, e.g. "
	    "500ms, 2s, 1m\n"
	    "                       (default %s, 0: no limit)\n"
	    "  -h, --help           this help, or a command's usage and details"
	    "\n"
	    "  --version            metactl's version\n\n"
	    "exit status: 0 success, 1 condition does not hold (e.g. key not "
	    "found),\n2 usage error, 3 failed precondition or fenced, 4 metad "
	    "unreachable or\nno answer in time, 5 any other error, 130 watch "
	    "or wait ended by Ctrl-C\n", t);
}

static enum cmd_status	cmd_help_exec(struct cmd_ctx *, char **);

const struct cmd_entry cmd_help_entry = {
	.name = "help",
	.optstring = "",
	.args_min = 0,
	.args_max = 2,
	.usage = "[COMMAND]",
	.help = "list the commands, or show a command's usage and details",
	.exec = cmd_help_exec
};

/* "help epoch" shows every epoch command. */
static enum cmd_status
cmd_help_exec(struct cmd_ctx *ctx, char **cause)
{
	const struct cmd_entry	**e, *found;
	const char		*family;
	struct args		*a = ctx->args;
	int			 nwords, n = 0;

	if (a->argc == 0) {
		cmd_print_help(stdout);
		return (CMD_OK);
	}
	for (e = cmd_table; a->argc == 1 && *e != NULL; e++) {
		if (cmd_in_family(*e, a->argv[0])) {
			if (n++ > 0)
				putchar('\n');
			cmd_print_command_help(stdout, *e);
		}
	}
	if (n > 0)
		return (CMD_OK);
	if ((found = cmd_find(a->argc, a->argv, &nwords, &family,
	    cause)) == NULL)
		return (CMD_USAGE);
	cmd_print_command_help(stdout, found);
	return (CMD_OK);
}
