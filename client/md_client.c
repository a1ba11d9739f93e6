/*
 * The handle: creating, connecting, closing, and its error.
 */
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "md_int.h"
#include "proto.h"
#include "sockpath.h"
#include "tlsaddr.h"

static const char *md_err_names[] = {
	"ok", "bad_request", "unknown_op", "request_too_large",
	"value_too_large", "failed_precondition", "fenced", "compacted",
	"timeout", "not_found", "read_only", "permission_denied",
	"unavailable", "storage_full", "internal", "other",
	"answer_too_large", "resource_exhausted"
};

static const char *md_err_own[] = {
	"connect", "deadline", "protocol", "interrupted", "invalid"
};

const char *
md_errname(enum md_err e)
{
	if ((unsigned)e <= MD_E_RESOURCE_EXHAUSTED)
		return (md_err_names[e]);
	if (e >= MD_E_CONNECT && e <= MD_E_INVALID)
		return (md_err_own[e - MD_E_CONNECT]);
	return ("unknown");
}

struct md_client *
md_new(void)
{
	struct md_client	*h;

	h = xcalloc(1, sizeof *h);
	h->fd = -1;
	buf_init(&h->in);
	buf_init(&h->out);
	return (h);
}

void
md_close(struct md_client *h)
{
	md_tls_close(h);
	if (h->fd != -1)
		close(h->fd);
	h->fd = -1;
	buf_reset(&h->in);
	buf_reset(&h->out);
	h->in_off = h->out_off = 0;
	h->pend_head = h->pend_len = 0;
	if (h->sub != NULL) {	/* its watch went with the connection */
		h->sub->watch_id = 0;
		h->sub->rewatching = 0;
	}
}

void
md_free(struct md_client *h)
{
	if (h == NULL)
		return;
	md_close(h);
	md_clearerr(h);
	free(h->path);
	md_set_tls(h, NULL, NULL, NULL);
	free(h->idem);
	buf_free(&h->in);
	buf_free(&h->out);
	free(h);
}

int
md_connected(const struct md_client *h)
{
	return (h->fd != -1);
}

const char *
md_path(const struct md_client *h)
{
	return (h->path);
}

void
md_set_timeout(struct md_client *h, uint64_t timeout_ms)
{
	h->timeout_ms = timeout_ms;
}

int
md_set_idem(struct md_client *h, const char *token)
{
	md_clearerr(h);
	if (token != NULL && (*token == '\0' ||
	    strlen(token) > IDEM_TOKEN_MAX_BYTES))
		return (md_seterr(h, MD_E_INVALID, "an idem token is 1 to %d "
		    "bytes", IDEM_TOKEN_MAX_BYTES));
	free(h->idem);
	h->idem = token != NULL ? xstrdup(token) : NULL;
	return (0);
}

uint64_t
md_timeout(const struct md_client *h)
{
	return (h->timeout_ms);
}

void
md_set_interrupt(struct md_client *h, const volatile sig_atomic_t *flag,
    const sigset_t *mask)
{
	h->intr = flag;
	h->intr_mask = mask;
}

int
md_fd(const struct md_client *h)
{
	return (h->fd);
}



/* --- Errors. --- */

void
md_clearerr(struct md_client *h)
{
	h->err = MD_OK;
	free(h->errmsg);
	free(h->errjson);
	h->errmsg = h->errjson = NULL;
	h->cur_present = 0;
	h->cur_version = h->cur_mod_rev = h->err_epoch = 0;
}

static int
md_vseterr(struct md_client *h, enum md_err e, const char *fmt, va_list ap)
{
	md_clearerr(h);
	h->err = e;
	if (vasprintf(&h->errmsg, fmt, ap) == -1)
		abort();
	return (-1);
}

int
md_seterr(struct md_client *h, enum md_err e, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	md_vseterr(h, e, fmt, ap);
	va_end(ap);
	return (-1);
}

int
md_fail(struct md_client *h, enum md_err e, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	md_vseterr(h, e, fmt, ap);
	va_end(ap);
	md_close(h);
	return (-1);
}

enum md_err
md_errcode(const struct md_client *h)
{
	return (h->err);
}

const char *
md_errmsg(const struct md_client *h)
{
	return (h->errmsg != NULL ? h->errmsg : "");
}

const char *
md_errjson(const struct md_client *h)
{
	return (h->errjson);
}

int
md_err_current(const struct md_client *h, uint64_t *version,
    uint64_t *mod_rev)
{
	if (version != NULL)
		*version = h->cur_version;
	if (mod_rev != NULL)
		*mod_rev = h->cur_mod_rev;
	return (h->cur_present);
}

uint64_t
md_err_epoch(const struct md_client *h)
{
	return (h->err_epoch);
}

enum md_err
md_err_of(const char *code)
{
	unsigned	 i;

	for (i = 1; i <= MD_E_RESOURCE_EXHAUSTED; i++)
		if (i != MD_E_OTHER && strcmp(code, md_err_names[i]) == 0)
			return ((enum md_err)i);
	return (MD_E_OTHER);
}

