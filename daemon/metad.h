/*
 * The daemon's shared state and configuration.  One struct metad lives for
 * the whole process; everything hangs off it.
 */
#ifndef METAD_METAD_H
#define METAD_METAD_H

#include <sys/queue.h>
#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "log.h"
#include "metad_limits.h"
#include "metrics/metrics.h"
#include "store/store.h"

struct event_base;
struct server;
struct commit;
struct events;
struct watch_hub;
struct wait_list;
struct snapshots;
struct lease_table;
struct lease_req;
struct ops_leases;
struct service;
struct metrics_http;
struct tls;

/* A list of uids or gids from --allow-uid and friends. */
struct id_list {
	unsigned	 n;
	unsigned long	 ids[ACCESS_LIST_MAX];
};

/* A list of TLS client names (certificate CNs) from --allow-cn and -ro. */
struct name_list {
	unsigned	 n;
	char		*names[ACCESS_LIST_MAX];
};

/* --listen addresses at most. */
#define LISTEN_MAX	16

struct metad_config {
	char		*socket_path;
	char		*store_spec;
	char		*etcd_prefix;	/* NULL: the backend's default */
	enum store_sync	 sync;
	uint64_t	 history;
	size_t		 max_value_bytes;
	size_t		 max_request_bytes;
	size_t		 max_pending_bytes;
	size_t		 max_answer_bytes;	/* txn, list, history */
	size_t		 view_max_bytes;	/* etcd: the view's */
	char		*store_cacert;	/* etcd over https: TLS */
	char		*store_cert;
	char		*store_key;
	char		*store_user;	/* etcd's authentication */
	char		*store_password_file;
	uint64_t	 idem_window_ms;	/* a token's record kept */
	unsigned	 max_connections;
	unsigned	 max_conns_per_peer;	/* a uid but root and ours */
	unsigned	 max_watches_per_peer;
	unsigned	 max_leases;		/* daemon-wide, sessions too */
	mode_t		 socket_mode;
	struct id_list	 allow_uid;	/* read-write */
	struct id_list	 allow_gid;
	struct id_list	 ro_uid;	/* read-only */
	struct id_list	 ro_gid;
	char		*listen[LISTEN_MAX];	/* tls://HOST:PORT */
	unsigned	 nlisten;
	char		*tls_cert;		/* the listeners' */
	char		*tls_key;
	char		*tls_client_ca;		/* signs every client's */
	struct name_list allow_cn;		/* read-write */
	struct name_list ro_cn;			/* read-only */
	char		*pidfile;
	enum log_level	 log_level;
	char		*log_file;	/* NULL: stderr (or syslog) */
	int		 log_syslog;
	int		 daemonize;
	/* --metrics-listen: GET /metrics there (host NULL: not served). */
	char		*metrics_host;
	unsigned	 metrics_port;
};

struct metad {
	struct event_base	*base;
	struct metad_config	 cfg;
	struct store		*store;
	struct server		*server;
	struct tls		*tls;		/* --listen's, or NULL */
	struct commit		*commit;
	struct events		*events;
	struct watch_hub	*watch;
	struct wait_list	*waits;
	struct snapshots	*snapshots;
	struct lease_table	*leases;
	const struct ops_leases	*lease_ops;	/* chosen at start */
	struct service		*service;	/* what systemd is told */
	struct metrics		 metrics;	/* counted where work happens */
	struct metrics_http	*metrics_http;	/* --metrics-listen */
	time_t			 started;
	unsigned		 nconns;
	unsigned		 nwatches;
	unsigned		 lease_grants_out;	/* etcd: asked, unanswered */
	/* etcd: lease requests with a token, one at a time a token. */
	LIST_HEAD(, lease_req)	 lease_idem;
	int			 stopping;
};

#endif
