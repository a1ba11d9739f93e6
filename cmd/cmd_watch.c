/*
 * watch KEY... [--prefix P]... [--from-rev R] [--count N] [--progress MS]
 *     [-- COMMAND [ARG...]]
 *
 * Streams the changes of the keys and of every key under the prefixes
 * ("" for all keys), one watch on the daemon whatever their number (each
 * event once), from rev R on (default: changes after now), until Ctrl-C
 * (exit status 130), N events (--count, exit status 0), or an error.
 *
 * Text output, one line per event, written and flushed as it arrives:
 *
 *	PUT <key> v<version> rev <mod_rev> <value>
 *	DELETE <key> rev <mod_rev>
 *	PROGRESS rev <rev>		(--progress: nothing for MS ms)
 *
 * --prev-kv ends a put's or delete's line with "prev <value>", the value
 * before the event, or "prev (none)" for a create (a value token never
 * starts with a bare '('); with -- COMMAND, METAD_PREV_VALUE.
 *
 * Keys and values are tokens (output.h): bare when they are plain words,
 * else a JSON string literal ("two words", "", "a\nb"); a value that is
 * not UTF-8 text comes as b64:<base64>.  -o json prints each event object
 * of the daemon as one JSON line (JSON Lines), without its "watch" id
 * (which changes when metactl resumes the watch): {"event":"put","key":K,
 * "value":V (or "value_b64"),"version":N,"create_rev":R,"mod_rev":R} or
 * {"event":"delete","key":K,"mod_rev":R}.
 *
 * With -- COMMAND, nothing is printed: COMMAND runs once per put or
 * delete, one at a time in event order (cmd_watch_run.c).
 *
 * --timeout bounds connecting and the daemon's answer to the watch
 * request, never the wait for events.  When metad cancels the watch
 * because metactl fell behind (slow_consumer: the reader of our stdout was
 * slow), metactl watches again from the first rev not delivered, on the
 * same connection: no event is lost or repeated; stderr says so once.  A
 * cancel for any other reason (compacted: the history to resume from is
 * gone) is exit status 5; a daemon that goes away is exit status 4.  A
 * stdout whose reader is gone (metactl watch k | head -1: EPIPE, SIGPIPE
 * being ignored meanwhile) ends the watch with exit status 0, as the end
 * of what was wanted.  The watch ends by closing the connection (metad
 * drops its watches).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metactl.h"
#include "metad_limits.h"
#include "proto.h"
#include "cmd_watch.h"

static enum cmd_status	cmd_watch_exec(struct cmd_ctx *, char **);

static const struct option cmd_watch_longopts[] = {
	{ "prefix",	required_argument,	NULL, 'p' },
	{ "key",	required_argument,	NULL, 'k' },
	{ "from-rev",	required_argument,	NULL, 0 },
	{ "count",	required_argument,	NULL, 'n' },
	{ "progress",	required_argument,	NULL, 0 },
	{ "prev-kv",	no_argument,		NULL, 0 },
	{ NULL,		0,			NULL, 0 }
};

const struct cmd_entry cmd_watch_entry = {
	.name = "watch",
	.optstring = "p:k:n:",
	.longopts = cmd_watch_longopts,
	.args_min = 0,
	.args_max = -1,
	.usage = "KEY... [--prefix PREFIX]... [--from-rev REV] [--count N] "
	    "[--prev-kv] [--progress MS] [-- COMMAND [ARG...]]",
	.help = "stream changes until Ctrl-C (exit 130) or N events",
	.details =
	    "One line per event, flushed as it arrives:\n"
	    "  PUT KEY vVERSION rev MOD_REV VALUE\n"
	    "  DELETE KEY rev MOD_REV\n"
	    "A key or value that is empty, holds a space or control character,"
	    "\nor starts with '\"', '(' or \"b64:\" is printed as a JSON "
	    "string; a value\nthat is not UTF-8 text as b64:BASE64.  -o json: "
	    "the daemon's event objects\nas JSON Lines, without their "
	    "\"watch\" id.\n"
	    "Several keys (-k KEY for one starting with '-') and prefixes are "
	    "one watch,\neach event once.  --prev-kv: each line ends with "
	    "prev VALUE, the value before\n(prev (none) for a create).  "
	    "--progress MS: a line PROGRESS rev R "
	    "after MS ms with\nno event (every change up to R was shown).  "
	    "-- COMMAND runs COMMAND once\nper event, one at a time, in order, "
	    "with METAD_EVENT (put or delete),\nMETAD_KEY, METAD_VALUE and "
	    "METAD_REV in its environment; nothing is printed.\n"
	    "--prefix \"\" watches every key.  --from-rev REV replays the "
	    "history from REV\n(default: changes after now).  --timeout bounds "
	    "only the start.  A watch\nthat falls behind is resumed with "
	    "nothing lost.  Exit status: 0 after\n--count events, 130 on "
	    "Ctrl-C, 4 when metad goes away, 5 when the history\nto replay "
	    "is compacted.\n",
	.exec = cmd_watch_exec
};


/* The keys (-k and positional) or the prefixes (-p) of the watch. */
static enum cmd_status
cmd_watch_names(struct cmd_watch *wt, int prefix, char **cause)
{
	struct args	*a = wt->ctx->args;
	const char	*v;
	size_t		 i;
	int		 n, j;
	enum cmd_status	 s;

	n = a->argc - (a->after_dashdash > 0 ? a->after_dashdash : 0);
	for (i = 0, j = 0; i < a->nopts || (!prefix && j < n); ) {
		if (i < a->nopts) {
			if (strcmp(a->opts[i++].name, prefix ? "prefix" :
			    "key") != 0)
				continue;
			v = a->opts[i - 1].value;
		} else
			v = a->argv[j++];
		if (wt->nnames == WATCH_KEYS_MAX) {
			xasprintf(cause, "watch: at most %d keys and "
			    "prefixes", WATCH_KEYS_MAX);
			return (CMD_USAGE);
		}
		if ((!prefix || *v != '\0') && (s = cmd_check_key(v, prefix ?
		    "PREFIX" : "KEY", cause)) != CMD_OK)
			return (s);
		wt->names[wt->nnames] = v;
		wt->prefix[wt->nnames++] = prefix;
	}
	return (CMD_OK);
}

