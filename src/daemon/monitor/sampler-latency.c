/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-latency.c — the RT tenants' thread latency of one period, from BPF histograms or from schedstat */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/latency-hist.h"
#include "sriovd/kernel/proc-counters.h"
#include "sampler-internal.h"

#define LATENCY_FAMILY "sriovd_thread_latency_seconds"

const char *latency_source_to_string(LatencySource s) {
        static const char *const table[_LATENCY_SOURCE_MAX] = {
                [LATENCY_SOURCE_NONE] = "none",
                [LATENCY_SOURCE_BPF] = "bpf",
                [LATENCY_SOURCE_SCHEDSTAT] = "schedstat",
        };
        return (unsigned) s < _LATENCY_SOURCE_MAX ? table[s] : NULL;
}

void latency_baseline_done(LatencyBaseline *b) {
        free(b->threads);
        free(b->series);
        *b = (LatencyBaseline) {};
}

static int series_key_cmp(const char *tenant_a, const char *class_a, const char *kind_a,
                          const char *tenant_b, const char *class_b, const char *kind_b) {
        int c = strcmp(tenant_a, tenant_b);

        if (!c)
                c = strcmp(class_a, class_b);
        return c ?: strcmp(kind_a, kind_b);
}

static int thread_cmp(const void *x, const void *y) {
        const LatencyThread *a = *(const LatencyThread *const *) x, *b = *(const LatencyThread *const *) y;
        int c = series_key_cmp(a->tenant, a->class_name, a->kind, b->tenant, b->class_name, b->kind);

        return c ?: (a->tid > b->tid) - (a->tid < b->tid);
}

static int prev_cmp(const void *x, const void *y) {
        const LatencyPrev *a = x, *b = y;
        return (a->tid > b->tid) - (a->tid < b->tid);
}

static const LatencyPrev *prev_find(const LatencyBaseline *b, pid_t tid) {
        LatencyPrev key = { .tid = tid };
        return bsearch_safe(&key, b->threads, b->n_threads, sizeof(*b->threads), prev_cmp);
}

static const LatencySeries *series_find(const LatencyBaseline *b, const LatencyThread *t) {
        size_t lo = 0, hi = b->n_series;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const LatencySeries *s = &b->series[mid];
                int c = series_key_cmp(s->tenant, s->class_name, s->kind, t->tenant, t->class_name, t->kind);

                if (c == 0)
                        return s;
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return NULL;
}

static void series_labels(Labels *ls, const LatencyThread *t) {
        label(ls, METRIC_LABEL_TENANT, t->tenant);
        label(ls, METRIC_LABEL_CLASS, t->class_name);
        label(ls, METRIC_LABEL_KIND, t->kind);
}

static int add_gauge(MetricSnapshot *snap, const char *name, double value, const Labels *series, LatencySource src) {
        Labels ls = *series;

        label(&ls, METRIC_LABEL_SOURCE, latency_source_to_string(src));
        return metric_snapshot_add(snap, name, METRIC_GAUGE, value, ls.l, ls.n);
}

/*
 * The buckets are the octave edges, 2^(o + 10) ns for o = 0..23, and +Inf. The histogram has four
 * slots per octave, so the bucket of edge o holds the slots below 1 + 4 * o. The le values are
 * exact decimals: every edge is a whole number of ns.
 */
static int add_histogram(MetricSnapshot *snap, const Labels *series, const LatencyHist *h) {
        unsigned long long below = 0, total = 0;
        unsigned slot = 0;
        int r;

        for (unsigned s = 0; s < LATENCY_SLOTS; s++)
                total += h->slots[s];
        for (unsigned o = 0; o <= LATENCY_OCTAVES; o++) {
                Labels ls = *series;
                char le[32];

                if (o < LATENCY_OCTAVES) {
                        uint64_t edge = UINT64_C(1) << (o + LATENCY_SLOT_SHIFT);

                        for (; slot < 1 + 4 * o; slot++)
                                below += h->slots[slot];
                        snprintf(le, sizeof(le), "%" PRIu64 ".%09" PRIu64, edge / 1000000000, edge % 1000000000);
                } else {
                        below = total;
                        strscpy(le, sizeof(le), "+Inf");
                }
                label(&ls, METRIC_LABEL_LE, le);
                r = metric_snapshot_add(snap, LATENCY_FAMILY "_bucket", METRIC_HISTOGRAM, (double) below, ls.l, ls.n);
                if (r < 0)
                        return r;
        }
        r = metric_snapshot_add(snap, LATENCY_FAMILY "_sum", METRIC_HISTOGRAM, (double) h->sum_ns / 1e9,
                                series->l, series->n);
        if (r >= 0)
                r = metric_snapshot_add(snap, LATENCY_FAMILY "_count", METRIC_HISTOGRAM, (double) total,
                                        series->l, series->n);
        return r;
}

/* One series' period, from the histograms' differences: the cumulative histogram, p99, p99.9 and the mean. */
static int add_bpf_series(MetricSnapshot *snap, const Labels *ls, const LatencyHist *total, const LatencyHist *period) {
        double p99 = NAN, p999 = NAN, mean = NAN, ns;
        int r;

        if (latency_hist_quantile(period, 0.99, &ns) >= 0)
                p99 = ns / 1e9;
        if (latency_hist_quantile(period, 0.999, &ns) >= 0)
                p999 = ns / 1e9;
        if (period->count > 0)
                mean = (double) period->sum_ns / (double) period->count / 1e9;
        r = add_histogram(snap, ls, total);
        if (r >= 0)
                r = add_gauge(snap, "sriovd_thread_latency_p99_seconds", p99, ls, LATENCY_SOURCE_BPF);
        if (r >= 0)
                r = add_gauge(snap, "sriovd_thread_latency_p999_seconds", p999, ls, LATENCY_SOURCE_BPF);
        if (r >= 0)
                r = add_gauge(snap, "sriovd_thread_latency_mean_seconds", mean, ls, LATENCY_SOURCE_BPF);
        return r;
}

