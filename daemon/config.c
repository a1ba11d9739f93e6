#include <sys/stat.h>
#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "metad_limits.h"
#include "sockpath.h"
#include "util.h"

enum {
	OPT_SOCKET = 256, OPT_STORE, OPT_SYNC, OPT_HISTORY, OPT_MAX_VALUE,
	OPT_MAX_REQUEST, OPT_MAX_PENDING, OPT_MAX_ANSWER, OPT_MAX_CONN,
	OPT_MAX_CONN_PEER,
	OPT_MAX_WATCH_PEER, OPT_SOCKET_MODE,
	OPT_PIDFILE, OPT_LOG_LEVEL, OPT_LOG_FILE, OPT_LOG_SYSLOG,
	OPT_ALLOW_UID, OPT_ALLOW_GID, OPT_RO_UID, OPT_RO_GID, OPT_ETCD_PREFIX,
	OPT_VIEW_MAX, OPT_FOREGROUND, OPT_DAEMONIZE, OPT_HELP, OPT_VERSION
};

static const struct option config_options[] = {
	{ "socket",		required_argument, NULL, OPT_SOCKET },
	{ "store",		required_argument, NULL, OPT_STORE },
	{ "sync",		required_argument, NULL, OPT_SYNC },
	{ "history",		required_argument, NULL, OPT_HISTORY },
	{ "max-value-bytes",	required_argument, NULL, OPT_MAX_VALUE },
	{ "max-request-bytes",	required_argument, NULL, OPT_MAX_REQUEST },
	{ "max-pending-bytes",	required_argument, NULL, OPT_MAX_PENDING },
	{ "max-answer-bytes",	required_argument, NULL, OPT_MAX_ANSWER },
	{ "max-connections",	required_argument, NULL, OPT_MAX_CONN },
	{ "max-connections-per-peer", required_argument, NULL,
	    OPT_MAX_CONN_PEER },
	{ "max-watches-per-peer", required_argument, NULL, OPT_MAX_WATCH_PEER },
	{ "socket-mode",	required_argument, NULL, OPT_SOCKET_MODE },
	{ "pidfile",		required_argument, NULL, OPT_PIDFILE },
	{ "log-level",		required_argument, NULL, OPT_LOG_LEVEL },
	{ "log-file",		required_argument, NULL, OPT_LOG_FILE },
	{ "log-syslog",		no_argument,	   NULL, OPT_LOG_SYSLOG },
	{ "allow-uid",		required_argument, NULL, OPT_ALLOW_UID },
	{ "allow-gid",		required_argument, NULL, OPT_ALLOW_GID },
	{ "read-only-uid",	required_argument, NULL, OPT_RO_UID },
	{ "read-only-gid",	required_argument, NULL, OPT_RO_GID },
	{ "etcd-prefix",	required_argument, NULL, OPT_ETCD_PREFIX },
	{ "view-max-bytes",	required_argument, NULL, OPT_VIEW_MAX },
	{ "foreground",		no_argument,	   NULL, OPT_FOREGROUND },
	{ "daemonize",		no_argument,	   NULL, OPT_DAEMONIZE },
	{ "help",		no_argument,	   NULL, OPT_HELP },
	{ "version",		no_argument,	   NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 }
};

/*
 * --help's text: a line each option, in the order of config_options (the
 * enum), its argument and what it does.  metad(8) says it all at length.
 */
