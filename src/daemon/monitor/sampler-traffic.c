/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-traffic.c — the packet, byte and drop counters of VFs and netdevs, with rates and tenants */

/*
 * A VF's traffic has two sources. The PF's IFLA_VF_STATS counts what crossed the VF, for a
 * passed-through VF too, so it is preferred. A PF driver without ndo_get_vf_stats, such as igb,
 * makes the kernel send all eight counters as zeros. That looks like an idle VF. A VF bound to
 * a host driver such as igbvf has a host netdev, with counters of its own. When the PF's
 * counters are all zero while that netdev has counted traffic, the netdev's IFLA_STATS64 is
 * used instead, and sriovd_vf_stats_from_netdev says so. A VF whose source changes between two
 * periods gets no rate for that period, because the counters are not comparable.
 */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sampler-internal.h"

void traffic_baseline_done(TrafficBaseline *b) {
        if (!b)
                return;
        free(b->vfs);
        free(b->netdevs);
        *b = (TrafficBaseline) {};
}

static int vf_prev_cmp(const void *a, const void *b) {
        const TrafficPrev *x = a, *y = b;
        int c = strcmp(x->pf, y->pf);
        return c ? c : (x->vf > y->vf) - (x->vf < y->vf);
}

static int netdev_prev_cmp(const void *a, const void *b) {
        const TrafficPrev *x = a, *y = b;
        return (x->ifindex > y->ifindex) - (x->ifindex < y->ifindex);
}

static int vf_stats_cmp(const void *a, const void *b) {
        unsigned x = ((const VfStats *) a)->vf, y = ((const VfStats *) b)->vf;
        return (x > y) - (x < y);
}

static int stats_ifindex_cmp(const void *a, const void *b) {
        int x = ((const NetdevStats *) a)->ifindex, y = ((const NetdevStats *) b)->ifindex;
        return (x > y) - (x < y);
}

static const NetdevStats *pf_stats_of(const SamplerInput *in, int ifindex) {
        for (size_t i = 0; ifindex > 0 && i < in->n_pf_stats; i++)
                if (in->pf_stats[i].ifindex == ifindex)
                        return &in->pf_stats[i];
        return NULL;
}

static const NetdevStats *netdev_of(const SamplerInput *in, int ifindex) {
        NetdevStats key = { .ifindex = ifindex };
        if (ifindex <= 0)
                return NULL;
        return bsearch_safe(&key, in->netdevs, in->n_netdevs, sizeof(*in->netdevs), stats_ifindex_cmp);
}

static bool vf_counters_zero(const VfCounters *c) {
        return c->rx_packets == 0 && c->tx_packets == 0 && c->rx_bytes == 0 && c->tx_bytes == 0 &&
               c->rx_dropped == 0 && c->tx_dropped == 0 && c->broadcast == 0 && c->multicast == 0;
}

/* The family names of one kind of subject: sriovd_vf_* for VFs, sriovd_netdev_* for netdevs. */
typedef struct TrafficFamilies {
        const char *counter[6];          /* the *_total of rx/tx packets, rx/tx bytes and rx/tx dropped */
        const char *rate[4];             /* rx/tx packets, rx/tx bytes per second */
        const char *drop_rate;           /* rx + tx dropped per second */
} TrafficFamilies;

static const TrafficFamilies vf_families = {
        .counter = { "sriovd_vf_rx_packets_total", "sriovd_vf_tx_packets_total", "sriovd_vf_rx_bytes_total",
                     "sriovd_vf_tx_bytes_total", "sriovd_vf_rx_dropped_total", "sriovd_vf_tx_dropped_total" },
        .rate = { "sriovd_vf_rx_packet_rate", "sriovd_vf_tx_packet_rate", "sriovd_vf_rx_byte_rate",
                  "sriovd_vf_tx_byte_rate" },
        .drop_rate = "sriovd_vf_drop_rate",
};

static const TrafficFamilies netdev_families = {
        .counter = { "sriovd_netdev_rx_packets_total", "sriovd_netdev_tx_packets_total",
                     "sriovd_netdev_rx_bytes_total", "sriovd_netdev_tx_bytes_total",
                     "sriovd_netdev_rx_dropped_total", "sriovd_netdev_tx_dropped_total" },
        .rate = { "sriovd_netdev_rx_packet_rate", "sriovd_netdev_tx_packet_rate", "sriovd_netdev_rx_byte_rate",
                  "sriovd_netdev_tx_byte_rate" },
        .drop_rate = "sriovd_netdev_drop_rate",
};

