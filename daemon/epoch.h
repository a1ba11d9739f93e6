/*
 * Epoch documents: a key whose value is the JSON text
 * {"epoch":N,"owner":"..."}.  Used by epoch_get/epoch_bump and by fences.
 */
#ifndef METAD_EPOCH_H
#define METAD_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "limits.h"

struct epoch_doc {
	uint64_t	 epoch;
	char		 owner[OWNER_MAX_BYTES + 1];
};

/* 0 if the bytes are an epoch document, -1 if not. */
int	epoch_doc_parse(const void *, size_t, struct epoch_doc *);

#endif
