/*
 * The end of a request (req.h): its answer goes where its creator said
 * (r->on_done): its connection, which sends answers in request order, or
 * the daemon's own request's end.
 */
#include <stdlib.h>

#include "core/req.h"

void
req_done(struct req *r)
{
	if (r->done)
		return;
	r->done = 1;
	r->on_done(r);
}

const char *
req_access_name(enum conn_access a)
{
	switch (a) {
	case CONN_ACCESS_RW:
		return ("rw");
	case CONN_ACCESS_RO:
		return ("ro");
	default:
		return ("none");
	}
}

void
req_free(struct req *r)
{
	if (r == NULL)
		return;
	proto_bytes_free(&r->wa.value);
	if (r->state_free != NULL)
		r->state_free(r->state);
	cJSON_Delete(r->json);
	free(r->id_owned);
	free(r->idem_name);
	buf_free(&r->idem_rec);
	buf_free(&r->resp);
	free(r);
}
