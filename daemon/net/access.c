/* Who may do what (access.h). */
#include <sys/socket.h>
#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "metad.h"
#include "net/access.h"

static int
access_in_list(const struct id_list *l, unsigned long id)
{
	unsigned	 i;

	for (i = 0; i < l->n; i++) {
		if (l->ids[i] == id)
			return (1);
	}
	return (0);
}

/* The peer's supplementary groups, fetched at most once per connection. */
struct access_groups {
	int	 fetched;
	gid_t	*v;
	size_t	 n;
};

/* From the socket (SO_PEERGROUPS, Linux 4.13), grown to the size needed. */
static int
access_sock_groups(int fd, struct access_groups *g)
{
#ifdef SO_PEERGROUPS
	socklen_t	 len = 64 * sizeof *g->v;
	int		 tries;

	for (tries = 0; tries < 3; tries++) {
		g->v = xrealloc(g->v, len);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, g->v,
		    &len) == 0) {
			g->n = len / sizeof *g->v;
			return (0);
		}
		if (errno != ERANGE)
			return (-1);
	}
	return (-1);
#else
	errno = ENOPROTOOPT;
	return (-1);
#endif
}

/*
 * From the "Groups:" line of /proc/PID/status, if that process still runs
 * as the peer's effective uid (a reused pid of another user does not count).
 */
static int
access_proc_groups(const struct ucred *cred, struct access_groups *g)
{
	char		 path[64], *line = NULL, *p, *end;
	size_t		 cap = 0, room = 0;
	unsigned long	 id, euid = (unsigned long)-1;
	FILE		*f;
	int		 rc = -1;

	snprintf(path, sizeof path, "/proc/%ld/status", (long)cred->pid);
	if (cred->pid <= 0 || (f = fopen(path, "re")) == NULL)
		return (-1);
	while (getline(&line, &cap, f) != -1) {
		if (sscanf(line, "Uid: %*u %lu", &id) == 1)
			euid = id;
		if (strncmp(line, "Groups:", 7) != 0)
			continue;
		if (euid != (unsigned long)cred->uid)
			break;
		for (p = line + 7;; p = end) {
			id = strtoul(p, &end, 10);
			if (end == p)
				break;
			if (g->n == room) {
				room = room == 0 ? 64 : room * 2;
				g->v = xrealloc(g->v, room * sizeof *g->v);
			}
			g->v[g->n++] = (gid_t)id;
		}
		rc = 0;
		break;
	}
	free(line);
	fclose(f);
	if (rc == -1)
		errno = ESRCH;
	return (rc);
}

/*
 * The peer's primary group, or one of its supplementary groups as the
 * kernel reports them (no name-service lookup on the event loop).
 */
static int
access_in_groups(const struct id_list *l, int fd, const struct ucred *cred,
    struct access_groups *g, gid_t *gid)
{
	size_t	 i;

	if (l->n == 0)
		return (0);
	if (access_in_list(l, cred->gid)) {
		*gid = cred->gid;
		return (1);
	}
	if (!g->fetched) {
		g->fetched = 1;
		if (access_sock_groups(fd, g) == -1 && (errno != ENOPROTOOPT ||
		    access_proc_groups(cred, g) == -1)) {
			log_warn("supplementary groups of pid %ld",
			    (long)cred->pid);
			g->n = 0;
		}
	}
	for (i = 0; i < g->n; i++) {
		if (access_in_list(l, g->v[i])) {
			*gid = g->v[i];
			return (1);
		}
	}
	return (0);
}

/*
 * Who may do what: our own uid and root read and write; then uid lists
 * before group lists, and read-write before read-only at each level.
 */
enum conn_access
access_uid(const struct metad_config *cfg, int fd, const struct ucred *cred,
    int *by_group, gid_t *group)
{
	struct access_groups		 g = { 0, NULL, 0 };
	enum conn_access		 access = CONN_ACCESS_NONE;

	*by_group = 0;
	*group = 0;
	if (cred->uid == 0 || cred->uid == geteuid() ||
	    access_in_list(&cfg->allow_uid, cred->uid))
		return (CONN_ACCESS_RW);
	if (access_in_list(&cfg->ro_uid, cred->uid))
		return (CONN_ACCESS_RO);
	if (access_in_groups(&cfg->allow_gid, fd, cred, &g, group))
		access = CONN_ACCESS_RW;
	else if (access_in_groups(&cfg->ro_gid, fd, cred, &g, group))
		access = CONN_ACCESS_RO;
	*by_group = access != CONN_ACCESS_NONE;
	free(g.v);
	return (access);
}

/* A TLS client's CN: read-write before read-only, else none. */
enum conn_access
access_cn(const struct metad_config *cfg, const char *cn)
{
	unsigned	 i;

	for (i = 0; i < cfg->allow_cn.n; i++) {
		if (strcmp(cfg->allow_cn.names[i], cn) == 0)
			return (CONN_ACCESS_RW);
	}
	for (i = 0; i < cfg->ro_cn.n; i++) {
		if (strcmp(cfg->ro_cn.names[i], cn) == 0)
			return (CONN_ACCESS_RO);
	}
	return (CONN_ACCESS_NONE);
}
