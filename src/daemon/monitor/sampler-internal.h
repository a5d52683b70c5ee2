/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-internal.h — what the sampler's files share: labels, tenants, the baselines, the IRQ owners */
#pragma once

#include <stdio.h>

#include "sriovd/core/counters.h"
#include "sriovd/shared/util.h"
#include "sampler.h"

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

static inline int sampler_add(MetricSnapshot *snap, const char *name, MetricKind kind, double value, const Labels *ls) {
        return metric_snapshot_add(snap, name, kind, value, ls->l, ls->n);
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

/*
 * A thread that the sampler read last period: its times and its stat file. The file is kept
 * open, so that the next read is one pread() instead of a lookup of /proc/PID/task/TID/stat.
 * On the large host's tree, that measured 0.9 us per thread instead of 5.5 us.
 */
typedef struct ThreadSlot {
        ThreadTimes times;
        int fd;                          /* -EBADF when the fd budget was spent and the thread is read by path */
} ThreadSlot;

struct Sampler {
        RootFs *root;
        unsigned long ticks_per_sec;
        bool have_prev;
        uint64_t prev_usec;
        CounterTable interrupts, softirqs, cpu_times, softnet;
        ThreadSlot *threads;             /* last period's threads, sorted by tid */
        size_t n_threads;
        size_t n_fds, fd_budget;         /* the thread stat files held open, and how many may be */
        TrafficBaseline traffic;
        LatencyBaseline latency;
        /*
         * The samples of the snapshot before last, to be filled again. They take 4.6 MB on the
         * large host, and fresh pages cost more to fault in than to write.
         */
        MetricSample *spare;
        size_t spare_allocated;
        /* Last period's NIC IRQ rows, by IRQ in the table's order, and the sorted order of their labels. */
        uint32_t *order_irqs;
        size_t *order;
        size_t n_order;
};

/* Who owns an IRQ: its PF, its VF, and the tenant that holds the VF. vf is NULL for the PF's own IRQs. */
typedef struct IrqOwner {
        unsigned irq;
        const Pf *pf;
        const Vf *vf;
        const TenantInfo *tenant;
        bool rt;                         /* the tenant's class puts its IRQs or vCPUs on RT CPUs */
        bool on_rt;                      /* the IRQ lands on an RT CPU, by effective affinity or else affinity */
        pid_t thread;
} IrqOwner;

/*
 * /proc/interrupts of one period, prepared for sampler_irqs() and sampler_rt(). Each row's owner and
 * each column's place in the rates are looked up once per period, not once per row and CPU.
 * On the large host, a lookup per row and CPU took 100,000 binary searches on the RT CPUs alone.
 */
typedef struct IrqTable {
        const CounterTable *cur;
        const CounterRates *rates;       /* NULL when there are no rates this period */
        const IrqOwner **owner;          /* per row; NULL for a named row or an IRQ that no NIC has */
        ssize_t *rate_col;               /* per column, the rates' column of the same CPU, or -1 for none */
} IrqTable;

/* Close the fds of n thread slots, counting them off *n_fds, and free t. */
void thread_slots_free(ThreadSlot *t, size_t n, size_t *n_fds);

/* List the IRQs of in's PFs and VFs with their owners, sorted by IRQ. rt is the host's RT CPUs. */
int irq_owners_collect(const SamplerInput *in, const CpuSet *rt, IrqOwner **ret, size_t *ret_n);
/* Add an owner's labels: its PF, VF, tenant, class and IRQ. */
void irq_owner_labels(Labels *ls, const IrqOwner *o);

/* Pair the rows of cur with owners, and the columns of cur with those of rates, which may be NULL. */
int irq_table_init(IrqTable *t, const CounterTable *cur, const CounterRates *rates,
                   const IrqOwner *owners, size_t n_owners);
void irq_table_done(IrqTable *t);

/* sriovd_irq_interrupts_total and sriovd_irq_rate. The sorted order is kept in s for the next period. */
int sampler_irqs(Sampler *s, MetricSnapshot *snap, const IrqTable *t);
/* The interference families of the RT CPUs. */
int sampler_rt(MetricSnapshot *snap, const IrqTable *t, const CpuSet *rt);
/*
 * The CPU share of the IRQ and NAPI threads that matter for RT, and of each RT CPU's ksoftirqd.
 * The threads read become s's next baseline, on success only.
 */
int sampler_threads(Sampler *s, MetricSnapshot *snap, const Inventory *inv, const IrqOwner *owners,
                    size_t n_owners, const CpuSet *rt, uint64_t elapsed);
