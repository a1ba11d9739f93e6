/*
 * epoch get KEY and epoch bump KEY [--owner O] [--if-epoch N]
 * (metad-protocol(7), EPOCHS).
 *
 * epoch get prints "epoch N owner OWNER" (OWNER as a token, output.h: ""
 * when empty); a key with no epoch is exit status 1, "metactl: KEY: no
 * epoch" on stderr.  epoch bump prints the new epoch number alone, for
 * e=$(metactl epoch bump KEY --owner me); with --if-epoch, a lost race is
 * exit status 3 with the current epoch and owner in the message.  -o json
 * prints the daemon's response for both.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "enc.h"
#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"

static enum cmd_status	cmd_epoch_get(struct cmd_ctx *, char **);
static enum cmd_status	cmd_epoch_bump(struct cmd_ctx *, char **);

const struct cmd_entry cmd_epoch_get_entry = {
	.name = "epoch get",
	.optstring = "",
	.args_min = 1,
	.args_max = 1,
	.usage = "KEY",
	.help = "print a key's epoch and owner: \"epoch N owner OWNER\"",
	.details =
	    "An epoch key holds {\"epoch\":N,\"owner\":\"...\"}.  A key with "
	    "no epoch is exit\nstatus 1.  OWNER is printed as a JSON string "
	    "when it is empty or holds a\nspace.\n",
	.exec = cmd_epoch_get
};

static const struct option cmd_epoch_bump_longopts[] = {
	{ "owner",	required_argument,	NULL, 0 },
	{ "if-epoch",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_epoch_bump_entry = {
	.name = "epoch bump",
	.optstring = "",
	.longopts = cmd_epoch_bump_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "KEY [--owner OWNER] [--if-epoch N]",
	.help = "increment a key's epoch (1 if absent); prints the new epoch",
	.details =
	    "Atomically sets the epoch to N+1 and the owner to OWNER (default "
	    "\"\").\nWith --if-epoch N the bump happens only if the epoch is "
	    "N (0: none yet);\notherwise exit status 3 and the current epoch "
	    "and owner on stderr.  Writes\nfenced with --fence KEY:EPOCH "
	    "carry the epoch a leader got here.\n",
	.exec = cmd_epoch_bump
};

/* Sends epoch_get or epoch_bump; the response is the caller's. */
static enum cmd_status
cmd_epoch_call(struct cmd_ctx *ctx, const char *op, const char *owner,
    const uint64_t *if_epoch, cJSON **resp, char **cause)
{
	const char	*key = ctx->args->argv[0];
	struct buf	 b;
	struct jw	 w;
	enum cmd_status	 s;

	if ((s = cmd_check_key(key, "KEY", cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, op);
	jw_name(&w, "key");
	jw_cstr(&w, key);
	if (owner != NULL) {
		jw_name(&w, "owner");
		jw_cstr(&w, owner);
	}
	if (if_epoch != NULL) {
		jw_name(&w, "if_epoch");
		jw_u64(&w, *if_epoch);
	}
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, resp, cause);
	buf_free(&b);
	return (s);
}

/* The epoch object's number; -1 with a cause when it has none. */
static int
cmd_epoch_number(const cJSON *ep, uint64_t *n, char **cause)
{
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(ep, "epoch"),
	    n) != 0) {
		xasprintf(cause, "metad sent an epoch without a number");
		return (-1);
	}
	return (0);
}

static enum cmd_status
cmd_epoch_get(struct cmd_ctx *ctx, char **cause)
{
	const cJSON	*ep, *owner;
	cJSON		*resp;
	struct buf	 b;
	uint64_t	 n;
	enum cmd_status	 s;

	if ((s = cmd_epoch_call(ctx, "epoch_get", NULL, NULL, &resp,
	    cause)) != CMD_OK)
		return (s);
	ep = cJSON_GetObjectItemCaseSensitive(resp, "epoch");
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	if (ep == NULL || cJSON_IsNull(ep)) {
		xasprintf(cause, "%s: no epoch", ctx->args->argv[0]);
		s = CMD_FALSE;
	} else if (cmd_epoch_number(ep, &n, cause) != 0)
		s = CMD_ERROR;
	else if (ctx->mode == OUTPUT_TEXT) {
		owner = cJSON_GetObjectItemCaseSensitive(ep, "owner");
		buf_init(&b);
		buf_printf(&b, "epoch %" PRIu64 " owner ", n);
		output_token(&b, cJSON_IsString(owner) ? owner->valuestring :
		    "", cJSON_IsString(owner) ? strlen(owner->valuestring) : 0);
		printf("%s\n", buf_cstr(&b));
		buf_free(&b);
	}
	cJSON_Delete(resp);
	return (s);
}

static enum cmd_status
cmd_epoch_bump(struct cmd_ctx *ctx, char **cause)
{
	const char	*owner, *v;
	uint64_t	 if_epoch, n;
	cJSON		*resp;
	enum cmd_status	 s;

	owner = args_get(ctx->args, "owner");
	if (owner != NULL && (strlen(owner) > OWNER_MAX_BYTES ||
	    !utf8_valid(owner, strlen(owner)))) {
		xasprintf(cause, "invalid --owner: it must be UTF-8 of at most "
		    "%d bytes", OWNER_MAX_BYTES);
		return (CMD_USAGE);
	}
	if ((v = args_get(ctx->args, "if-epoch")) != NULL &&
	    (s = args_u64(v, "--if-epoch", &if_epoch, cause)) != CMD_OK)
		return (s);
	if ((s = cmd_epoch_call(ctx, "epoch_bump", owner, v != NULL ?
	    &if_epoch : NULL, &resp, cause)) != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else if (cmd_epoch_number(cJSON_GetObjectItemCaseSensitive(resp,
	    "epoch"), &n, cause) != 0)
		s = CMD_ERROR;
	else
		printf("%" PRIu64 "\n", n);
	cJSON_Delete(resp);
	return (s);
}
