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
	OPT_MAX_REQUEST, OPT_MAX_PENDING, OPT_MAX_CONN, OPT_SOCKET_MODE,
	OPT_PIDFILE, OPT_LOG_LEVEL, OPT_ALLOW_UID, OPT_ALLOW_GID, OPT_RO_UID,
	OPT_RO_GID, OPT_ETCD_PREFIX, OPT_VIEW_MAX, OPT_FOREGROUND, OPT_DAEMONIZE, OPT_HELP, OPT_VERSION
};

static const struct option config_options[] = {
	{ "socket",		required_argument, NULL, OPT_SOCKET },
	{ "store",		required_argument, NULL, OPT_STORE },
	{ "sync",		required_argument, NULL, OPT_SYNC },
	{ "history",		required_argument, NULL, OPT_HISTORY },
	{ "max-value-bytes",	required_argument, NULL, OPT_MAX_VALUE },
	{ "max-request-bytes",	required_argument, NULL, OPT_MAX_REQUEST },
	{ "max-pending-bytes",	required_argument, NULL, OPT_MAX_PENDING },
	{ "max-connections",	required_argument, NULL, OPT_MAX_CONN },
	{ "socket-mode",	required_argument, NULL, OPT_SOCKET_MODE },
	{ "pidfile",		required_argument, NULL, OPT_PIDFILE },
	{ "log-level",		required_argument, NULL, OPT_LOG_LEVEL },
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

const char *
config_usage(void)
{
	return ("metad [--socket PATH] [--store sqlite:PATH|memory|"
	    "etcd:URL[,URL...]]\n"
	    "             [--etcd-prefix P] [--view-max-bytes N] "
	    "[--sync full|normal|off]\n"
	    "             [--history N] [--max-value-bytes N] "
	    "[--max-request-bytes N]\n"
	    "             [--max-pending-bytes N] [--max-connections N] "
	    "[--socket-mode MODE]\n"
	    "             [--allow-uid LIST] [--allow-gid LIST] "
	    "[--read-only-uid LIST]\n"
	    "             [--read-only-gid LIST] [--pidfile PATH] "
	    "[--log-level LEVEL]\n"
	    "             [--foreground | --daemonize] [--help] [--version]");
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

static int
config_set(struct metad_config *cfg, int opt, const char *arg, char **cause)
{
	uint64_t	 v;
	unsigned long	 mode;
	char		*end;

	switch (opt) {
	case OPT_SOCKET:
		free(cfg->socket_path);
		cfg->socket_path = xstrdup(arg);
		return (0);
	case OPT_STORE:
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
	case OPT_ALLOW_UID:
		return (config_ids(arg, 0, &cfg->allow_uid, cause));
	case OPT_ALLOW_GID:
		return (config_ids(arg, 1, &cfg->allow_gid, cause));
	case OPT_RO_UID:
		return (config_ids(arg, 0, &cfg->ro_uid, cause));
	case OPT_RO_GID:
		return (config_ids(arg, 1, &cfg->ro_gid, cause));
	}
	xasprintf(cause, "invalid value \"%s\" for --%s", arg,
	    config_options[opt - OPT_SOCKET].name);
	return (-1);
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
			if (config_set(cfg, o->val, v, cause) != 0)
				return (-1);
			continue;
		}
		if (config_flag(v, &on) != 0) {
			xasprintf(cause, "%s must be 1 or 0, not \"%s\"", name,
			    v);
			return (-1);
		}
		if (on)
			cfg->daemonize = o->val == OPT_DAEMONIZE;
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
	cfg->max_connections = MAX_CONNECTIONS_DEFAULT;
	cfg->view_max_bytes = VIEW_MAX_BYTES_DEFAULT;
	cfg->socket_mode = 0600;
	cfg->log_level = LOG_LEVEL_INFO;
}

int
config_parse(struct metad_config *cfg, int argc, char **argv, char **cause)
{
	int	 ch;

	config_defaults(cfg);
	if (config_env(cfg, cause) != 0)
		return (-1);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", config_options,
	    NULL)) != -1) {
		switch (ch) {
		case OPT_FOREGROUND:
			cfg->daemonize = 0;
			break;
		case OPT_DAEMONIZE:
			cfg->daemonize = 1;
			break;
		case 'h':
		case OPT_HELP:
			printf("usage: %s\n", config_usage());
			exit(0);
		case OPT_VERSION:
			printf("metad %s (protocol %d)\n", METAD_VERSION,
			    METAD_PROTOCOL);
			exit(0);
		case '?':
			xasprintf(cause, "unknown or incomplete option");
			return (-1);
		default:
			if (config_set(cfg, ch, optarg, cause) != 0)
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
}
