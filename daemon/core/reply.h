/*
 * How a reply is written: into a request's response buffer, as one JSON
 * line {"id":..,"ok":true,...} or {"id":..,"ok":false,"error":{...}}.
 */
#ifndef METAD_REPLY_H
#define METAD_REPLY_H

#include <stddef.h>

#include "jsonw.h"
#include "proto.h"
#include "store/store.h"
#include "util.h"

struct req;

void	reply_begin(struct req *, struct jw *);
void	reply_end(struct req *, struct jw *);
void	reply_error(struct req *, enum proto_code, const char *);
void	reply_error_begin(struct req *, struct jw *, enum proto_code,
	    const char *);
void	reply_error_end(struct req *, struct jw *);
void	reply_store_error(struct req *, const struct store_err *);
enum proto_code reply_store_code(const struct store_err *);
/* "kv":{...} with or without the value; null for NULL. */
void	reply_kv(struct jw *, const char *, const struct store_kv *, int);
/* What reply_kv() writes, at most (its numbers counted at 20 digits). */
size_t	reply_kv_len(const struct store_kv *, int with_value);
/*
 * An answer of n bytes past --max-answer-bytes: answered
 * answer_too_large, saying how to page (how), before it is built; 1.
 * Else 0.
 */
int	reply_too_large(struct req *, size_t n, const char *how);
/* A whole error line for a request we could not decode. */
void	reply_raw_error(struct buf *, const char *id, size_t id_len,
	    enum proto_code, const char *);

#endif
