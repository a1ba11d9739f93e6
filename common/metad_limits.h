/*
 * Named limits shared by metad and metactl.  Every input the daemon accepts is
 * bounded by one of these (or by the option that overrides its default).
 */
#ifndef METAD_LIMITS_H
#define METAD_LIMITS_H

#define METAD_VERSION			"0.1.0"
#define METAD_PROTOCOL			1

#define KEY_MAX_BYTES			4096
#define VALUE_MAX_BYTES_DEFAULT		(1024 * 1024)
/* --max-request-bytes default: 4/3 of the value limit plus 64 KiB. */
#define REQUEST_MAX_BYTES_FOR(v)	((v) / 3 * 4 + 4 + 64 * 1024)
#define LIST_LIMIT_DEFAULT		1000
#define LIST_LIMIT_MAX			10000
#define TXN_MAX_OPS			128
#define TXN_MAX_COMPARES		128
#define GET_KEYS_MAX			128	/* a get's "keys" */
#define HISTORY_DEFAULT			100000
#define PENDING_BYTES_DEFAULT		(8 * 1024 * 1024)
#define ANSWER_BYTES_DEFAULT		(16 * 1024 * 1024)
/* --view-max-bytes default: the etcd backend's view of its keys. */
#define VIEW_MAX_BYTES_DEFAULT		(256 * 1024 * 1024)
#define MAX_CONNECTIONS_DEFAULT		1024
/* Per peer other than root and the daemon's own uid. */
#define CONNS_PER_PEER_DEFAULT		64
#define WATCHES_PER_PEER_DEFAULT	65536
/* --max-leases: the daemon's (on etcd: its prefix's) leases at once. */
#define LEASES_MAX_DEFAULT		100000
#define WAIT_TIMEOUT_MAX_MS		(24ULL * 3600 * 1000)
/* A lease's TTL (lease_grant's ttl_ms; metactl's lease grant, lock --ttl). */
#define LEASE_TTL_MIN_MS		1000
#define LEASE_TTL_MAX_MS		3600000
/* Idempotent writes: a token's bytes, and --idem-window (default, range). */
#define IDEM_TOKEN_MAX_BYTES		128
#define IDEM_WINDOW_DEFAULT_MS		(10ULL * 60 * 1000)
#define IDEM_WINDOW_MIN_MS		1000ULL
#define IDEM_WINDOW_MAX_MS		(7ULL * 24 * 3600 * 1000)
/* min_rev's wait when a get or list gives no timeout_ms. */
#define READ_TIMEOUT_DEFAULT_MS		5000
#define HISTORY_LIMIT_DEFAULT		100
#define HISTORY_LIMIT_MAX		10000
#define ACCESS_LIST_MAX			64	/* ids per --allow-* list */
#define OWNER_MAX_BYTES			1024
#define ID_MAX_BYTES			256
#define WATCHES_PER_CONN_MAX		1024
/* Keys and prefixes one watch names, together. */
#define WATCH_KEYS_MAX			128
/* A watch's progress_ms, at least and at most. */
#define WATCH_PROGRESS_MIN_MS		10
#define WATCH_PROGRESS_MAX_MS		86400000
#define WAITS_PER_CONN_MAX		1

/* Largest integer exactly representable in a JSON number (a double). */
#define JSON_INT_MAX			((1ULL << 53) - 1)

#endif