static const struct config_help {
	const char	*arg;
	const char	*text;
} config_helps[] = {
	{ "PATH",	"the Unix socket to serve (default: $XDG_RUNTIME_DIR/"
			"metad.sock, else /tmp/metad-$UID/metad.sock)" },
	{ "BACKEND",	"sqlite:PATH (default ~/.local/state/metad/meta.db), "
			"memory, or etcd:URL[,URL...]" },
	{ "MODE",	"full|normal|off: sqlite's sync before an answer "
			"(default full: fsync before every acknowledgement)" },
	{ "N",		"revisions of write events kept for watches and "
			"reads at a rev (default 100000)" },
	{ "N",		"the largest value, k/m/g suffixes (default 1m)" },
	{ "N",		"the longest request line (default 4/3 of "
			"--max-value-bytes + 64k)" },
	{ "N",		"unsent output a connection may hold before its "
			"reads pause and watches end (default 8m)" },
	{ "N",		"the largest answer of a list or history; a larger one "
			"is answer_too_large (default 16m)" },
	{ "N",		"client connections served at once (default 1024)" },
	{ "N",		"connections of one peer (a uid other than root and "
			"metad's own) at once (default 64)" },
	{ "N",		"watches of one such peer, all its connections "
			"together (default 65536)" },
	{ "MODE",	"the socket file's permission bits, octal "
			"(default 0600)" },
	{ "PATH",	"write the daemon's pid there once it serves" },
	{ "LEVEL",	"error|warn|info|debug: the least severe message "
			"logged (default info)" },
	{ "FILE",	"log there (appended, reopened on SIGHUP) once "
			"serving, not to stderr" },
	{ NULL,		"log to syslog(3), facility daemon, not to stderr" },
	{ "LIST",	"users (names or uids, comma-separated) given "
			"read-write access" },
	{ "LIST",	"groups given read-write access" },
	{ "LIST",	"users given read-only access" },
	{ "LIST",	"groups given read-only access" },
	{ "P",		"etcd: the store's key prefix (default metad/)" },
	{ "N",		"etcd: memory for the view of the prefix "
			"(default 256m, 0: none)" },
	{ NULL,		"stay in the foreground (the default)" },
	{ NULL,		"fork once serving; log to syslog unless "
			"--log-file" },
	{ NULL,		"print this help and exit" },
	{ NULL,		"print the version and exit" },
};
_Static_assert(sizeof config_helps / sizeof config_helps[0] ==
    OPT_VERSION - OPT_SOCKET + 1, "a help line for each option");

static const char *
config_usage(void)
{
	return ("metad [OPTION]...");
}

/* text from column col, words wrapped before column width. */
static void
config_help_wrap(FILE *f, const char *text, int col, int width)
{
	int	 at = col, n;

	while (*text != '\0') {
		n = (int)strcspn(text, " ");
		if (at > col && at + 1 + n > width) {
			fprintf(f, "\n%*s", col, "");
			at = col;
		}
		if (at > col) {
			fputc(' ', f);
			at++;
		}
		fprintf(f, "%.*s", n, text);
		at += n;
		text += n;
		text += strspn(text, " ");
	}
	fputc('\n', f);
}

void
config_help(FILE *f)
{
	const struct option	*o;
	const struct config_help *h;
	char			 name[48];

	fprintf(f, "usage: %s\n\nA versioned key/value metadata store "
	    "serving metad-protocol(7) on a Unix\nsocket.  Every option is "
	    "also read from METAD_<NAME> (--max-value-bytes:\n"
	    "METAD_MAX_VALUE_BYTES); the command line wins.  More in "
	    "metad(8).\n\n", config_usage());
	for (o = config_options; o->name != NULL; o++) {
		h = &config_helps[o->val - OPT_SOCKET];
		snprintf(name, sizeof name, "--%s%s%s", o->name,
		    h->arg != NULL ? " " : "", h->arg != NULL ? h->arg : "");
		fprintf(f, "  %-24s", name);
		if (strlen(name) > 23)		/* too long: text below */
			fprintf(f, "\n%26s", "");
		config_help_wrap(f, h->text, 26, 79);
	}
}

/* N, or N with a k/m/g suffix (KiB, MiB, GiB). */
static int
config_size(const char *s, uint64_t max, uint64_t *out)
{
	char		 num[32];
	size_t		 n = strlen(s);
	uint64_t	 v, mult = 1;

	if (n == 0 || n >= sizeof num)
		return (-1);
	memcpy(num, s, n + 1);
	switch (tolower((unsigned char)num[n - 1])) {
	case 'k':
		mult = 1024;
		break;
	case 'm':
		mult = 1024 * 1024;
		break;
	case 'g':
		mult = 1024 * 1024 * 1024;
		break;
	}
	if (mult != 1)
		num[n - 1] = '\0';
	if (parse_u64(num, &v) != 0 || v > max / mult)
		return (-1);
	*out = v * mult;
	return (0);
}

