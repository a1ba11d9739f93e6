/*
 * metactl watch (cmd_watch.c) and its COMMAND per event (cmd_watch_run.c).
 */
#ifndef METACTL_CMD_WATCH_H
#define METACTL_CMD_WATCH_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "metad_limits.h"

struct cmd_ctx;

struct cmd_watch {
	struct cmd_ctx	*ctx;
	/* The keys and prefixes, in the order given. */
	const char	*names[WATCH_KEYS_MAX];
	int		 prefix[WATCH_KEYS_MAX];
	unsigned	 nnames;
	char		**command;	/* after "--", or NULL */
	uint64_t	 from_rev;	/* 0: changes after now */
	uint64_t	 count;		/* 0: no limit */
	uint64_t	 progress_ms;	/* 0: no progress lines */
	int		 prev_kv;	/* --prev-kv */
	uint64_t	 seen;
	uint64_t	 id;		/* the daemon's current watch */
	int		 told_resume;
	int		 closed;	/* stdout's reader is gone */
};

/*
 * COMMAND for one put (put 1) or delete event, waited for: CMD_OK
 * whatever its exit status; an error when it cannot be started.
 */
enum cmd_status	cmd_watch_run(struct cmd_watch *, const cJSON *ev, int put,
		    char **cause);

#endif
