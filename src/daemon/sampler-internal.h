/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-internal.h — what sampler.c and sampler-traffic.c share: labels, tenants, the traffic baseline */
#pragma once

#include <stdio.h>

#include "sriovd/counters.h"
#include "sriovd/sampler.h"
#include "sriovd/util.h"

/*
 * Labels, added one at a time. A value is cut at METRIC_LABEL_VALUE_MAX - 1 characters, which
 * no id reaches. There is room for a subject's labels only, because an alert on the sample adds
 * its own label; see alert-metrics.h.
 */
typedef struct Labels {
        MetricLabel l[METRIC_SUBJECT_LABELS_MAX];
        unsigned n;
} Labels;

static inline void label(Labels *ls, MetricLabelName name, const char *value) {
        if (!value || !value[0] || ls->n >= METRIC_SUBJECT_LABELS_MAX)
                return;
        ls->l[ls->n].name = name;
        strscpy(ls->l[ls->n].value, sizeof(ls->l[ls->n].value), value);
        ls->n++;
}

/*
 * The digits are written by hand. A sample has three such labels, which makes 30,000 a period
 * on a large host, and snprintf() took a tenth of the period's time.
 */
static inline void label_u(Labels *ls, MetricLabelName name, unsigned long v) {
        char buf[24], *p = buf + sizeof(buf);

        if (ls->n >= METRIC_SUBJECT_LABELS_MAX)
                return;
        *--p = 0;
        do
                *--p = (char) ('0' + v % 10);
        while ((v /= 10) > 0);
        ls->l[ls->n].name = name;
        memcpy(ls->l[ls->n].value, p, (size_t) (buf + sizeof(buf) - p));
        ls->n++;
}

static inline const TenantInfo *sampler_tenant_of_vf(const SamplerInput *in, const char *vf) {
        for (size_t i = 0; i < in->n_tenants; i++)
                if (in->tenants[i].vf[0] && streq(in->tenants[i].vf, vf))
                        return &in->tenants[i];
        return NULL;
}

/*
 * The last period's traffic counters. A VF is found by its PF's address and its index, and its
 * entry records which source the counters came from. A netdev is found by its ifindex. A rate
 * needs the same subject from the same source in both periods.
 */
typedef struct TrafficPrev {
        char pf[PCI_ADDR_MAX];
        unsigned vf;                     /* for a VF, its index on the PF */
        int ifindex;                     /* for a netdev */
        bool from_netdev;                /* for a VF, the counters are its host netdev's IFLA_STATS64 */
        VfCounters counters;
} TrafficPrev;

typedef struct TrafficBaseline {
        TrafficPrev *vfs;                /* sorted by pf, vf */
        size_t n_vfs;
        TrafficPrev *netdevs;            /* sorted by ifindex */
        size_t n_netdevs;
} TrafficBaseline;

void traffic_baseline_done(TrafficBaseline *b);

/*
 * Add the VF and netdev families of one period to snap, from in's rtnetlink reads. The rates
 * are measured against prev, and there are none when elapsed_usec is 0. *ret_next becomes the
 * next period's baseline, and is replaced only on success. When nothing was read, that is when
 * in->pf_stats and in->netdevs are NULL, there are no samples and the baseline is empty.
 * Returns -ENOMEM or -E2BIG on failure.
 */

int sampler_traffic(const TrafficBaseline *prev, const SamplerInput *in, uint64_t elapsed_usec,
                    MetricSnapshot *snap, TrafficBaseline *ret_next);

/*
 * The last period's latency figures. Each thread's histogram or schedstat is kept, so that the
 * next period takes the difference. Each series, one per tenant, class and kind, keeps its
 * histogram since it first appeared, because Prometheus wants a histogram's counts to only grow.
 */
typedef struct LatencyPrev {
        pid_t tid;
        bool have_hist;
        LatencyHist hist;
        bool have_schedstat;
        ThreadSchedstat schedstat;
} LatencyPrev;

typedef struct LatencySeries {
        char tenant[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];
        const char *kind;
        LatencyHist total;
} LatencySeries;

typedef struct LatencyBaseline {
        LatencySource source;
        LatencyPrev *threads;            /* sorted by tid */
        size_t n_threads;
        LatencySeries *series;           /* sorted by tenant, class, kind */
        size_t n_series;
} LatencyBaseline;

void latency_baseline_done(LatencyBaseline *b);

/*
 * Add the latency families of one period to snap, from in's threads, measured against prev.
 * *ret_next becomes the next period's baseline, and is replaced only on success. With the
 * schedstat source, the files are read under root. Returns -ENOMEM on failure.
 */
int sampler_latency(const LatencyBaseline *prev, RootFs *root, const SamplerInput *in, MetricSnapshot *snap,
                    LatencyBaseline *ret_next);
/* sriovd_bpf_available{feature}, from in's have_bpf and bpf_available. */
int sampler_bpf_available(MetricSnapshot *snap, const SamplerInput *in);
