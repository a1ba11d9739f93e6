/* metad's options, a row each (config_opts.h), and their own setters. */
#include <sys/stat.h>
#include <sys/types.h>

#include <ctype.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "config_opts.h"
#include "metad_limits.h"
#include "tlsaddr.h"
#include "util.h"

/* N, or N with a k/m/g suffix (KiB, MiB, GiB), at most max. */
int
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
config_set_store(struct metad_config *cfg, const char *arg, char **why)
{
	struct store_err se;

	if (store_spec_check(arg, &se) != 0) {
		*why = xstrdup(se.msg);
		return (-1);
	}
	free(cfg->store_spec);
	cfg->store_spec = xstrdup(arg);
	return (0);
}

static int
config_set_sync(struct metad_config *cfg, const char *arg, char **why)
{
	(void)why;
	if (strcmp(arg, "full") == 0)
		cfg->sync = STORE_SYNC_FULL;
	else if (strcmp(arg, "normal") == 0)
		cfg->sync = STORE_SYNC_NORMAL;
	else if (strcmp(arg, "off") == 0)
		cfg->sync = STORE_SYNC_OFF;
	else
		return (-1);
	return (0);
}

static int
config_set_mode(struct metad_config *cfg, const char *arg, char **why)
{
	unsigned long	 mode;
	char		*end;

	(void)why;
	mode = strtoul(arg, &end, 8);
	if (*arg == '\0' || *end != '\0' || mode > 0777)
		return (-1);
	cfg->socket_mode = (mode_t)mode;
	return (0);
}

