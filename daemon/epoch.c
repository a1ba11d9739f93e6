#include <string.h>

#include <cjson/cJSON.h>

#include "epoch.h"
#include "proto.h"

int
epoch_doc_parse(const void *p, size_t n, struct epoch_doc *doc)
{
	cJSON		*j;
	const cJSON	*owner;
	struct proto_err e;
	uint64_t	 epoch;
	int		 rc = -1;

	memset(doc, 0, sizeof *doc);
	if ((j = proto_parse(p, n, &e)) == NULL)
		return (-1);
	if (proto_get_u64(j, "epoch", 1, &epoch, &e) != 1)
		goto out;
	owner = cJSON_GetObjectItemCaseSensitive(j, "owner");
	if (owner != NULL && !cJSON_IsNull(owner)) {
		if (!cJSON_IsString(owner) ||
		    strlen(owner->valuestring) > OWNER_MAX_BYTES)
			goto out;
		memcpy(doc->owner, owner->valuestring,
		    strlen(owner->valuestring) + 1);
	}
	doc->epoch = epoch;
	rc = 0;
out:
	cJSON_Delete(j);
	return (rc);
}
