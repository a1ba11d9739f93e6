/*
 * metactl lock, while the lock holds (cmd_lock.c has the recipe): COMMAND
 * runs with the fence in its environment; metactl keeps the lease alive
 * and watches its waiter key; if the lock is lost COMMAND gets SIGTERM,
 * then SIGKILL LOCK_KILL_GRACE_MS later if it still runs.
 *
 * Signals (metactl(1), lock): COMMAND starts with the signal dispositions
 * metactl started with and nothing blocked (intr_child()).  While it runs,
 * SIGINT and SIGTERM do not end metactl: each is forwarded to COMMAND
 * (unless it came from the terminal, which sent it to COMMAND too), the
 * lease is kept alive until COMMAND ends, then the lock is released and
 * metactl's status is 128 + the signal (130, 143).  A signal ignored when
 * metactl started stays ignored.  In the REPL a SIGINT ends the lock
 * command only; a SIGTERM ends metactl, once the lock is released.
 */
#include <sys/prctl.h>
#include <sys/wait.h>

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lock.h"

static volatile sig_atomic_t	 lock_sig;	/* SIGINT or SIGTERM came */
static volatile sig_atomic_t	 lock_sig_tty;	/* from the terminal */

/* What lock_sigs_catch() changed, for lock_sigs_restore(). */
struct lock_sigs {
	struct sigaction		 old_int;
	struct sigaction		 old_term;
	sigset_t			 old_mask;
	const volatile sig_atomic_t	*intr;
	const sigset_t			*intr_mask;
};

static void
lock_sig_handler(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	lock_sig = sig;
	/* The terminal signals its whole foreground group, COMMAND too. */
	lock_sig_tty = si != NULL && si->si_code == SI_KERNEL;
}

static void
lock_sigs_set(int sig, struct sigaction *old)
{
	struct sigaction	 sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	if (intr_was_ignored(sig))
		sa.sa_handler = SIG_IGN;
	else {
		sa.sa_sigaction = lock_sig_handler;
		sa.sa_flags = SA_SIGINFO;
	}
	sigaction(sig, &sa, old);
}

/*
 * SIGINT and SIGTERM are ours until COMMAND ends, and no request is
 * interrupted (the REPL's Ctrl-C, intr.c): the lease must be kept alive.
 */
static void
lock_sigs_catch(struct lock *lk, struct lock_sigs *ls)
{
	struct client	*c = &lk->ctx->client;
	sigset_t	 set;

	lock_sig = lock_sig_tty = 0;
	ls->intr = c->intr;
	ls->intr_mask = c->intr_mask;
	c->intr = lk->w.intr = NULL;
	c->intr_mask = lk->w.intr_mask = NULL;
	lock_sigs_set(SIGINT, &ls->old_int);
	lock_sigs_set(SIGTERM, &ls->old_term);
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, &ls->old_mask);
}

static void
lock_sigs_restore(struct lock *lk, struct lock_sigs *ls)
{
	sigprocmask(SIG_SETMASK, &ls->old_mask, NULL);
	sigaction(SIGINT, &ls->old_int, NULL);
	sigaction(SIGTERM, &ls->old_term, NULL);
	lk->ctx->client.intr = lk->w.intr = ls->intr;
	lk->ctx->client.intr_mask = lk->w.intr_mask = ls->intr_mask;
}

/* A signal that came since the last look: forwarded, and noted. */
static void
lock_sig_forward(struct lock *lk, pid_t pid)
{
	sigset_t	 set, old;
	int		 sig, tty;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_BLOCK, &set, &old);
	sig = lock_sig;
	tty = lock_sig_tty;
	lock_sig = 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (sig == 0)
		return;
	if (!tty)
		kill(pid, sig);
	lk->sig = sig;
}

/*
 * In the REPL a SIGTERM ends metactl too, now that the lock is released:
 * by the signal, as it would have without the lock.
 */
void
lock_terminate(struct lock *lk, char **cause)
{
	struct sigaction	 sa;
	sigset_t		 set;

	if (lk->sig != SIGTERM || !lk->ctx->in_repl)
		return;
	if (*cause != NULL)
		fprintf(stderr, "metactl: %s\n", *cause);
	fflush(stdout);
	fflush(stderr);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigprocmask(SIG_UNBLOCK, &set, NULL);
	raise(SIGTERM);
}

