/*
 * Writes on a store that takes them whole (store_forward.h: the remote
 * backend), instead of the group commit: the request's line is sent to
 * the metad the store uses, with its own "idem" token (one made from the
 * client's token and peer, or a new one), and that daemon's answer is the
 * answer, once this daemon's watches have its rev's events.
 */
#ifndef METAD_FORWARD_H
#define METAD_FORWARD_H

struct req;

/*
 * r: a decoded write op (with its cJSON tree, or from the direct decoder:
 * none), line and len the line it came as; it ends in req_done().
 */
void	forward_start(struct req *, const char *line, size_t len);

#endif
