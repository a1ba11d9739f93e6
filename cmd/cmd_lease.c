/*
 * lease grant TTL [--session], lease keepalive ID [--forever], lease revoke
 * ID, lease info ID, lease ls (metactl(1), COMMANDS).
 *
 * Text output: grant prints the lease id alone (l=$(metactl lease grant
 * 30s)); keepalive prints the TTL in ms after each refresh; revoke the rev
 * its keys were deleted at; info "lease ID ttl_ms N remaining_ms N session
 * yes|no" and then its keys, one a line; ls one lease a line, "ID TTL_MS
 * REMAINING_MS session|-".  A lease that is unknown, expired or revoked is
 * exit status 1 for keepalive, revoke and info.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "metactl.h"
#include "proto.h"

static enum cmd_status	cmd_lease_grant(struct cmd_ctx *, char **);
static enum cmd_status	cmd_lease_keepalive(struct cmd_ctx *, char **);
static enum cmd_status	cmd_lease_revoke(struct cmd_ctx *, char **);
static enum cmd_status	cmd_lease_info(struct cmd_ctx *, char **);
static enum cmd_status	cmd_lease_ls(struct cmd_ctx *, char **);

static const struct option cmd_lease_grant_longopts[] = {
	{ "session",	no_argument,		NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_lease_grant_entry = {
	.name = "lease grant",
	.optstring = "",
	.longopts = cmd_lease_grant_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "TTL [--session]",
	.help = "create a lease of TTL (1s to 1h); prints its id",
	.details =
	    "Keys put with --lease ID are deleted, at one revision, when the "
	    "lease is\nrevoked or not kept alive for TTL (500ms, 10s, 2m; a "
	    "bare number is\nseconds).  --session: the lease is also revoked "
	    "when this metactl's\nconnection closes (in the REPL: when it "
	    "ends).\n",
	.exec = cmd_lease_grant
};

static const struct option cmd_lease_keepalive_longopts[] = {
	{ "forever",	no_argument,		NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_lease_keepalive_entry = {
	.name = "lease keepalive",
	.optstring = "",
	.longopts = cmd_lease_keepalive_longopts,
	.args_min = 1,
	.args_max = 1,
	.usage = "ID [--forever]",
	.help = "refresh a lease's TTL once (--forever: every TTL/3)",
	.details =
	    "Prints the TTL in ms after each refresh.  --forever refreshes "
	    "every third of\nthe TTL until interrupted (exit status 130) or "
	    "the lease is gone (1).\n",
	.exec = cmd_lease_keepalive
};

const struct cmd_entry cmd_lease_revoke_entry = {
	.name = "lease revoke",
	.optstring = "",
	.args_min = 1,
	.args_max = 1,
	.usage = "ID",
	.help = "revoke a lease, deleting its keys at one revision",
	.exec = cmd_lease_revoke
};

const struct cmd_entry cmd_lease_info_entry = {
	.name = "lease info",
	.optstring = "",
	.args_min = 1,
	.args_max = 1,
	.usage = "ID",
	.help = "print a lease's TTL, time left, session flag and keys",
	.exec = cmd_lease_info
};

const struct cmd_entry cmd_lease_ls_entry = {
	.name = "lease ls",
	.optstring = "",
	.args_min = 0,
	.args_max = 0,
	.usage = "",
	.help = "list the live leases: ID TTL_MS REMAINING_MS session|-",
	.exec = cmd_lease_ls
};

enum cmd_status
cmd_lease_id(const char *s, uint64_t *id, char **cause)
{
	enum cmd_status	 st;

	if ((st = args_u64(s, "ID", id, cause)) != CMD_OK)
		return (st);
	if (*id == 0) {
		xasprintf(cause, "invalid ID: 0 is no lease id");
		return (CMD_USAGE);
	}
	return (CMD_OK);
}

/*
 * One lease op on ctx's connection: id (0: none), ttl_ms (0: none).  A
 * not_found answer is CMD_FALSE (printed); *resp the response when CMD_OK.
 */
enum cmd_status
cmd_lease_call(struct cmd_ctx *ctx, const char *op, uint64_t id,
    uint64_t ttl_ms, int session, cJSON **resp, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	enum cmd_status	 s;
	const cJSON	*err;

	buf_init(&b);
	cmd_request_open(ctx, &w, &b, op);
	if (id != 0) {
		jw_name(&w, "lease");
		jw_u64(&w, id);
	}
	if (ttl_ms != 0 || strcmp(op, "lease_grant") == 0) {
		jw_name(&w, "ttl_ms");
		jw_u64(&w, ttl_ms);
	}
	if (session) {
		jw_name(&w, "session");
		jw_bool(&w, 1);
	}
	jw_obj_close(&w);
	s = cmd_roundtrip(ctx, &b, resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(*resp, "ok")))
		return (CMD_OK);
	err = cJSON_GetObjectItemCaseSensitive(*resp, "error");
	s = cmd_response_error(ctx, *resp);
	if (proto_code_parse(cJSON_GetStringValue(
	    cJSON_GetObjectItemCaseSensitive(err, "code"))) == PROTO_NOT_FOUND)
		s = CMD_FALSE;
	cJSON_Delete(*resp);
	*resp = NULL;
	return (s);
}

