/*
 * The metrics' counting (metrics.h): histograms, label tables, the loop
 * lag probe, and what the process reads of itself.  The exposition is
 * metrics_text.c's.
 */
#include <sys/resource.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "log.h"
#include "metrics/metrics.h"

const char	 metrics_op_unknown[] = "unknown";

/* The seconds' buckets: 100 us to 10 s. */
const double metrics_seconds[] = {
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
	0.1, 0.25, 0.5, 1, 2.5, 5, 10
};
const unsigned	 metrics_nseconds = sizeof metrics_seconds /
		    sizeof metrics_seconds[0];

/* A batch's write requests. */
static const double metrics_sizes[] = {
	1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024
};

/* The reasons a watch is cancelled (metad-protocol(7), WATCHES). */
static const char *const metrics_reasons[] = {
	"slow_consumer", "compacted", "unavailable", "internal"
};

void
metrics_hist_observe(struct metrics_hist *h, double v)
{
	const double	*b = h->bounds;
	unsigned	 i, n = h->nbounds;

	if (b == NULL) {
		b = metrics_seconds;
		n = metrics_nseconds;
	}
	for (i = 0; i < n && v > b[i]; i++)
		;
	h->n[i]++;
	h->count++;
	h->sum += v;
}

int
metrics_names_slot(struct metrics_names *t, const char *name, unsigned max)
{
	unsigned	 h, k, i;

	h = (unsigned)(((uintptr_t)name >> 3) * 2654435761u) % METRICS_KEYS;
	for (k = 0; k < METRICS_KEYS; k++, h = (h + 1) % METRICS_KEYS) {
		if (t->key[h] == name)
			return (t->slot[h] < max ? t->slot[h] : -1);
		if (t->key[h] == NULL)
			break;
	}
	/* Not seen at this address: the same string may be known. */
	for (i = 0; i < t->n && strcmp(t->name[i], name) != 0; i++)
		;
	if (i == t->n) {
		if (i >= max || i >= METRICS_NAMES_MAX)
			return (-1);
		t->name[t->n++] = name;
	}
	if (k < METRICS_KEYS) {
		t->key[h] = name;
		t->slot[h] = (unsigned char)i;
	}
	return ((int)i);
}

void
metrics_init(struct metrics *m)
{
	size_t	 i;

	m->batch_size.bounds = metrics_sizes;
	m->batch_size.nbounds = sizeof metrics_sizes / sizeof metrics_sizes[0];
	/* Every reason shows, at 0 until one happens. */
	for (i = 0; i < sizeof metrics_reasons / sizeof metrics_reasons[0];
	    i++)
		metrics_names_slot(&m->reasons, metrics_reasons[i],
		    METRICS_REASONS_MAX);
}

void
metrics_cancelled(struct metrics *m, const char *reason)
{
	int	 i = metrics_names_slot(&m->reasons, reason,
		    METRICS_REASONS_MAX);

	if (i >= 0)
		m->cancelled[i]++;
}

void
metrics_call(struct metrics *m, const char *call, const char *outcome,
    double seconds)
{
	int	 c = metrics_names_slot(&m->call_names, call,
		    METRICS_CALLS_MAX);
	int	 o = metrics_names_slot(&m->outcomes, outcome,
		    METRICS_OUTCOMES_MAX);

	if (c < 0 || o < 0)
		return;
	m->calls[c].outcome[o]++;
	metrics_hist_observe(&m->calls[c].duration, seconds);
}

static void
metrics_lag_arm(struct metrics *m)
{
	struct timeval	 tv = { METRICS_LAG_MS / 1000,
			    (METRICS_LAG_MS % 1000) * 1000 };

	m->lag_due_us = mono_us() + METRICS_LAG_MS * 1000;
	evtimer_add(m->lag_ev, &tv);
}

static void
metrics_lag_cb(evutil_socket_t fd, short what, void *arg)
{
	struct metrics	*m = arg;
	int64_t		 late = mono_us() - m->lag_due_us;

	metrics_hist_observe(&m->loop_lag, late > 0 ? (double)late / 1e6 : 0);
	metrics_lag_arm(m);
}

void
metrics_start(struct metrics *m, struct event_base *base)
{
	if ((m->lag_ev = evtimer_new(base, metrics_lag_cb, m)) == NULL)
		fatalx("evtimer_new");
	metrics_lag_arm(m);
}

void
metrics_stop(struct metrics *m)
{
	if (m->lag_ev != NULL)
		event_free(m->lag_ev);
	m->lag_ev = NULL;
}

void
metrics_process(struct metrics_gauges *g)
{
	struct rusage		 ru;
	unsigned long long	 size, resident;
	FILE			*f;
	long			 page = sysconf(_SC_PAGESIZE);

	g->rss_bytes = 0;
	g->cpu_seconds = 0;
	if ((f = fopen("/proc/self/statm", "re")) != NULL) {
		if (fscanf(f, "%llu %llu", &size, &resident) == 2 && page > 0)
			g->rss_bytes = (uint64_t)resident * (uint64_t)page;
		fclose(f);
	}
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		g->cpu_seconds = (double)ru.ru_utime.tv_sec +
		    (double)ru.ru_stime.tv_sec +
		    ((double)ru.ru_utime.tv_usec +
		    (double)ru.ru_stime.tv_usec) / 1e6;
}
