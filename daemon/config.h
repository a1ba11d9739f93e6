/*
 * metad's options (metad(8)): command line, with every option also settable
 * in the environment as METAD_<NAME> (--max-value-bytes: METAD_MAX_VALUE_BYTES).
 * The command line wins.  config_free() releases the strings.
 */
#ifndef METAD_CONFIG_H
#define METAD_CONFIG_H

#include <stdio.h>

#include "metad.h"

int		 config_parse(struct metad_config *, int, char **, char **);
int		 config_prepare_socket(struct metad_config *, char **);
void		 config_free(struct metad_config *);
/* --help: every option with a line on what it does. */
void		 config_help(FILE *);

#endif
