#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sockpath.h"
#include "util.h"

size_t
sockpath_max(void)
{
	struct sockaddr_un	 sun;

	return (sizeof sun.sun_path);
}

int
sockpath_default(const char *first_env, char *out, size_t outlen,
    char **cause)
{
	const char	*s;
	int		 n;

	if (first_env != NULL && (s = getenv(first_env)) != NULL && *s != '\0')
		n = snprintf(out, outlen, "%s", s);
	else if ((s = getenv("METAD_SOCKET")) != NULL && *s != '\0')
		n = snprintf(out, outlen, "%s", s);
	else if ((s = getenv("XDG_RUNTIME_DIR")) != NULL && *s != '\0')
		n = snprintf(out, outlen, "%s/metad.sock", s);
	else
		n = snprintf(out, outlen, "/tmp/metad-%ld/metad.sock",
		    (long)getuid());
	if (n < 0 || (size_t)n >= outlen || (size_t)n >= sockpath_max()) {
		xasprintf(cause, "socket path too long (the limit is %zu "
		    "bytes)", sockpath_max() - 1);
		return (-1);
	}
	return (0);
}

int
sockpath_prepare_dir(const char *path, char **cause)
{
	char		 dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char		 tmpdir[64];
	char		*slash;
	struct stat	 sb;

	snprintf(tmpdir, sizeof tmpdir, "/tmp/metad-%ld", (long)getuid());
	if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir) {
		xasprintf(cause, "socket path too long: %s", path);
		return (-1);
	}
	if ((slash = strrchr(dir, '/')) == NULL)
		return (0);
	*slash = '\0';
	if (strcmp(dir, tmpdir) != 0)
		return (0);
	if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
		xasprintf(cause, "mkdir %s: %s", dir, strerror(errno));
		return (-1);
	}
	if (lstat(dir, &sb) != 0) {
		xasprintf(cause, "%s: %s", dir, strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(sb.st_mode) || sb.st_uid != getuid() ||
	    (sb.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		xasprintf(cause, "%s is not a private directory owned by uid "
		    "%ld", dir, (long)getuid());
		return (-1);
	}
	return (0);
}
