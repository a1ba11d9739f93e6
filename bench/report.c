/*
 * The result of a run, as text for people or as one JSON object (-o json)
 * for scripts/bench.sh.  Latencies are printed in microseconds.
 */
#include <stdio.h>

#include "jsonw.h"
#include "metabench.h"

static double
report_us(uint64_t ns)
{
	return ((double)ns / 1000.0);
}

static void
report_num(struct jw *w, const char *name, double v)
{
	char	 s[64];
	int	 n;

	n = snprintf(s, sizeof s, "%.3f", v);
	jw_name(w, name);
	jw_raw(w, s, (size_t)n);
}

static void
report_hist_json(struct jw *w, const char *name, const struct hist *h)
{
	jw_name(w, name);
	jw_obj_open(w);
	jw_name(w, "count");
	jw_u64(w, h->count);
	report_num(w, "p50", report_us(hist_pct(h, 50)));
	report_num(w, "p90", report_us(hist_pct(h, 90)));
	report_num(w, "p99", report_us(hist_pct(h, 99)));
	report_num(w, "max", report_us(h->max));
	report_num(w, "mean", h->count > 0 ?
	    report_us(h->sum / h->count) : 0);
	jw_obj_close(w);
}

static void
report_counts_json(struct jw *w, const struct bench_counts *c)
{
	jw_name(w, "ops");
	jw_u64(w, c->ops);
	jw_name(w, "requests");
	jw_u64(w, c->requests);
	jw_name(w, "errors");
	jw_u64(w, c->errors);
	jw_name(w, "misses");
	jw_u64(w, c->misses);
	jw_name(w, "conflicts");
	jw_u64(w, c->conflicts);
	jw_name(w, "lost");
	jw_u64(w, c->lost);
}

static void
report_json(const struct bench *b, double secs, double preload_s)
{
	const struct bench_opts	*o = &b->o;
	struct buf		 out;
	struct jw		 w;

	buf_init(&out);
	jw_init(&w, &out);
	jw_obj_open(&w);
	jw_name(&w, "workload");
	jw_cstr(&w, bench_workload_name(o->wl));
	jw_name(&w, "clients");
	jw_u64(&w, o->clients);
	jw_name(&w, "threads");
	jw_u64(&w, o->threads);
	jw_name(&w, "pipeline");
	jw_u64(&w, o->pipeline);
	jw_name(&w, "value_size");
	jw_u64(&w, o->value_size);
	jw_name(&w, "keys");
	jw_u64(&w, o->keys);
	report_num(&w, "preload_s", preload_s);
	report_num(&w, "elapsed_s", secs);
	report_counts_json(&w, &b->c);
	report_num(&w, "ops_per_s", secs > 0 ? (double)b->c.ops / secs : 0);
	report_num(&w, "req_per_s", secs > 0 ?
	    (double)b->c.requests / secs : 0);
	report_hist_json(&w, "latency_us", &b->lat);
	if (o->wl == WL_WATCH)
		report_hist_json(&w, "all_delivered_us", &b->lat_all);
	jw_obj_close(&w);
	printf("%.*s\n", (int)out.len, out.data);
	buf_free(&out);
}

static void
report_hist_text(const char *what, const struct hist *h)
{
	printf("  %-16s p50 %.1f  p90 %.1f  p99 %.1f  max %.1f  mean %.1f "
	    "(us, %llu samples)\n", what, report_us(hist_pct(h, 50)),
	    report_us(hist_pct(h, 90)), report_us(hist_pct(h, 99)),
	    report_us(h->max), h->count > 0 ? report_us(h->sum / h->count) : 0,
	    (unsigned long long)h->count);
}

static void
report_text(const struct bench *b, double secs, double preload_s)
{
	const struct bench_opts		*o = &b->o;
	const struct bench_counts	*c = &b->c;

	printf("metabench %s: %u %s, %u thread(s), pipeline %u, %zu-byte "
	    "values, %llu keys\n", bench_workload_name(o->wl), o->clients,
	    o->wl == WL_WATCH ? "watchers" : "clients", o->threads,
	    o->pipeline, o->value_size, (unsigned long long)o->keys);
	if (preload_s > 0)
		printf("  preload          %llu keys in %.2f s\n",
		    (unsigned long long)o->keys, preload_s);
	printf("  %-16s %.0f ops/s (%llu ops in %.3f s; %.0f answers/s)\n",
	    o->wl == WL_WATCH ? "events" : "throughput",
	    secs > 0 ? (double)c->ops / secs : 0,
	    (unsigned long long)c->ops, secs,
	    secs > 0 ? (double)c->requests / secs : 0);
	printf("  %-16s errors %llu, misses %llu, conflicts %llu, lost %llu\n",
	    "counts", (unsigned long long)c->errors,
	    (unsigned long long)c->misses, (unsigned long long)c->conflicts,
	    (unsigned long long)c->lost);
	report_hist_text(o->wl == WL_WATCH ? "per delivery" : "latency",
	    &b->lat);
	if (o->wl == WL_WATCH)
		report_hist_text("to all watchers", &b->lat_all);
}

void
report_print(const struct bench *b, double preload_s)
{
	double	 secs = (double)(b->t_end - b->t_start) / 1e9;

	if (b->o.json)
		report_json(b, secs, preload_s);
	else
		report_text(b, secs, preload_s);
}
