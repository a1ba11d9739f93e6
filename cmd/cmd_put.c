/*
 * put KEY VALUE | put KEY - | put KEY --file F, and cas KEY VERSION VALUE
 * (put --if-version VERSION).  "-" reads the value from stdin, every byte
 * of it (to store a lone dash: printf - | metactl put KEY -).  Bytes that
 * are UTF-8 go as "value" (a NUL as \u0000), any others, or any whose
 * escapes would be longer, as "value_b64" (jw_value_req).  Text
 * output: the key's new version alone on a line, for v=$(metactl put k v).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metactl.h"
#include "proto.h"

static enum cmd_status	cmd_put_exec(struct cmd_ctx *, char **);
static enum cmd_status	cmd_cas_exec(struct cmd_ctx *, char **);

static const struct option cmd_put_longopts[] = {
	CMD_COND_LONGOPTS,
	{ "file",	required_argument,	NULL, 0 },
	{ "lease",	required_argument,	NULL, 0 },
	{ "ttl",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_put_entry = {
	.name = "put",
	.optstring = "",
	.longopts = cmd_put_longopts,
	.args_min = 1,
	.args_max = 2,
	.usage = "KEY VALUE|-|--file FILE [--if-absent | --if-version N | "
	    "--if-mod-rev R] [--fence KEY:EPOCH] [--lease ID | --ttl TTL]",
	.help = "write a value (- reads stdin); prints the new version",
	.details = "--ttl TTL grants a lease of TTL (as lease grant does) and "
	    "puts the key with it:\nthe key is deleted when TTL passes with "
	    "no keepalive (its id: -o json,\nkv.lease).  If the put fails, "
	    "the lease is revoked.\n",
	.exec = cmd_put_exec
};

static const struct option cmd_cas_longopts[] = {
	{ "fence",	required_argument,	NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_cas_entry = {
	.name = "cas",
	.optstring = "",
	.longopts = cmd_cas_longopts,
	.args_min = 3,
	.args_max = 3,
	.usage = "KEY VERSION VALUE|- [--fence KEY:EPOCH]",
	.help = "write only if the key's version is VERSION (0: absent)",
	.exec = cmd_cas_exec
};

/* Reads all of fd (binary-safe), up to METACTL_VALUE_MAX_BYTES. */
enum cmd_status
cmd_put_read_fd(int fd, const char *name, struct buf *v, char **cause)
{
	ssize_t	 n;

	for (;;) {
		buf_reserve(v, 65536);
		n = read(fd, v->data + v->len, 65536);
		if (n == 0)
			return (CMD_OK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			xasprintf(cause, "cannot read %s: %s", name,
			    strerror(errno));
			return (CMD_ERROR);
		}
		v->len += (size_t)n;
		if (v->len > METACTL_VALUE_MAX_BYTES) {
			xasprintf(cause, "the value in %s is larger than "
			    "metactl's limit of %d bytes", name,
			    METACTL_VALUE_MAX_BYTES);
			return (CMD_ERROR);
		}
	}
}

/* The value: a literal, "-" for stdin, or a file ("-" too: stdin). */
static enum cmd_status
cmd_put_value(struct cmd_ctx *ctx, const char *arg, const char *file,
    struct buf *v, char **cause)
{
	enum cmd_status	 s;
	int		 fd;

	buf_reserve(v, 0);	/* never a NULL data pointer */
	if (file == NULL && strcmp(arg, "-") != 0) {
		buf_addstr(v, arg);
		return (CMD_OK);
	}
	if (file == NULL || strcmp(file, "-") == 0)
		return (cmd_read_stdin(ctx, v, cause));
	if ((fd = open(file, O_RDONLY | O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot open %s: %s", file, strerror(errno));
		return (report_input(ctx));
	}
	s = cmd_put_read_fd(fd, file, v, cause);
	close(fd);
	return (s == CMD_ERROR ? report_input(ctx) : s);
}

static enum cmd_status
cmd_put_print(struct cmd_ctx *ctx, const cJSON *resp, char **cause)
{
	const cJSON	*kv;
	uint64_t	 version;

	if (ctx->mode == OUTPUT_JSON) {
		output_json(resp);
		return (CMD_OK);
	}
	kv = cJSON_GetObjectItemCaseSensitive(resp, "kv");
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(kv, "version"),
	    &version) != 0) {
		xasprintf(cause, "metad's answer has no kv.version");
		return (CMD_ERROR);
	}
	printf("%" PRIu64 "\n", version);
	return (CMD_OK);
}