static enum cmd_status
cmd_watch_parse(struct cmd_ctx *ctx, struct cmd_watch *wt, char **cause)
{
	struct args	*a = ctx->args;
	const char	*v;
	enum cmd_status	 s;

	memset(wt, 0, sizeof *wt);
	wt->ctx = ctx;
	wt->prev_kv = args_has(a, "prev-kv");
	if ((s = cmd_watch_names(wt, 0, cause)) != CMD_OK ||
	    (s = cmd_watch_names(wt, 1, cause)) != CMD_OK)
		return (s);
	if (wt->nnames == 0) {
		xasprintf(cause, "watch: give a KEY or --prefix PREFIX");
		return (CMD_USAGE);
	}
	if (a->after_dashdash == 0) {
		xasprintf(cause, "watch: no COMMAND after \"--\"");
		return (CMD_USAGE);
	}
	if (a->after_dashdash > 0)
		wt->command = a->argv + a->argc - a->after_dashdash;
	if ((v = args_get(a, "from-rev")) != NULL && ((s = args_u64(v,
	    "--from-rev", &wt->from_rev, cause)) != CMD_OK ||
	    wt->from_rev == 0)) {
		if (s == CMD_OK)
			xasprintf(cause, "invalid --from-rev: 0 (revs start "
			    "at 1; --from-rev 1 replays all the history)");
		return (CMD_USAGE);
	}
	if ((v = args_get(a, "count")) != NULL && ((s = args_u64(v,
	    "--count", &wt->count, cause)) != CMD_OK || wt->count == 0)) {
		if (s == CMD_OK)
			xasprintf(cause, "invalid --count: 0 (expected at "
			    "least 1)");
		return (CMD_USAGE);
	}
	if ((v = args_get(a, "progress")) != NULL && ((s = args_u64(v,
	    "--progress", &wt->progress_ms, cause)) != CMD_OK ||
	    wt->progress_ms < WATCH_PROGRESS_MIN_MS ||
	    wt->progress_ms > WATCH_PROGRESS_MAX_MS)) {
		if (s == CMD_OK)
			xasprintf(cause, "invalid --progress: %s (expected %d "
			    "to %d ms)", v, WATCH_PROGRESS_MIN_MS,
			    WATCH_PROGRESS_MAX_MS);
		return (CMD_USAGE);
	}
	return (CMD_OK);
}

/*
 * Sends a watch request from rev from (0: now) and reads its answer, with
 * the --timeout for the first one and none when resuming (the daemon may
 * be busy with the very writes we fell behind on).
 */
