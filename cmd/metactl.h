/*
 * metactl: the command table and what every command is handed.
 *
 * A command is one row, a const struct cmd_entry, defined in its own file
 * (cmd_get.c, or one file per family: cmd_put.c holds put and cas) and listed
 * in cmd_table[] in cmd.c.  cmd_run() finds the row, parses the arguments
 * with its options (plus the global ones, which may also follow the
 * command), checks the number of positional arguments and calls exec.
 *
 * exec returns a cmd_status, which is the exit status (metactl(1) EXIT
 * STATUS); only main() (or the REPL, which runs one cmd_run() per line on
 * one cmd_ctx) decides to exit.  A local failure also sets *cause, a
 * message report_failure() prints after "metactl: " (and, under -o json, as
 * an error object on stdout whose code is ctx->fail_code, else the exit
 * status's: usage, unreachable, internal); a usage error (CMD_USAGE) is
 * followed by the command's usage line.  A daemon error response is
 * rendered by cmd_response_error() and has no cause.
 *
 * Memory: struct args points into the argv it was parsed from and owns
 * nothing else; a response (cJSON) returned by cmd_call() belongs to the
 * caller, who frees it with cJSON_Delete().
 */
#ifndef METACTL_H
#define METACTL_H

#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "client.h"
#include "jsonw.h"
#include "output.h"
#include "util.h"

/* Exit statuses (metactl(1), EXIT STATUS). */
enum cmd_status {
	CMD_OK = 0,		/* success */
	CMD_FALSE = 1,		/* the condition does not hold */
	CMD_USAGE = 2,		/* usage error */
	CMD_CONFLICT = 3,	/* failed_precondition or fenced */
	CMD_UNREACHABLE = 4,	/* unreachable, or no answer in time */
	CMD_ERROR = 5,		/* any other error */
	CMD_INTERRUPTED = 130	/* SIGINT ended watch or wait (128 + 2) */
};

/* Default --timeout, applied to connecting and to each response. */
#define METACTL_TIMEOUT_DEFAULT_MS	10000
/* Largest value read from a file or stdin by put and cas. */
#define METACTL_VALUE_MAX_BYTES		(64 * 1024 * 1024)

struct args;
struct cmd_ctx;

struct cmd_entry {
	const char		*name;	/* 1 or 2 words: "epoch get" */
	const char		*alias;	/* or NULL */

	/*
	 * Options for getopt_long.  Every short option in optstring has a
	 * long option whose val is that letter; a long-only option has val
	 * 0.  Commands look options up by long name (args_has/args_get).
	 */
	const char		*optstring;
	const struct option	*longopts;	/* NULL or 0-terminated */

	int			 args_min;	/* positional arguments */
	int			 args_max;	/* -1: no upper bound */
	const char		*usage;		/* after the name */
	const char		*help;		/* a line for --help */
	const char		*details;	/* lines for "help CMD", or NULL */

	enum cmd_status		 (*exec)(struct cmd_ctx *, char **);
};

/* The state of one metactl invocation (or of a whole REPL session). */
struct cmd_ctx {
	/* Global options. */
	const char		*socket;	/* -s; NULL: the default */
	const char		*tls_cacert;	/* --cacert ...; NULL: $METACTL_ */
	const char		*tls_cert;
	const char		*tls_key;
	uint64_t		 timeout_ms;	/* --timeout; 0: no limit */
	enum output_mode	 mode;		/* -o */

	/* The command being run, set by cmd_run(). */
	const struct cmd_entry	*entry;
	struct args		*args;
	const char		*family;	/* no entry: "epoch" */

	/* The connection, opened by the first request and kept open. */
	struct client		 client;
	uint64_t		 next_id;

	/* The failure being reported (report_failure() clears them). */
	const char		*fail_code;	/* NULL: by the exit status */
	int			 json_reported;	/* an error object is out */

	/* Set by the REPL (repl.c). */
	int			 in_repl;	/* a session is running */
	int			 stdin_script;	/* it reads its lines there */
	int			 reported;	/* it printed every message */
};

extern const struct cmd_entry	*cmd_table[];
extern const struct option	 cmd_global_longopts[];
#define CMD_GLOBAL_OPTSTRING	"s:o:h"