static enum cmd_status
cmd_put_send(struct cmd_ctx *ctx, const char *key, const struct buf *v,
    const struct cmd_cond *cond, uint64_t lease, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;

	if ((s = cmd_value_fits(ctx, v->len, cause)) != CMD_OK)
		return (s);
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "put");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	jw_value_req(&w, v->data, v->len);
	cmd_cond_write(cond, &w);
	if (lease != 0) {
		jw_name(&w, "lease");
		jw_u64(&w, lease);
	}
	jw_obj_close(&w);
	s = cmd_call(ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	s = cmd_put_print(ctx, resp, cause);
	cJSON_Delete(resp);
	return (s);
}

/*
 * put --ttl: a lease of ttl_ms, then the put with it; a put that fails
 * (refused, or its answer lost) revokes the lease, so that no lease is
 * left behind, nor a key of a put that may have landed.
 */
static enum cmd_status
cmd_put_ttl(struct cmd_ctx *ctx, const char *key, const struct buf *v,
    const struct cmd_cond *cond, uint64_t ttl_ms, char **cause)
{
	cJSON		*resp;
	uint64_t	 lease = 0;
	enum cmd_status	 s;
	char		*why = NULL;

	if ((s = cmd_value_fits(ctx, v->len, cause)) != CMD_OK)
		return (s);
	if ((s = cmd_lease_call(ctx, "lease_grant", 0, ttl_ms, 0, &resp,
	    cause)) != CMD_OK)
		return (s);
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp, "lease"),
	    &lease) != 0 || lease == 0) {
		cJSON_Delete(resp);
		xasprintf(cause, "metad's lease_grant answer has no lease");
		return (CMD_ERROR);
	}
	cJSON_Delete(resp);
	if ((s = cmd_put_send(ctx, key, v, cond, lease, cause)) == CMD_OK)
		return (CMD_OK);
	if (cmd_lease_call(ctx, "lease_revoke", lease, 0, 0, &resp,
	    &why) == CMD_OK)
		cJSON_Delete(resp);
	else if (*cause == NULL)
		*cause = why, why = NULL;
	free(why);
	return (s);
}

static enum cmd_status
cmd_put_exec(struct cmd_ctx *ctx, char **cause)
{
	struct args	*a = ctx->args;
	struct cmd_cond	 cond;
	struct buf	 v;
	const char	*file = args_get(a, "file");
	const char	*lease_arg = args_get(a, "lease");
	const char	*ttl_arg = args_get(a, "ttl");
	uint64_t	 lease = 0, ttl = 0;
	enum cmd_status	 s;

	if ((s = cmd_check_key(a->argv[0], "KEY", cause)) != CMD_OK ||
	    (s = cmd_cond_parse(a, &cond, cause)) != CMD_OK)
		return (s);
	if (lease_arg != NULL && ((s = args_u64(lease_arg, "--lease", &lease,
	    cause)) != CMD_OK || lease == 0)) {
		if (s == CMD_OK)
			xasprintf(cause, "invalid --lease: 0 is no lease id");
		return (CMD_USAGE);
	}
	if (ttl_arg != NULL && (lease_arg != NULL ||
	    (s = args_ttl(ttl_arg, "--ttl", &ttl, cause)) != CMD_OK)) {
		if (lease_arg != NULL)
			xasprintf(cause, "give --lease or --ttl, not both");
		return (CMD_USAGE);
	}
	if (args_count(a, "file") > 1 || (file != NULL) == (a->argc == 2)) {
		xasprintf(cause, "put: give the value as VALUE, - (stdin) or "
		    "--file FILE, once");
		return (CMD_USAGE);
	}
	buf_init(&v);
	if ((s = cmd_put_value(ctx, a->argc == 2 ? a->argv[1] : NULL, file,
	    &v, cause)) == CMD_OK) {
		if (ttl != 0)
			s = cmd_put_ttl(ctx, a->argv[0], &v, &cond, ttl, cause);
		else
			s = cmd_put_send(ctx, a->argv[0], &v, &cond, lease,
			    cause);
	}
	buf_free(&v);
	return (s);
}

static enum cmd_status
cmd_cas_exec(struct cmd_ctx *ctx, char **cause)
{
	struct args	*a = ctx->args;
	struct cmd_cond	 cond;
	struct buf	 v;
	enum cmd_status	 s;

	if ((s = cmd_check_key(a->argv[0], "KEY", cause)) != CMD_OK ||
	    (s = cmd_cond_parse(a, &cond, cause)) != CMD_OK ||
	    (s = args_u64(a->argv[1], "VERSION", &cond.version,
	    cause)) != CMD_OK)
		return (s);
	cond.has_version = 1;
	buf_init(&v);
	if ((s = cmd_put_value(ctx, a->argv[2], NULL, &v, cause)) == CMD_OK)
		s = cmd_put_send(ctx, a->argv[0], &v, &cond, 0, cause);
	buf_free(&v);
	return (s);
}
