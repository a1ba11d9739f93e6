/*
 * snapshot save FILE: a consistent copy of the whole store as a metad
 * SQLite database, whatever the backend.  metad takes the snapshot
 * ("snapshot" op) and hands it out in chunks ("snapshot_read"); metactl
 * writes them to a temporary file beside FILE (mode 0600), fsyncs it,
 * renames it to FILE and fsyncs the directory, so FILE is either the old
 * file or the whole new snapshot.  Prints the snapshot's rev and size.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "enc.h"
#include "metactl.h"
#include "proto.h"

/* What every SQLite database starts with. */
#define SNAPSHOT_MAGIC		"SQLite format 3"

static enum cmd_status	cmd_snapshot_save_exec(struct cmd_ctx *, char **);

const struct cmd_entry cmd_snapshot_save_entry = {
	.name = "snapshot save",
	.optstring = "",
	.args_min = 1,
	.args_max = 1,
	.usage = "FILE",
	.help = "write a consistent copy of the store to FILE; prints its "
	    "rev and size",
	.details = "FILE is a metad SQLite database.  Serve it with: metad "
	    "--store sqlite:FILE\n(on a copy of it, to keep FILE as it "
	    "is).\n",
	.exec = cmd_snapshot_save_exec
};

struct snap {
	struct cmd_ctx	*ctx;
	const char	*file;
	char		*tmp;
	int		 fd;
	uint64_t	 id;
	uint64_t	 rev;
	uint64_t	 bytes;
	uint64_t	 got;
	struct progress	 progress;
};

static enum cmd_status
cmd_snapshot_u64(const cJSON *resp, const char *name, uint64_t *v,
    char **cause)
{
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp, name),
	    v) != 0) {
		xasprintf(cause, "metad's snapshot answer has no \"%s\"", name);
		return (CMD_ERROR);
	}
	return (CMD_OK);
}

static enum cmd_status
cmd_snapshot_take(struct snap *sn, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;

	buf_init(&b);
	cmd_request_open(sn->ctx, &w, &b, "snapshot");
	jw_obj_close(&w);
	s = cmd_call(sn->ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if ((s = cmd_snapshot_u64(resp, "snapshot", &sn->id, cause)) ==
	    CMD_OK && (s = cmd_snapshot_u64(resp, "rev", &sn->rev, cause)) ==
	    CMD_OK)
		s = cmd_snapshot_u64(resp, "bytes", &sn->bytes, cause);
	cJSON_Delete(resp);
	return (s);
}

static enum cmd_status
cmd_snapshot_write(struct snap *sn, const unsigned char *p, size_t len,
    char **cause)
{
	ssize_t	 n;

	if (sn->got == 0 && (len < sizeof SNAPSHOT_MAGIC ||
	    memcmp(p, SNAPSHOT_MAGIC, sizeof SNAPSHOT_MAGIC) != 0)) {
		xasprintf(cause, "metad's snapshot is not an SQLite database");
		return (CMD_ERROR);
	}
	while (len > 0) {
		if ((n = write(sn->fd, p, len)) == -1) {
			if (errno == EINTR)
				continue;
			xasprintf(cause, "cannot write %s: %s", sn->tmp,
			    strerror(errno));
			return (CMD_ERROR);
		}
		p += n;
		len -= (size_t)n;
		sn->got += (uint64_t)n;
	}
	return (CMD_OK);
}

/* One chunk from sn->got on; *eof once metad says it was the last. */
static enum cmd_status
cmd_snapshot_chunk(struct snap *sn, int *eof, char **cause)
{
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	const cJSON	*data;
	unsigned char	*bytes;
	enum cmd_status	 s;
	long		 n;

	buf_init(&b);
	cmd_request_open(sn->ctx, &w, &b, "snapshot_read");
	jw_name(&w, "snapshot");
	jw_u64(&w, sn->id);
	jw_name(&w, "offset");
	jw_u64(&w, sn->got);
	jw_obj_close(&w);
	s = cmd_call(sn->ctx, &b, &resp, cause);
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	data = cJSON_GetObjectItemCaseSensitive(resp, "data_b64");
	*eof = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "eof"));
	if (!cJSON_IsString(data)) {
		cJSON_Delete(resp);
		xasprintf(cause, "metad's snapshot chunk has no data_b64");
		return (CMD_ERROR);
	}
	bytes = xmalloc(strlen(data->valuestring) / 4 * 3 + 1);
	n = b64_decode(data->valuestring, strlen(data->valuestring), bytes);
	if (n < 0 || (n == 0 && !*eof)) {
		xasprintf(cause, "metad sent a bad snapshot chunk");
		s = CMD_ERROR;
	} else
		s = cmd_snapshot_write(sn, bytes, (size_t)n, cause);
	free(bytes);
	cJSON_Delete(resp);
	return (s);
}

