/*
 * The daemon's shared state and configuration.  One struct metad lives for
 * the whole process; everything hangs off it.
 */
#ifndef METAD_METAD_H
#define METAD_METAD_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "log.h"
#include "metad_limits.h"
#include "store/store.h"

struct event_base;
struct server;
struct commit;
struct events;
struct watch_hub;
struct wait_list;
struct snapshots;
struct lease_table;
struct ops_leases;
struct service;

/* A list of uids or gids from --allow-uid and friends. */
struct id_list {
	unsigned	 n;
	unsigned long	 ids[ACCESS_LIST_MAX];
};

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
	unsigned	 max_connections;
	unsigned	 max_conns_per_peer;	/* a uid but root and ours */
	unsigned	 max_watches_per_peer;
	unsigned	 max_leases;		/* daemon-wide, sessions too */
	mode_t		 socket_mode;
	struct id_list	 allow_uid;	/* read-write */
	struct id_list	 allow_gid;
	struct id_list	 ro_uid;	/* read-only */
	struct id_list	 ro_gid;
	char		*pidfile;
	enum log_level	 log_level;
	char		*log_file;	/* NULL: stderr (or syslog) */
	int		 log_syslog;
	int		 daemonize;
};

struct metad {
	struct event_base	*base;
	struct metad_config	 cfg;
	struct store		*store;
	struct server		*server;
	struct commit		*commit;
	struct events		*events;
	struct watch_hub	*watch;
	struct wait_list	*waits;
	struct snapshots	*snapshots;
	struct lease_table	*leases;
	const struct ops_leases	*lease_ops;	/* chosen at start */
	struct service		*service;	/* what systemd is told */
	time_t			 started;
	unsigned		 nconns;
	unsigned		 nwatches;
	unsigned		 lease_grants_out;	/* etcd: asked, unanswered */
	int			 stopping;
};

#endif
