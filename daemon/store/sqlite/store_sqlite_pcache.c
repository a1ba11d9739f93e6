/*
 * SQLite's default page cache with its truncate skipped when there is
 * nothing to drop.
 *
 * At the end of every transaction SQLite drops the cached pages past the
 * end of the database (the default cache's xTruncate).  That cache knows
 * only the largest key it ever held, and when a B-tree split swaps two
 * pages it parks one at the page after the 1 GiB lock page for a moment:
 * from then on that largest key is far past the end, and the next
 * truncate scans the whole hash table, a cache miss a page cached.  Every
 * split of history's last leaf swaps (its new page comes off the free
 * list, below the old one), so under puts that was a scan of the whole
 * cache about every commit, 6% of the loop's time at 64 clients.
 *
 * Here each cache remembers the keys it was given at or past `bound`
 * (the limit of the last truncate: the pages below it stay): new pages
 * at the end of the file and a swap's parked page, a few a transaction.
 * A truncate whose limit is at or below bound and past all of them has
 * nothing to drop and is skipped; any other is passed on.  The set may
 * hold keys of pages gone since (a discard does not say its key): that
 * only passes on a truncate that had nothing to do.  Past SQ_PC_KEYS
 * keys (a transaction that grew the file a lot), every truncate is
 * passed on until one has run.
 */
#include <stdlib.h>

#include <sqlite3.h>

#include "store/sqlite/store_sqlite.h"

#define SQ_PC_KEYS	64

struct sq_pcache {
	sqlite3_pcache	*real;
	unsigned	 bound;		/* no page at or past it but keys[] */
	unsigned	 nkeys;		/* SQ_PC_KEYS + 1: too many */
	unsigned	 keys[SQ_PC_KEYS];
};

static sqlite3_pcache_methods2	 sq_pc_real;
/* Truncates passed on and skipped, for the tests (one thread uses SQLite). */
static unsigned long		 sq_pc_passed, sq_pc_skipped;

#define REAL(c)	(((struct sq_pcache *)(c))->real)

static void
sq_pc_note(struct sq_pcache *c, unsigned key)
{
	unsigned	 i;

	if (key < c->bound || c->nkeys > SQ_PC_KEYS)
		return;
	for (i = 0; i < c->nkeys; i++)
		if (c->keys[i] == key)
			return;
	if (c->nkeys == SQ_PC_KEYS)
		c->nkeys++;
	else
		c->keys[c->nkeys++] = key;
}

static void
sq_pc_forget(struct sq_pcache *c, unsigned key)
{
	unsigned	 i;

	if (c->nkeys > SQ_PC_KEYS)
		return;
	for (i = 0; i < c->nkeys; i++)
		if (c->keys[i] == key) {
			c->keys[i] = c->keys[--c->nkeys];
			return;
		}
}

static int
sq_pc_init(void *arg)
{
	(void)arg;
	return (sq_pc_real.xInit(sq_pc_real.pArg));
}

static void
sq_pc_shutdown(void *arg)
{
	(void)arg;
	sq_pc_real.xShutdown(sq_pc_real.pArg);
}

static sqlite3_pcache *
sq_pc_create(int page_size, int extra, int purgeable)
{
	struct sq_pcache	*c;

	if ((c = calloc(1, sizeof *c)) == NULL)
		return (NULL);
	if ((c->real = sq_pc_real.xCreate(page_size, extra,
	    purgeable)) == NULL) {
		free(c);
		return (NULL);
	}
	return ((sqlite3_pcache *)c);
}

static void
sq_pc_cachesize(sqlite3_pcache *c, int n)
{
	sq_pc_real.xCachesize(REAL(c), n);
}

static int
sq_pc_pagecount(sqlite3_pcache *c)
{
	return (sq_pc_real.xPagecount(REAL(c)));
}

static sqlite3_pcache_page *
sq_pc_fetch(sqlite3_pcache *c, unsigned key, int create)
{
	sqlite3_pcache_page	*p;

	p = sq_pc_real.xFetch(REAL(c), key, create);
	if (p != NULL)
		sq_pc_note((struct sq_pcache *)c, key);
	return (p);
}

static void
sq_pc_unpin(sqlite3_pcache *c, sqlite3_pcache_page *p, int discard)
{
	sq_pc_real.xUnpin(REAL(c), p, discard);
}

static void
sq_pc_rekey(sqlite3_pcache *c, sqlite3_pcache_page *p, unsigned from,
    unsigned to)
{
	sq_pc_real.xRekey(REAL(c), p, from, to);
	sq_pc_forget((struct sq_pcache *)c, from);
	sq_pc_note((struct sq_pcache *)c, to);
}

static void
sq_pc_truncate(sqlite3_pcache *pc, unsigned limit)
{
	struct sq_pcache	*c = (struct sq_pcache *)pc;
	unsigned		 i;
	int			 drop = limit < c->bound ||
			    c->nkeys > SQ_PC_KEYS;

	for (i = 0; !drop && i < c->nkeys; i++)
		drop = c->keys[i] >= limit;
	if (drop) {
		sq_pc_real.xTruncate(c->real, limit);
		sq_pc_passed++;
	} else
		sq_pc_skipped++;
	c->bound = limit;
	c->nkeys = 0;
}

static void
sq_pc_destroy(sqlite3_pcache *c)
{
	sq_pc_real.xDestroy(REAL(c));
	free(c);
}

static void
sq_pc_shrink(sqlite3_pcache *c)
{
	sq_pc_real.xShrink(REAL(c));
}

static const sqlite3_pcache_methods2 sq_pc = {
	1, NULL, sq_pc_init, sq_pc_shutdown, sq_pc_create, sq_pc_cachesize,
	sq_pc_pagecount, sq_pc_fetch, sq_pc_unpin, sq_pc_rekey,
	sq_pc_truncate, sq_pc_destroy, sq_pc_shrink
};

int
store_sqlite_pcache_counts(unsigned long *passed, unsigned long *skipped)
{
	*passed = sq_pc_passed;
	*skipped = sq_pc_skipped;
	return (sq_pc_real.xTruncate != NULL ? 0 : -1);
}

/*
 * Before SQLite's first use in the process (sqlite3_config() is refused
 * after it): then the default cache stays, as it is, which is only
 * slower.
 */
void
store_sqlite_pcache_install(void)
{
	static int	 tried;

	if (tried)
		return;
	tried = 1;
	if (sqlite3_config(SQLITE_CONFIG_GETPCACHE2, &sq_pc_real) !=
	    SQLITE_OK || sq_pc_real.xTruncate == NULL)
		return;
	if (sqlite3_config(SQLITE_CONFIG_PCACHE2, &sq_pc) != SQLITE_OK)
		sq_pc_real.xTruncate = NULL;
}