static int
config_set_level(struct metad_config *cfg, const char *arg, char **why)
{
	(void)why;
	return (log_level_parse(arg, &cfg->log_level));
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

/*
 * A comma-separated list of uids or gids (group), a number or a name each,
 * added to ids; or, with ids NULL, of certificate names (CNs), added to
 * names.
 */
static int
config_access(const char *arg, int group, struct id_list *ids,
    struct name_list *names, char **why)
{
	unsigned	*n = ids != NULL ? &ids->n : &names->n;
	char		*copy, *p, *tok;
	int		 rc = 0;

	copy = p = xstrdup(arg);
	while ((tok = strsep(&p, ",")) != NULL) {
		if (*tok == '\0')
			continue;
		if (*n == ACCESS_LIST_MAX) {
			xasprintf(why, "too many %s (the limit is %d each)",
			    ids != NULL ? "ids in --allow-* and --read-only-* "
			    "lists" : "names in --allow-cn and --read-only-cn",
			    ACCESS_LIST_MAX);
			rc = -2;
			break;
		}
		if (ids == NULL)
			names->names[(*n)++] = xstrdup(tok);
		else if (config_id(tok, group, &ids->ids[*n]) == 0)
			(*n)++;
		else {
			xasprintf(why, "unknown %s \"%s\"", group ? "group" :
			    "user", tok);
			rc = -2;
			break;
		}
	}
	free(copy);
	return (rc);
}

static int
config_set_allow_uid(struct metad_config *cfg, const char *arg, char **why)
{
	return (config_access(arg, 0, &cfg->allow_uid, NULL, why));
}

static int
config_set_allow_gid(struct metad_config *cfg, const char *arg, char **why)
{
	return (config_access(arg, 1, &cfg->allow_gid, NULL, why));
}

static int
config_set_ro_uid(struct metad_config *cfg, const char *arg, char **why)
{
	return (config_access(arg, 0, &cfg->ro_uid, NULL, why));
}

static int
config_set_ro_gid(struct metad_config *cfg, const char *arg, char **why)
{
	return (config_access(arg, 1, &cfg->ro_gid, NULL, why));
}

/*
 * --idem-window: "90s", "10m", "1h", "2d", "1500ms"; a bare number is
 * seconds; from 1s to 7 days.
 */
static int
config_set_idem_window(struct metad_config *cfg, const char *arg, char **why)
{
	static const struct {
		const char	*unit;
		uint64_t	 ms;
	} units[] = {
		{ "ms", 1 }, { "s", 1000 }, { "", 1000 }, { "m", 60000 },
		{ "h", 3600000 }, { "d", 86400000 }
	};
	char		 digits[24];
	size_t		 n = strspn(arg, "0123456789"), i;
	uint64_t	 v;

	if (n > 0 && n < sizeof digits) {
		memcpy(digits, arg, n);
		digits[n] = '\0';
		for (i = 0; i < sizeof units / sizeof units[0]; i++) {
			if (strcmp(arg + n, units[i].unit) != 0)
				continue;
			if (parse_u64(digits, &v) != 0 ||
			    v > IDEM_WINDOW_MAX_MS / units[i].ms ||
			    v * units[i].ms < IDEM_WINDOW_MIN_MS)
				break;
			cfg->idem_window_ms = v * units[i].ms;
			return (0);
		}
	}
	*why = xstrdup("a duration from 1s to 7d (90s, 10m, 1h, 2d; "
	    "a bare number is seconds)");
	return (-1);
}

/*
 * --metrics-listen [HOST:]PORT: HOST defaults to 127.0.0.1; an IPv6
 * address goes in brackets ([::1]:9100).
 */
static int
config_set_metrics(struct metad_config *cfg, const char *arg, char **why)
{
	const char	*colon, *port = arg, *host = "127.0.0.1";
	size_t		 len = 0;
	uint64_t	 v;

	if (*arg == '[') {
		if ((colon = strstr(arg, "]:")) == NULL || colon == arg + 1)
			return (-1);
		host = arg + 1;
		len = (size_t)(colon - host);
		port = colon + 2;
	} else if ((colon = strrchr(arg, ':')) != NULL) {
		if (strchr(arg, ':') != colon) {
			*why = xstrdup("an IPv6 address goes in brackets: "
			    "[::1]:PORT");
			return (-1);
		}
		if (colon > arg) {
			host = arg;
			len = (size_t)(colon - arg);
		}
		port = colon + 1;
	}
	if (parse_u64(port, &v) != 0 || v == 0 || v > 65535) {
		*why = xstrdup("the port is a number from 1 to 65535");
		return (-1);
	}
	free(cfg->metrics_host);
	if (len == 0)
		cfg->metrics_host = xstrdup(host);
	else {
		cfg->metrics_host = xmemdup(host, len + 1);
		cfg->metrics_host[len] = '\0';
	}
	cfg->metrics_port = (unsigned)v;
	return (0);
}

/* --listen: tls://HOST:PORT, repeatable; one value may list several. */
static int
config_set_listen(struct metad_config *cfg, const char *arg, char **why)
{
	struct tlsaddr	 a;
	char		*copy, *p, *tok;
	int		 rc = 0;

	copy = p = xstrdup(arg);
	while (rc == 0 && (tok = strsep(&p, ",")) != NULL) {
		if (*tok == '\0')
			continue;
		if (cfg->nlisten == LISTEN_MAX) {
			xasprintf(why, "more than %d --listen addresses",
			    LISTEN_MAX);
			rc = -2;
		} else if (tlsaddr_parse(tok, &a, why) != 0)
			rc = -1;
		else
			cfg->listen[cfg->nlisten++] = xstrdup(tok);
	}
	free(copy);
	return (rc);
}

static int
config_set_allow_cn(struct metad_config *cfg, const char *arg, char **why)
{
	return (config_access(arg, 0, NULL, &cfg->allow_cn, why));
}

static int
config_set_ro_cn(struct metad_config *cfg, const char *arg, char **why)
{
	return (config_access(arg, 0, NULL, &cfg->ro_cn, why));
}

#define STR(n, a, h, f)	{ n, a, h, CONFIG_STRING, CONFIG_AT(f), 0, 0, NULL }
/* A string that may not be empty. */
#define STR1(n, a, h, f) { n, a, h, CONFIG_STRING, CONFIG_AT(f), 1, 0, NULL }
#define NUM(n, k, h, f, lo, hi) { n, "N", h, k, CONFIG_AT(f), lo, hi, NULL }
#define FN(n, a, h, fn)	{ n, a, h, CONFIG_CUSTOM, 0, 0, 0, fn }
#define FLAG(n, h, f, on, clear) { n, NULL, h, CONFIG_FLAG, CONFIG_AT(f), \
	on, clear, NULL }

