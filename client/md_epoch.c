/*
 * Epochs and leases.  The lease calls are the requests as
 * metad-protocol(7) writes them; a daemon without leases answers unknown_op.
 */
#include <stdlib.h>
#include <string.h>

#include "md_int.h"

void
md_epoch_clear(struct md_epoch *ep)
{
	free(ep->owner);
	memset(ep, 0, sizeof *ep);
}

static int
md_epoch_parse(struct md_client *h, const cJSON *j, struct md_epoch *ep)
{
	const cJSON	*owner;

	if (cJSON_IsNull(j))
		return (0);
	owner = cJSON_GetObjectItemCaseSensitive(j, "owner");
	if (!cJSON_IsObject(j) || md_u64_req(h, j, "epoch", &ep->epoch) != 0)
		return (md_fail(h, MD_E_PROTOCOL, "metad sent an invalid "
		    "epoch"));
	ep->owner = xstrdup(cJSON_IsString(owner) ? owner->valuestring : "");
	ep->version = md_u64(j, "version");
	ep->mod_rev = md_u64(j, "mod_rev");
	return (0);
}

int
md_epoch_get(struct md_client *h, const char *key, struct md_epoch *ep)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	int		 rc;

	memset(ep, 0, sizeof *ep);
	md_clearerr(h);
	if (key == NULL)
		return (md_seterr(h, MD_E_INVALID, "no key"));
	md_req_open(h, &w, &b, "epoch_get");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	rc = md_epoch_parse(h, cJSON_GetObjectItemCaseSensitive(resp, "epoch"),
	    ep);
	cJSON_Delete(resp);
	return (rc);
}

int
md_epoch_bump(struct md_client *h, const char *key, const char *owner,
    int64_t if_epoch, struct md_epoch *ep, uint64_t *rev)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	int		 rc;

	memset(ep, 0, sizeof *ep);
	md_clearerr(h);
	if (key == NULL)
		return (md_seterr(h, MD_E_INVALID, "no key"));
	md_req_open(h, &w, &b, "epoch_bump");
	jw_name(&w, "key");
	jw_cstr(&w, key);
	if (owner != NULL) {
		jw_name(&w, "owner");
		jw_cstr(&w, owner);
	}
	if (if_epoch >= 0) {
		jw_name(&w, "if_epoch");
		jw_u64(&w, (uint64_t)if_epoch);
	}
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	rc = md_epoch_parse(h, cJSON_GetObjectItemCaseSensitive(resp, "epoch"),
	    ep);
	if (rc == 0 && rev != NULL)
		rc = md_u64_req(h, resp, "rev", rev);
	cJSON_Delete(resp);
	return (rc);
}

/* A lease request: {"op":OP,"lease":ID} (ID 0: none), ok wanted. */
static int
md_lease_call(struct md_client *h, const char *op, uint64_t lease,
    cJSON **resp)
{
	struct jw	 w;
	struct buf	 b;

	md_clearerr(h);
	md_req_open(h, &w, &b, op);
	if (lease != 0) {
		jw_name(&w, "lease");
		jw_u64(&w, lease);
	}
	return (md_do(h, &w, &b, resp));
}

int
md_lease_grant(struct md_client *h, uint64_t ttl_ms, int session,
    uint64_t *lease, uint64_t *granted_ms)
{
	struct jw	 w;
	struct buf	 b;
	cJSON		*resp;
	uint64_t	 id, ttl = 0;
	int		 rc;

	md_clearerr(h);
	md_req_open(h, &w, &b, "lease_grant");
	jw_name(&w, "ttl_ms");
	jw_u64(&w, ttl_ms);
	if (session) {
		jw_name(&w, "session");
		jw_bool(&w, 1);
	}
	if (md_do(h, &w, &b, &resp) != 0)
		return (-1);
	rc = md_u64_req(h, resp, "lease", &id);
	if (rc == 0)
		rc = md_u64_req(h, resp, "ttl_ms", &ttl);
	if (rc == 0 && lease != NULL)
		*lease = id;
	if (rc == 0 && granted_ms != NULL)
		*granted_ms = ttl;
	cJSON_Delete(resp);
	return (rc);
}

/* A lease op on one lease whose answer is one number, kept if asked. */
static int
md_lease_u64(struct md_client *h, const char *op, uint64_t lease,
    const char *field, uint64_t *out)
{
	cJSON		*resp;
	uint64_t	 v;
	int		 rc;

	if (md_lease_call(h, op, lease, &resp) != 0)
		return (-1);
	rc = md_u64_req(h, resp, field, &v);
	if (rc == 0 && out != NULL)
		*out = v;
	cJSON_Delete(resp);
	return (rc);
}

int
md_lease_keepalive(struct md_client *h, uint64_t lease,
    uint64_t *remaining_ms)
{
	return (md_lease_u64(h, "lease_keepalive", lease, "ttl_ms",
	    remaining_ms));
}

int
md_lease_revoke(struct md_client *h, uint64_t lease, uint64_t *rev)
{
	return (md_lease_u64(h, "lease_revoke", lease, "rev", rev));
}

void
md_lease_info_clear(struct md_lease_info *li)
{
	size_t	 i;

	for (i = 0; i < li->nkeys; i++)
		free(li->keys[i]);
	free(li->keys);
	memset(li, 0, sizeof *li);
}

int
md_lease_info(struct md_client *h, uint64_t lease, struct md_lease_info *li)
{
	const cJSON	*keys, *k;
	cJSON		*resp;

	memset(li, 0, sizeof *li);
	if (md_lease_call(h, "lease_info", lease, &resp) != 0)
		return (-1);
	keys = cJSON_GetObjectItemCaseSensitive(resp, "keys");
	if (md_u64_req(h, resp, "ttl_ms", &li->ttl_ms) != 0 ||
	    md_u64_req(h, resp, "remaining_ms", &li->remaining_ms) != 0) {
		cJSON_Delete(resp);
		return (-1);
	}
	li->session = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp,
	    "session"));
	li->keys = xcalloc((size_t)cJSON_GetArraySize(keys) + 1,
	    sizeof *li->keys);
	cJSON_ArrayForEach(k, keys)
		if (cJSON_IsString(k))
			li->keys[li->nkeys++] = xstrdup(k->valuestring);
	cJSON_Delete(resp);
	return (0);
}
