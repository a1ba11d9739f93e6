/*
 * Splitting a REPL line into words, and quoting a word back (shlex.h).
 */
#include <stdlib.h>
#include <string.h>

#include "shlex.h"
#include "util.h"

struct shlex_state {
	struct shlex	*sh;
	struct buf	 word;
	int		 inword;
};

static void
shlex_push(struct shlex_state *st)
{
	struct shlex	*sh = st->sh;

	sh->words = xrealloc(sh->words, (size_t)(sh->nwords + 2) *
	    sizeof *sh->words);
	sh->words[sh->nwords++] = xmemdup(buf_cstr(&st->word),
	    st->word.len + 1);
	sh->words[sh->nwords] = NULL;
	buf_reset(&st->word);
	st->inword = 0;
}

static int
shlex_blank(char c)
{
	return (c == ' ' || c == '\t' || c == '\r' || c == '\n');
}

/* Inside quotes: returns the number of bytes of s used from i. */
static size_t
shlex_quoted(struct shlex_state *st, const char *s, size_t len, size_t i)
{
	char	 c = s[i];

	if (c == st->sh->open) {
		st->sh->open = 0;
		return (1);
	}
	if (st->sh->open == '"' && c == '\\' && i + 1 < len &&
	    (s[i + 1] == '"' || s[i + 1] == '\\')) {
		buf_addc(&st->word, s[i + 1]);
		return (2);
	}
	buf_addc(&st->word, c);
	return (1);
}

/* Outside quotes; returns 0 at a comment, else the bytes used. */
static size_t
shlex_plain(struct shlex_state *st, const char *s, size_t len, size_t i)
{
	char	 c = s[i];

	if (shlex_blank(c)) {
		if (st->inword)
			shlex_push(st);
		return (1);
	}
	if (c == '#' && !st->inword)
		return (0);
	st->inword = 1;
	if (c == '\'' || c == '"') {
		st->sh->open = c;
		return (1);
	}
	if (c == '\\') {
		if (i + 1 == len) {
			st->sh->open = '\\';
			return (1);
		}
		buf_addc(&st->word, s[i + 1]);
		return (2);
	}
	buf_addc(&st->word, c);
	return (1);
}

int
shlex_split(struct shlex *sh, const char *s, size_t len, int flags,
    char **cause)
{
	struct shlex_state	 st;
	size_t			 i, n;

	memset(sh, 0, sizeof *sh);
	memset(&st, 0, sizeof st);
	st.sh = sh;
	buf_init(&st.word);
	for (i = 0; i < len; i += n) {
		if (sh->open != 0)
			n = shlex_quoted(&st, s, len, i);
		else if ((n = shlex_plain(&st, s, len, i)) == 0)
			break;
	}
	if (sh->open != 0 && (flags & SHLEX_PARTIAL) == 0) {
		xasprintf(cause, "%s", sh->open == '\\' ? "the line ends with "
		    "a backslash" : sh->open == '"' ? "unterminated double "
		    "quote" : "unterminated single quote");
		buf_free(&st.word);
		shlex_free(sh);
		return (-1);
	}
	if (st.inword)
		shlex_push(&st);
	buf_free(&st.word);
	if (sh->words == NULL)
		sh->words = xcalloc(1, sizeof *sh->words);
	return (0);
}

void
shlex_free(struct shlex *sh)
{
	int	 i;

	for (i = 0; i < sh->nwords; i++)
		free(sh->words[i]);
	free(sh->words);
	memset(sh, 0, sizeof *sh);
}

char *
shlex_quote(const char *w, char q)
{
	struct buf	 b;
	const char	*p;

	buf_init(&b);
	for (p = w; *p != '\0'; p++) {
		if (q == '"' && (*p == '"' || *p == '\\'))
			buf_addc(&b, '\\');
		else if (q == 0 && (shlex_blank(*p) || *p == '\'' ||
		    *p == '"' || *p == '\\' || (*p == '#' && p == w)))
			buf_addc(&b, '\\');
		buf_addc(&b, *p);
	}
	buf_cstr(&b);
	return (b.data);
}
