/*
 * libFuzzer target: the request decoder and the op dispatch, in process.
 *
 * LLVMFuzzerInitialize builds a daemon once (event base, group commit, wait
 * list) the way daemon/main.c does, without a listening socket.  Each input
 * then runs against a fresh memory store and watch hub (so that a crash
 * reproduces from its input alone, and memory stays bounded) on three
 * connections, each made by conn_create() from one end of a socketpair; the
 * harness writes the requests into the other end, and reads and discards
 * what comes back:
 *
 *   connection 0  read-write   every line not starting with "1|" or "2|"
 *   connection 1  read-write   lines "1|..." (e.g. the put a wait needs)
 *   connection 2  read-only    lines "2|..."
 *
 * The lines up to an empty line are written, then the event loop takes a
 * turn: the connections read them (consecutive lines for one connection
 * usually as one read), writes that arrived together commit together, and
 * output drains.  At the end the peers send EOF (an unterminated last line
 * is answered then), waits of at most FUZZ_WAIT_MS fire, and whatever is
 * still open is closed.  The limits are small (see LLVMFuzzerInitialize)
 * so that small inputs reach them.
 *
 * Every line sent back must be a JSON object in valid UTF-8 (else abort).
 * Every request line is also given to the direct decoder (ops_fast.c) and,
 * when it takes it, to the general one, which must take it with the same
 * op, id and arguments (tests/unit/ops_fast_cmp.h; else abort).
 *
 * daemon/net/server.c (the listener) is not linked: the functions of it that
 * connections and the commit call have stand-ins below (output is flushed
 * once per turn, after the reads and the commit, as server_flush_cb does),
 * and the harness frees closed connections once nothing refers to them,
 * outside any callback, as server_reap_cb does.
 *
 *   FUZZ_ECHO=1 build/fuzz/fuzz_request FILE   shows what was answered.
 */
#include <sys/ioctl.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include <cjson/cJSON.h>

#include "core/commit.h"
#include "config.h"
#include "net/conn.h"
#include "enc.h"
#include "core/events.h"
#include "lease/lease.h"
#include "log.h"
#include "metad.h"
#include "net/server.h"
#include "store/store.h"
#include "core/wait.h"
#include "core/watch.h"

#include "../unit/ops_fast_cmp.h"

#define FUZZ_CONNS		3
#define FUZZ_SETTLE_ROUNDS	64	/* loop turns to settle an input */
#define FUZZ_WAIT_MS		3	/* waits this short time out in a run */

int	LLVMFuzzerInitialize(int *, char ***);
int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct metad	 md;
static struct conn	*conns[FUZZ_CONNS];
static int		 peers[FUZZ_CONNS];
static struct buf	 out[FUZZ_CONNS];	/* a partial line from each */
static int		 fuzz_echo;
static const enum conn_access fuzz_access[FUZZ_CONNS] = {
	CONN_ACCESS_RW, CONN_ACCESS_RW, CONN_ACCESS_RO
};

/* Stand-ins for daemon/net/server.c: dirty connections, closing, references. */
static struct event	*flush_ev;
static TAILQ_HEAD(, conn) dirty = TAILQ_HEAD_INITIALIZER(dirty);

static void
fuzz_flush_cb(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c;

	while ((c = TAILQ_FIRST(&dirty)) != NULL) {
		TAILQ_REMOVE(&dirty, c, dirty_entry);
		c->dirty = 0;
		conn_flush(c);
	}
}

void
server_conn_dirty(struct server *s, struct conn *c)
{
	if (c->dirty)
		return;
	c->dirty = 1;
	TAILQ_INSERT_TAIL(&dirty, c, dirty_entry);
	event_active(flush_ev, 0, 0);
}

void
server_conn_closed(struct server *s, struct conn *c)
{
	if (c->dirty) {
		TAILQ_REMOVE(&dirty, c, dirty_entry);
		c->dirty = 0;
	}
	md.nconns--;
}

void
server_conn_unref(struct server *s, struct conn *c)
{
	if (c->refs == 0)
		fatalx("server_conn_unref: no reference");
	c->refs--;
}

/* Every line the daemon sends must be a JSON object in valid UTF-8. */
static void
fuzz_check_line(int i, const char *line, size_t len)
{
	cJSON		*j;
	const char	*end = NULL;

	j = cJSON_ParseWithLengthOpts(line, len, &end, 0);
	if (j == NULL || !cJSON_IsObject(j) || end != line + len ||
	    !utf8_valid(line, len)) {
		fprintf(stderr, "connection %d sent a line that is not a JSON "
		    "object in UTF-8: %.*s\n", i, (int)len, line);
		abort();
	}
	cJSON_Delete(j);
}

