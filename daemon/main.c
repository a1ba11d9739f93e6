#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "core/commit.h"
#include "config.h"
#include "core/events.h"
#include "lease/lease.h"
#include "log.h"
#include "metad.h"
#include "metrics/metrics.h"
#include "net/metrics_http.h"
#include "net/server.h"
#include "net/tls.h"
#include "ops/ops.h"
#include "ops/snapshot.h"
#include "service.h"
#include "store/store_hash.h"
#include "systemd.h"
#include "core/wait.h"
#include "core/watch.h"

/*
 * How long SIGTERM waits for queued work and unsent answers; and, while a
 * commit is out at a remote store (whose answer may be lost: finding out
 * whether it landed takes up to about 12 s), at most this long for it.
 */
#define METAD_DRAIN_MS		2000
#define METAD_DRAIN_OUT_MS	15000
#define METAD_DRAIN_TICK_MS	10

static struct event	*drain_ev;
static int		 drain_ticks;

static void
metad_drain_cb(evutil_socket_t fd, short what, void *arg)
{
	struct metad	*md = arg;
	struct timeval	 tv = { 0, METAD_DRAIN_TICK_MS * 1000 };
	int		 ms = ++drain_ticks * METAD_DRAIN_TICK_MS;

	if ((server_pending_output(md->server) == 0 &&
	    commit_queued(md->commit) == 0 &&
	    server_pending_requests(md->server) == 0) ||
	    (ms >= METAD_DRAIN_MS && commit_out(md->commit) == 0) ||
	    ms >= METAD_DRAIN_OUT_MS) {
		event_base_loopexit(md->base, NULL);
		return;
	}
	evtimer_add(drain_ev, &tv);
}

static void
metad_signal_cb(evutil_socket_t sig, short what, void *arg)
{
	struct metad	*md = arg;

	if (sig == SIGHUP) {
		if (md->tls != NULL)
			tls_reload(md->tls);
		if (md->cfg.log_file == NULL)
			log_info("SIGHUP: no --log-file to reopen");
		else if (log_to_file(md->cfg.log_file) != 0)
			log_warn("SIGHUP: reopening %s", md->cfg.log_file);
		else
			log_info("SIGHUP: %s reopened", md->cfg.log_file);
		return;
	}
	if (md->stopping)
		return;
	md->stopping = 1;
	log_info("%s: stopping", strsignal((int)sig));
	service_stopping(md->service);
	server_stop_listening(md->server);
	tls_stop_listening(md->tls);
	server_stop_reading(md->server);
	drain_ev = evtimer_new(md->base, metad_drain_cb, md);
	metad_drain_cb(-1, 0, md);
}

/* What the store reports of its work, into the metrics (store.h). */
static void
metad_store_report(void *arg, enum store_report kind, const char *call,
    enum store_errcode outcome, double seconds)
{
	struct metrics	*m = arg;

	switch (kind) {
	case STORE_REPORT_FSYNC:
		metrics_hist_observe(&m->fsync, seconds);
		break;
	case STORE_REPORT_CHECKPOINT:
		metrics_hist_observe(&m->checkpoint, seconds);
		break;
	case STORE_REPORT_COMPACTION:
		metrics_hist_observe(&m->compaction, seconds);
		break;
	case STORE_REPORT_CALL:
		metrics_call(m, call, store_err_name(outcome), seconds);
		break;
	}
}

/*
 * Every op shows in the metrics from the start, at 0 (a rate over a
 * series that appears with its first request misses that one), then the
 * loop lag probe and --metrics-listen.
 */
static void
metad_metrics_start(struct metad *md)
{
	const struct op	*op;
	char		*cause = NULL;
	size_t		 i;

	for (i = 0; (op = ops_row(md, i)) != NULL; i++)
		metrics_names_slot(&md->metrics.op_names, op->name,
		    METRICS_OPS_MAX - 1);
	metrics_names_slot(&md->metrics.op_names, metrics_op_unknown,
	    METRICS_OPS_MAX);
	metrics_start(&md->metrics, md->base);
	if (md->cfg.metrics_host != NULL &&
	    (md->metrics_http = metrics_http_start(md, &cause)) == NULL)
		fatalx("%s", cause);
}

