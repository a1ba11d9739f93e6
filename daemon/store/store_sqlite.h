/*
 * The SQLite backend's state and helpers, shared by store_sqlite.c (open,
 * schema, reads) and store_sqlite_batch.c (batches: transactions, writes,
 * marks, commit, compaction).
 */
#ifndef METAD_STORE_SQLITE_H
#define METAD_STORE_SQLITE_H

#include <stdint.h>

#include <sqlite3.h>

#include "store.h"

enum store_sqlite_stmt {
	SQ_GET,
	SQ_UPSERT,
	SQ_DELETE,
	SQ_HIST_ADD,
	SQ_HIST_GET,
	SQ_HIST_DROP,
	SQ_SET_META,
	SQ_RANGE,
	SQ_RANGE_OPEN,
	SQ_RANGE_KEYS,
	SQ_RANGE_KEYS_OPEN,
	SQ_BEGIN,
	SQ_COMMIT,
	SQ_ROLLBACK,
	SQ_SAVEPOINT,
	SQ_RELEASE,
	SQ_ROLLBACK_TO,
	SQ_NSTMT
};

struct store_sqlite {
	sqlite3		*db;
	sqlite3_stmt	*st[SQ_NSTMT];
	char		*wal_path;
	uint64_t	 nkeys;

	int			 in_txn;
	int			 broken;
	enum store_errcode	 broken_code;
	uint64_t		 nkeys_begin;
	uint64_t		 compact_begin;

	int		 marked;
	int		 broken_mark;
	uint64_t	 nkeys_mark;
	uint64_t	 compact_mark;
};

/* -1 with err filled from SQLite's rc (full, I/O, or internal). */
int	store_sqlite_fail(struct store_sqlite *, int, const char *,
	    struct store_err *);
void	store_sqlite_done(sqlite3_stmt *);
/* Run statement idx to its end; -1 on error. */
int	store_sqlite_run(struct store_sqlite *, enum store_sqlite_stmt,
	    const char *, struct store_err *);
int	store_sqlite_bind_blob(sqlite3_stmt *, int, const void *, size_t);
/* Creates the tables a metad database has, if they are missing. */
int	store_sqlite_schema(struct store_sqlite *, struct store_err *);
/* A kv or history row (the same first five columns) into kv. */
void	store_sqlite_row(sqlite3_stmt *, int, struct store_kv *);

/* Batches (store_sqlite_batch.c). */
int	store_sqlite_begin(struct store *, struct store_err *);
int	store_sqlite_put(struct store *, uint64_t, uint32_t, const char *,
	    size_t, const void *, size_t, struct store_kv *, uint64_t *,
	    struct store_err *);
int	store_sqlite_del(struct store *, uint64_t, uint32_t, const char *,
	    size_t, int *, struct store_err *);
int	store_sqlite_mark(struct store *, struct store_err *);
int	store_sqlite_undo(struct store *, struct store_err *);
void	store_sqlite_rollback(struct store *);
int	store_sqlite_commit(struct store *, uint64_t, struct store_err *);
int	store_sqlite_compact(struct store *, uint64_t, struct store_err *);

#endif
