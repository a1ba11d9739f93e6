/*
 * What a store reports of its work (store.h: enum store_report), and the
 * names of its error codes as the metrics label them.
 */
#include "store/store_backend.h"

static const char *const store_err_names[] = {
	[STORE_ERR_NONE] = "ok",
	[STORE_ERR_FULL] = "full",
	[STORE_ERR_IO] = "io",
	[STORE_ERR_UNAVAILABLE] = "unavailable",
	[STORE_ERR_CONFLICT] = "conflict",
	[STORE_ERR_COMPACTED] = "compacted",
	[STORE_ERR_UNKNOWN] = "unknown",
	[STORE_ERR_FUTURE] = "future",
	[STORE_ERR_NO_LEASE] = "no_lease",
	[STORE_ERR_TOO_LARGE] = "too_large",
	[STORE_ERR_INTERNAL] = "internal"
};

const char *
store_err_name(enum store_errcode c)
{
	if ((size_t)c >= sizeof store_err_names / sizeof store_err_names[0] ||
	    store_err_names[c] == NULL)
		return ("internal");
	return (store_err_names[c]);
}

unsigned
store_reports(const struct store *s)
{
	return (s->backend->reports);
}

void
store_report(struct store *s, enum store_report kind, const char *call,
    enum store_errcode outcome, double seconds)
{
	if (s != NULL && s->opts.report != NULL)
		s->opts.report(s->opts.report_arg, kind, call, outcome,
		    seconds);
}
