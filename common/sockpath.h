/*
 * Where the daemon's socket lives (metad(8), SOCKET AND DATABASE PATHS):
 * $METAD_SOCKET, else $XDG_RUNTIME_DIR/metad.sock, else
 * /tmp/metad-$UID/metad.sock.  metactl looks at $METACTL_SOCKET first.
 */
#ifndef METAD_SOCKPATH_H
#define METAD_SOCKPATH_H

#include <stddef.h>

/*
 * Writes the default path into out.  first_env, if not NULL, is an
 * environment variable consulted before the others.  Returns -1 (with a
 * cause the caller frees) if the path does not fit a sockaddr_un.
 */
int	sockpath_default(const char *first_env, char *out, size_t outlen,
	    char **cause);
/*
 * Creates the directory holding path when it is our /tmp/metad-$UID
 * default, mode 0700, and checks that it is ours and not group or world
 * writable.
 */
int	sockpath_prepare_dir(const char *path, char **cause);
/* Largest path a sockaddr_un can hold, including the NUL. */
size_t	sockpath_max(void);

#endif