static uint64_t
cmd_lease_u64(const cJSON *o, const char *name)
{
	uint64_t	 v = 0;

	proto_number_u64(cJSON_GetObjectItemCaseSensitive(o, name), &v);
	return (v);
}

static enum cmd_status
cmd_lease_grant(struct cmd_ctx *ctx, char **cause)
{
	uint64_t	 ttl;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = args_ttl(ctx->args->argv[0], "TTL", &ttl, cause)) != CMD_OK)
		return (s);
	if ((s = cmd_lease_call(ctx, "lease_grant", 0, ttl,
	    args_has(ctx->args, "session"), &resp, cause)) != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else
		printf("%" PRIu64 "\n", cmd_lease_u64(resp, "lease"));
	cJSON_Delete(resp);
	return (CMD_OK);
}

/* Sleeps ms, or until SIGINT (intr.c): CMD_INTERRUPTED then. */
static enum cmd_status
cmd_lease_sleep(struct client *c, uint64_t ms)
{
	struct timespec	 ts;

	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000;
	if (c->intr != NULL && *c->intr)
		return (CMD_INTERRUPTED);
	if (ppoll(NULL, 0, &ts, c->intr_mask) == -1 && errno == EINTR &&
	    c->intr != NULL && *c->intr)
		return (CMD_INTERRUPTED);
	return (CMD_OK);
}

static enum cmd_status
cmd_lease_keepalive(struct cmd_ctx *ctx, char **cause)
{
	struct intr	 in;
	uint64_t	 id, ttl;
	cJSON		*resp;
	enum cmd_status	 s;
	int		 forever = args_has(ctx->args, "forever");

	if ((s = cmd_lease_id(ctx->args->argv[0], &id, cause)) != CMD_OK)
		return (s);
	if (forever)
		intr_catch(&in, &ctx->client);
	for (;;) {
		if ((s = cmd_lease_call(ctx, "lease_keepalive", id, 0, 0,
		    &resp, cause)) != CMD_OK)
			break;
		ttl = cmd_lease_u64(resp, "ttl_ms");
		if (ctx->mode == OUTPUT_JSON)
			output_json(resp);
		else
			printf("%" PRIu64 "\n", ttl);
		fflush(stdout);
		cJSON_Delete(resp);
		if (!forever ||
		    (s = cmd_lease_sleep(&ctx->client, ttl / 3)) != CMD_OK)
			break;
	}
	if (forever)
		intr_restore(&in, &ctx->client);
	return (s);
}

static enum cmd_status
cmd_lease_revoke(struct cmd_ctx *ctx, char **cause)
{
	uint64_t	 id;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_lease_id(ctx->args->argv[0], &id, cause)) != CMD_OK ||
	    (s = cmd_lease_call(ctx, "lease_revoke", id, 0, 0, &resp,
	    cause)) != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else
		printf("%" PRIu64 "\n", cmd_lease_u64(resp, "rev"));
	cJSON_Delete(resp);
	return (CMD_OK);
}

static enum cmd_status
cmd_lease_info(struct cmd_ctx *ctx, char **cause)
{
	const cJSON	*keys, *k;
	uint64_t	 id;
	cJSON		*resp;
	struct buf	 b;
	enum cmd_status	 s;

	if ((s = cmd_lease_id(ctx->args->argv[0], &id, cause)) != CMD_OK ||
	    (s = cmd_lease_call(ctx, "lease_info", id, 0, 0, &resp,
	    cause)) != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON) {
		output_json(resp);
		cJSON_Delete(resp);
		return (CMD_OK);
	}
	printf("lease %" PRIu64 " ttl_ms %" PRIu64 " remaining_ms %" PRIu64
	    " session %s\n", id, cmd_lease_u64(resp, "ttl_ms"),
	    cmd_lease_u64(resp, "remaining_ms"),
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "session")) ?
	    "yes" : "no");
	keys = cJSON_GetObjectItemCaseSensitive(resp, "keys");
	buf_init(&b);
	cJSON_ArrayForEach(k, keys) {
		if (!cJSON_IsString(k))
			continue;
		buf_reset(&b);
		output_token(&b, k->valuestring, strlen(k->valuestring));
		printf("%s\n", buf_cstr(&b));
	}
	buf_free(&b);
	if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "more")))
		fprintf(stderr, "metactl: lease %" PRIu64 ": more keys than "
		    "listed\n", id);
	cJSON_Delete(resp);
	return (CMD_OK);
}

static enum cmd_status
cmd_lease_ls(struct cmd_ctx *ctx, char **cause)
{
	const cJSON	*l;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_lease_call(ctx, "lease_list", 0, 0, 0, &resp,
	    cause)) != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		output_json(resp);
	else {
		cJSON_ArrayForEach(l, cJSON_GetObjectItemCaseSensitive(resp,
		    "leases")) {
			printf("%" PRIu64 " %" PRIu64 " %" PRIu64 " %s\n",
			    cmd_lease_u64(l, "lease"),
			    cmd_lease_u64(l, "ttl_ms"),
			    cmd_lease_u64(l, "remaining_ms"),
			    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(l,
			    "session")) ? "session" : "-");
		}
	}
	cJSON_Delete(resp);
	return (CMD_OK);
}
