/*
 * metactl lock (cmd_lock.c): one lock attempt's state, shared with
 * cmd_lock_run.c, which runs COMMAND while the lock holds.
 */
#ifndef METACTL_LOCK_H
#define METACTL_LOCK_H

#include <sys/types.h>

#include <stdint.h>

#include "metactl.h"
#include "metad_limits.h"

struct lock {
	struct cmd_ctx	*ctx;
	const char	*name;
	char		 owner[OWNER_MAX_BYTES + 1];
	char		*prefix;	/* NAME/.lock/ */
	char		*key;		/* ours: prefix + lease in hex */
	uint64_t	 ttl_ms;
	uint64_t	 lease;
	uint64_t	 create_rev;	/* of our key */
	int64_t		 next_ka;	/* next keepalive, monotonic ms */
	int64_t		 give_up;	/* --wait's end, or -1 */
	struct client	 w;		/* the watch connection */
	uint64_t	 watch;		/* the watch we wait on */
	uint64_t	 epoch;
	const char	*why;		/* the lock was lost: why */
	int		 sig;		/* SIGINT or SIGTERM came: forwarded */
};

/* Keep the lease alive if it is time; else CMD_OK at once. */
enum cmd_status	 lock_keepalive(struct lock *, char **);
/* 1 the watched key was deleted, 0 not by deadline, -1 connection lost. */
int		 lock_deleted(struct lock *, int64_t deadline, char **);

/*
 * The epoch at NAME and its mod_rev (0, 0 when absent); its owner in
 * *owner (NULL when absent) if owner is not NULL.
 */
enum cmd_status	 lock_epoch_read(struct lock *, uint64_t *epoch,
		     uint64_t *mod_rev, char **owner, char **);

/*
 * cmd_lock_wait.c: on a terminal (not with -o json), once per wait
 * (*told), "waiting for NAME (held by OWNER, epoch N)" on stderr; and
 * --wait's error, which names the holder the same way (CMD_FALSE).
 */
void		 lock_tell_wait(struct lock *, int *told);
enum cmd_status	 lock_gave_up(struct lock *, char **);

/*
 * cmd_lock_run.c: COMMAND with the fence while the lock holds; its exit
 * status, CMD_FALSE once it ended after the lock was lost, 128 + N when
 * signal N (SIGINT, SIGTERM) came and was forwarded to it.
 */
int		 lock_run(struct lock *, char **argv, char **);
/* After the release: a SIGTERM in the REPL ends metactl now. */
void		 lock_terminate(struct lock *, char **);

#endif
