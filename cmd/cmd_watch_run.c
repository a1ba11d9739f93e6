/*
 * metactl watch ... -- COMMAND: COMMAND runs once per put or delete event,
 * in event order, the next only after the last has ended (metactl(1)).
 * Its environment: METAD_EVENT (put or delete), METAD_KEY, METAD_REV (the
 * event's mod_rev) and, for a put, METAD_VALUE; a value holding a NUL
 * byte, which no environment variable can, comes as METAD_VALUE_B64
 * instead; with --prev-kv, METAD_PREV_VALUE (or METAD_PREV_VALUE_B64) is
 * the value before, unset for a create.  COMMAND's stdin is /dev/null (the events are metactl's), its
 * stdout and stderr metactl's.  Its exit status is not metactl's: a
 * failing COMMAND is reported on stderr and the watch goes on.
 */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metactl.h"
#include "enc.h"
#include "proto.h"
#include "cmd_watch.h"

/* name (or name_B64 when it holds a NUL byte) set to the value. */
static int
cmd_watch_setenv(const char *name, const struct proto_bytes *val)
{
	char	*b64, *n;
	int	 rc;

	if (memchr(val->data, '\0', val->len) == NULL)
		return (setenv(name, (const char *)val->data, 1));
	b64 = xmalloc(b64_encoded_len(val->len) + 1);
	b64_encode(val->data, val->len, b64);
	xasprintf(&n, "%s_B64", name);
	rc = setenv(n, b64, 1);
	free(n);
	free(b64);
	return (rc);
}

static void
cmd_watch_child(struct cmd_watch *wt, const char *key, const char *rev,
    const struct proto_bytes *val, const struct proto_bytes *prev, int put)
{
	int	 fd, rc;

	close(wt->ctx->client.fd);
	intr_child();
	if ((fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) != -1) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	unsetenv("METAD_VALUE");
	unsetenv("METAD_VALUE_B64");
	unsetenv("METAD_PREV_VALUE");
	unsetenv("METAD_PREV_VALUE_B64");
	rc = setenv("METAD_EVENT", put ? "put" : "delete", 1) |
	    setenv("METAD_KEY", key, 1) | setenv("METAD_REV", rev, 1);
	if (put)
		rc |= cmd_watch_setenv("METAD_VALUE", val);
	if (prev->data != NULL)
		rc |= cmd_watch_setenv("METAD_PREV_VALUE", prev);
	if (rc != 0) {
		fprintf(stderr, "metactl: setenv: %s\n", strerror(errno));
		_exit(126);
	}
	execvp(wt->command[0], wt->command);
	fprintf(stderr, "metactl: watch: %s: %s\n", wt->command[0],
	    strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

enum cmd_status
cmd_watch_run(struct cmd_watch *wt, const cJSON *ev, int put, char **cause)
{
	const cJSON		*key, *pj;
	struct proto_bytes	 val, prev;
	uint64_t		 mod_rev;
	char			 rev[24];
	pid_t			 pid;
	int			 st;

	memset(&val, 0, sizeof val);
	memset(&prev, 0, sizeof prev);
	key = cJSON_GetObjectItemCaseSensitive(ev, "key");
	pj = cJSON_GetObjectItemCaseSensitive(ev, "prev");
	if (!cJSON_IsString(key) || proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(ev, "mod_rev"), &mod_rev) != 0 ||
	    (put && proto_kv_value(ev, &val) != 1) ||
	    (cJSON_IsObject(pj) && proto_kv_value(pj, &prev) != 1)) {
		proto_bytes_free(&val);
		proto_bytes_free(&prev);
		xasprintf(cause, "metad sent an invalid watch event");
		return (CMD_ERROR);
	}
	snprintf(rev, sizeof rev, "%" PRIu64, mod_rev);
	fflush(stdout);
	fflush(stderr);
	if ((pid = fork()) == -1) {
		proto_bytes_free(&val);
		proto_bytes_free(&prev);
		xasprintf(cause, "fork: %s", strerror(errno));
		return (CMD_ERROR);
	}
	if (pid == 0)
		cmd_watch_child(wt, key->valuestring, rev, &val, &prev, put);
	proto_bytes_free(&val);
	proto_bytes_free(&prev);
	while (waitpid(pid, &st, 0) == -1) {
		if (errno != EINTR) {
			xasprintf(cause, "waitpid: %s", strerror(errno));
			return (CMD_ERROR);
		}
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
		fprintf(stderr, "metactl: watch: %s exited with status %d "
		    "(event at rev %s)\n", wt->command[0], WEXITSTATUS(st),
		    rev);
	else if (WIFSIGNALED(st))
		fprintf(stderr, "metactl: watch: %s was killed by signal %d "
		    "(event at rev %s)\n", wt->command[0], WTERMSIG(st), rev);
	return (CMD_OK);
}
