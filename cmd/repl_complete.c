/*
 * Tab completion in the REPL (readline's rl_attempted_completion_function;
 * never file names).  The words before the cursor tell what is wanted:
 *
 *	first word	a command (or its first word: "epoch"), quit, exit
 *	after "epoch"	get, bump (after "lease": grant, keepalive, ...)
 *	-...		the command's long options and the global ones
 *	-o / --output	text, json
 *	--prefix	a key
 *	KEY, PREFIX	a key: a "list" request by prefix (keys_only, at most
 *			REPL_COMPLETE_KEYS_MAX) over the session's connection,
 *			within REPL_COMPLETE_TIMEOUT_MS; nothing if metad is
 *			not there
 *	help ...	a command
 *
 * A match is quoted as the word being completed is (shlex.h): escaped
 * with backslashes outside quotes, inside "..." or '...' as it started.
 */
#include <stdlib.h>
#include <string.h>

#include <readline/readline.h>

#include "enc.h"
#include "metad_limits.h"
#include "repl.h"
#include "shlex.h"

/* The session completion asks metad through; readline gives no context. */
static struct cmd_ctx	*repl_complete_ctx;

/* The matches of the completion in progress, quoted. */
static struct {
	char	**v;
	size_t	  n;
	size_t	  next;
} repl_complete_matches;

/* What the words before the cursor say. */
struct repl_complete_at {
	const struct cmd_entry	*entry;		/* the command, once named */
	const char		*first;		/* its first word, if two */
	int			 unknown;	/* no such command */
	int			 npos;		/* positional words before */
	const char		*optval;	/* completing this option's value */
};

static void
repl_complete_add(const char *word, const char *prefix)
{
	char	 q = (char)rl_completion_quote_character;
	char	*m;
	size_t	 i;

	if (strncmp(word, prefix, strlen(prefix)) != 0)
		return;
	if (q == '\'' && strchr(word, '\'') != NULL)
		return;		/* cannot be written inside '...' */
	m = shlex_quote(word, q);
	for (i = 0; i < repl_complete_matches.n; i++) {
		if (strcmp(repl_complete_matches.v[i], m) == 0) {
			free(m);
			return;
		}
	}
	repl_complete_matches.v = xrealloc(repl_complete_matches.v,
	    (repl_complete_matches.n + 1) * sizeof *repl_complete_matches.v);
	repl_complete_matches.v[repl_complete_matches.n++] = m;
}

static void
repl_complete_free(void)
{
	size_t	 i;

	for (i = 0; i < repl_complete_matches.n; i++)
		free(repl_complete_matches.v[i]);
	free(repl_complete_matches.v);
	memset(&repl_complete_matches, 0, sizeof repl_complete_matches);
}

/* Commands (first words), or the second words after first. */
static void
repl_complete_commands(const char *first, const char *prefix)
{
	const struct cmd_entry	**e;
	const char		 *name, *sp;
	char			 *w;

	for (e = cmd_table; *e != NULL; e++) {
		name = (*e)->name;
		sp = strchr(name, ' ');
		if (first != NULL) {
			if (sp != NULL && strncmp(name, first, (size_t)(sp -
			    name)) == 0 && first[sp - name] == '\0')
				repl_complete_add(sp + 1, prefix);
			continue;
		}
		if (*e == &cmd_repl_entry)
			continue;
		w = xstrdup(name);
		w[strcspn(w, " ")] = '\0';
		repl_complete_add(w, prefix);
		free(w);
		if ((*e)->alias != NULL)
			repl_complete_add((*e)->alias, prefix);
	}
	if (first == NULL) {
		repl_complete_add("quit", prefix);
		repl_complete_add("exit", prefix);
	}
}

static void
repl_complete_options(const struct cmd_entry *e, const char *prefix)
{
	const struct option	*lists[2], *o;
	char			*w;
	int			 i;

	lists[0] = e != NULL ? e->longopts : NULL;
	lists[1] = cmd_global_longopts;
	for (i = 0; i < 2; i++) {
		for (o = lists[i]; o != NULL && o->name != NULL; o++) {
			xasprintf(&w, "--%s", o->name);
			repl_complete_add(w, prefix);
			free(w);
		}
	}
}

