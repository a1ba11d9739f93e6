/*
 * Per-command argument parsing: getopt_long over the command's options
 * followed by the global ones (so "metactl get k -o json" works; a command
 * option of the same name wins, e.g. a --version N).  Options and
 * positional arguments may be mixed; after "--" everything is positional,
 * so "metactl put k -- -v" stores "-v".
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "metactl.h"
#include "metad_limits.h"

static size_t
args_nlongopts(const struct option *lo)
{
	size_t	 n = 0;

	while (lo != NULL && lo[n].name != NULL)
		n++;
	return (n);
}

/* The command's long options, then the global ones, zero-terminated. */
static struct option *
args_merge(const struct cmd_entry *e, size_t *ncmd)
{
	struct option	*lo;
	size_t		 nglob;

	*ncmd = args_nlongopts(e->longopts);
	nglob = args_nlongopts(cmd_global_longopts);
	lo = xcalloc(*ncmd + nglob + 1, sizeof *lo);
	if (*ncmd > 0)
		memcpy(lo, e->longopts, *ncmd * sizeof *lo);
	memcpy(lo + *ncmd, cmd_global_longopts, nglob * sizeof *lo);
	return (lo);
}

static void
args_add(struct args_opt **v, size_t *n, const char *name, const char *val)
{
	*v = xrealloc(*v, (*n + 1) * sizeof **v);
	(*v)[*n].name = name;
	(*v)[*n].value = val;
	(*n)++;
}

/* Records option ch (longopts index idx, or -1 for a short option). */
static void
args_record(struct args *a, const struct cmd_entry *e,
    const struct option *lo, size_t ncmd, int ch, int idx, const char *val)
{
	size_t	 i;

	if (idx < 0) {
		for (i = 0; lo[i].name != NULL; i++) {
			if (lo[i].val != ch)
				continue;
			if (i >= ncmd || (e->optstring != NULL &&
			    strchr(e->optstring, ch) != NULL))
				break;
		}
		if (lo[i].name == NULL)
			return;	/* a short option with no long name */
		idx = (int)i;
	}
	if ((size_t)idx < ncmd)
		args_add(&a->opts, &a->nopts, lo[idx].name, val);
	else
		args_add(&a->globals, &a->nglobals, lo[idx].name, val);
}

/* The cause for getopt's '?' or ':' (cmd: a command name, or NULL). */
void
args_bad_option(const char *cmd, int ch, int argc, char **argv,
    char **cause)
{
	const char	*arg = "?", *what;
	size_t		 len;

	if (optind - 1 >= 0 && optind - 1 < argc)
		arg = argv[optind - 1];
	what = ch == ':' ? "missing value for option" : "unknown option";
	if (optopt != 0 && strncmp(arg, "--", 2) != 0) {
		xasprintf(cause, "%s%s%s -%c", cmd != NULL ? cmd : "",
		    cmd != NULL ? ": " : "", what, optopt);
		return;
	}
	if (ch != ':')
		what = "unknown or misused option";
	len = strcspn(arg, "=");
	xasprintf(cause, "%s%s%s %.*s", cmd != NULL ? cmd : "",
	    cmd != NULL ? ": " : "", what, (int)len, arg);
}

/* -h and --version need no other argument. */
static int
args_has_global_help(const struct args *a)
{
	size_t	 i;

	for (i = 0; i < a->nglobals; i++) {
		if (strcmp(a->globals[i].name, "help") == 0 ||
		    strcmp(a->globals[i].name, "version") == 0)
			return (1);
	}
	return (0);
}

static int
args_check_count(const struct cmd_entry *e, int n, char **cause)
{
	if (n < e->args_min) {
		xasprintf(cause, "%s: missing arguments", e->name);
		return (-1);
	}
	if (e->args_max >= 0 && n > e->args_max) {
		xasprintf(cause, "%s: too many arguments", e->name);
		return (-1);
	}
	return (0);
}

/*
 * getopt_long moves the "--" that ended the options just before the
 * positional arguments, and those after it stay last, in order: their
 * number is what followed the "--" in the original argv (orig).  A "--"
 * taken as an option's value ends nothing.
 */
static int
args_dashdash(const struct args *a, int argc, char **argv, char **orig)
{
	size_t	 i;
	int	 j;

	if (optind < 1 || optind > argc || strcmp(argv[optind - 1], "--") != 0)
		return (-1);
	for (i = 0; i < a->nopts; i++)
		if (a->opts[i].value == argv[optind - 1])
			return (-1);
	for (i = 0; i < a->nglobals; i++)
		if (a->globals[i].value == argv[optind - 1])
			return (-1);
	for (j = 0; j < argc; j++)
		if (orig[j] == argv[optind - 1])
			return (argc - j - 1);
	return (-1);
}