int sampler_latency(const LatencyBaseline *prev, RootFs *root, const SamplerInput *in, MetricSnapshot *snap,
                    LatencyBaseline *ret_next) {
        _cleanup_(latency_baseline_done) LatencyBaseline next = { .source = in->latency_source };
        _cleanup_free_ const LatencyThread **order = NULL;
        LatencySource src = in->latency_source;
        int r;

        if (src == LATENCY_SOURCE_NONE || in->n_latency == 0) {
                latency_baseline_done(ret_next);
                ret_next->source = src;
                return 0;
        }
        order = malloc(in->n_latency * sizeof(*order));
        next.threads = calloc(in->n_latency, sizeof(*next.threads));
        next.series = calloc(in->n_latency, sizeof(*next.series));
        if (!order || !next.threads || !next.series)
                return -ENOMEM;
        for (size_t i = 0; i < in->n_latency; i++)
                order[i] = &in->latency[i];
        qsort(order, in->n_latency, sizeof(*order), thread_cmp);

        for (size_t i = 0; i < in->n_latency;) {
                const LatencyThread *first = order[i];
                /* A source that changed, as when BPF went away, starts every series again. */
                const LatencySeries *old = prev->source == src ? series_find(prev, first) : NULL;
                LatencySeries *series = &next.series[next.n_series++];
                LatencyHist period = {};
                uint64_t wait_ns = 0, slices = 0;
                Labels ls = {};

                *series = (LatencySeries) { .kind = first->kind };
                strscpy(series->tenant, sizeof(series->tenant), first->tenant);
                strscpy(series->class_name, sizeof(series->class_name), first->class_name);
                if (old)
                        series->total = old->total;

                for (; i < in->n_latency && series_key_cmp(order[i]->tenant, order[i]->class_name, order[i]->kind,
                                                           first->tenant, first->class_name, first->kind) == 0; i++) {
                        const LatencyThread *t = order[i];
                        const LatencyPrev *p = prev->source == src ? prev_find(prev, t->tid) : NULL;
                        LatencyPrev *np = &next.threads[next.n_threads];
                        uint64_t w, n;
                        LatencyHist delta;

                        /* A thread listed twice in one series counts once. */
                        if (i > 0 && order[i - 1]->tid == t->tid && thread_cmp(&order[i - 1], &order[i]) == 0)
                                continue;
                        *np = (LatencyPrev) { .tid = t->tid };
                        if (src == LATENCY_SOURCE_BPF) {
                                if (!t->have_hist)
                                        continue;   /* It has not run since it was tracked. */
                                np->have_hist = true;
                                np->hist = t->hist;
                                next.n_threads++;
                                /* A new thread counts from when it was tracked; one tracked anew, from then. */
                                if (p && p->have_hist)
                                        (void) latency_hist_delta(&t->hist, &p->hist, &delta);
                                else
                                        delta = t->hist;
                                latency_hist_add(&period, &delta);
                                continue;
                        }
                        if (proc_schedstat_read(root, t->tid, &np->schedstat) < 0)
                                continue;   /* The thread exited after the list was made. */
                        np->have_schedstat = true;
                        next.n_threads++;
                        if (p && p->have_schedstat && thread_schedstat_delta(&p->schedstat, &np->schedstat, &w, &n) >= 0) {
                                wait_ns += w;
                                slices += n;
                        }
                }

                series_labels(&ls, first);
                if (src == LATENCY_SOURCE_BPF) {
                        latency_hist_add(&series->total, &period);
                        r = add_bpf_series(snap, &ls, &series->total, &period);
                } else
                        /* The series' wait per timeslice: a thread that ran more often weighs more. */
                        r = add_gauge(snap, "sriovd_thread_latency_mean_seconds",
                                      slices > 0 ? (double) wait_ns / (double) slices / 1e9 : NAN, &ls, src);
                if (r < 0)
                        return r;
        }
        /* Two series may share a thread, such as an IRQ thread of two tenants' VFs; each counts it. */
        qsort_safe(next.threads, next.n_threads, sizeof(*next.threads), prev_cmp);
        latency_baseline_done(ret_next);
        *ret_next = next;
        next = (LatencyBaseline) {};
        return 0;
}

int sampler_bpf_available(MetricSnapshot *snap, const SamplerInput *in) {
        static const char *const features[_BPF_FEATURE_MAX] = {
                [BPF_FEATURE_LATENCY] = "latency",
                [BPF_FEATURE_DRIFT] = "drift",
        };
        int r;

        for (unsigned f = 0; in->have_bpf && f < _BPF_FEATURE_MAX; f++) {
                Labels ls = {};

                label(&ls, METRIC_LABEL_FEATURE, features[f]);
                r = metric_snapshot_add(snap, "sriovd_bpf_available", METRIC_GAUGE, in->bpf_available[f], ls.l, ls.n);
                if (r < 0)
                        return r;
        }
        return 0;
}