/* The option word w names (-x, --name, --name=value), or NULL. */
static const struct option *
repl_complete_option(const struct cmd_entry *e, const char *w)
{
	const struct option	*lists[2], *o;
	size_t			 len;
	int			 i;

	lists[0] = e != NULL ? e->longopts : NULL;
	lists[1] = cmd_global_longopts;
	len = strcspn(w + 2, "=");
	for (i = 0; i < 2; i++) {
		for (o = lists[i]; o != NULL && o->name != NULL; o++) {
			if (w[1] == '-' ? strlen(o->name) == len &&
			    strncmp(o->name, w + 2, len) == 0 :
			    o->val != 0 && o->val == w[1])
				return (o);
		}
	}
	return (NULL);
}

/* A word that is no option: the command, or one of its arguments. */
static void
repl_complete_word(struct repl_complete_at *at, const char *w)
{
	const struct cmd_entry	**e;
	const char		 *name, *sp;

	if (at->entry != NULL) {
		at->npos++;
		return;
	}
	for (e = cmd_table; *e != NULL; e++) {
		name = (*e)->name;
		sp = strchr(name, ' ');
		if (at->first == NULL && sp == NULL && (strcmp(name, w) == 0 ||
		    ((*e)->alias != NULL && strcmp((*e)->alias, w) == 0)))
			at->entry = *e;
		else if (at->first != NULL && sp != NULL &&
		    strncmp(name, at->first, (size_t)(sp - name)) == 0 &&
		    at->first[sp - name] == '\0' && strcmp(sp + 1, w) == 0)
			at->entry = *e;
	}
	if (at->entry == NULL && at->first == NULL)
		at->first = w;
	else if (at->entry == NULL)
		at->unknown = 1;
}

static void
repl_complete_parse(char **w, int n, struct repl_complete_at *at)
{
	const struct option	*o;
	int			 i, dashdash = 0;

	memset(at, 0, sizeof *at);
	for (i = 0; i < n; i++) {
		if (dashdash || w[i][0] != '-' || w[i][1] == '\0') {
			repl_complete_word(at, w[i]);
			continue;
		}
		if (strcmp(w[i], "--") == 0) {
			dashdash = 1;
			continue;
		}
		o = repl_complete_option(at->entry, w[i]);
		if (o == NULL || o->has_arg != required_argument ||
		    (w[i][1] == '-' ? strchr(w[i], '=') != NULL :
		    w[i][2] != '\0'))
			continue;
		if (i + 1 == n)
			at->optval = o->name;
		i++;	/* its value */
	}
}

/* Keys under prefix, asked of metad; quietly nothing if it cannot say. */
static void
repl_complete_keys(const char *prefix)
{
	struct cmd_ctx	*ctx = repl_complete_ctx;
	uint64_t	 timeout_ms = ctx->timeout_ms;
	const cJSON	*kv, *key;
	struct buf	 b;
	struct jw	 w;
	cJSON		*resp = NULL;
	char		*cause = NULL;

	if (strlen(prefix) > KEY_MAX_BYTES ||
	    !utf8_valid(prefix, strlen(prefix)))
		return;
	if (client_stale(&ctx->client))
		client_close(&ctx->client);
	if (timeout_ms == 0 || timeout_ms > REPL_COMPLETE_TIMEOUT_MS)
		ctx->timeout_ms = REPL_COMPLETE_TIMEOUT_MS;
	ctx->client.timeout_ms = ctx->timeout_ms;
	buf_init(&b);
	cmd_request_open(ctx, &w, &b, "list");
	jw_name(&w, "prefix");
	jw_cstr(&w, prefix);
	jw_name(&w, "limit");
	jw_u64(&w, REPL_COMPLETE_KEYS_MAX);
	jw_name(&w, "keys_only");
	jw_bool(&w, 1);
	jw_obj_close(&w);
	if (cmd_roundtrip(ctx, &b, &resp, &cause) == CMD_OK &&
	    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(resp, "ok"))) {
		cJSON_ArrayForEach(kv, cJSON_GetObjectItemCaseSensitive(resp,
		    "kvs")) {
			key = cJSON_GetObjectItemCaseSensitive(kv, "key");
			if (cJSON_IsString(key))
				repl_complete_add(key->valuestring, prefix);
		}
	}
	cJSON_Delete(resp);
	free(cause);
	buf_free(&b);
	ctx->timeout_ms = timeout_ms;
	ctx->client.timeout_ms = timeout_ms;
}

