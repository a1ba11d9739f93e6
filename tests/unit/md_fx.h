/*
 * The fixture of the daemon module tests (test_commit.c, test_watch.c,
 * test_lease.c): a struct metad as daemon/main.c builds it, on a real
 * event loop and a real memory store, with the commit, the watch hub, the
 * waits and the events (the store's notify); no server, no connection,
 * no lease table (a test makes its own, with a fake on_due).
 * md_fx_run() runs the loop until *flag is set, failing the test after
 * MD_FX_WAIT_MS.
 */
#ifndef METAD_TEST_MD_FX_H
#define METAD_TEST_MD_FX_H

#include "metad.h"
#include "store/store_backend.h"	/* the tests look inside the store */

struct req;
struct watch_peer;

#define MD_FX_WAIT_MS	5000

/* cmocka fixtures: *state is a struct metad. */
int	md_fx_setup(void **);
int	md_fx_teardown(void **);
/* Run md's loop until *flag is nonzero. */
void	md_fx_run(struct metad *, const int *flag);
/* Run md's loop for ms milliseconds. */
void	md_fx_run_ms(struct metad *, unsigned ms);
/*
 * One batch straight on the store, at its next rev: a put of each key
 * (value "v" and the rev), or its delete for "-key", or a compaction of
 * the history below rev N for "#N"; then the loop runs until the events
 * were delivered.  Its rev.
 */
#define md_fx_write(md, ...)	md_fx_write_list(md, __VA_ARGS__, \
				    (const char *)NULL)
uint64_t md_fx_write_list(struct metad *, ...);
/*
 * A request as a connection decodes it: its line parsed (r->json), its
 * metad, peer and on_done.  The test frees it (req_free()).
 */
struct req *md_fx_req(struct metad *, const char *json,
	    struct watch_peer *, void (*on_done)(struct req *));

#endif
