/*
 * "Did you mean": the command names (or the subcommands of one family,
 * "epoch get" and "epoch bump" for "epoch") closest to a mistyped word.
 * Close means an optimal string alignment distance (Damerau-Levenshtein
 * with adjacent transpositions: "gte" is 1 from "get") of at most
 * SUGGEST_DISTANCE_MAX, and less than the word's length, so that a word
 * of one or two letters is not "close" to everything.  Only the closest
 * names are offered, each with its command's other name ("lsit": list or
 * ls, not wait, which is 2 away too).
 */
#include <string.h>

#include "metactl.h"

#define SUGGEST_DISTANCE_MAX	2
#define SUGGEST_NAMES_MAX	4
#define SUGGEST_WORD_MAX	32	/* longer words are no command */

/* The optimal string alignment distance between a and b. */
static size_t
suggest_distance(const char *a, const char *b)
{
	size_t	 d[SUGGEST_WORD_MAX + 1][SUGGEST_WORD_MAX + 1];
	size_t	 la = strlen(a), lb = strlen(b), i, j, cost, v;

	if (la > SUGGEST_WORD_MAX || lb > SUGGEST_WORD_MAX)
		return ((size_t)-1);
	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++) {
		for (j = 1; j <= lb; j++) {
			cost = a[i - 1] != b[j - 1];
			v = d[i - 1][j - 1] + cost;
			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] &&
			    a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	}
	return (d[la][lb]);
}

struct suggest {
	const char	*word;
	const char	*names[SUGGEST_NAMES_MAX];
	const void	*owner[SUGGEST_NAMES_MAX];	/* its entry */
	size_t		 lens[SUGGEST_NAMES_MAX];	/* of each name */
	size_t		 dist[SUGGEST_NAMES_MAX];
	size_t		 n;
};

/* Keeps name (its first len bytes) if it is close, closest first. */
static void
suggest_add(struct suggest *sg, const void *owner, const char *name,
    size_t len)
{
	char	 copy[SUGGEST_WORD_MAX + 1];
	size_t	 d, i;

	if (len > SUGGEST_WORD_MAX)
		return;
	for (i = 0; i < sg->n; i++) {
		if (sg->lens[i] == len && memcmp(sg->names[i], name, len) == 0)
			return;		/* "epoch" of epoch get and bump */
	}
	memcpy(copy, name, len);
	copy[len] = '\0';
	d = suggest_distance(sg->word, copy);
	if (d > SUGGEST_DISTANCE_MAX || d >= strlen(sg->word))
		return;
	for (i = sg->n; i > 0 && sg->dist[i - 1] > d; i--) {
		if (i < SUGGEST_NAMES_MAX) {
			sg->names[i] = sg->names[i - 1];
			sg->owner[i] = sg->owner[i - 1];
			sg->lens[i] = sg->lens[i - 1];
			sg->dist[i] = sg->dist[i - 1];
		}
	}
	if (i >= SUGGEST_NAMES_MAX)
		return;
	sg->names[i] = name;
	sg->owner[i] = owner;
	sg->lens[i] = len;
	sg->dist[i] = d;
	if (sg->n < SUGGEST_NAMES_MAX)
		sg->n++;
}

/* Drops the names farther than the closest but another name of its. */
static void
suggest_closest(struct suggest *sg)
{
	size_t	 i, j, n = 0;
	int	 keep;

	for (i = 0; i < sg->n; i++) {
		keep = sg->dist[i] == sg->dist[0];
		for (j = 0; !keep && j < sg->n; j++)
			keep = sg->dist[j] == sg->dist[0] &&
			    sg->owner[j] == sg->owner[i];
		if (!keep)
			continue;
		sg->names[n] = sg->names[i];
		sg->owner[n] = sg->owner[i];
		sg->lens[n] = sg->lens[i];
		sg->dist[n] = sg->dist[i];
		n++;
	}
	sg->n = n;
}

/*
 * Appends " (did you mean A, B or C?)" to b when some names are close to
 * word: the commands' first words and aliases, or with family ("epoch")
 * the whole names of its subcommands, compared by their second word.
 */
void
suggest_command(struct buf *b, const char *word, const char *family)
{
	const struct cmd_entry	**e;
	struct suggest		 sg;
	const char		*name, *sp;
	size_t			 i, flen = family != NULL ? strlen(family) : 0;

	memset(&sg, 0, sizeof sg);
	sg.word = word;
	for (e = cmd_table; *e != NULL; e++) {
		name = (*e)->name;
		sp = strchr(name, ' ');
		if (family == NULL) {
			suggest_add(&sg, *e, name, sp != NULL ?
			    (size_t)(sp - name) : strlen(name));
			if ((*e)->alias != NULL)
				suggest_add(&sg, *e, (*e)->alias,
				    strlen((*e)->alias));
		} else if (sp != NULL && (size_t)(sp - name) == flen &&
		    strncmp(name, family, flen) == 0)
			suggest_add(&sg, *e, sp + 1, strlen(sp + 1));
	}
	suggest_closest(&sg);
	for (i = 0; i < sg.n; i++) {
		buf_addstr(b, i == 0 ? " (did you mean " : i + 1 == sg.n ?
		    " or " : ", ");
		if (family != NULL)
			buf_printf(b, "%s ", family);
		buf_add(b, sg.names[i], sg.lens[i]);
	}
	if (sg.n > 0)
		buf_addstr(b, "?)");
}
