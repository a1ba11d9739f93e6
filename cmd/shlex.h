/*
 * shlex: a REPL line split into words the way sh splits a command, without
 * any expansion.  Blanks (space, tab, CR, LF) separate words; 'single
 * quotes' keep everything up to the next '; "double quotes" keep everything
 * but \" and \\, which stand for " and \; outside quotes a backslash keeps
 * the next character; quoted and unquoted parts of one word join up
 * ('a'"b"c is abc, '' an empty word); # at the start of a word comments out
 * the rest of the line.
 *
 * Memory: struct shlex owns its words; shlex_free() releases them.  A word
 * returned by shlex_quote() belongs to the caller (free()).
 */
#ifndef METACTL_SHLEX_H
#define METACTL_SHLEX_H

#include <stddef.h>

/* Tolerate an unterminated quote or a trailing backslash (completion). */
#define SHLEX_PARTIAL	0x1

struct shlex {
	char	**words;	/* NULL-terminated */
	int	  nwords;
	char	  open;		/* at the end: '\'', '"', '\\' or 0 */
};

int	 shlex_split(struct shlex *, const char *, size_t, int flags,
	     char **);
void	 shlex_free(struct shlex *);
/* A word quoted so that it splits back unchanged, inside quote q (or 0). */
char	*shlex_quote(const char *, char q);

#endif