int
md_response_error(struct md_client *h, const cJSON *resp)
{
	const cJSON	*err, *code, *msg, *cur;
	struct buf	 b;
	enum md_err	 e;

	err = cJSON_GetObjectItemCaseSensitive(resp, "error");
	code = cJSON_GetObjectItemCaseSensitive(err, "code");
	msg = cJSON_GetObjectItemCaseSensitive(err, "message");
	if (!cJSON_IsString(code))
		return (md_fail(h, MD_E_PROTOCOL, "metad sent an error "
		    "without a code"));
	e = md_err_of(code->valuestring);
	md_seterr(h, e, "%s", cJSON_IsString(msg) ? msg->valuestring :
	    code->valuestring);
	buf_init(&b);
	proto_print(&b, err, NULL);	/* a \u0000 as \u0000 again */
	h->errjson = buf_cstr(&b);
	cur = cJSON_GetObjectItemCaseSensitive(err, "current");
	if (cJSON_IsObject(cur)) {
		/* fenced: the current epoch; failed_precondition: a kv. */
		h->err_epoch = md_u64(cur, "epoch");
		h->cur_version = md_u64(cur, "version");
		h->cur_mod_rev = md_u64(cur, "mod_rev");
		h->cur_present = e == MD_E_FAILED_PRECONDITION;
	} else if (cJSON_IsNumber(cur))
		h->err_epoch = md_u64(err, "current");
	return (-1);
}

/* --- Connecting. --- */

/*
 * Why a connect failed with error, and what to do, true for what is at
 * the path: metad makes its socket at a path that is free or holds a stale
 * socket, in a directory that exists (its default one it makes itself).
 */
static void
md_connect_why(const char *path, int error, char *out, size_t len)
{
	struct stat	 sb;
	char		 dir[1024], def[64], *slash;
	const char	*e = strerror(error);

	snprintf(dir, sizeof dir, "%s", path);
	snprintf(def, sizeof def, "/tmp/metad-%ld", (long)getuid());
	if ((slash = strrchr(dir, '/')) != NULL && slash != dir)
		*slash = '\0';
	if (lstat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
		snprintf(out, len, "it is a directory, not a socket (give the "
		    "path of metad's socket, such as %s/metad.sock)", path);
	else if (lstat(path, &sb) == 0 && !S_ISSOCK(sb.st_mode))
		snprintf(out, len, "it is a file, not a socket (give the path "
		    "of metad's socket; metad does not replace a file with "
		    "its socket)");
	else if (error == ECONNREFUSED)
		snprintf(out, len, "%s (nothing listens on this socket: is "
		    "metad running? start it with: metad --socket %s, which "
		    "replaces the stale socket)", e, path);
	else if (error == EACCES || error == EPERM)
		snprintf(out, len, "%s (check the permissions of %s and of its "
		    "directories)", e, path);
	else if (error == ENOENT && slash != NULL && slash != dir &&
	    strcmp(dir, def) != 0 && stat(dir, &sb) != 0)
		snprintf(out, len, "%s (is metad running? %s does not exist: "
		    "create it, then start metad with: metad --socket %s)", e,
		    dir, path);
	else
		snprintf(out, len, "%s (is metad running? start it with: "
		    "metad --socket %s)", e, path);
}

static int
md_connect_error(struct md_client *h, int error)
{
	char	 t[32], why[1400];

	if (error == EAGAIN || error == EWOULDBLOCK || error == ETIMEDOUT) {
		format_ms(h->timeout_ms, t, sizeof t);
		return (md_fail(h, MD_E_DEADLINE, "cannot connect to %s: "
		    "metad did not accept the connection within %s", h->path,
		    t));
	}
	md_connect_why(h->path, error, why, sizeof why);
	return (md_fail(h, MD_E_CONNECT, "cannot connect to %s: %s", h->path,
	    why));
}

/*
 * A blocking connect bounded by SO_SNDTIMEO (a Unix socket waits there when
 * the listener's backlog is full), then non-blocking I/O with poll().
 */
int
md_connect(struct md_client *h, const char *path, uint64_t timeout_ms)
{
	struct sockaddr_un	 sun;
	struct timeval		 tv;
	char			 def[1024], *cause = NULL;
	int			 fd, error;

	md_close(h);
	md_clearerr(h);
	h->timeout_ms = timeout_ms;
	if (path == NULL) {
		if (sockpath_default("METACTL_SOCKET", def, sizeof def,
		    &cause) != 0) {
			md_seterr(h, MD_E_CONNECT, "%s", cause);
			free(cause);
			return (-1);
		}
		path = def;
	}
	free(h->path);
	h->path = xstrdup(path);
	if (tlsaddr_is(path))
		return (md_tls_connect(h, md_deadline(h)));
	memset(&sun, 0, sizeof sun);
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof sun.sun_path)
		return (md_seterr(h, MD_E_CONNECT, "socket path too long: %s "
		    "(the limit is %zu bytes)", path, sizeof sun.sun_path - 1));
	memcpy(sun.sun_path, path, strlen(path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (md_connect_error(h, errno));
	if (timeout_ms > 0) {
		tv.tv_sec = (time_t)(timeout_ms / 1000);
		tv.tv_usec = (suseconds_t)(timeout_ms % 1000) * 1000;
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	}
	while (connect(fd, (struct sockaddr *)&sun, sizeof sun) != 0) {
		if (errno == EINTR)
			continue;
		error = errno;
		close(fd);
		return (md_connect_error(h, error));
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) == -1) {
		error = errno;
		close(fd);
		return (md_connect_error(h, error));
	}
	h->fd = fd;
	return (0);
}
