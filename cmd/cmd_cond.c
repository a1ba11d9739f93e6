/*
 * Write preconditions, the fence and the idem token (metad-protocol(7),
 * PRECONDITIONS, FENCES and IDEMPOTENT WRITES), shared by put, cas, del
 * and txn: --if-absent, --if-version N, --if-mod-rev R (at most one of
 * them), --fence KEY:EPOCH and --idem TOKEN.
 */
#include <stdlib.h>
#include <string.h>

#include "metactl.h"
#include "metad_limits.h"

static enum cmd_status
cmd_cond_fence(const char *arg, struct cmd_cond *c, char **cause)
{
	const char	*colon;
	char		*key;
	enum cmd_status	 s;

	/* The key may hold colons; the epoch cannot. */
	if ((colon = strrchr(arg, ':')) == NULL || colon == arg) {
		xasprintf(cause, "invalid --fence: \"%s\" (expected "
		    "KEY:EPOCH)", arg);
		return (CMD_USAGE);
	}
	if ((s = args_u64(colon + 1, "--fence epoch", &c->fence_epoch,
	    cause)) != CMD_OK)
		return (s);
	key = xmemdup(arg, (size_t)(colon - arg));
	s = cmd_check_key(key, "the --fence key", cause);
	free(key);
	if (s != CMD_OK)
		return (s);
	c->fence_key = arg;
	c->fence_key_len = (size_t)(colon - arg);
	return (CMD_OK);
}

enum cmd_status
cmd_cond_parse(const struct args *a, struct cmd_cond *c, char **cause)
{
	const char	*v;
	enum cmd_status	 s;
	int		 n;

	memset(c, 0, sizeof *c);
	n = args_count(a, "if-absent") + args_count(a, "if-version") +
	    args_count(a, "if-mod-rev");
	if (n > 1) {
		xasprintf(cause, "give at most one of --if-absent, "
		    "--if-version and --if-mod-rev");
		return (CMD_USAGE);
	}
	c->if_absent = args_has(a, "if-absent");
	if ((v = args_get(a, "if-version")) != NULL) {
		if ((s = args_u64(v, "--if-version", &c->version,
		    cause)) != CMD_OK)
			return (s);
		c->has_version = 1;
	}
	if ((v = args_get(a, "if-mod-rev")) != NULL) {
		if ((s = args_u64(v, "--if-mod-rev", &c->mod_rev,
		    cause)) != CMD_OK)
			return (s);
		c->has_mod_rev = 1;
	}
	if (args_count(a, "idem") > 1) {
		xasprintf(cause, "give --idem at most once");
		return (CMD_USAGE);
	}
	if ((c->idem = args_get(a, "idem")) != NULL && (*c->idem == '\0' ||
	    strlen(c->idem) > IDEM_TOKEN_MAX_BYTES)) {
		xasprintf(cause, "invalid --idem: a token of 1 to %d bytes",
		    IDEM_TOKEN_MAX_BYTES);
		return (CMD_USAGE);
	}
	if (args_count(a, "fence") > 1) {
		xasprintf(cause, "give --fence at most once");
		return (CMD_USAGE);
	}
	if ((v = args_get(a, "fence")) != NULL)
		return (cmd_cond_fence(v, c, cause));
	return (CMD_OK);
}

/* Adds the precondition and fence fields to an open request object. */
void
cmd_cond_write(const struct cmd_cond *c, struct jw *w)
{
	if (c->if_absent) {
		jw_name(w, "if_absent");
		jw_bool(w, 1);
	} else if (c->has_version) {
		jw_name(w, "if_version");
		jw_u64(w, c->version);
	} else if (c->has_mod_rev) {
		jw_name(w, "if_mod_rev");
		jw_u64(w, c->mod_rev);
	}
	if (c->fence_key != NULL) {
		jw_name(w, "fence");
		jw_obj_open(w);
		jw_name(w, "key");
		jw_str(w, c->fence_key, c->fence_key_len);
		jw_name(w, "epoch");
		jw_u64(w, c->fence_epoch);
		jw_obj_close(w);
	}
	if (c->idem != NULL) {
		jw_name(w, "idem");
		jw_cstr(w, c->idem);
	}
}
