#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/idem.h"
#include "core/req.h"
#include "metad.h"

/* The record's name: identity, NUL, token; its length, 0 if too long. */
static size_t
idem_name(const struct req *r, char *out)
{
	size_t	 n = r->identity_len + 1 + r->idem_len;

	if (r->identity == NULL || n > STORE_IDEM_TOK_MAX)
		return (0);
	memcpy(out, r->identity, r->identity_len);
	out[r->identity_len] = '\0';
	memcpy(out + r->identity_len + 1, r->idem, r->idem_len);
	return (n);
}

/* Wall-clock ms: a record's expiry must mean the same after a restart. */
static uint64_t
idem_now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

/* What the answer holds before its "ok": {"id":ID, (or nothing). */
static size_t
idem_id_part(const struct req *r)
{
	return (r->id_len > 0 ? sizeof "\"id\":" - 1 + r->id_len + 1 : 0);
}

int
idem_replay(struct req *r, struct store *st, struct store_err *se)
{
	struct store_idem	 rec;
	char			 name[STORE_IDEM_TOK_MAX];
	size_t			 n;
	int			 rc;

	if ((n = idem_name(r, name)) == 0)
		return (store_err_set(se, STORE_ERR_INTERNAL, "idem: no "
		    "identity for the token"));
	if ((rc = store_idem_get(st, name, n, idem_now_ms(), &rec, se)) != 1)
		return (rc);
	if (rec.answer_len < 2 || ((const char *)rec.answer)[0] != '{')
		return (store_err_set(se, STORE_ERR_INTERNAL, "idem: the "
		    "record of the token holds no answer"));
	buf_reset(&r->resp);
	buf_addc(&r->resp, '{');
	if (r->id_len > 0) {
		buf_add(&r->resp, "\"id\":", sizeof "\"id\":" - 1);
		buf_add(&r->resp, r->id, r->id_len);
		buf_addc(&r->resp, ',');
	}
	buf_add(&r->resp, (const char *)rec.answer + 1, rec.answer_len - 1);
	r->replay_rev = rec.rev;
	return (1);
}

int
idem_record(struct req *r, struct store *st, uint64_t rev,
    struct store_err *se)
{
	struct store_idem	 rec;
	struct buf		 a;
	char			 name[STORE_IDEM_TOK_MAX];
	size_t			 n, id = idem_id_part(r);
	uint64_t		 now = idem_now_ms();
	int			 rc;

	if ((n = idem_name(r, name)) == 0)
		return (store_err_set(se, STORE_ERR_INTERNAL, "idem: no "
		    "identity for the token"));
	if (r->resp.len < 1 + id + 1 || r->resp.data[0] != '{' ||
	    (id > 0 && r->resp.data[id] != ','))
		return (store_err_set(se, STORE_ERR_INTERNAL, "idem: the "
		    "answer to record is not one"));
	/* "{" then what follows the id: the answer any id can take. */
	buf_init(&a);
	buf_addc(&a, '{');
	buf_add(&a, r->resp.data + 1 + id, r->resp.len - 1 - id);
	rec.answer = a.data;
	rec.answer_len = a.len;
	rec.rev = rev;
	rec.expires_ms = now + r->md->cfg.idem_window_ms;
	rc = store_idem_put(st, name, n, &rec, now, se);
	buf_free(&a);
	return (rc);
}
