/*
 * SIGINT for the commands that block (watch, wait): Ctrl-C ends them with
 * CMD_INTERRUPTED (exit status 130) instead of killing metactl, so that
 * the output is flushed and the REPL goes on.  The signal is blocked but
 * while the client waits on the socket (ppoll() with poll_mask), so it is
 * never lost between checking the flag and sleeping.
 *
 * The handler is installed even when SIGINT was ignored at startup (a
 * background job of a non-interactive shell): "kill -INT" is then the way
 * to end a watch cleanly.
 *
 * A child metactl runs (lock's COMMAND) starts as a shell would start it:
 * intr_startup() notes which signals were ignored when metactl started,
 * and intr_child() gives the child those ignored, every other signal its
 * default action, and nothing blocked, whatever the REPL or a command
 * had set meanwhile.
 */
#include <signal.h>
#include <string.h>

#include "metactl.h"

static volatile sig_atomic_t	 intr_caught;
static sigset_t			 intr_ignored;	/* at startup */

void
intr_startup(void)
{
	struct sigaction	 sa;
	int			 sig;

	sigemptyset(&intr_ignored);
	for (sig = 1; sig < NSIG; sig++) {
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler == SIG_IGN)
			sigaddset(&intr_ignored, sig);
	}
}

int
intr_was_ignored(int sig)
{
	return (sigismember(&intr_ignored, sig) == 1);
}

/* In the child, before exec: the startup dispositions, nothing blocked. */
void
intr_child(void)
{
	struct sigaction	 sa;
	sigset_t		 none;
	int			 sig;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	for (sig = 1; sig < NSIG; sig++) {
		if (sig == SIGKILL || sig == SIGSTOP)
			continue;
		sa.sa_handler = intr_was_ignored(sig) ? SIG_IGN : SIG_DFL;
		sigaction(sig, &sa, NULL);	/* glibc's own: EINVAL */
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void
intr_handler(int sig)
{
	(void)sig;
	intr_caught = 1;
}

void
intr_catch(struct intr *in, struct client *c)
{
	struct sigaction	 sa;
	sigset_t		 block;

	intr_caught = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = intr_handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &in->old_act);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &in->old_mask);
	in->poll_mask = in->old_mask;
	sigdelset(&in->poll_mask, SIGINT);
	c->intr = &intr_caught;
	c->intr_mask = &in->poll_mask;
}

/* A SIGINT still pending is taken by our handler, then the old one is back. */
void
intr_restore(struct intr *in, struct client *c)
{
	c->intr = NULL;
	c->intr_mask = NULL;
	sigprocmask(SIG_SETMASK, &in->old_mask, NULL);
	sigaction(SIGINT, &in->old_act, NULL);
	intr_caught = 0;
}
