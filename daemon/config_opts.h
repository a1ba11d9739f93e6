/*
 * metad's options, one row each (config_opts.c): the name, its argument,
 * its --help line and how its value is set.  config.c walks the table for
 * getopt, METAD_<NAME>, --help and the error messages; a new option is a new
 * row (and its field in struct metad_config, its line in metad(8) and the
 * completions).
 */
#ifndef METAD_CONFIG_OPTS_H
#define METAD_CONFIG_OPTS_H

#include <stddef.h>
#include <stdint.h>

#include "metad.h"

enum config_kind {
	CONFIG_STRING,		/* char *: a copy (min 1: not empty) */
	CONFIG_SIZE,		/* size_t: N or N with k/m/g, in [min, max] */
	CONFIG_U64,		/* uint64_t: the same */
	CONFIG_UINT,		/* unsigned: the same */
	CONFIG_FLAG,		/* int: no argument, see below */
	CONFIG_CUSTOM,		/* set() */
	CONFIG_HELP,		/* --help */
	CONFIG_VERSION		/* --version */
};

/*
 * set() answers 0, or -1 with *why (allocated, or NULL) saying why the value
 * is invalid, or -2 with *why the whole message.  A CONFIG_FLAG sets its int
 * to min when given (or METAD_<NAME>=1), and to !min on METAD_<NAME>=0 only
 * when max is 1 (--foreground and --daemonize: the last given wins).
 */
struct config_opt {
	const char	*name;
	const char	*arg;		/* in --help; NULL: takes no value */
	const char	*help;
	enum config_kind kind;
	size_t		 off;		/* the field in struct metad_config */
	uint64_t	 min;
	uint64_t	 max;
	int		(*set)(struct metad_config *, const char *, char **);
};

#define CONFIG_AT(f)	offsetof(struct metad_config, f)

extern const struct config_opt	config_opts[];
extern const size_t		config_nopts;

int	 config_size(const char *, uint64_t, uint64_t *);

#endif