static enum cmd_status
cmd_watch_request(struct cmd_watch *wt, uint64_t from, int resume,
    char **cause)
{
	struct cmd_ctx	*ctx = wt->ctx;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp;
	enum cmd_status	 s;
	uint64_t	 saved = ctx->client.timeout_ms;
	unsigned	 i;
	int		 p;

	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "watch");
	for (p = 0; p < 2; p++) {
		jw_name(&w, p ? "prefixes" : "keys");
		jw_arr_open(&w);
		for (i = 0; i < wt->nnames; i++)
			if (wt->prefix[i] == p)
				jw_cstr(&w, wt->names[i]);
		jw_arr_close(&w);
	}
	if (wt->prev_kv) {
		jw_name(&w, "prev_kv");
		jw_bool(&w, 1);
	}
	if (wt->progress_ms != 0) {
		jw_name(&w, "progress_ms");
		jw_u64(&w, wt->progress_ms);
	}
	if (from != 0) {
		jw_name(&w, "from_rev");
		jw_u64(&w, from);
	}
	jw_obj_close(&w);
	if (resume)
		ctx->client.timeout_ms = 0;
	s = cmd_call(ctx, &b, &resp, cause);
	ctx->client.timeout_ms = saved;
	buf_free(&b);
	if (s != CMD_OK)
		return (s);
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(resp, "watch"),
	    &wt->id) != 0) {
		xasprintf(cause, "metad's answer to watch has no watch id");
		s = CMD_ERROR;
	}
	cJSON_Delete(resp);
	return (s);
}

/* One put or delete event as a text line. */
static enum cmd_status
cmd_watch_text(const cJSON *ev, int put, int prev_kv, char **cause)
{
	const cJSON	*key, *prev;
	uint64_t	 version = 0, mod_rev;
	struct buf	 b;

	key = cJSON_GetObjectItemCaseSensitive(ev, "key");
	if (!cJSON_IsString(key) || proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(ev, "mod_rev"), &mod_rev) != 0 ||
	    (put && proto_number_u64(cJSON_GetObjectItemCaseSensitive(ev,
	    "version"), &version) != 0)) {
		xasprintf(cause, "metad sent an invalid watch event");
		return (CMD_ERROR);
	}
	buf_init(&b);
	buf_addstr(&b, put ? "PUT " : "DELETE ");
	output_token(&b, key->valuestring, strlen(key->valuestring));
	if (put)
		buf_printf(&b, " v%" PRIu64, version);
	buf_printf(&b, " rev %" PRIu64, mod_rev);
	if (put) {
		buf_addc(&b, ' ');
		if (output_token_value(&b, ev) != 0) {
			buf_free(&b);
			xasprintf(cause, "metad sent a put event without a "
			    "value");
			return (CMD_ERROR);
		}
	}
	prev = cJSON_GetObjectItemCaseSensitive(ev, "prev");
	if (prev_kv && cJSON_IsNull(prev))
		buf_addstr(&b, " prev (none)");
	else if (prev_kv && cJSON_IsObject(prev)) {
		buf_addstr(&b, " prev ");
		if (output_token_value(&b, prev) != 0) {
			buf_free(&b);
			xasprintf(cause, "metad sent a prev without a value");
			return (CMD_ERROR);
		}
	}
	buf_addc(&b, '\n');
	fwrite(b.data, 1, b.len, stdout);
	buf_free(&b);
	return (CMD_OK);
}

/* A cancelled watch: resumed (CMD_OK) or the end of it. */
static enum cmd_status
cmd_watch_cancelled(struct cmd_watch *wt, const cJSON *ev, char **cause)
{
	const cJSON	*reason;
	uint64_t	 next, rev;

	reason = cJSON_GetObjectItemCaseSensitive(ev, "reason");
	if (cJSON_IsString(reason) && strcmp(reason->valuestring,
	    "slow_consumer") == 0 && proto_number_u64(
	    cJSON_GetObjectItemCaseSensitive(ev, "next_rev"), &next) == 0 &&
	    next > 0) {
		if (!wt->told_resume)
			fprintf(stderr, "metactl: watch fell behind and was "
			    "cancelled by metad (slow consumer); resuming from "
			    "rev %" PRIu64 ", nothing is lost\n", next);
		wt->told_resume = 1;
		return (cmd_watch_request(wt, next, 1, cause));
	}
	if (wt->ctx->mode == OUTPUT_JSON)
		output_json_without(ev, "watch");
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(ev,
	    "compact_rev"), &rev) == 0)
		xasprintf(cause, "watch cancelled by metad: %s (history is "
		    "compacted up to rev %" PRIu64 ")", cJSON_IsString(reason) ?
		    reason->valuestring : "no reason", rev);
	else
		xasprintf(cause, "watch cancelled by metad: %s",
		    cJSON_IsString(reason) ? reason->valuestring : "no reason");
	return (CMD_ERROR);
}

