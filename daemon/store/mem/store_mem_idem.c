/*
 * The memory backend's records of idempotent writes (store.h;
 * metad-protocol(7), IDEMPOTENT WRITES): a hash table by token (chained,
 * grown by doubling) and a queue in the order they were recorded, which
 * is their order of expiry (one window for all), so that a put drops the
 * expired ones from its head, STORE_IDEM_PURGE at most.  A record put in
 * a batch is taken away by its undo (MEM_UNDO_IDEM); a purge is not
 * undone (an expired record is absent anyway).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/mem/store_mem.h"
#include "store/store_hash.h"
#include "util.h"

struct store_mem_idem {
	struct store_mem_idem		*hnext;
	TAILQ_ENTRY(store_mem_idem)	 entry;
	uint64_t			 hash;
	size_t				 len, answer_len;
	uint64_t			 rev, expires_ms;
	unsigned char			*answer;	/* after tok */
	unsigned char			 tok[];
};

static struct store_mem_idem **
mem_idem_slot(struct store_mem *m, const void *tok, size_t len, uint64_t h)
{
	struct store_mem_idem	**p;

	if (m->idem_cap == 0)
		return (NULL);
	for (p = &m->idem_tab[h & (m->idem_cap - 1)]; *p != NULL;
	    p = &(*p)->hnext) {
		if ((*p)->hash == h && (*p)->len == len &&
		    memcmp((*p)->tok, tok, len) == 0)
			return (p);
	}
	return (p);
}

static void
mem_idem_remove(struct store_mem *m, struct store_mem_idem *r)
{
	struct store_mem_idem	**p;

	p = mem_idem_slot(m, r->tok, r->len, r->hash);
	if (p != NULL && *p == r)
		*p = r->hnext;
	TAILQ_REMOVE(&m->idem_queue, r, entry);
	m->idem_n--;
	free(r);
}

static void
mem_idem_grow(struct store_mem *m)
{
	struct store_mem_idem	**tab, *r, *next;
	size_t			  cap = m->idem_cap ? m->idem_cap * 2 : 64, i;

	tab = xcalloc(cap, sizeof *tab);
	for (i = 0; i < m->idem_cap; i++) {
		for (r = m->idem_tab[i]; r != NULL; r = next) {
			next = r->hnext;
			r->hnext = tab[r->hash & (cap - 1)];
			tab[r->hash & (cap - 1)] = r;
		}
	}
	free(m->idem_tab);
	m->idem_tab = tab;
	m->idem_cap = cap;
}

int
store_mem_idem_get(struct store *s, const void *tok, size_t len,
    struct store_idem *rec, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_idem	**p;

	(void)err;
	p = mem_idem_slot(m, tok, len, store_hash_bytes(tok, len));
	if (p == NULL || *p == NULL)
		return (0);
	memset(rec, 0, sizeof *rec);
	rec->answer = (*p)->answer;
	rec->answer_len = (*p)->answer_len;
	rec->rev = (*p)->rev;
	rec->expires_ms = (*p)->expires_ms;
	return (1);
}

int
store_mem_idem_put(struct store *s, const void *tok, size_t len,
    const struct store_idem *rec, uint64_t now_ms, struct store_err *err)
{
	struct store_mem	*m = s->impl;
	struct store_mem_idem	*r, **p;
	struct store_mem_undo	*u;
	uint64_t		 h = store_hash_bytes(tok, len);
	int			 i;

	(void)err;
	for (i = 0; i < STORE_IDEM_PURGE; i++) {
		if ((r = TAILQ_FIRST(&m->idem_queue)) == NULL ||
		    r->expires_ms > now_ms)
			break;
		mem_idem_remove(m, r);
	}
	if ((p = mem_idem_slot(m, tok, len, h)) != NULL && *p != NULL)
		mem_idem_remove(m, *p);
	if (m->idem_n >= m->idem_cap)
		mem_idem_grow(m);
	r = xmalloc(sizeof *r + len + rec->answer_len + 1);
	r->hash = h;
	r->len = len;
	memcpy(r->tok, tok, len);
	r->answer = r->tok + len;
	r->answer_len = rec->answer_len;
	if (rec->answer_len > 0)
		memcpy(r->answer, rec->answer, rec->answer_len);
	r->rev = rec->rev;
	r->expires_ms = rec->expires_ms;
	p = mem_idem_slot(m, tok, len, h);
	r->hnext = NULL;
	*p = r;
	TAILQ_INSERT_TAIL(&m->idem_queue, r, entry);
	m->idem_n++;
	u = store_mem_undo_add(m, MEM_UNDO_IDEM, NULL);
	u->idem = r;
	return (0);
}

void
store_mem_idem_undo(struct store_mem *m, struct store_mem_idem *r)
{
	mem_idem_remove(m, r);
}

void
store_mem_idem_free(struct store_mem *m)
{
	struct store_mem_idem	*r;

	while ((r = TAILQ_FIRST(&m->idem_queue)) != NULL) {
		TAILQ_REMOVE(&m->idem_queue, r, entry);
		free(r);
	}
	free(m->idem_tab);
	m->idem_tab = NULL;
	m->idem_cap = m->idem_n = 0;
}
