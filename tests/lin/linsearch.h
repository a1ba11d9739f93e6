/*
 * The linearizability checker of tests/lin/lincheck: one key's history of
 * get / put / cas / delete, each with its invocation and completion time,
 * checked against a sequential versioned register:
 *
 *   state: absent (version 0), or a value and a version >= 1
 *   get     returns the state
 *   put     version + 1 (1 when absent); answers the new version and
 *           prev_version (the old one)
 *   cas V   the same as put if version == V (V = 0: absent); otherwise
 *           failed_precondition with the current version (null: absent)
 *   delete  deleted = (the key existed); then absent
 *
 * Memory: linsearch_key() sorts the caller's ops in place (to print them)
 * and keeps nothing after it returns.
 */
#ifndef LIN_LINSEARCH_H
#define LIN_LINSEARCH_H

#include <stdint.h>

#define LIN_VALUE_BASE		100000u	/* value id = client * base + i + 1 */

enum lin_kind {
	LIN_GET,
	LIN_PUT,
	LIN_CAS,
	LIN_DEL
};

struct lin_state {
	uint32_t	 val;		/* 0 when absent */
	uint64_t	 ver;		/* 0 when absent */
};

struct lin_op {
	int		 client;
	int		 key;
	enum lin_kind	 kind;
	uint32_t	 arg_val;	/* put, cas: the value written */
	uint64_t	 arg_ver;	/* cas: if_version */
	int		 ok;		/* get: found; put, cas: written;
					   delete: deleted */
	uint32_t	 res_val;	/* get: the value read */
	uint64_t	 res_ver;	/* get: version; put, cas ok: new
					   version; cas failed: current */
	uint64_t	 prev_ver;	/* put, cas ok: prev_version */
	int64_t		 call;		/* ns, CLOCK_MONOTONIC */
	int64_t		 ret;
};

/*
 * 1 linearizable, 0 not (the history goes to stderr), -1 the search ran
 * out of memory or budget.  verbose: a line for every key, not only bad ones.
 */
int	linsearch_key(const char *name, struct lin_op *ops, int n, int verbose);
/* Histories whose verdict is known: 0 if every one is judged right. */
int	linsearch_self_test(void);

#endif
