#include <string.h>

#include <cjson/cJSON.h>

#include "enc.h"
#include "ops/epoch.h"
#include "proto.h"

int
epoch_doc_parse(const void *p, size_t n, struct epoch_doc *doc)
{
	cJSON		*j;
	const cJSON	*owner;
	struct proto_err e;
	uint64_t	 epoch;
	size_t		 len;
	int		 rc = -1;

	memset(doc, 0, sizeof *doc);
	if ((j = proto_parse(p, n, &e)) == NULL)
		return (-1);
	if (proto_get_u64(j, "epoch", 1, &epoch, &e) != 1)
		goto out;
	owner = cJSON_GetObjectItemCaseSensitive(j, "owner");
	if (owner != NULL && !cJSON_IsNull(owner)) {
		if (!cJSON_IsString(owner))
			goto out;
		len = strlen(owner->valuestring);
		if (len > OWNER_MAX_BYTES ||
		    !utf8_valid(owner->valuestring, len))
			goto out;
		memcpy(doc->owner, owner->valuestring, len + 1);
	}
	doc->epoch = epoch;
	rc = 0;
out:
	cJSON_Delete(j);
	return (rc);
}

void
epoch_doc_write(struct buf *b, uint64_t epoch, const char *owner)
{
	struct jw	 w;

	jw_init(&w, b);
	jw_obj_open(&w);
	jw_name(&w, "epoch");
	jw_u64(&w, epoch);
	jw_name(&w, "owner");
	jw_cstr(&w, owner);
	jw_obj_close(&w);
}

void
epoch_cur_of(struct epoch_cur *cur, const char *key, size_t key_len,
    const struct store_kv *kv)
{
	memset(cur, 0, sizeof *cur);
	cur->key = key;
	cur->key_len = key_len;
	if (kv == NULL)
		return;
	cur->found = 1;
	cur->version = kv->version;
	cur->mod_rev = kv->mod_rev;
	cur->doc_ok = kv->value != NULL &&
	    epoch_doc_parse(kv->value, kv->value_len, &cur->doc) == 0;
}

static int
epoch_read_cb(const struct store_kv *kv, void *arg)
{
	struct epoch_cur	*cur = arg;

	epoch_cur_of(cur, cur->key, cur->key_len, kv);
	return (0);
}

int
epoch_read(struct store *st, const char *key, size_t key_len,
    struct epoch_cur *cur, struct store_err *se)
{
	epoch_cur_of(cur, key, key_len, NULL);
	if (store_get(st, key, key_len, epoch_read_cb, cur, se) == -1)
		return (-1);
	return (0);
}

void
epoch_json(struct jw *w, const char *name, const struct epoch_cur *cur)
{
	if (name != NULL)
		jw_name(w, name);
	if (!cur->found) {
		jw_null(w);
		return;
	}
	jw_obj_open(w);
	jw_name(w, "key");
	jw_str(w, cur->key, cur->key_len);
	jw_name(w, "epoch");
	jw_u64(w, cur->doc.epoch);
	jw_name(w, "owner");
	jw_cstr(w, cur->doc.owner);
	jw_name(w, "version");
	jw_u64(w, cur->version);
	jw_name(w, "mod_rev");
	jw_u64(w, cur->mod_rev);
	jw_obj_close(w);
}
