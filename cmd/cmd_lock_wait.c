/*
 * metactl lock, while it waits its turn (cmd_lock.c has the recipe): whom
 * it waits for, as the epoch document at NAME names its holder.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "lock.h"

/* "held by OWNER, epoch N", as the epoch document at NAME says. */
static char *
lock_holder(struct lock *lk)
{
	char		*owner, *ignored = NULL, *desc;
	uint64_t	 epoch, mod_rev;

	if (lock_epoch_read(lk, &epoch, &mod_rev, &owner, &ignored) !=
	    CMD_OK) {
		xasprintf(&desc, "held; %s", ignored != NULL ? ignored :
		    "its epoch document could not be read");
		free(ignored);
		free(owner);
		return (desc);
	}
	if (epoch == 0)
		return (xstrdup("held, no epoch yet"));
	xasprintf(&desc, "held by %s, epoch %" PRIu64, owner != NULL ?
	    owner : "an unnamed owner", epoch);
	free(owner);
	return (desc);
}

void
lock_tell_wait(struct lock *lk, int *told)
{
	char	*desc;

	if (*told || lk->ctx->mode == OUTPUT_JSON || !isatty(STDERR_FILENO))
		return;
	*told = 1;
	desc = lock_holder(lk);
	fprintf(stderr, "metactl: waiting for %s (%s)\n", lk->name, desc);
	free(desc);
}

enum cmd_status
lock_gave_up(struct lock *lk, char **cause)
{
	char	*desc = lock_holder(lk);

	xasprintf(cause, "lock %s: not acquired within --wait %s; waiting "
	    "for %s (%s)", lk->name, args_get(lk->ctx->args, "wait"),
	    lk->name, desc);
	free(desc);
	return (CMD_FALSE);
}