/* In --help's order; metad(8) says it all at length. */
const struct config_opt config_opts[] = {
	STR("socket", "PATH", "the Unix socket to serve (default: "
	    "$XDG_RUNTIME_DIR/metad.sock, else /tmp/metad-$UID/metad.sock)",
	    socket_path),
	FN("store", "BACKEND", "sqlite:PATH (default ~/.local/state/metad/"
	    "meta.db), memory, etcd:URL[,URL...] or metad:URL[,URL...]",
	    config_set_store),
	FN("sync", "MODE", "full|normal|off: sqlite's sync before an answer "
	    "(default full: fsync before every acknowledgement)",
	    config_set_sync),
	NUM("history", CONFIG_U64, "revisions of write events kept for "
	    "watches and reads at a rev (default 100000)", history, 1,
	    JSON_INT_MAX),
	NUM("max-value-bytes", CONFIG_SIZE, "the largest value, k/m/g "
	    "suffixes (default 1m)", max_value_bytes, 0, 256ULL << 20),
	NUM("max-request-bytes", CONFIG_SIZE, "the longest request line "
	    "(default 4/3 of --max-value-bytes + 64k)", max_request_bytes,
	    1024, 512ULL << 20),
	NUM("max-pending-bytes", CONFIG_SIZE, "unsent output a connection "
	    "may hold before its reads pause and watches end (default 8m)",
	    max_pending_bytes, 4096, 1ULL << 40),
	NUM("max-answer-bytes", CONFIG_SIZE, "the largest answer of a txn, "
	    "list or history; a larger one is answer_too_large (default 16m)",
	    max_answer_bytes, 4096, 1ULL << 32),
	NUM("max-connections", CONFIG_UINT, "client connections served at "
	    "once (default 1024)", max_connections, 1, 1000000),
	NUM("max-connections-per-peer", CONFIG_UINT, "connections of one "
	    "peer (a uid other than root and metad's own) at once "
	    "(default 64)", max_conns_per_peer, 1, 1000000),
	NUM("max-watches-per-peer", CONFIG_UINT, "watches of one such peer, "
	    "all its connections together (default 65536)",
	    max_watches_per_peer, 1, 100000000),
	NUM("max-leases", CONFIG_UINT, "leases at once, session leases too; "
	    "a grant past it is resource_exhausted (default 100000)",
	    max_leases, 1, 100000000),
	FN("socket-mode", "MODE", "the socket file's permission bits, octal "
	    "(default 0600)", config_set_mode),
	STR("pidfile", "PATH", "write the daemon's pid there once it serves",
	    pidfile),
	FN("log-level", "LEVEL", "error|warn|info|debug: the least severe "
	    "message logged (default info)", config_set_level),
	STR1("log-file", "FILE", "log there (appended, reopened on SIGHUP) "
	    "once serving, not to stderr", log_file),
	FLAG("log-syslog", "log to syslog(3), facility daemon, not to stderr",
	    log_syslog, 1, 1),
	FN("allow-uid", "LIST", "users (names or uids, comma-separated) given "
	    "read-write access", config_set_allow_uid),
	FN("allow-gid", "LIST", "groups given read-write access",
	    config_set_allow_gid),
	FN("read-only-uid", "LIST", "users given read-only access",
	    config_set_ro_uid),
	FN("read-only-gid", "LIST", "groups given read-only access",
	    config_set_ro_gid),
	FN("metrics-listen", "[HOST:]PORT", "serve GET /metrics (Prometheus' "
	    "text) over HTTP there; HOST defaults to 127.0.0.1",
	    config_set_metrics),
	FN("listen", "tls://HOST:PORT", "also serve on TCP with mutual TLS "
	    "(repeatable; HOST may be [IPV6]); the Unix socket stays",
	    config_set_listen),
	STR1("tls-cert", "FILE", "the TLS listener's certificate, PEM (with "
	    "its chain); reread on SIGHUP", tls_cert),
	STR1("tls-key", "FILE", "its private key, PEM", tls_key),
	STR1("tls-client-ca", "FILE", "the CA that must have signed every TLS "
	    "client's certificate, PEM", tls_client_ca),
	FN("allow-cn", "LIST", "names of TLS clients (their certificates' "
	    "subject CNs, comma-separated) given read-write access",
	    config_set_allow_cn),
	FN("read-only-cn", "LIST", "names of TLS clients given read-only "
	    "access", config_set_ro_cn),
	STR("etcd-prefix", "P", "etcd: the store's key prefix (default "
	    "metad/)", etcd_prefix),
	NUM("view-max-bytes", CONFIG_SIZE, "etcd: memory for the view of the "
	    "prefix (default 256m, 0: none)", view_max_bytes, 0, 1ULL << 40),
	STR1("store-cacert", "FILE", "etcd over https: the CA that signed "
	    "etcd's certificate (default: the system's)", store_cacert),
	STR1("store-cert", "FILE", "etcd over https: metad's client "
	    "certificate, for an etcd that asks for one", store_cert),
	STR1("store-key", "FILE", "etcd over https: the key of --store-cert",
	    store_key),
	STR1("store-user", "NAME", "etcd: the user to authenticate as "
	    "(etcd's auth enabled)", store_user),
	STR1("store-password-file", "FILE", "etcd: the file whose one line "
	    "is --store-user's password", store_password_file),
	FN("idem-window", "DURATION", "how long a write's \"idem\" token "
	    "answers it again (default 10m; metad-protocol(7))",
	    config_set_idem_window),
	FLAG("foreground", "stay in the foreground (the default)", daemonize,
	    0, 0),
	FLAG("daemonize", "fork once serving; log to syslog unless "
	    "--log-file", daemonize, 1, 0),
	{ "help", NULL, "print this help and exit", CONFIG_HELP, 0, 0, 0,
	    NULL },
	{ "version", NULL, "print the version and exit", CONFIG_VERSION, 0,
	    0, 0, NULL },
};
const size_t config_nopts = sizeof config_opts / sizeof config_opts[0];