struct args *
args_parse(const struct cmd_entry *e, int argc, char **argv, char **cause)
{
	struct args	*a;
	struct option	*lo;
	char		*optstr, **orig;
	size_t		 ncmd;
	int		 ch, idx;

	lo = args_merge(e, &ncmd);
	xasprintf(&optstr, ":%s%s", e->optstring != NULL ? e->optstring :
	    "", CMD_GLOBAL_OPTSTRING);
	a = xcalloc(1, sizeof *a);
	orig = xcalloc((size_t)argc + 1, sizeof *orig);
	memcpy(orig, argv, (size_t)argc * sizeof *orig);
	optind = 0;	/* GNU: start afresh (the REPL parses many lines) */
	opterr = 0;
	for (;;) {
		idx = -1;
		if ((ch = getopt_long(argc, argv, optstr, lo, &idx)) == -1)
			break;
		if (ch == '?' || ch == ':') {
			args_bad_option(e->name, ch, argc, argv, cause);
			goto fail;
		}
		args_record(a, e, lo, ncmd, ch, idx, optarg);
	}
	a->argc = argc - optind;
	a->argv = argv + optind;
	a->after_dashdash = args_dashdash(a, argc, argv, orig);
	if (!args_has_global_help(a) &&
	    args_check_count(e, a->argc, cause) != 0)
		goto fail;
	free(orig);
	free(optstr);
	free(lo);
	return (a);
fail:
	free(orig);
	free(optstr);
	free(lo);
	args_free(a);
	return (NULL);
}

void
args_free(struct args *a)
{
	if (a == NULL)
		return;
	free(a->opts);
	free(a->globals);
	free(a);
}

int
args_count(const struct args *a, const char *name)
{
	size_t	 i;
	int	 n = 0;

	for (i = 0; i < a->nopts; i++) {
		if (strcmp(a->opts[i].name, name) == 0)
			n++;
	}
	return (n);
}

int
args_has(const struct args *a, const char *name)
{
	return (args_count(a, name) > 0);
}

/* The last value given, or NULL. */
const char *
args_get(const struct args *a, const char *name)
{
	size_t	 i;

	for (i = a->nopts; i > 0; i--) {
		if (strcmp(a->opts[i - 1].name, name) == 0)
			return (a->opts[i - 1].value);
	}
	return (NULL);
}

/* An integer argument that must fit a JSON number exactly. */
enum cmd_status
args_u64(const char *s, const char *what, uint64_t *out, char **cause)
{
	if (parse_u64(s, out) != 0 || *out > JSON_INT_MAX) {
		xasprintf(cause, "invalid %s: \"%s\" (expected an integer "
		    "from 0 to %llu)", what, s,
		    (unsigned long long)JSON_INT_MAX);
		return (CMD_USAGE);
	}
	return (CMD_OK);
}

/* A lease's TTL, a duration within metad's bounds. */
enum cmd_status
args_ttl(const char *s, const char *what, uint64_t *ms, char **cause)
{
	char	 lo[32], hi[32];

	if (args_duration(s, ms, cause) != CMD_OK)
		return (CMD_USAGE);
	if (*ms >= LEASE_TTL_MIN_MS && *ms <= LEASE_TTL_MAX_MS)
		return (CMD_OK);
	format_ms(LEASE_TTL_MIN_MS, lo, sizeof lo);
	format_ms(LEASE_TTL_MAX_MS, hi, sizeof hi);
	xasprintf(cause, "invalid %s: \"%s\" (a lease's TTL is from %s to "
	    "%s)", what, s, lo, hi);
	return (CMD_USAGE);
}

/* "500ms", "2s", "1m", "1h"; a bare number is seconds.  At most 24h. */
enum cmd_status
args_duration(const char *s, uint64_t *ms, char **cause)
{
	static const struct {
		const char	*unit;
		uint64_t	 ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "", 1000 }, { "m", 60000 },
		{ "h", 3600000 }
	};
	char		 digits[24];
	size_t		 n, i;
	uint64_t	 v;

	n = strspn(s, "0123456789");
	if (n > 0 && n < sizeof digits) {
		memcpy(digits, s, n);
		digits[n] = '\0';
		for (i = 0; i < sizeof units / sizeof units[0]; i++) {
			if (strcmp(s + n, units[i].unit) != 0)
				continue;
			if (parse_u64(digits, &v) != 0 ||
			    v > WAIT_TIMEOUT_MAX_MS / units[i].ms)
				break;
			*ms = v * units[i].ms;
			return (CMD_OK);
		}
	}
	xasprintf(cause, "invalid duration: \"%s\" (expected a whole number "
	    "with a unit: 500ms, 2s, 1m, 1h; at most 24h)", s);
	return (CMD_USAGE);
}
