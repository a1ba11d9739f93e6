/*
 * snapshot status FILE: what a snapshot file holds, read offline (no
 * daemon): "rev: R", "keys: N", "bytes: B" and "integrity: ok" (-o json:
 * {"rev":R,"keys":N,"bytes":B,"integrity":"ok"}).  A snapshot is a metad
 * SQLite database (snapshot save, daemon/store/store_snap.c): its rev is
 * the newest of meta's rev and ckpt_rev and history's last event (as the
 * sqlite backend reads it at open); kv holds every key up to ckpt_rev, and the events
 * of history above ckpt_rev (a snapshot of the sqlite backend copies its
 * log as it is) are replayed over them, each key's last event saying
 * whether it is there.  Exit status 1 when the file is damaged (SQLite's
 * integrity_check is not "ok") or is no metad snapshot.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "metactl.h"

static enum cmd_status	cmd_snapshot_status_exec(struct cmd_ctx *, char **);

const struct cmd_entry cmd_snapshot_status_entry = {
	.name = "snapshot status",
	.optstring = "",
	.args_min = 1,
	.args_max = 1,
	.usage = "FILE",
	.help = "print a snapshot file's rev, keys, size and integrity "
	    "(offline)",
	.details = "Reads FILE only: no daemon is asked.  Exit status 1 when "
	    "FILE is damaged or\nis no metad snapshot.\n",
	.exec = cmd_snapshot_status_exec
};

/* The first column of sql's first row, as a number; -1 if none. */
static int
snap_scalar(sqlite3 *db, const char *sql, uint64_t arg, uint64_t *out)
{
	sqlite3_stmt	*st;
	int		 rc;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return (-1);
	if (sqlite3_bind_parameter_count(st) > 0)
		sqlite3_bind_int64(st, 1, (sqlite3_int64)arg);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		*out = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW ? 0 : -1);
}

/* SQLite's integrity_check: "ok", or its first complaint, into out. */
static int
snap_integrity(sqlite3 *db, char *out, size_t len)
{
	sqlite3_stmt	*st;
	int		 rc;

	snprintf(out, len, "cannot be checked");
	if (sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st,
	    NULL) != SQLITE_OK) {
		snprintf(out, len, "%s", sqlite3_errmsg(db));
		return (-1);
	}
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		snprintf(out, len, "%s", (const char *)sqlite3_column_text(st,
		    0));
	else
		snprintf(out, len, "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st);
	return (rc == SQLITE_ROW && strcmp(out, "ok") == 0 ? 0 : -1);
}

#define SNAP_REV_SQL							\
	"SELECT MAX((SELECT value FROM meta WHERE name = 'rev'), "	\
	"IFNULL((SELECT value FROM meta WHERE name = 'ckpt_rev'), 0), "	\
	"IFNULL((SELECT MAX(rev) FROM history), 0))"

/* The keys: kv's that no later event names, and those put last. */
#define SNAP_KEYS_SQL							\
	"SELECT (SELECT count(*) FROM kv WHERE key NOT IN "		\
	"(SELECT key FROM history WHERE rev > ?1)) + "			\
	"(SELECT count(*) FROM (SELECT type, max(rev * 4294967296 + seq) "\
	"FROM history WHERE rev > ?1 GROUP BY key) WHERE type = 0)"

static enum cmd_status
cmd_snapshot_status_exec(struct cmd_ctx *ctx, char **cause)
{
	const char	*file = ctx->args->argv[0];
	char		 integrity[256];
	uint64_t	 rev = 0, ckpt = 0, schema = 0, keys = 0;
	struct stat	 sb;
	sqlite3		*db = NULL;
	enum cmd_status	 s = CMD_FALSE;
	int		 ok;

	if (stat(file, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		xasprintf(cause, "%s: no such file", file);
		return (CMD_FALSE);
	}
	if (sqlite3_open_v2(file, &db, SQLITE_OPEN_READONLY, NULL) !=
	    SQLITE_OK) {
		xasprintf(cause, "%s: cannot be read: %s", file,
		    db != NULL ? sqlite3_errmsg(db) : "out of memory");
		goto out;
	}
	ok = snap_integrity(db, integrity, sizeof integrity) == 0;
	if (snap_scalar(db, "SELECT value FROM meta WHERE name = 'schema'",
	    0, &schema) != 0 || snap_scalar(db, SNAP_REV_SQL, 0, &rev) != 0) {
		if (ok)
			xasprintf(cause, "%s: no metad snapshot (no meta "
			    "table with its schema and rev)", file);
		else
			xasprintf(cause, "%s: damaged: %s", file, integrity);
		goto out;
	}
	if (snap_scalar(db, "SELECT value FROM meta WHERE name = 'ckpt_rev'",
	    0, &ckpt) != 0)
		ckpt = rev;	/* no log: kv holds every key */
	if (snap_scalar(db, SNAP_KEYS_SQL, ckpt, &keys) != 0) {
		xasprintf(cause, "%s: damaged: its keys cannot be counted: %s",
		    file, sqlite3_errmsg(db));
		goto out;
	}
	if (ctx->mode == OUTPUT_JSON)
		printf("{\"rev\":%" PRIu64 ",\"keys\":%" PRIu64 ",\"bytes\":%"
		    PRIu64 ",\"integrity\":\"%s\"}\n", rev, keys,
		    (uint64_t)sb.st_size, ok ? "ok" : "damaged");
	else
		printf("rev: %" PRIu64 "\nkeys: %" PRIu64 "\nbytes: %" PRIu64
		    "\nintegrity: %s\n", rev, keys, (uint64_t)sb.st_size,
		    ok ? "ok" : "damaged");
	if (!ok)
		xasprintf(cause, "%s: damaged: %s", file, integrity);
	s = ok ? CMD_OK : CMD_FALSE;
out:
	sqlite3_close(db);
	return (s);
}
