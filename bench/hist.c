/*
 * A log-linear latency histogram (after HdrHistogram): values below
 * HIST_SUB are exact; above, each power of two is split into HIST_SUB
 * linear buckets, so any value is known to within 1/HIST_SUB.
 */
#include <string.h>

#include "metabench.h"

void
hist_init(struct hist *h)
{
	memset(h, 0, sizeof *h);
}

static unsigned
hist_index(uint64_t v)
{
	unsigned	 e, shift;

	if (v < HIST_SUB)
		return ((unsigned)v);
	e = 63 - (unsigned)__builtin_clzll(v);
	shift = e - HIST_SUB_BITS;
	return ((shift + 1) * HIST_SUB + (unsigned)((v >> shift) - HIST_SUB));
}

/* The middle of bucket i. */
static uint64_t
hist_value(unsigned i)
{
	unsigned	 shift;
	uint64_t	 lo;

	if (i < HIST_SUB)
		return (i);
	shift = i / HIST_SUB - 1;
	lo = ((uint64_t)(i % HIST_SUB) + HIST_SUB) << shift;
	return (lo + ((1ULL << shift) >> 1));
}

void
hist_add(struct hist *h, uint64_t v)
{
	h->n[hist_index(v)]++;
	h->count++;
	h->sum += v;
	if (v > h->max)
		h->max = v;
}

void
hist_merge(struct hist *h, const struct hist *o)
{
	unsigned	 i;

	for (i = 0; i < HIST_BUCKETS; i++)
		h->n[i] += o->n[i];
	h->count += o->count;
	h->sum += o->sum;
	if (o->max > h->max)
		h->max = o->max;
}

uint64_t
hist_pct(const struct hist *h, double p)
{
	uint64_t	 rank, seen = 0, v;
	unsigned	 i;

	if (h->count == 0)
		return (0);
	rank = (uint64_t)(p / 100.0 * (double)h->count + 0.5);
	if (rank < 1)
		rank = 1;
	if (rank > h->count)
		rank = h->count;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += h->n[i];
		if (seen >= rank) {
			v = hist_value(i);
			return (v > h->max ? h->max : v);
		}
	}
	return (h->max);
}