/*
 * Add one subject's samples. Every family gets a sample each period, so that an alert sees a
 * missing value as gone. A sample is NaN when it has no value. That happens when the kernel did
 * not send the counter, in the first period, and after a counter reset.
 */
static int add_traffic(MetricSnapshot *snap, const TrafficFamilies *f, const Labels *ls, const VfCounters *cur,
                       const VfCounters *prev, uint64_t elapsed_usec) {
        static const uint32_t bits[6] = {
                VF_COUNTER_RX_PACKETS, VF_COUNTER_TX_PACKETS, VF_COUNTER_RX_BYTES,
                VF_COUNTER_TX_BYTES, VF_COUNTER_RX_DROPPED, VF_COUNTER_TX_DROPPED,
        };
        const uint64_t counters[6] = {
                cur->rx_packets, cur->tx_packets, cur->rx_bytes, cur->tx_bytes, cur->rx_dropped, cur->tx_dropped,
        };
        double rates[6] = { NAN, NAN, NAN, NAN, NAN, NAN }, drops = NAN;
        uint32_t have = 0;
        VfRates v;
        int r;

        if (prev && elapsed_usec > 0 && vf_counters_rates(prev, cur, elapsed_usec, &v) >= 0 && !v.reset) {
                const double all[6] = { v.rx_packets, v.tx_packets, v.rx_bytes, v.tx_bytes, v.rx_dropped, v.tx_dropped };

                have = v.have;
                for (size_t i = 0; i < 6; i++)
                        if (have & bits[i])
                                rates[i] = all[i];
                if (have & (VF_COUNTER_RX_DROPPED | VF_COUNTER_TX_DROPPED))
                        drops = (isnan(rates[4]) ? 0 : rates[4]) + (isnan(rates[5]) ? 0 : rates[5]);
        }
        for (size_t i = 0; i < 6; i++) {
                r = metric_snapshot_add(snap, f->counter[i], METRIC_COUNTER,
                                        cur->have & bits[i] ? (double) counters[i] : NAN, ls->l, ls->n);
                if (r >= 0 && i < 4)
                        r = metric_snapshot_add(snap, f->rate[i], METRIC_GAUGE, rates[i], ls->l, ls->n);
                if (r < 0)
                        return r;
        }
        return metric_snapshot_add(snap, f->drop_rate, METRIC_GAUGE, drops, ls->l, ls->n);
}

typedef struct Next {
        TrafficPrev *a;
        size_t n, allocated;
} Next;

static int next_add(Next *x, const TrafficPrev *p) {
        if (GREEDY_REALLOC(x->a, x->allocated, x->n + 1) < 0)
                return -ENOMEM;
        x->a[x->n++] = *p;
        return 0;
}

static const TrafficPrev *find_vf_prev(const TrafficBaseline *b, const char *pf, unsigned vf) {
        TrafficPrev key = { .vf = vf };
        strscpy(key.pf, sizeof(key.pf), pf);
        return b ? bsearch_safe(&key, b->vfs, b->n_vfs, sizeof(*b->vfs), vf_prev_cmp) : NULL;
}

static const TrafficPrev *find_netdev_prev(const TrafficBaseline *b, int ifindex) {
        TrafficPrev key = { .ifindex = ifindex };
        return b ? bsearch_safe(&key, b->netdevs, b->n_netdevs, sizeof(*b->netdevs), netdev_prev_cmp) : NULL;
}

static void owner_labels(Labels *ls, const Pf *pf, const Vf *vf, const TenantInfo *t) {
        label(ls, METRIC_LABEL_PF, pf->addr);
        if (vf)
                label(ls, METRIC_LABEL_VF, vf->addr);
        if (t) {
                label(ls, METRIC_LABEL_TENANT, t->tenant);
                label(ls, METRIC_LABEL_CLASS, t->class_name);
        }
}

/*
 * Add the sriovd_netdev_* families of a host netdev from the dump. The netdev is the PF's, or
 * that of a VF bound to a host driver.
 */
