/*
 * The REPL on a terminal: GNU readline's callback interface in a ppoll()
 * loop, so that signals are ours (rl_catch_signals = 0), and the history.
 *
 * Signals: at the prompt SIGINT, SIGWINCH and SIGCONT are blocked but in
 * ppoll(), so none is lost between a check and the sleep.  SIGINT clears
 * the line and shows a fresh prompt; SIGWINCH resizes; SIGCONT (after
 * Ctrl-Z) prepares the terminal again.  While a command runs the terminal
 * is as readline found it, SIGWINCH and SIGCONT are back to their old
 * actions, and SIGINT is intr.c's: it stops whatever waits on metad (a
 * watch, a wait, or a request metad is slow to answer) with status 130.
 * A SIGINT that came too late to stop anything is dropped.
 *
 * History: loaded at the start, each line appended to the file as it is
 * entered (so a session killed with its terminal loses nothing), the file
 * cut to REPL_HISTORY_MAX lines at the end.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "repl.h"

static volatile sig_atomic_t	 repl_tty_sigint;
static volatile sig_atomic_t	 repl_tty_sigwinch;
static volatile sig_atomic_t	 repl_tty_sigcont;

/* What the line handler received; readline calls back without context. */
static int			 repl_tty_done;
static char			*repl_tty_line;

struct repl_tty_signals {
	sigset_t		 set;		/* INT, WINCH, CONT */
	sigset_t		 old_mask;
	sigset_t		 prompt_mask;	/* old_mask + set */
	sigset_t		 wait_mask;	/* old_mask - set, for ppoll */
	sigset_t		 command_mask;	/* old_mask + INT */
	struct sigaction	 old_int;
	struct sigaction	 old_winch;
	struct sigaction	 old_cont;
};

static void
repl_tty_handler(int sig)
{
	if (sig == SIGINT)
		repl_tty_sigint = 1;
	else if (sig == SIGWINCH)
		repl_tty_sigwinch = 1;
	else if (sig == SIGCONT)
		repl_tty_sigcont = 1;
}

static void
repl_tty_signals_prompt(struct repl_tty_signals *rs)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = repl_tty_handler;
	sigemptyset(&sa.sa_mask);
	sigprocmask(SIG_SETMASK, &rs->prompt_mask, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	sigaction(SIGCONT, &sa, NULL);
}

static void
repl_tty_signals_init(struct repl_tty_signals *rs)
{
	sigemptyset(&rs->set);
	sigaddset(&rs->set, SIGINT);
	sigaddset(&rs->set, SIGWINCH);
	sigaddset(&rs->set, SIGCONT);
	sigprocmask(SIG_BLOCK, &rs->set, &rs->old_mask);
	sigaction(SIGINT, NULL, &rs->old_int);
	sigaction(SIGWINCH, NULL, &rs->old_winch);
	sigaction(SIGCONT, NULL, &rs->old_cont);
	rs->prompt_mask = rs->wait_mask = rs->command_mask = rs->old_mask;
	sigaddset(&rs->prompt_mask, SIGINT);
	sigaddset(&rs->prompt_mask, SIGWINCH);
	sigaddset(&rs->prompt_mask, SIGCONT);
	sigdelset(&rs->wait_mask, SIGINT);
	sigdelset(&rs->wait_mask, SIGWINCH);
	sigdelset(&rs->wait_mask, SIGCONT);
	sigaddset(&rs->command_mask, SIGINT);
	repl_tty_signals_prompt(rs);
}

static void
repl_tty_signals_restore(struct repl_tty_signals *rs)
{
	sigaction(SIGINT, &rs->old_int, NULL);
	sigaction(SIGWINCH, &rs->old_winch, NULL);
	sigaction(SIGCONT, &rs->old_cont, NULL);
	sigprocmask(SIG_SETMASK, &rs->old_mask, NULL);
}

/* A SIGINT pending since the command stopped is for nothing: drop it. */
static void
repl_tty_drop_sigint(void)
{
	struct timespec	 zero = { 0, 0 };
	sigset_t	 pending, intset;

	sigemptyset(&intset);
	sigaddset(&intset, SIGINT);
	while (sigpending(&pending) == 0 && sigismember(&pending, SIGINT))
		sigtimedwait(&intset, NULL, &zero);
	repl_tty_sigint = 0;
}

/*
 * Runs what was entered with the terminal and the signals as a command
 * wants them.  Text pasted with its newlines is one line a command, as in
 * a script; Ctrl-C stops the rest too.
 */
static void
repl_tty_run_line(struct repl *r, struct repl_tty_signals *rs,
    const char *line)
{
	struct intr	 in;
	size_t		 len;

	sigaction(SIGWINCH, &rs->old_winch, NULL);
	sigaction(SIGCONT, &rs->old_cont, NULL);
	sigprocmask(SIG_SETMASK, &rs->command_mask, NULL);
	intr_catch(&in, &r->ctx->client);
	for (;;) {
		len = strcspn(line, "\n");
		if (repl_line(r, line, len) == CMD_INTERRUPTED || r->quit ||
		    line[len] == '\0')
			break;
		line += len + 1;
	}
	intr_restore(&in, &r->ctx->client);
	repl_tty_drop_sigint();
	repl_tty_signals_prompt(rs);
}

/* Ctrl-C at the prompt: ^C after the line, then a fresh empty prompt. */
static void
repl_tty_cancel(void)
{
	rl_free_line_state();
	rl_callback_sigcleanup();
	rl_point = rl_end;
	rl_redisplay();
	rl_echo_signal_char(SIGINT);
	rl_replace_line("", 0);
	rl_point = rl_mark = 0;
	using_history();
	rl_crlf();
	rl_on_new_line();
	rl_redisplay();
}

