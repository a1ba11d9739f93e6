#include <sys/types.h>

#include <ctype.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "config_opts.h"
#include "metad_limits.h"
#include "sockpath.h"
#include "util.h"

/* getopt_long's val for row i of config_opts; below it, short options. */
#define OPT_BASE	256

/* getopt_long's table, made from config_opts once. */
static const struct option *
config_longopts(void)
{
	static struct option	 opts[64];
	size_t			 i;

	_Static_assert(sizeof opts / sizeof opts[0] > 60, "room for options");
	if (opts[0].name != NULL)
		return (opts);
	if (config_nopts >= sizeof opts / sizeof opts[0])
		fatalx("config: too many options");
	for (i = 0; i < config_nopts; i++) {
		opts[i].name = config_opts[i].name;
		opts[i].has_arg = config_opts[i].arg != NULL ?
		    required_argument : no_argument;
		opts[i].val = OPT_BASE + (int)i;
	}
	return (opts);
}

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
	const struct config_opt	*o;
	char			 name[48];

	fprintf(f, "usage: %s\n\nA versioned key/value metadata store "
	    "serving metad-protocol(7) on a Unix\nsocket.  Every option is "
	    "also read from METAD_<NAME> (--max-value-bytes:\n"
	    "METAD_MAX_VALUE_BYTES); the command line wins.  More in "
	    "metad(8).\n\n", config_usage());
	for (o = config_opts; o < config_opts + config_nopts; o++) {
		snprintf(name, sizeof name, "--%s%s%s", o->name,
		    o->arg != NULL ? " " : "", o->arg != NULL ? o->arg : "");
		fprintf(f, "  %-24s", name);
		if (strlen(name) > 23)		/* too long: text below */
			fprintf(f, "\n%26s", "");
		config_help_wrap(f, o->help, 26, 79);
	}
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
config_invalid(const struct config_opt *o, const char *arg, const char *from,
    const char *why, char **cause)
{
	if (from != NULL)
		xasprintf(cause, "invalid value \"%s\" in %s (--%s)%s%s", arg,
		    from, o->name, why != NULL ? ": " : "",
		    why != NULL ? why : "");
	else
		xasprintf(cause, "invalid value \"%s\" for --%s%s%s", arg,
		    o->name, why != NULL ? ": " : "", why != NULL ? why : "");
}

/*
 * Set option o from arg, given as from (METAD_<NAME>) or, when from is
 * NULL, on the command line.
 */
static int
config_set(struct metad_config *cfg, const struct config_opt *o,
    const char *arg, const char *from, char **cause)
{
	char		*field = (char *)cfg + o->off, *why = NULL;
	uint64_t	 v;
	int		 rc;

	switch (o->kind) {
	case CONFIG_STRING:
		if (o->min > 0 && *arg == '\0')
			break;
		free(*(char **)(void *)field);
		*(char **)(void *)field = xstrdup(arg);
		return (0);
	case CONFIG_SIZE:
	case CONFIG_U64:
	case CONFIG_UINT:
		if (config_size(arg, o->max, &v) != 0 || v < o->min)
			break;
		if (o->kind == CONFIG_SIZE)
			*(size_t *)(void *)field = (size_t)v;
		else if (o->kind == CONFIG_U64)
			*(uint64_t *)(void *)field = v;
		else
			*(unsigned *)(void *)field = (unsigned)v;
		return (0);
	case CONFIG_CUSTOM:
		if ((rc = o->set(cfg, arg, &why)) == 0)
			return (0);
		if (rc == -2) {
			*cause = why;
			return (-1);
		}
		break;
	default:
		break;
	}
	config_invalid(o, arg, from, why, cause);
	free(why);
	return (-1);
}