static int sample_netdev(MetricSnapshot *snap, const TrafficBaseline *prev, const Labels *ls, const NetdevStats *nd,
                         uint64_t elapsed_usec, Next *next) {
        const TrafficPrev *p;
        int r;

        if (!nd || !nd->netdev.have)
                return 0;
        p = find_netdev_prev(prev, nd->ifindex);
        r = add_traffic(snap, &netdev_families, ls, &nd->netdev, p ? &p->counters : NULL, elapsed_usec);
        if (r < 0)
                return r;
        return next_add(next, &(TrafficPrev) { .ifindex = nd->ifindex, .counters = nd->netdev });
}

static int sample_vf(MetricSnapshot *snap, const TrafficBaseline *prev, const Pf *pf, const Vf *vf,
                     const Labels *ls, const NetdevStats *ps, const NetdevStats *nd, uint64_t elapsed_usec,
                     Next *next) {
        VfStats key = { .vf = vf->index };
        const VfStats *vs = ps ? bsearch_safe(&key, ps->vfs, ps->n_vfs, sizeof(*ps->vfs), vf_stats_cmp) : NULL;
        const VfCounters *cur = vs && vs->counters.have ? &vs->counters : NULL;
        const TrafficPrev *p;
        bool from_netdev = false;
        int r;

        if (nd && nd->netdev.have && (!cur || vf_counters_zero(cur)) &&
            (nd->netdev.rx_packets > 0 || nd->netdev.tx_packets > 0)) {
                cur = &nd->netdev;
                from_netdev = true;
        }
        if (!cur)
                return 0;
        p = find_vf_prev(prev, pf->addr, vf->index);
        if (p && p->from_netdev != from_netdev)
                p = NULL;
        r = add_traffic(snap, &vf_families, ls, cur, p ? &p->counters : NULL, elapsed_usec);
        if (r >= 0)
                r = metric_snapshot_add(snap, "sriovd_vf_stats_from_netdev", METRIC_GAUGE, from_netdev, ls->l, ls->n);
        if (r < 0)
                return r;
        TrafficPrev np = { .vf = vf->index, .from_netdev = from_netdev, .counters = *cur };
        strscpy(np.pf, sizeof(np.pf), pf->addr);
        return next_add(next, &np);
}

int sampler_traffic(const TrafficBaseline *prev, const SamplerInput *in, uint64_t elapsed_usec,
                    MetricSnapshot *snap, TrafficBaseline *ret_next) {
        Next vfs = {}, netdevs = {};
        int r = 0;

        for (size_t i = 0; in->inv && i < in->inv->n_pfs && r >= 0; i++) {
                const Pf *pf = &in->inv->pfs[i];
                const NetdevStats *ps = pf_stats_of(in, pf->ifindex);
                Labels ls = {};

                owner_labels(&ls, pf, NULL, NULL);
                /* The PF's own IFLA_STATS64 came with its VF list too. The dump's copy wins when there is one. */

                r = sample_netdev(snap, prev, &ls, netdev_of(in, pf->ifindex) ?: ps, elapsed_usec, &netdevs);
                for (size_t j = 0; j < pf->n_vfs && r >= 0; j++) {
                        const Vf *vf = &pf->vfs[j];
                        const NetdevStats *nd = netdev_of(in, vf->ifindex);
                        Labels vls = {};

                        owner_labels(&vls, pf, vf, sampler_tenant_of_vf(in, vf->addr));
                        r = sample_vf(snap, prev, pf, vf, &vls, ps, nd, elapsed_usec, &vfs);
                        if (r >= 0)
                                r = sample_netdev(snap, prev, &vls, nd, elapsed_usec, &netdevs);
                }
        }
        if (r < 0) {
                free(vfs.a);
                free(netdevs.a);
                return r;
        }
        qsort_safe(vfs.a, vfs.n, sizeof(*vfs.a), vf_prev_cmp);
        qsort_safe(netdevs.a, netdevs.n, sizeof(*netdevs.a), netdev_prev_cmp);
        traffic_baseline_done(ret_next);
        *ret_next = (TrafficBaseline) { .vfs = vfs.a, .n_vfs = vfs.n, .netdevs = netdevs.a, .n_netdevs = netdevs.n };
        return 0;
}