static void
repl_tty_on_line(char *line)
{
	repl_tty_line = line;
	repl_tty_done = 1;
	rl_callback_handler_remove();	/* the command runs in cooked mode */
}

/* Waits for a key or a signal and handles it; -1 when stdin is gone. */
static int
repl_tty_wait(struct repl_tty_signals *rs)
{
	struct pollfd	 pfd;
	int		 n, error;

	pfd.fd = STDIN_FILENO;
	pfd.events = POLLIN;
	pfd.revents = 0;
	n = ppoll(&pfd, 1, NULL, &rs->wait_mask);
	error = errno;		/* readline may change it below */
	if (repl_tty_sigint) {
		repl_tty_sigint = 0;
		repl_tty_cancel();
	}
	if (repl_tty_sigwinch) {
		repl_tty_sigwinch = 0;
		rl_resize_terminal();
	}
	if (repl_tty_sigcont) {
		repl_tty_sigcont = 0;
		rl_deprep_terminal();
		rl_prep_terminal(1);
		rl_forced_update_display();
	}
	if (n < 0)
		return (error == EINTR ? 0 : -1);
	if (pfd.revents & (POLLHUP | POLLERR | POLLNVAL))
		return (-1);
	if (pfd.revents & POLLIN)
		rl_callback_read_char();
	return (0);
}

/*
 * $XDG_STATE_HOME/metactl/history, or ~/.local/state/metactl/history,
 * making the directories (0700) as need be.
 */
static char *
repl_tty_history_path(char **cause)
{
	const char	*state = getenv("XDG_STATE_HOME");
	const char	*home = getenv("HOME");
	struct passwd	*pw;
	char		*dir, *p, *path, c;

	if (state != NULL && state[0] == '/')
		xasprintf(&dir, "%s/metactl", state);
	else {
		if ((home == NULL || home[0] != '/') &&
		    (pw = getpwuid(getuid())) != NULL)
			home = pw->pw_dir;
		if (home == NULL || home[0] != '/') {
			xasprintf(cause, "no home directory (set HOME or "
			    "XDG_STATE_HOME)");
			return (NULL);
		}
		xasprintf(&dir, "%s/.local/state/metactl", home);
	}
	for (p = dir + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		c = *p;
		*p = '\0';
		if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
			xasprintf(cause, "cannot create %s: %s", dir,
			    strerror(errno));
			free(dir);
			return (NULL);
		}
		if ((*p = c) == '\0')
			break;
	}
	xasprintf(&path, "%s/history", dir);
	free(dir);
	return (path);
}

static void
repl_tty_history_warn(struct repl *r, char *cause)
{
	fprintf(stderr, "metactl: the history is not saved: %s\n", cause);
	free(cause);
	free(r->history);
	r->history = NULL;
}

static void
repl_tty_history_load(struct repl *r)
{
	char	*cause = NULL;
	int	 fd;

	using_history();
	stifle_history(REPL_HISTORY_MAX);
	if ((r->history = repl_tty_history_path(&cause)) == NULL) {
		repl_tty_history_warn(r, cause);
		return;
	}
	/* append_history() wants the file to exist. */
	fd = open(r->history, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd == -1) {
		xasprintf(&cause, "cannot open %s: %s", r->history,
		    strerror(errno));
		repl_tty_history_warn(r, cause);
		return;
	}
	close(fd);
	read_history(r->history);
}

/* A line that is not blank nor the one before goes to the history. */
static void
repl_tty_history_add(struct repl *r, const char *line)
{
	HIST_ENTRY	*last;
	char		*cause;
	int		 error;

	if (line[strspn(line, " \t")] == '\0')
		return;
	last = history_get(history_base + history_length - 1);
	if (last != NULL && strcmp(last->line, line) == 0)
		return;
	add_history(line);
	if (r->history != NULL &&
	    (error = append_history(1, r->history)) != 0) {
		xasprintf(&cause, "cannot write %s: %s", r->history,
		    strerror(error));
		repl_tty_history_warn(r, cause);
	}
}

/* Reads one line at the prompt: 0, or -1 at the end (Ctrl-D, hangup). */
static int
repl_tty_read(struct repl_tty_signals *rs)
{
	repl_tty_done = 0;
	repl_tty_line = NULL;
	fflush(stdout);
	rl_reset_screen_size();
	rl_callback_handler_install(REPL_PROMPT, repl_tty_on_line);
	while (!repl_tty_done) {
		if (repl_tty_wait(rs) != 0) {
			rl_callback_handler_remove();
			break;
		}
	}
	if (repl_tty_line == NULL) {
		fputc('\n', rl_outstream);	/* leave the shell a new line */
		fflush(rl_outstream);
		return (-1);
	}
	return (0);
}

enum cmd_status
repl_tty_run(struct repl *r)
{
	struct repl_tty_signals	 rs;

	rl_readline_name = "metactl";
	rl_instream = stdin;
	rl_outstream = stdout;
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_change_environment = 0;
	repl_complete_init(r->ctx);
	repl_tty_history_load(r);
	repl_tty_signals_init(&rs);
	while (!r->quit && repl_tty_read(&rs) == 0) {
		repl_tty_history_add(r, repl_tty_line);
		repl_tty_run_line(r, &rs, repl_tty_line);
		free(repl_tty_line);
		repl_tty_line = NULL;
	}
	repl_tty_drop_sigint();
	repl_tty_signals_restore(&rs);
	if (r->history != NULL)
		history_truncate_file(r->history, REPL_HISTORY_MAX);
	clear_history();
	return (CMD_OK);
}