/* Read what the connections sent, check it, and discard it. */
static void
fuzz_drain_peers(void)
{
	char		 buf[65536];
	struct buf	*o;
	const char	*nl;
	size_t		 at;
	ssize_t		 n;
	int		 i;

	for (i = 0; i < FUZZ_CONNS; i++) {
		if (peers[i] == -1)
			continue;
		o = &out[i];
		while ((n = read(peers[i], buf, sizeof buf)) > 0) {
			if (fuzz_echo)
				fprintf(stderr, "%d> %.*s", i, (int)n, buf);
			buf_add(o, buf, (size_t)n);
		}
		if (o->len == 0)
			continue;
		at = 0;
		while ((nl = memchr(o->data + at, '\n', o->len - at)) != NULL) {
			fuzz_check_line(i, o->data + at,
			    (size_t)(nl - (o->data + at)));
			at = (size_t)(nl - o->data) + 1;
		}
		memmove(o->data, o->data + at, o->len - at);
		o->len -= at;
	}
}

/* Free closed connections nothing refers to any more. */
static void
fuzz_reap(void)
{
	int	 i;

	for (i = 0; i < FUZZ_CONNS; i++) {
		if (conns[i] != NULL && conns[i]->dead && conns[i]->refs == 0) {
			conn_free(conns[i]);
			conns[i] = NULL;
		}
	}
}

/* One turn of the loop: the commit and I/O callbacks, then drain. */
static void
fuzz_turn(void)
{
	event_base_loop(md.base, EVLOOP_NONBLOCK);
	fuzz_drain_peers();
	fuzz_reap();
}

/* Work left that another turn would do. */
static int
fuzz_busy(void)
{
	struct conn	*c;
	int		 i, unread;

	if (commit_queued(md.commit) > 0)
		return (1);
	for (i = 0; i < FUZZ_CONNS; i++) {
		if ((c = conns[i]) == NULL || c->dead)
			continue;
		if (conn_output_len(c) > 0)
			return (1);
		if (c->nreqs == 0 && !c->eof &&
		    ioctl(c->fd, FIONREAD, &unread) == 0 && unread > 0)
			return (1);
	}
	return (0);
}

static void
fuzz_settle(void)
{
	int	 n;

	for (n = 0; n < FUZZ_SETTLE_ROUNDS; n++) {
		fuzz_turn();
		if (!fuzz_busy())
			break;
	}
}

static void
fuzz_open(void)
{
	struct store_options	 so;
	struct store_err	 se;
	struct conn_id		 id;
	int			 i, sv[2];

	memset(&so, 0, sizeof so);
	so.history = md.cfg.history;
	so.notify = events_notify;
	so.notify_arg = &md;
	if ((md.store = store_open("memory", &so, &se)) == NULL)
		fatalx("store_open: %s", se.msg);
	md.watch = watch_hub_create(&md);
	md.events = events_create(&md);
	events_listen(md.events, commit_delivered, md.commit);
	md.lease_ops = ops_lease_choose(md.store);
	md.leases = lease_table_create(&md, md.lease_ops->remote, ops_lease_due,
	    &md);
	lease_table_load(md.leases);
	for (i = 0; i < FUZZ_CONNS; i++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK |
		    SOCK_CLOEXEC, 0, sv) == -1)
			fatal("socketpair");
		id.uid = getuid();
		id.gid = getgid();
		id.pid = getpid();
		id.cn = NULL;
		id.by_group = 0;
		id.group = 0;
		conns[i] = conn_create(&md, sv[0], NULL, &id, fuzz_access[i]);
		peers[i] = sv[1];
		md.nconns++;
	}
}

/* EOF from every peer, short waits time out, then close what is left. */
static void
fuzz_close(void)
{
	struct timeval	 tv = { 0, FUZZ_WAIT_MS * 1000 };
	int		 i;

	for (i = 0; i < FUZZ_CONNS; i++)
		shutdown(peers[i], SHUT_WR);
	fuzz_settle();
	if (wait_any(md.waits)) {
		event_base_loopexit(md.base, &tv);
		event_base_dispatch(md.base);
		fuzz_settle();
	}
	for (i = 0; i < FUZZ_CONNS; i++) {
		if (conns[i] != NULL && !conns[i]->dead)
			conn_close(conns[i]);
	}
	fuzz_settle();
	for (i = 0; i < FUZZ_CONNS; i++) {
		if (conns[i] != NULL)
			fatalx("connection %d still referenced", i);
		close(peers[i]);
		peers[i] = -1;
		if (out[i].len != 0)
			fatalx("connection %d sent an unterminated line", i);
	}
	if (md.nwatches != 0 || md.nconns != 0 || wait_any(md.waits))
		fatalx("watches, connections or waits left over");
	watch_hub_free(md.watch);
	md.watch = NULL;
	lease_table_free(md.leases);
	md.leases = NULL;
	events_free(md.events);
	md.events = NULL;
	store_close(md.store);
	md.store = NULL;
}

