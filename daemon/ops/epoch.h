/*
 * Epoch documents: a key whose value is the JSON text
 * {"epoch":N,"owner":"..."}.  Used by epoch_get/epoch_bump and by fences.
 */
#ifndef METAD_EPOCH_H
#define METAD_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "jsonw.h"
#include "metad_limits.h"
#include "store/store.h"
#include "util.h"

/* How an epoch document looks, for error messages. */
#define EPOCH_DOC_FORM	"{\"epoch\":N,\"owner\":\"...\"}"

struct epoch_doc {
	uint64_t	 epoch;
	char		 owner[OWNER_MAX_BYTES + 1];
};

/* What one key holds, as an epoch: read by epoch_read(). */
struct epoch_cur {
	const char	*key;		/* the caller's */
	size_t		 key_len;
	int		 found;
	int		 doc_ok;	/* found and an epoch document */
	uint64_t	 version;
	uint64_t	 mod_rev;
	struct epoch_doc doc;
};

/* 0 if the bytes are an epoch document, -1 if not. */
int	epoch_doc_parse(const void *, size_t, struct epoch_doc *);
/* Append the document {"epoch":N,"owner":O} to b. */
void	epoch_doc_write(struct buf *, uint64_t, const char *);
/* What kv (NULL: absent) holds at key, as an epoch. */
void	epoch_cur_of(struct epoch_cur *, const char *, size_t,
	    const struct store_kv *);
/* Read key inside a batch (with the batch's writes); -1 on store error. */
int	epoch_read(struct store *, const char *, size_t, struct epoch_cur *,
	    struct store_err *);
/*
 * "name":{"key","epoch","owner","version","mod_rev"}, or null when the key
 * is absent (name may be NULL inside an array).
 */
void	epoch_json(struct jw *, const char *, const struct epoch_cur *);

#endif
