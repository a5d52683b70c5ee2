/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-internal.h — what sampler.c and sampler-traffic.c share: labels, tenants, the traffic baseline */
#pragma once

#include <stdio.h>

#include "sriovd/sampler.h"
#include "sriovd/util.h"

/* Labels built up one by one; values cut at METRIC_LABEL_VALUE_MAX - 1 (ids are shorter). At
 * most a subject's: an alert on the sample adds its own label (alert-metrics.h). */
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

/* Digits by hand: three of these a sample, 30,000 a period on the large host, and snprintf()
 * was a tenth of the period's time. */
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
 * Last period's traffic counters: per VF (by PF address and VF index) with the source they
 * came from, per netdev by ifindex. A rate needs the same subject from the same source in
 * both periods.
 */
typedef struct TrafficPrev {
        char pf[PCI_ADDR_MAX];
        unsigned vf;                     /* VFs: the index on the PF */
        int ifindex;                     /* netdevs */
        bool from_netdev;                /* VFs: these are the VF's host netdev's IFLA_STATS64 */
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
 * The VF and netdev families of one period from in's rtnetlink reads, against prev (the rates;
 * elapsed_usec 0: none), into snap. *ret_next is the next period's baseline (replaced only on
 * success). Nothing read (in->pf_stats and in->netdevs NULL): no samples, an empty baseline.
 * -ENOMEM, -E2BIG.
 */
int sampler_traffic(const TrafficBaseline *prev, const SamplerInput *in, uint64_t elapsed_usec,
                    MetricSnapshot *snap, TrafficBaseline *ret_next);
