/*
 * The REPL (metactl repl): one cmd_ctx for the whole session, one
 * cmd_run() per line.  repl.c runs lines (from a script on stdin, or from
 * the terminal) and decides the session's exit status; repl_tty.c is the
 * terminal side (GNU readline's callback interface, signals, history);
 * repl_complete.c is tab completion.
 *
 * Each line starts from the session's global options (those given before
 * or after "repl" on the command line); a line's own -s, -o or --timeout
 * apply to that line alone.  The connection stays open across lines and is
 * reopened, before a command, when metad closed it; a request that failed
 * is never sent again.
 *
 * Memory: struct repl points into the session's cmd_ctx and owns history
 * (a path), nothing else.
 */
#ifndef METACTL_REPL_H
#define METACTL_REPL_H

#include <stdint.h>

#include "metactl.h"

#define REPL_PROMPT			"metactl> "
/* Longest line read, typed or in a script. */
#define REPL_LINE_MAX_BYTES		(1024 * 1024)
/* Lines kept in the history file. */
#define REPL_HISTORY_MAX		1000
/* Keys offered by a completion, and how long metad may take for them. */
#define REPL_COMPLETE_KEYS_MAX		200
#define REPL_COMPLETE_TIMEOUT_MS	2000

struct repl {
	struct cmd_ctx		*ctx;
	int			 interactive;	/* readline on a terminal */
	int			 quit;		/* quit, exit, or the end */
	enum cmd_status		 failed;	/* of the last failing line */
	unsigned long		 lineno;	/* in a script */

	/* The session's global options, restored after each line. */
	const char		*socket;
	uint64_t		 timeout_ms;
	enum output_mode	 mode;

	char			*history;	/* file, or NULL: not saved */
};

/* repl.c */
enum cmd_status	 repl_line(struct repl *, const char *, size_t);

/* repl_tty.c */
enum cmd_status	 repl_tty_run(struct repl *);

/* repl_complete.c: installs the completion for readline. */
void		 repl_complete_init(struct cmd_ctx *);

#endif
