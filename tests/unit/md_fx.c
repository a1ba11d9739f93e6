/*
 * The daemon module tests' fixture (see md_fx.h).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "md_fx.h"
#include "core/commit.h"
#include "core/events.h"
#include "core/req.h"
#include "core/wait.h"
#include "core/watch.h"
#include "util.h"

int
md_fx_setup(void **state)
{
	struct metad		*md = xcalloc(1, sizeof *md);
	struct store_options	 so;
	struct store_err	 se;

	md->cfg.max_pending_bytes = 1 << 20;
	if ((md->base = event_base_new()) == NULL)
		return (-1);
	memset(&so, 0, sizeof so);
	so.base = md->base;
	so.notify = events_notify;
	so.notify_arg = md;
	memset(&se, 0, sizeof se);
	if ((md->store = store_open("memory", &so, &se)) == NULL)
		fail_msg("store_open memory: %s", se.msg);
	md->commit = commit_create(md);
	md->watch = watch_hub_create(md);
	md->waits = wait_create();
	md->events = events_create(md);
	events_listen(md->events, commit_delivered, md->commit);
	*state = md;
	return (0);
}

int
md_fx_teardown(void **state)
{
	struct metad	*md = *state;

	commit_free(md->commit);
	wait_free(md->waits);
	watch_hub_free(md->watch);
	events_free(md->events);
	store_close(md->store);
	event_base_free(md->base);
	free(md);
	return (0);
}

static void
md_fx_timeout(evutil_socket_t fd, short what, void *arg)
{
	*(int *)arg = 1;
	(void)fd;
	(void)what;
}

void
md_fx_run(struct metad *md, const int *flag)
{
	struct timeval	 tv = { MD_FX_WAIT_MS / 1000, 0 };
	struct event	*t;
	int		 late = 0;

	t = evtimer_new(md->base, md_fx_timeout, &late);
	evtimer_add(t, &tv);
	while (!*flag && !late)
		event_base_loop(md->base, EVLOOP_ONCE);
	event_free(t);
	if (!*flag)
		fail_msg("nothing came in %d ms", MD_FX_WAIT_MS);
}

void
md_fx_run_ms(struct metad *md, unsigned ms)
{
	struct timeval	 tv = { ms / 1000, (suseconds_t)(ms % 1000) * 1000 };
	struct event	*t;
	int		 done = 0;

	t = evtimer_new(md->base, md_fx_timeout, &done);
	evtimer_add(t, &tv);
	while (!done)
		event_base_loop(md->base, EVLOOP_ONCE);
	event_free(t);
}

static void
md_fx_store_cb(void *arg, const struct store_err *se)
{
	if (se != NULL)
		fail_msg("store: %s", se->msg);
	*(int *)arg = 1;
}

uint64_t
md_fx_write_list(struct metad *md, ...)
{
	struct store		*st = md->store;
	struct store_keys	 ks;
	struct store_err	 se;
	struct store_kv		 meta;
	const char		*k;
	char			 v[32];
	uint64_t		 rev, prev;
	uint32_t		 seq = 0;
	int			 begun = 0, landed = 0, del;
	va_list			 ap;
	int64_t			 until = mono_ms() + MD_FX_WAIT_MS;

	memset(&ks, 0, sizeof ks);
	store_begin(st, &ks, md_fx_store_cb, &begun);
	md_fx_run(md, &begun);
	rev = store_base_rev(st) + 1;
	snprintf(v, sizeof v, "v%llu", (unsigned long long)rev);
	va_start(ap, md);
	while ((k = va_arg(ap, const char *)) != NULL) {
		if (*k == '#') {
			if (store_compact(st, strtoull(k + 1, NULL, 10),
			    &se) != 0)
				fail_msg("compact %s: %s", k + 1, se.msg);
			continue;
		}
		if ((del = (*k == '-')) != 0)
			k++;
		if ((del ? store_delete(st, rev, seq++, k, strlen(k), NULL,
		    &se) : store_put(st, rev, seq++, k, strlen(k), v,
		    strlen(v), &meta, &prev, &se)) != 0)
			fail_msg("write %s: %s", k, se.msg);
	}
	va_end(ap);
	store_commit(st, rev, md_fx_store_cb, &landed);
	md_fx_run(md, &landed);
	while (events_delivered(md->events) < rev && mono_ms() < until)
		event_base_loop(md->base, EVLOOP_NONBLOCK);
	assert_true(events_delivered(md->events) >= rev);
	return (rev);
}

struct req *
md_fx_req(struct metad *md, const char *json, struct watch_peer *peer,
    void (*on_done)(struct req *))
{
	struct req	*r = xcalloc(1, sizeof *r);

	r->md = md;
	r->peer = peer;
	r->access = CONN_ACCESS_RW;
	r->on_done = on_done;
	if ((r->json = cJSON_Parse(json)) == NULL)
		fail_msg("not JSON: %s", json);
	buf_init(&r->resp);
	return (r);
}
