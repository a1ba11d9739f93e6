/*
 * Who may do what: a Unix socket's peer by its credentials (our own uid
 * and root, --allow-uid, --allow-gid, --read-only-uid, --read-only-gid),
 * a TLS client by its certificate's subject CN (--allow-cn,
 * --read-only-cn).  metad(8), ACCESS.
 */
#ifndef METAD_ACCESS_H
#define METAD_ACCESS_H

#include <sys/socket.h>

#include "core/req.h"

struct metad_config;

/*
 * The access of the peer on fd, whose credentials are cred; *by_group 1
 * when a group list let it in, *group that group (its identity for the
 * per-peer limits), else 0.
 */
enum conn_access	 access_uid(const struct metad_config *, int fd,
			    const struct ucred *, int *by_group, gid_t *group);
/* The access of the TLS client whose certificate names cn. */
enum conn_access	 access_cn(const struct metad_config *, const char *);

#endif