/* After SIGTERM, COMMAND gets SIGKILL this much later (metactl(1)). */
#define LOCK_KILL_GRACE_MS	10000
/* How often a holder looks at COMMAND while it runs. */
#define LOCK_TICK_MS		50

/* COMMAND, with the fence in its environment; its pid, or -1. */
static pid_t
lock_spawn(struct lock *lk, char **argv, char **cause)
{
	char	 v[64], *fence;
	pid_t	 parent = getpid(), pid;

	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1) {
		xasprintf(cause, "fork: %s", strerror(errno));
		return (-1);
	}
	if (pid > 0)
		return (pid);
	/* If metactl dies, the lock is free: COMMAND is told at once. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != parent)
		_exit(1);
	/* Our connections must close when metactl dies, not live on here. */
	close(lk->ctx->client.fd);
	close(lk->w.fd);
	intr_child();
	snprintf(v, sizeof v, "%" PRIu64, lk->epoch);
	xasprintf(&fence, "%s:%" PRIu64, lk->name, lk->epoch);
	if (setenv("METAD_LOCK_EPOCH", v, 1) != 0 ||
	    setenv("METAD_LOCK_KEY", lk->name, 1) != 0 ||
	    setenv("METAD_FENCE", fence, 1) != 0) {
		fprintf(stderr, "metactl: setenv: %s\n", strerror(errno));
		_exit(126);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "metactl: lock %s: %s: %s\n", lk->name, argv[0],
	    strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

/* COMMAND's exit status as ours. */
static int
lock_status(int st)
{
	if (WIFEXITED(st))
		return (WEXITSTATUS(st));
	if (WIFSIGNALED(st))
		return (128 + WTERMSIG(st));
	return (CMD_ERROR);
}

/*
 * Run COMMAND while the lock holds; its exit status, or CMD_FALSE when
 * the lock was lost (COMMAND was stopped then).
 */
static int
lock_hold(struct lock *lk, pid_t pid, char **cause)
{
	int64_t	 now, until, term_at = -1;
	int	 st, rc, killed = 0;
	pid_t	 r;

	for (;;) {
		if ((r = waitpid(pid, &st, WNOHANG)) == pid)
			break;
		if (r == -1 && errno != EINTR) {
			xasprintf(cause, "waitpid: %s", strerror(errno));
			return (CMD_ERROR);
		}
		lock_sig_forward(lk, pid);
		now = mono_ms();
		if (lk->why != NULL) {
			if (term_at == -1) {
				fprintf(stderr, "metactl: lock %s lost (%s): "
				    "sending SIGTERM to %s\n", lk->name,
				    lk->why, "COMMAND");
				kill(pid, SIGTERM);
				term_at = now;
			} else if (!killed &&
			    now - term_at >= LOCK_KILL_GRACE_MS) {
				kill(pid, SIGKILL);
				killed = 1;
			}
			poll(NULL, 0, LOCK_TICK_MS);
			continue;
		}
		until = now + LOCK_TICK_MS;
		if (lk->next_ka < until)
			until = lk->next_ka;
		rc = lock_deleted(lk, until, cause);
		free(*cause);
		*cause = NULL;
		if (rc == 1)
			lk->why = "its waiter key was deleted";
		else if (rc == -1)
			lk->why = "the connection to metad was lost";
		else if (lock_keepalive(lk, cause) != CMD_OK) {
			free(*cause);
			*cause = NULL;
		}
	}
	if (lk->why != NULL) {
		xasprintf(cause, "lock %s was lost (%s); COMMAND ended with "
		    "status %d", lk->name, lk->why, lock_status(st));
		return (lk->sig != 0 ? 128 + lk->sig : CMD_FALSE);
	}
	return (lk->sig != 0 ? 128 + lk->sig : lock_status(st));
}

/* COMMAND while the lock holds, with the signals as above. */
int
lock_run(struct lock *lk, char **argv, char **cause)
{
	struct lock_sigs	 ls;
	pid_t			 pid;
	int			 s;

	lock_sigs_catch(lk, &ls);
	if ((pid = lock_spawn(lk, argv, cause)) == -1)
		s = CMD_ERROR;
	else
		s = lock_hold(lk, pid, cause);
	lock_sigs_restore(lk, &ls);
	return (s);
}

