#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/idem.h"
#include "core/req.h"
#include "metad.h"

int
idem_name_make(struct req *r)
{
	size_t	 n = r->identity_len + 1 + r->idem_len;

	if (r->identity == NULL || r->idem == NULL || n > STORE_IDEM_TOK_MAX)
		return (-1);
	free(r->idem_name);
	r->idem_name = xmalloc(n);
	memcpy(r->idem_name, r->identity, r->identity_len);
	r->idem_name[r->identity_len] = '\0';
	memcpy(r->idem_name + r->identity_len + 1, r->idem, r->idem_len);
	r->idem_name_len = n;
	return (0);
}

/* Wall-clock ms: a record's expiry must mean the same after a restart. */
uint64_t
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
	int			 rc;

	if ((rc = store_idem_get(st, r->idem_name, r->idem_name_len,
	    idem_now_ms(), &rec, se)) != 1)
		return (rc);
	return (idem_replay_rec(r, &rec, se));
}

int
idem_replay_rec(struct req *r, const struct store_idem *rec,
    struct store_err *se)
{
	if (rec->answer_len < 2 || ((const char *)rec->answer)[0] != '{')
		return (store_err_set(se, STORE_ERR_INTERNAL, "idem: the "
		    "record of the token holds no answer"));
	buf_reset(&r->resp);
	buf_addc(&r->resp, '{');
	if (r->id_len > 0) {
		buf_add(&r->resp, "\"id\":", sizeof "\"id\":" - 1);
		buf_add(&r->resp, r->id, r->id_len);
		buf_addc(&r->resp, ',');
	}
	buf_add(&r->resp, (const char *)rec->answer + 1, rec->answer_len - 1);
	r->replay_rev = rec->rev;
	return (1);
}

int
idem_answer(const struct req *r, struct buf *out)
{
	size_t	 id = idem_id_part(r);

	if (r->resp.len < 1 + id + 1 || r->resp.data[0] != '{' ||
	    (id > 0 && r->resp.data[id] != ','))
		return (-1);
	/* "{" then what follows the id: the answer any id can take. */
	buf_reset(out);
	buf_addc(out, '{');
	buf_add(out, r->resp.data + 1 + id, r->resp.len - 1 - id);
	return (0);
}

int
idem_record(struct req *r, struct store *st, uint64_t rev,
    struct store_err *se)
{
	struct store_idem	 rec;
	uint64_t		 now = idem_now_ms();

	if (idem_answer(r, &r->idem_rec) != 0)
		return (store_err_set(se, STORE_ERR_INTERNAL, "idem: the "
		    "answer to record is not one"));
	rec.answer = r->idem_rec.data;
	rec.answer_len = r->idem_rec.len;
	rec.rev = rev;
	rec.expires_ms = r->idem_expires = now + r->md->cfg.idem_window_ms;
	return (store_idem_put(st, r->idem_name, r->idem_name_len, &rec, now,
	    se));
}

int
idem_fix(struct req *r, struct store *st, store_done done, void *arg)
{
	struct store_idem	 rec;
	struct buf		 a;

	if (r == NULL || r->idem == NULL || r->idem_rec.len == 0)
		return (0);
	buf_init(&a);
	if (idem_answer(r, &a) != 0 || (a.len == r->idem_rec.len &&
	    memcmp(a.data, r->idem_rec.data, a.len) == 0)) {
		buf_free(&a);
		return (0);
	}
	buf_free(&r->idem_rec);
	r->idem_rec = a;
	rec.answer = a.data;
	rec.answer_len = a.len;
	rec.rev = r->wrote_rev;
	rec.expires_ms = r->idem_expires;
	store_idem_fix(st, r->idem_name, r->idem_name_len, &rec, done, arg);
	return (1);
}