/* A progress line: shown as it came (-o json) or as PROGRESS rev R. */
static enum cmd_status
cmd_watch_progress(struct cmd_watch *wt, const cJSON *ev, char **cause)
{
	uint64_t	 rev;

	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(ev, "rev"),
	    &rev) != 0) {
		xasprintf(cause, "metad sent an invalid progress event");
		return (CMD_ERROR);
	}
	if (wt->command != NULL)
		return (CMD_OK);
	if (wt->ctx->mode == OUTPUT_JSON)
		output_json_without(ev, "watch");
	else
		printf("PROGRESS rev %" PRIu64 "\n", rev);
	if (fflush(stdout) != 0 && errno == EPIPE)
		wt->closed = 1;
	return (CMD_OK);
}

/*
 * Nobody reads stdout any more: what is left in its buffer goes to
 * /dev/null, so that no later flush fails.
 */
static void
cmd_watch_drop_stdout(void)
{
	int	 fd;

	if ((fd = open("/dev/null", O_WRONLY | O_CLOEXEC)) != -1) {
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
	clearerr(stdout);
	fflush(stdout);
	clearerr(stdout);
}

/* One line from the daemon after the watch started. */
static enum cmd_status
cmd_watch_line(struct cmd_watch *wt, const cJSON *ev, char **cause)
{
	const cJSON	*type;
	uint64_t	 id;
	int		 put;
	enum cmd_status	 s;

	type = cJSON_GetObjectItemCaseSensitive(ev, "event");
	if (proto_number_u64(cJSON_GetObjectItemCaseSensitive(ev, "watch"),
	    &id) != 0 || !cJSON_IsString(type)) {
		xasprintf(cause, "metad sent a line that is not a watch event");
		return (CMD_ERROR);
	}
	if (id != wt->id)
		return (CMD_OK);	/* a watch we no longer have */
	if (strcmp(type->valuestring, "cancelled") == 0)
		return (cmd_watch_cancelled(wt, ev, cause));
	if (strcmp(type->valuestring, "progress") == 0)
		return (cmd_watch_progress(wt, ev, cause));
	put = strcmp(type->valuestring, "put") == 0;
	if (!put && strcmp(type->valuestring, "delete") != 0)
		return (CMD_OK);	/* an event kind from a later metad */
	if (wt->command != NULL) {
		if ((s = cmd_watch_run(wt, ev, put, cause)) != CMD_OK)
			return (s);
	} else if (wt->ctx->mode == OUTPUT_JSON)
		output_json_without(ev, "watch");
	else if ((s = cmd_watch_text(ev, put, wt->prev_kv, cause)) != CMD_OK)
		return (s);
	if (fflush(stdout) != 0 && errno == EPIPE)
		wt->closed = 1;
	wt->seen++;
	return (CMD_OK);
}

static enum cmd_status
cmd_watch_loop(struct cmd_watch *wt, char **cause)
{
	struct client		*c = &wt->ctx->client;
	struct proto_err	 e;
	const char		*line;
	size_t			 len;
	cJSON			*ev;
	enum cmd_status		 s;

	while (!wt->closed && (wt->count == 0 || wt->seen < wt->count)) {
		if (client_read_line(c, -1, &line, &len, cause) != 0)
			return (cmd_client_status(c));
		if ((ev = proto_parse(line, len, &e)) == NULL) {
			xasprintf(cause, "metad sent a line that is not one "
			    "JSON object");
			return (CMD_ERROR);
		}
		s = cmd_watch_line(wt, ev, cause);
		cJSON_Delete(ev);
		if (s != CMD_OK)
			return (s);
	}
	return (CMD_OK);
}

static enum cmd_status
cmd_watch_exec(struct cmd_ctx *ctx, char **cause)
{
	struct cmd_watch	 wt;
	struct intr		 in;
	struct sigaction	 sa, old_pipe;
	enum cmd_status		 s;

	if ((s = cmd_watch_parse(ctx, &wt, cause)) != CMD_OK)
		return (s);
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_IGN;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGPIPE, &sa, &old_pipe);
	intr_catch(&in, &ctx->client);
	if ((s = cmd_watch_request(&wt, wt.from_rev, 0, cause)) == CMD_OK)
		s = cmd_watch_loop(&wt, cause);
	if (wt.closed && s == CMD_OK)
		cmd_watch_drop_stdout();
	if (s == CMD_INTERRUPTED) {
		free(*cause);
		*cause = NULL;
	}
	client_close(&ctx->client);
	intr_restore(&in, &ctx->client);
	sigaction(SIGPIPE, &old_pipe, NULL);
	return (s);
}