static void
metad_pidfile(const char *path)
{
	FILE	*f;

	if (path == NULL)
		return;
	if ((f = fopen(path, "w")) == NULL)
		fatal("pidfile %s", path);
	fprintf(f, "%ld\n", (long)getpid());
	fclose(f);
}

/*
 * Fork before anything the store or the loop needs exists (the sqlite
 * backend's sync thread, libevent's epoll set): a child has only the
 * thread that forked, and shares its parent's epoll set.  The parent waits
 * until the child serves (it writes a byte on the returned pipe, then
 * closes it: metad_ready) and exits 0; a child that fails first exits
 * with its message on the stderr they share, and the parent exits with
 * the child's status.
 */
static int
metad_daemonize(void)
{
	int	 fd, p[2], st;
	pid_t	 pid;
	ssize_t	 n;
	char	 c;

	if (pipe(p) == -1)
		fatal("pipe");
	switch ((pid = fork())) {
	case -1:
		fatal("fork");
	case 0:
		close(p[0]);
		break;
	default:
		close(p[1]);
		while ((n = read(p[0], &c, 1)) == -1 && errno == EINTR)
			;
		if (n == 1)
			_exit(0);
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
	}
	if (setsid() == -1)
		fatal("setsid");
	if ((fd = open("/dev/null", O_RDWR)) != -1) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
	return (p[1]);
}

/*
 * metad serves: tell whoever waits (the --daemonize parent, systemd), and
 * move logging off the stderr it was started with where asked to (a
 * daemon's stderr is a terminal it left, or its parent's file).
 */
static void
metad_ready(struct metad *md, int ready_fd)
{
	/* First the log: one that cannot be opened fails the start. */
	if (md->cfg.log_file != NULL) {
		if (log_to_file(md->cfg.log_file) != 0)
			fatal("--log-file %s", md->cfg.log_file);
	} else if (md->cfg.log_syslog || md->cfg.daemonize)
		log_to_syslog();
	if (ready_fd != -1) {
		if (write(ready_fd, "", 1) != 1)
			log_warn("telling the parent metad serves");
		close(ready_fd);
	}
	md->service = service_start(md);
}

static void
metad_run(struct metad *md)
{
	struct event	*sig[4];
	int		 signals[4] = { SIGTERM, SIGINT, SIGHUP, 0 };
	sigset_t	 block;
	int		 i;

	for (i = 0; signals[i] != 0; i++) {
		sig[i] = evsignal_new(md->base, signals[i], metad_signal_cb,
		    md);
		evsignal_add(sig[i], NULL);
	}
	event_base_dispatch(md->base);
	/*
	 * Stopping already: a signal from now on is ignored, not the default
	 * action that freeing its event restores (which would kill the
	 * daemon in the middle of closing the store).
	 */
	sigemptyset(&block);
	for (i = 0; signals[i] != 0; i++)
		sigaddset(&block, signals[i]);
	sigprocmask(SIG_BLOCK, &block, NULL);
	for (i = 0; signals[i] != 0; i++) {
		event_free(sig[i]);
		signal(signals[i], SIG_IGN);
	}
	if (drain_ev != NULL)
		event_free(drain_ev);
}