/* Durable under its name: the file, then the directory's entry. */
static enum cmd_status
cmd_snapshot_commit(struct snap *sn, char **cause)
{
	char	*copy, *dir;
	int	 dfd, rc;

	if (fsync(sn->fd) == -1 || close(sn->fd) == -1) {
		sn->fd = -1;
		xasprintf(cause, "cannot write %s: %s", sn->tmp,
		    strerror(errno));
		return (CMD_ERROR);
	}
	sn->fd = -1;
	if (rename(sn->tmp, sn->file) == -1) {
		xasprintf(cause, "cannot rename %s to %s: %s", sn->tmp,
		    sn->file, strerror(errno));
		return (CMD_ERROR);
	}
	free(sn->tmp);
	sn->tmp = NULL;
	copy = xstrdup(sn->file);
	dir = dirname(copy);
	rc = -1;
	if ((dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) != -1) {
		rc = fsync(dfd);
		close(dfd);
	}
	if (rc == -1)
		xasprintf(cause, "cannot sync the directory %s: %s", dir,
		    strerror(errno));
	free(copy);
	return (rc == -1 ? CMD_ERROR : CMD_OK);
}

static enum cmd_status
cmd_snapshot_run(struct snap *sn, char **cause)
{
	enum cmd_status	 s;
	int		 eof = 0;

	xasprintf(&sn->tmp, "%s.tmp.XXXXXX", sn->file);
	if ((sn->fd = mkostemp(sn->tmp, O_CLOEXEC)) == -1) {
		xasprintf(cause, "cannot create %s: %s", sn->tmp,
		    strerror(errno));
		free(sn->tmp);
		sn->tmp = NULL;
		return (CMD_ERROR);
	}
	if ((s = cmd_snapshot_take(sn, cause)) != CMD_OK)
		return (s);
	while (!eof) {
		if ((s = cmd_snapshot_chunk(sn, &eof, cause)) != CMD_OK)
			return (s);
		progress_show(&sn->progress, "snapshot: %" PRIu64 " of %"
		    PRIu64 " KiB", sn->got / 1024, sn->bytes / 1024);
	}
	if (sn->got != sn->bytes) {
		xasprintf(cause, "metad's snapshot has %" PRIu64 " bytes, "
		    "not the %" PRIu64 " it announced", sn->got, sn->bytes);
		return (CMD_ERROR);
	}
	return (cmd_snapshot_commit(sn, cause));
}

static enum cmd_status
cmd_snapshot_save_exec(struct cmd_ctx *ctx, char **cause)
{
	struct snap	 sn;
	enum cmd_status	 s;

	memset(&sn, 0, sizeof sn);
	sn.ctx = ctx;
	sn.file = ctx->args->argv[0];
	sn.fd = -1;
	progress_start(&sn.progress, ctx);
	s = cmd_snapshot_run(&sn, cause);
	progress_end(&sn.progress);
	if (sn.fd != -1)
		close(sn.fd);
	if (sn.tmp != NULL) {
		unlink(sn.tmp);
		free(sn.tmp);
	}
	if (s != CMD_OK)
		return (s);
	if (ctx->mode == OUTPUT_JSON)
		printf("{\"ok\":true,\"rev\":%" PRIu64 ",\"bytes\":%" PRIu64
		    "}\n", sn.rev, sn.bytes);
	else
		printf("rev: %" PRIu64 "\nbytes: %" PRIu64 "\n", sn.rev,
		    sn.bytes);
	return (CMD_OK);
}