static int
repl_complete_takes_key(const struct cmd_entry *e)
{
	return (strncmp(e->usage, "KEY", 3) == 0 ||
	    strncmp(e->usage, "[PREFIX]", 8) == 0);
}

/* Fills the matches for the word prefix after the words w. */
static void
repl_complete_collect(char **w, int n, const char *prefix)
{
	struct repl_complete_at	 at;

	repl_complete_parse(w, n, &at);
	if (at.unknown)
		return;
	if (at.optval != NULL) {
		if (strcmp(at.optval, "output") == 0) {
			repl_complete_add("text", prefix);
			repl_complete_add("json", prefix);
		} else if (strcmp(at.optval, "prefix") == 0)
			repl_complete_keys(prefix);
	} else if (prefix[0] == '-')
		repl_complete_options(at.entry, prefix);
	else if (at.entry == NULL)
		repl_complete_commands(at.first, prefix);
	else if (at.entry == &cmd_help_entry && at.npos == 0)
		repl_complete_commands(NULL, prefix);
	else if (at.npos == 0 && repl_complete_takes_key(at.entry))
		repl_complete_keys(prefix);
}

static char *
repl_complete_next(const char *text, int state)
{
	(void)text;
	if (state == 0)
		repl_complete_matches.next = 0;
	if (repl_complete_matches.next >= repl_complete_matches.n)
		return (NULL);
	return (xstrdup(repl_complete_matches.v[repl_complete_matches.next++]));
}

/* The word being completed, unquoted. */
static char *
repl_complete_unquote(const char *text)
{
	struct shlex	 sh;
	char		*s, *w;

	if (rl_completion_quote_character != 0)
		xasprintf(&s, "%c%s", rl_completion_quote_character, text);
	else
		s = xstrdup(text);
	shlex_split(&sh, s, strlen(s), SHLEX_PARTIAL, NULL);
	w = xstrdup(sh.nwords > 0 ? sh.words[0] : "");
	shlex_free(&sh);
	free(s);
	return (w);
}

static char **
repl_complete(const char *text, int start, int end)
{
	struct shlex	 before;
	char		**matches = NULL, *prefix;
	size_t		 n = (size_t)start;

	(void)end;
	rl_attempted_completion_over = 1;	/* never file names */
	/* Readline starts an open quote's word after the quote. */
	if (rl_completion_quote_character != 0 && n > 0 &&
	    rl_line_buffer[n - 1] == rl_completion_quote_character)
		n--;
	shlex_split(&before, rl_line_buffer, n, SHLEX_PARTIAL, NULL);
	prefix = repl_complete_unquote(text);
	repl_complete_collect(before.words, before.nwords, prefix);
	if (repl_complete_matches.n > 0)
		matches = rl_completion_matches(text, repl_complete_next);
	repl_complete_free();
	free(prefix);
	shlex_free(&before);
	return (matches);
}

static char *
repl_complete_none(const char *text, int state)
{
	(void)text;
	(void)state;
	return (NULL);
}

/* A character after an odd number of backslashes is no word break. */
static int
repl_complete_is_quoted(char *line, int i)
{
	int	 n = 0;

	while (i - n > 0 && line[i - n - 1] == '\\')
		n++;
	return (n % 2 == 1);
}

void
repl_complete_init(struct cmd_ctx *ctx)
{
	repl_complete_ctx = ctx;
	rl_attempted_completion_function = repl_complete;
	rl_completion_entry_function = repl_complete_none;
	rl_basic_word_break_characters = " \t\n";
	rl_completer_word_break_characters = " \t\n";
	rl_completer_quote_characters = "'\"";
	rl_char_is_quoted_p = repl_complete_is_quoted;
}