extern const struct cmd_entry	 cmd_get_entry;
extern const struct cmd_entry	 cmd_put_entry;
extern const struct cmd_entry	 cmd_cas_entry;
extern const struct cmd_entry	 cmd_del_entry;
extern const struct cmd_entry	 cmd_ls_entry;
extern const struct cmd_entry	 cmd_history_entry;
extern const struct cmd_entry	 cmd_status_entry;
extern const struct cmd_entry	 cmd_ping_entry;
extern const struct cmd_entry	 cmd_metrics_entry;
extern const struct cmd_entry	 cmd_compact_entry;
extern const struct cmd_entry	 cmd_watch_entry;
extern const struct cmd_entry	 cmd_wait_entry;
extern const struct cmd_entry	 cmd_epoch_get_entry;
extern const struct cmd_entry	 cmd_epoch_bump_entry;
extern const struct cmd_entry	 cmd_txn_entry;
extern const struct cmd_entry	 cmd_lease_grant_entry;
extern const struct cmd_entry	 cmd_lease_keepalive_entry;
extern const struct cmd_entry	 cmd_lease_revoke_entry;
extern const struct cmd_entry	 cmd_lease_info_entry;
extern const struct cmd_entry	 cmd_lease_ls_entry;
extern const struct cmd_entry	 cmd_lock_entry;
extern const struct cmd_entry	 cmd_dump_entry;
extern const struct cmd_entry	 cmd_load_entry;
extern const struct cmd_entry	 cmd_snapshot_save_entry;
extern const struct cmd_entry	 cmd_snapshot_status_entry;
extern const struct cmd_entry	 cmd_repl_entry;
extern const struct cmd_entry	 cmd_help_entry;

/* cmd.c */
void		 cmd_ctx_init(struct cmd_ctx *);
void		 cmd_ctx_free(struct cmd_ctx *);
enum cmd_status	 cmd_parse_globals(struct cmd_ctx *, int, char **, int *,
		     char **);
enum cmd_status	 cmd_global_option(struct cmd_ctx *, const char *name,
		     const char *value, char **);
enum cmd_status	 cmd_run(struct cmd_ctx *, int, char **, char **);
void		 cmd_print_usage(FILE *, const struct cmd_entry *);
int		 cmd_print_usage_ctx(FILE *, const struct cmd_ctx *);
void		 cmd_print_help(FILE *);
void		 cmd_print_command_help(FILE *, const struct cmd_entry *);
enum cmd_status	 cmd_check_key(const char *, const char *what, char **);
enum cmd_status	 cmd_read_stdin(struct cmd_ctx *, struct buf *, char **);
enum cmd_status	 cmd_connect(struct cmd_ctx *, char **);
void		 cmd_request_open(struct cmd_ctx *, struct jw *,
		     struct buf *, const char *op);
enum cmd_status	 cmd_roundtrip(struct cmd_ctx *, struct buf *, cJSON **,
		     char **);
enum cmd_status	 cmd_call(struct cmd_ctx *, struct buf *, cJSON **,
		     char **);
enum cmd_status	 cmd_response_error(struct cmd_ctx *, const cJSON *);
enum cmd_status	 cmd_value_fits(struct cmd_ctx *, size_t, char **);
enum cmd_status	 cmd_client_status(const struct client *);

/*
 * pages.c: a listing asked for page by page (ls, history).  request builds
 * the request for the next page of at most n items into the buffer; item
 * prints an item or keeps it (cmd_pages_json() under -o json).
 * cmd_pages_cut(): whether --limit cut the listing (text output says so
 * on stderr, so that stdout stays the items alone).
 */
struct cmd_pages {
	struct cmd_ctx		*ctx;
	const char		*array;		/* "kvs", "events" */
	uint64_t		 page;		/* items a request asks for */
	uint64_t		 limit;		/* --limit, 0: none */
	uint64_t		 seen;
	int			 more;		/* as the last page */
	int			 have_rev;
	uint64_t		 rev;		/* of the first page */
	struct output_table	 table;
	struct buf		 json;		/* -o json: the items */
	size_t			 njson;
	void			(*request)(void *, struct buf *, uint64_t n);
	enum cmd_status		(*item)(void *, const cJSON *, char **);
	void			*arg;
};

void		 cmd_pages_init(struct cmd_pages *, struct cmd_ctx *,
		     const char *array, uint64_t page, size_t ncols,
		     unsigned align);
void		 cmd_pages_free(struct cmd_pages *);
void		 cmd_pages_json(struct cmd_pages *, const cJSON *);
enum cmd_status	 cmd_pages_run(struct cmd_pages *, char **);
int		 cmd_pages_cut(const struct cmd_pages *);

/* suggest.c: " (did you mean ...?)" for an unknown command. */
void		 suggest_command(struct buf *, const char *word,
		     const char *family);

/*
 * report.c: report_failure() prints what a command left to say, the one
 * place main() and the REPL report a failure; report_error() renders an
 * error metactl finds itself as metad would have (code, message);
 * report_input() marks the cause just set as bad input (code "input",
 * exit 5) and returns CMD_ERROR.
 */
void		 report_failure(struct cmd_ctx *, enum cmd_status, const char *);
enum cmd_status	 report_error(struct cmd_ctx *, const char *code,
		     const char *msg);
