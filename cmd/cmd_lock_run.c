/*
 * metactl lock, while the lock holds (cmd_lock.c has the recipe): COMMAND
 * runs with the fence in its environment; metactl keeps the lease alive
 * and watches its waiter key; if the lock is lost COMMAND gets SIGTERM,
 * then SIGKILL LOCK_KILL_GRACE_MS later if it still runs.
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

/* After SIGTERM, COMMAND gets SIGKILL this much later (metactl(1)). */
#define LOCK_KILL_GRACE_MS	10000
/* How often a holder looks at COMMAND while it runs. */
#define LOCK_TICK_MS		50

/* COMMAND, with the fence in its environment; its pid, or -1. */
pid_t
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
int
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
		now = lock_now();
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
		return (CMD_FALSE);
	}
	return (lock_status(st));
}