static int
config_sync(const char *s, enum store_sync *out)
{
	if (strcmp(s, "full") == 0)
		*out = STORE_SYNC_FULL;
	else if (strcmp(s, "normal") == 0)
		*out = STORE_SYNC_NORMAL;
	else if (strcmp(s, "off") == 0)
		*out = STORE_SYNC_OFF;
	else
		return (-1);
	return (0);
}

/* One uid or gid: a number or a user or group name. */
static int
config_id(const char *s, int group, unsigned long *out)
{
	struct passwd	*pw;
	struct group	*gr;
	uint64_t	 v;

	if (parse_u64(s, &v) == 0 && v < UINT32_MAX) {
		*out = (unsigned long)v;
		return (0);
	}
	if (!group && (pw = getpwnam(s)) != NULL) {
		*out = pw->pw_uid;
		return (0);
	}
	if (group && (gr = getgrnam(s)) != NULL) {
		*out = gr->gr_gid;
		return (0);
	}
	return (-1);
}

/* A comma-separated list of ids, added to l. */
static int
config_ids(const char *arg, int group, struct id_list *l, char **cause)
{
	char	*copy, *p, *tok;
	int	 rc = 0;

	copy = p = xstrdup(arg);
	while ((tok = strsep(&p, ",")) != NULL) {
		if (*tok == '\0')
			continue;
		if (l->n == ACCESS_LIST_MAX) {
			xasprintf(cause, "too many ids in --allow-* and "
			    "--read-only-* lists (the limit is %d each)",
			    ACCESS_LIST_MAX);
			rc = -1;
			break;
		}
		if (config_id(tok, group, &l->ids[l->n]) != 0) {
			xasprintf(cause, "unknown %s \"%s\"", group ? "group" :
			    "user", tok);
			rc = -1;
			break;
		}
		l->n++;
	}
	free(copy);
	return (rc);
}

static char *
config_default_db(void)
{
	const char	*state = getenv("XDG_STATE_HOME"), *home;
	struct passwd	*pw;
	char		*path;

	if (state != NULL && *state != '\0') {
		xasprintf(&path, "sqlite:%s/metad/meta.db", state);
		return (path);
	}
	if ((home = getenv("HOME")) == NULL || *home == '\0') {
		pw = getpwuid(getuid());
		home = pw != NULL ? pw->pw_dir : "/";
	}
	xasprintf(&path, "sqlite:%s/.local/state/metad/meta.db", home);
	return (path);
}

/* "invalid value "X" for --opt (METAD_OPT): why" */
static void
config_invalid(int opt, const char *arg, const char *from, const char *why,
    char **cause)
{
	const char	*name = config_options[opt - OPT_SOCKET].name;

	if (from != NULL)
		xasprintf(cause, "invalid value \"%s\" in %s (--%s)%s%s", arg,
		    from, name, why != NULL ? ": " : "", why != NULL ? why : "");
	else
		xasprintf(cause, "invalid value \"%s\" for --%s%s%s", arg,
		    name, why != NULL ? ": " : "", why != NULL ? why : "");
}

/*
 * Set option opt from arg, given as from (METAD_<NAME>) or, when from is
 * NULL, on the command line.
 */