/* Send one run of lines to connection i: the peer writes them. */
static void
fuzz_deliver(int i, const char *p, size_t n)
{
	ssize_t	 w;
	int	 stuck = 0;

	while (n > 0 && stuck < FUZZ_SETTLE_ROUNDS) {
		w = send(peers[i], p, n, MSG_NOSIGNAL);
		if (w > 0) {
			p += w;
			n -= (size_t)w;
			stuck = 0;
		} else if (w == -1 && (errno == EAGAIN || errno == EINTR)) {
			fuzz_turn();	/* the connection is not reading */
			stuck++;
		} else
			return;		/* closed */
	}
}

static int
fuzz_target(const char *line, size_t len, size_t *skip)
{
	*skip = 0;
	if (len >= 2 && line[1] == '|' && (line[0] == '1' || line[0] == '2')) {
		*skip = 2;
		return (line[0] - '0');
	}
	return (0);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char	*args[] = { "fuzz_request", "--store", "memory",
		    "--history", "16", "--max-value-bytes", "1024",
		    "--max-request-bytes", "2048", "--max-pending-bytes", "4096",
		    "--log-level", "error", NULL };
	char	*cause = NULL;
	int	 i;

	fuzz_echo = getenv("FUZZ_ECHO") != NULL;
	log_init("fuzz_request", LOG_LEVEL_ERROR);
	if (config_parse(&md.cfg, (int)(sizeof args / sizeof args[0]) - 1,
	    args, &cause) != 0)
		fatalx("config: %s", cause);
	log_set_level(md.cfg.log_level);
	if ((md.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	md.commit = commit_create(&md);
	if ((flush_ev = event_new(md.base, -1, 0, fuzz_flush_cb, NULL)) == NULL)
		fatalx("event_new");
	md.waits = wait_create();
	md.started = time(NULL);
	for (i = 0; i < FUZZ_CONNS; i++)
		buf_init(&out[i]);
	return (0);
}

/* The direct decoder agrees with the general one on the line. */
static void
fuzz_check_fast(int target, const char *line, size_t len)
{
	struct conn	 c;
	char		 why[512];

	memset(&c, 0, sizeof c);
	c.md = &md;
	c.access = fuzz_access[target];
	if (conns[target] != NULL) {	/* its identity scopes tokens */
		memcpy(c.identity, conns[target]->identity,
		    sizeof c.identity);
		c.identity_len = conns[target]->identity_len;
	}
	/* the line as conn.c frames it: a CR before the LF stays */
	if (ops_fast_cmp(&md, &c, line, len, why, sizeof why) == -1) {
		fprintf(stderr, "the direct decoder: %s: %.*s\n", why,
		    (int)len, line);
		abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*p = (const char *)data, *end = p + size, *nl;
	size_t		 len, skip, runlen = 0;
	char		*run;
	int		 target, cur = -1;

	fuzz_open();
	/* A run of lines for one connection, prefixes removed. */
	if ((run = malloc(size + 1)) == NULL)
		abort();
	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		len = nl != NULL ? (size_t)(nl - p) : (size_t)(end - p);
		target = fuzz_target(p, len, &skip);
		fuzz_check_fast(target, p + skip, len - skip);
		if (target != cur || len == 0) {
			if (cur != -1)
				fuzz_deliver(cur, run, runlen);
			cur = target;
			runlen = 0;
		}
		if (len == 0 && nl != NULL) {
			/* An empty line ends a turn. */
			cur = -1;
			fuzz_turn();
		} else {
			memcpy(run + runlen, p + skip, len - skip);
			runlen += len - skip;
			if (nl != NULL)
				run[runlen++] = '\n';
		}
		p = nl != NULL ? nl + 1 : end;
	}
	if (cur != -1)
		fuzz_deliver(cur, run, runlen);
	free(run);
	fuzz_settle();
	fuzz_close();
	return (0);
}