enum cmd_status	 report_input(struct cmd_ctx *);

/* cmd_put.c: all of fd (txn reads stdin with it too). */
enum cmd_status	 cmd_put_read_fd(int, const char *name, struct buf *,
		     char **);

/* cmd_lease.c: a lease ID argument; one lease op (not_found: CMD_FALSE). */
enum cmd_status	 cmd_lease_id(const char *, uint64_t *, char **);
enum cmd_status	 cmd_lease_call(struct cmd_ctx *, const char *op, uint64_t id,
		     uint64_t ttl_ms, int session, cJSON **, char **);

/* txn_text.c: the etcdctl-style text form of a txn, as a request object. */
cJSON		*txn_text_parse(const char *, size_t, char **);

/* cmd_get.c: a kv's value as get prints it (wait too). */
enum cmd_status	 cmd_get_print(const cJSON *kv, int raw, char **);

/*
 * intr.c: SIGINT ends a blocking command (watch, wait) cleanly.  Between
 * intr_catch() and intr_restore() SIGINT is blocked except while the client
 * waits for the socket (ppoll), where it makes the request fail with
 * CLIENT_FAIL_INTERRUPTED, which cmd_roundtrip() turns into CMD_INTERRUPTED.
 */
struct intr {
	struct sigaction	 old_act;
	sigset_t		 old_mask;
	sigset_t		 poll_mask;
};

void		 intr_catch(struct intr *, struct client *);
void		 intr_restore(struct intr *, struct client *);
/*
 * The signals ignored when metactl started (intr_startup(), first thing in
 * main()) stay ignored in a child; intr_child(), after fork() and before
 * exec, gives every other signal its default action and blocks none.
 */
void		 intr_startup(void);
int		 intr_was_ignored(int);
void		 intr_child(void);

/*
 * progress.c: a progress line on stderr for commands that may take long
 * (dump, load, snapshot save), once they have run a second, only on a
 * terminal and never with -o json; progress_end() erases it.
 */
struct progress {
	int		 on;
	int		 shown;
	int64_t		 start_ms;
	int64_t		 last_ms;
};

void		 progress_start(struct progress *, const struct cmd_ctx *);
void		 progress_show(struct progress *, const char *, ...)
		     __attribute__((format(printf, 2, 3)));
int		 progress_due(const struct progress *);
uint64_t	 progress_rate(const struct progress *, uint64_t n);
void		 progress_eta(const struct progress *, uint64_t done,
		     uint64_t total, char *, size_t);
void		 progress_end(struct progress *);

/* args.c: per-command argument parsing. */
struct args {
	struct args_opt	*opts;		/* the command's options */
	size_t		 nopts;
	struct args_opt	*globals;	/* global ones after it */
	size_t		 nglobals;
	int		 argc;		/* positional arguments */
	char		**argv;
	/* Of them, how many came after a "--" (the last ones); -1: none. */
	int		 after_dashdash;
};

struct args_opt {
	const char	*name;		/* the long option's name */
	const char	*value;		/* NULL for a flag */
};

struct args	*args_parse(const struct cmd_entry *, int, char **, char **);
void		 args_free(struct args *);
void		 args_bad_option(const char *, int, int, char **, char **);
int		 args_count(const struct args *, const char *);
int		 args_has(const struct args *, const char *);
const char	*args_get(const struct args *, const char *);
enum cmd_status	 args_u64(const char *, const char *what, uint64_t *,
		     char **);
enum cmd_status	 args_duration(const char *, uint64_t *, char **);
enum cmd_status	 args_ttl(const char *, const char *what, uint64_t *,
		     char **);

/*
 * cmd_cond.c: preconditions, fence and idem token, shared by put, cas,
 * del and txn.
 */
struct cmd_cond {
	int		 if_absent;
	int		 has_version;
	uint64_t	 version;
	int		 has_mod_rev;
	uint64_t	 mod_rev;
	const char	*fence_key;	/* into argv; NULL: none */
	size_t		 fence_key_len;
	uint64_t	 fence_epoch;
	const char	*idem;		/* --idem's token; NULL: none */
};

/* The options cmd_cond_parse() reads, for a command's longopts. */
#define CMD_COND_LONGOPTS					\
	{ "if-absent",	no_argument,		NULL, 0 },	\
	{ "if-version",	required_argument,	NULL, 0 },	\
	{ "if-mod-rev",	required_argument,	NULL, 0 },	\
	{ "fence",	required_argument,	NULL, 0 },	\
	{ "idem",	required_argument,	NULL, 0 }

enum cmd_status	 cmd_cond_parse(const struct args *, struct cmd_cond *,
		     char **);
void		 cmd_cond_write(const struct cmd_cond *, struct jw *);

#endif