static int
config_set(struct metad_config *cfg, int opt, const char *arg,
    const char *from, char **cause)
{
	struct store_err se;
	uint64_t	 v;
	unsigned long	 mode;
	char		*end;

	switch (opt) {
	case OPT_SOCKET:
		free(cfg->socket_path);
		cfg->socket_path = xstrdup(arg);
		return (0);
	case OPT_STORE:
		if (store_spec_check(arg, &se) != 0) {
			config_invalid(opt, arg, from, se.msg, cause);
			return (-1);
		}
		free(cfg->store_spec);
		cfg->store_spec = xstrdup(arg);
		return (0);
	case OPT_ETCD_PREFIX:
		free(cfg->etcd_prefix);
		cfg->etcd_prefix = xstrdup(arg);
		return (0);
	case OPT_SYNC:
		if (config_sync(arg, &cfg->sync) == 0)
			return (0);
		break;
	case OPT_HISTORY:
		if (config_size(arg, JSON_INT_MAX, &cfg->history) == 0 &&
		    cfg->history > 0)
			return (0);
		break;
	case OPT_MAX_VALUE:
		if (config_size(arg, 256ULL << 20, &v) == 0) {
			cfg->max_value_bytes = v;
			return (0);
		}
		break;
	case OPT_MAX_REQUEST:
		if (config_size(arg, 512ULL << 20, &v) == 0 && v >= 1024) {
			cfg->max_request_bytes = v;
			return (0);
		}
		break;
	case OPT_MAX_PENDING:
		if (config_size(arg, 1ULL << 40, &v) == 0 && v >= 4096) {
			cfg->max_pending_bytes = v;
			return (0);
		}
		break;
	case OPT_MAX_ANSWER:
		if (config_size(arg, 1ULL << 32, &v) == 0 && v >= 4096) {
			cfg->max_answer_bytes = v;
			return (0);
		}
		break;
	case OPT_VIEW_MAX:
		if (config_size(arg, 1ULL << 40, &v) == 0) {
			cfg->view_max_bytes = v;
			return (0);
		}
		break;
	case OPT_MAX_CONN:
		if (config_size(arg, 1000000, &v) == 0 && v > 0) {
			cfg->max_connections = (unsigned)v;
			return (0);
		}
		break;
	case OPT_MAX_CONN_PEER:
		if (config_size(arg, 1000000, &v) == 0 && v > 0) {
			cfg->max_conns_per_peer = (unsigned)v;
			return (0);
		}
		break;
	case OPT_MAX_WATCH_PEER:
		if (config_size(arg, 100000000, &v) == 0 && v > 0) {
			cfg->max_watches_per_peer = (unsigned)v;
			return (0);
		}
		break;
	case OPT_SOCKET_MODE:
		mode = strtoul(arg, &end, 8);
		if (*arg != '\0' && *end == '\0' && mode <= 0777) {
			cfg->socket_mode = (mode_t)mode;
			return (0);
		}
		break;
	case OPT_PIDFILE:
		free(cfg->pidfile);
		cfg->pidfile = xstrdup(arg);
		return (0);
	case OPT_LOG_LEVEL:
		if (log_level_parse(arg, &cfg->log_level) == 0)
			return (0);
		break;
	case OPT_LOG_FILE:
		if (*arg == '\0')
			break;
		free(cfg->log_file);
		cfg->log_file = xstrdup(arg);
		return (0);
	case OPT_ALLOW_UID:
		return (config_ids(arg, 0, &cfg->allow_uid, cause));
	case OPT_ALLOW_GID:
		return (config_ids(arg, 1, &cfg->allow_gid, cause));
	case OPT_RO_UID:
		return (config_ids(arg, 0, &cfg->ro_uid, cause));
	case OPT_RO_GID:
		return (config_ids(arg, 1, &cfg->ro_gid, cause));
	}
	config_invalid(opt, arg, from, NULL, cause);
	return (-1);
}

/* A flag option (no argument) set on or off. */
static void
config_set_flag(struct metad_config *cfg, int opt, int on)
{
	switch (opt) {
	case OPT_FOREGROUND:
		if (on)
			cfg->daemonize = 0;
		break;
	case OPT_DAEMONIZE:
		if (on)
			cfg->daemonize = 1;
		break;
	case OPT_LOG_SYSLOG:
		cfg->log_syslog = on;
		break;
	}
}

/* 1 for a true flag value ("1", "yes", "true", "on"), 0 for false. */
static int
config_flag(const char *v, int *out)
{
	if (strcmp(v, "1") == 0 || strcasecmp(v, "yes") == 0 ||
	    strcasecmp(v, "true") == 0 || strcasecmp(v, "on") == 0)
		*out = 1;
	else if (strcmp(v, "0") == 0 || strcasecmp(v, "no") == 0 ||
	    strcasecmp(v, "false") == 0 || strcasecmp(v, "off") == 0)
		*out = 0;
	else
		return (-1);
	return (0);
}

/*
 * Every option from METAD_<NAME>; a flag (--daemonize, --foreground) from
 * METAD_DAEMONIZE=1 or METAD_FOREGROUND=1.
 */