/* A flag option (no argument) set on or off. */
static void
config_set_flag(struct metad_config *cfg, const struct config_opt *o, int on)
{
	int	*field = (int *)(void *)((char *)cfg + o->off);

	if (on)
		*field = (int)o->min;
	else if (o->max)
		*field = !o->min;
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
	const struct config_opt	*o;
	char			 name[64];
	const char		*v;
	size_t			 i;
	int			 on;

	for (o = config_opts; o < config_opts + config_nopts; o++) {
		if (o->kind == CONFIG_HELP || o->kind == CONFIG_VERSION)
			continue;
		snprintf(name, sizeof name, "METAD_%s", o->name);
		for (i = 6; name[i] != '\0'; i++)
			name[i] = name[i] == '-' ? '_' :
			    (char)toupper((unsigned char)name[i]);
		if ((v = getenv(name)) == NULL || *v == '\0')
			continue;
		if (o->kind != CONFIG_FLAG) {
			if (config_set(cfg, o, v, name, cause) != 0)
				return (-1);
			continue;
		}
		if (config_flag(v, &on) != 0) {
			xasprintf(cause, "%s must be 1 or 0, not \"%s\"", name,
			    v);
			return (-1);
		}
		config_set_flag(cfg, o, on);
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
	cfg->max_leases = LEASES_MAX_DEFAULT;
	cfg->view_max_bytes = VIEW_MAX_BYTES_DEFAULT;
	cfg->idem_window_ms = IDEM_WINDOW_DEFAULT_MS;
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

	if (opt >= OPT_BASE)
		xasprintf(cause, "option --%s takes no value",
		    config_opts[opt - OPT_BASE].name);
	else if (opt != 0)
		xasprintf(cause, "unknown option \"-%c\"", opt);
	else
		xasprintf(cause, "unknown option \"%.*s\"", (int)n, arg);
}

/* The TLS options go together: --listen needs the three files. */
static int
config_check_tls(const struct metad_config *cfg, char **cause)
{
	const char	*missing = NULL;

	if (cfg->nlisten == 0) {
		if (cfg->tls_cert != NULL || cfg->tls_key != NULL ||
		    cfg->tls_client_ca != NULL || cfg->allow_cn.n > 0 ||
		    cfg->ro_cn.n > 0) {
			xasprintf(cause, "--tls-cert, --tls-key, "
			    "--tls-client-ca, --allow-cn and --read-only-cn "
			    "are for --listen tls://HOST:PORT, which is not "
			    "given");
			return (-1);
		}
		return (0);
	}
	if (cfg->tls_cert == NULL)
		missing = "--tls-cert";
	else if (cfg->tls_key == NULL)
		missing = "--tls-key";
	else if (cfg->tls_client_ca == NULL)
		missing = "--tls-client-ca";
	if (missing != NULL) {
		xasprintf(cause, "--listen %s needs %s (and --tls-cert, "
		    "--tls-key, --tls-client-ca)", cfg->listen[0], missing);
		return (-1);
	}
	return (0);
}

int
config_parse(struct metad_config *cfg, int argc, char **argv, char **cause)
{
	const struct config_opt	*o;
	int			 ch;

	config_defaults(cfg);
	if (config_env(cfg, cause) != 0)
		return (-1);
	optind = 1;
	opterr = 0;	/* one message, ours */
	while ((ch = getopt_long(argc, argv, ":h", config_longopts(),
	    NULL)) != -1) {
		o = ch >= OPT_BASE ? &config_opts[ch - OPT_BASE] : NULL;
		if (ch == 'h' || (o != NULL && o->kind == CONFIG_HELP)) {
			config_help(stdout);
			exit(0);
		}
		if (o != NULL && o->kind == CONFIG_VERSION) {
			printf("metad %s (protocol %d)\n", METAD_VERSION,
			    METAD_PROTOCOL);
			exit(0);
		}
		if (o != NULL && o->kind == CONFIG_FLAG) {
			config_set_flag(cfg, o, 1);
			continue;
		}
		if (o != NULL) {
			if (config_set(cfg, o, optarg, NULL, cause) != 0)
				return (-1);
			continue;
		}
		if (ch == ':')
			xasprintf(cause, "option %s needs a value",
			    argv[optind - 1]);
		else
			config_unknown(argv[optind - 1], optopt, cause);
		return (-1);
	}
	if (optind != argc) {
		xasprintf(cause, "unexpected argument \"%s\"", argv[optind]);
		return (-1);
	}
	if (config_check_tls(cfg, cause) != 0)
		return (-1);
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
	free(cfg->store_cacert);
	free(cfg->store_cert);
	free(cfg->store_key);
	free(cfg->store_user);
	free(cfg->store_password_file);
	free(cfg->pidfile);
	free(cfg->log_file);
	free(cfg->metrics_host);
	while (cfg->nlisten > 0)
		free(cfg->listen[--cfg->nlisten]);
	free(cfg->tls_cert);
	free(cfg->tls_key);
	free(cfg->tls_client_ca);
	while (cfg->allow_cn.n > 0)
		free(cfg->allow_cn.names[--cfg->allow_cn.n]);
	while (cfg->ro_cn.n > 0)
		free(cfg->ro_cn.names[--cfg->ro_cn.n]);
}