int
main(int argc, char **argv)
{
	struct metad		 md;
	struct store_options	 so;
	struct store_err	 se;
	char			*cause = NULL;
	int			 ready = -1, listen_fd, fd;

	memset(&md, 0, sizeof md);
	log_init("metad", LOG_LEVEL_INFO);
	if (config_parse(&md.cfg, argc, argv, &cause) != 0) {
		fprintf(stderr, "metad: %s\nTry 'metad --help' for the "
		    "options.\n", cause);
		free(cause);
		config_free(&md.cfg);
		return (2);
	}
	log_set_level(md.cfg.log_level);
	/*
	 * Whatever the umask it was started with, what metad creates is its
	 * own: the database, its WAL and shared memory (SQLite gives those
	 * the database's mode), snapshot temporaries, the directories it
	 * makes, the pidfile and log file.  The socket gets --socket-mode.
	 */
	umask(077);
	if (store_hash_init() != 0)
		fatalx("no random key for the hash tables (libsodium)");
	signal(SIGPIPE, SIG_IGN);
	/* Past the file size limit a write fails with EFBIG instead. */
	signal(SIGXFSZ, SIG_IGN);

	/* systemd's socket is for this pid: taken before a fork. */
	if (systemd_listen_fd(&listen_fd, &cause) != 0)
		fatalx("%s", cause);
	if (md.cfg.daemonize)
		ready = metad_daemonize();
	/* A log file that cannot be written is said before anything is made. */
	if (md.cfg.log_file != NULL) {
		if ((fd = open(md.cfg.log_file, O_WRONLY | O_APPEND | O_CREAT |
		    O_CLOEXEC, 0600)) == -1)
			fatal("--log-file %s", md.cfg.log_file);
		close(fd);
	}
	if ((md.base = event_base_new()) == NULL)
		fatalx("event_base_new");
	metrics_init(&md.metrics);
	memset(&so, 0, sizeof so);
	so.sync = md.cfg.sync;
	so.history = md.cfg.history;
	so.prefix = md.cfg.etcd_prefix;
	so.view_max_bytes = md.cfg.view_max_bytes;
	so.cacert = md.cfg.store_cacert;
	so.cert = md.cfg.store_cert;
	so.key = md.cfg.store_key;
	so.user = md.cfg.store_user;
	so.password_file = md.cfg.store_password_file;
	so.base = md.base;
	so.notify = events_notify;
	so.notify_arg = &md;
	so.report = metad_store_report;
	so.report_arg = &md.metrics;
	if ((md.store = store_open(md.cfg.store_spec, &so, &se)) == NULL)
		fatalx("store %s: %s", md.cfg.store_spec, se.msg);
	md.commit = commit_create(&md);
	md.watch = watch_hub_create(&md);
	md.waits = wait_create();
	md.snapshots = snapshots_create(&md);
	md.events = events_create(&md);
	events_listen(md.events, commit_delivered, md.commit);
	md.lease_ops = ops_lease_choose(md.store);
	md.leases = lease_table_create(&md, md.lease_ops->remote, ops_lease_due,
	    &md);
	lease_table_load(md.leases);
	/* The TLS listeners first: a bad certificate leaves no socket. */
	if (md.cfg.nlisten > 0 && (md.tls = tls_create(&md, &cause)) == NULL)
		fatalx("%s", cause);
	/* A socket from systemd is served as it is; else ours is made. */
	if ((listen_fd == -1 && config_prepare_socket(&md.cfg, &cause) != 0) ||
	    (md.server = server_create(&md, listen_fd, &cause)) == NULL)
		fatalx("%s", cause);
	metad_metrics_start(&md);
	metad_pidfile(md.cfg.pidfile);
	md.started = time(NULL);
	metad_ready(&md, ready);
	log_info("%s %s, store %s (rev %llu)", listen_fd == -1 ?
	    "listening on" : "serving systemd's socket", md.cfg.socket_path,
	    md.cfg.store_spec, (unsigned long long)store_rev(md.store));

	metad_run(&md);

	/*
	 * Every answer made is sent before its connection closes; what is
	 * still unanswered (a remote store that did not answer in time) ends
	 * with the connections.
	 */
	service_free(md.service);
	server_close_all(md.server);
	tls_free(md.tls);
	commit_free(md.commit);
	lease_table_free(md.leases);
	wait_free(md.waits);
	snapshots_free(md.snapshots);
	server_free(md.server);
	watch_hub_free(md.watch);
	events_free(md.events);
	store_close(md.store);
	/* After the store: a remote store's stats no longer answer a scrape. */
	metrics_http_free(md.metrics_http);
	metrics_stop(&md.metrics);
	event_base_free(md.base);
	if (md.cfg.pidfile != NULL)
		unlink(md.cfg.pidfile);
	config_free(&md.cfg);
	log_info("stopped");
	return (0);
}