static int
config_env(struct metad_config *cfg, char **cause)
{
	const struct option	*o;
	char			 name[64];
	const char		*v;
	size_t			 i;
	int			 on;

	for (o = config_options; o->name != NULL; o++) {
		if (o->val == OPT_HELP || o->val == OPT_VERSION)
			continue;
		snprintf(name, sizeof name, "METAD_%s", o->name);
		for (i = 6; name[i] != '\0'; i++)
			name[i] = name[i] == '-' ? '_' :
			    (char)toupper((unsigned char)name[i]);
		if ((v = getenv(name)) == NULL || *v == '\0')
			continue;
		if (o->has_arg == required_argument) {
			if (config_set(cfg, o->val, v, name, cause) != 0)
				return (-1);
			continue;
		}
		if (config_flag(v, &on) != 0) {
			xasprintf(cause, "%s must be 1 or 0, not \"%s\"", name,
			    v);
			return (-1);
		}
		config_set_flag(cfg, o->val, on);
	}
	return (0);
}

static void
config_defaults(struct metad_config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->sync = STORE_SYNC_FULL;
	cfg->history = HISTORY_DEFAULT;
	cfg->max_value_bytes = VALUE_MAX_BYTES_DEFAULT;
	cfg->max_pending_bytes = PENDING_BYTES_DEFAULT;
	cfg->max_answer_bytes = ANSWER_BYTES_DEFAULT;
	cfg->max_connections = MAX_CONNECTIONS_DEFAULT;
	cfg->max_conns_per_peer = CONNS_PER_PEER_DEFAULT;
	cfg->max_watches_per_peer = WATCHES_PER_PEER_DEFAULT;
	cfg->view_max_bytes = VIEW_MAX_BYTES_DEFAULT;
	cfg->socket_mode = 0600;
	cfg->log_level = LOG_LEVEL_INFO;
}

/*
 * getopt's '?': a flag given a value (opt, getopt's optopt, is the option),
 * an unknown short option (opt is its letter) or an unknown long one (arg).
 */
static void
config_unknown(const char *arg, int opt, char **cause)
{
	size_t	 n = strcspn(arg, "=");

	if (opt >= OPT_SOCKET)
		xasprintf(cause, "option --%s takes no value",
		    config_options[opt - OPT_SOCKET].name);
	else if (opt != 0)
		xasprintf(cause, "unknown option \"-%c\"", opt);
	else
		xasprintf(cause, "unknown option \"%.*s\"", (int)n, arg);
}

int
config_parse(struct metad_config *cfg, int argc, char **argv, char **cause)
{
	int	 ch;

	config_defaults(cfg);
	if (config_env(cfg, cause) != 0)
		return (-1);
	optind = 1;
	opterr = 0;	/* one message, ours */
	while ((ch = getopt_long(argc, argv, ":h", config_options,
	    NULL)) != -1) {
		switch (ch) {
		case OPT_FOREGROUND:
		case OPT_DAEMONIZE:
		case OPT_LOG_SYSLOG:
			config_set_flag(cfg, ch, 1);
			break;
		case 'h':
		case OPT_HELP:
			config_help(stdout);
			exit(0);
		case OPT_VERSION:
			printf("metad %s (protocol %d)\n", METAD_VERSION,
			    METAD_PROTOCOL);
			exit(0);
		case ':':
			xasprintf(cause, "option %s needs a value",
			    argv[optind - 1]);
			return (-1);
		case '?':
			config_unknown(argv[optind - 1], optopt, cause);
			return (-1);
		default:
			if (config_set(cfg, ch, optarg, NULL, cause) != 0)
				return (-1);
		}
	}
	if (optind != argc) {
		xasprintf(cause, "unexpected argument \"%s\"", argv[optind]);
		return (-1);
	}
	if (cfg->store_spec == NULL)
		cfg->store_spec = config_default_db();
	if (cfg->max_request_bytes == 0)
		cfg->max_request_bytes =
		    REQUEST_MAX_BYTES_FOR(cfg->max_value_bytes);
	return (0);
}

int
config_prepare_socket(struct metad_config *cfg, char **cause)
{
	char	 path[256];

	if (cfg->socket_path == NULL) {
		if (sockpath_default(NULL, path, sizeof path, cause) != 0)
			return (-1);
		cfg->socket_path = xstrdup(path);
	}
	return (sockpath_prepare_dir(cfg->socket_path, cause));
}

void
config_free(struct metad_config *cfg)
{
	free(cfg->socket_path);
	free(cfg->store_spec);
	free(cfg->etcd_prefix);
	free(cfg->pidfile);
	free(cfg->log_file);
}
