/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler.h — one period of the kernel's counters turned into a MetricSnapshot, and its Prometheus page */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sriovd/core/allocator.h"
#include "sriovd/core/inventory.h"
#include "sriovd/core/metrics.h"
#include "sriovd/kernel/bpf-events.h"
#include "sriovd/kernel/netdev-stats.h"
#include "sriovd/kernel/rootfs.h"
#include "config/config.h"
#include "tenants/tenants.h"

/*
 * The sampler keeps the previous period's counters. Every rate is measured against them, over
 * the time that elapsed between the two reads. The first sample has NaN rates and the kernel's
 * counters as they are. So does the first sample after a counter went down or a row appeared.
 */
typedef struct Sampler Sampler;

/* Where the latency figures of a period come from. */
typedef enum LatencySource {
        LATENCY_SOURCE_NONE,          /* no latency samples */
        LATENCY_SOURCE_BPF,           /* the BPF histograms, which the caller reads into LatencyThread.hist */
        LATENCY_SOURCE_SCHEDSTAT,     /* /proc/TID/schedstat under the root, which the sampler reads */
        _LATENCY_SOURCE_MAX,
} LatencySource;

const char *latency_source_to_string(LatencySource s);

/*
 * A thread whose wakeup-to-run latency matters to an RT tenant. kind is one of "vcpu", "irq",
 * "napi", "vhost" and "ksoftirqd". A ksoftirqd serves an RT CPU, not a tenant, so its tenant
 * and class are "".
 */
typedef struct LatencyThread {
        pid_t tid;
        const char *kind;             /* static storage */
        char tenant[TENANT_ID_MAX];
        char class_name[CLASS_NAME_MAX];
        /* With LATENCY_SOURCE_BPF: the thread's histogram since it was tracked, when it has one. */
        bool have_hist;
        LatencyHist hist;
} LatencyThread;

/* What the daemon knows and the kernel's counters do not: who owns an IRQ, and the pools. */
typedef struct SamplerInput {
        const Inventory *inv;         /* NULL when no NIC is known, for per-CPU samples only */
        const Config *cfg;            /* RT CPUs, classes and vf_target_utilization */
        const TenantInfo *tenants;    /* in any order */
        size_t n_tenants;
        const AllocRtNode *rt_nodes;
        size_t n_rt_nodes;
        /*
         * Traffic over rtnetlink, which the daemon reads where there is a kernel. A fixture root
         * has none, so it gives no VF or netdev samples. pf_stats holds route_nl_read_stats() of
         * the PFs by their ifindex, in any order, with the VFs' IFLA_VF_STATS. netdevs holds
         * route_nl_dump_stats(), sorted by ifindex, with the IFLA_STATS64 of the PFs' and VFs'
         * netdevs.
         */
        const NetdevStats *pf_stats;
        size_t n_pf_stats;
        const NetdevStats *netdevs;
        size_t n_netdevs;
        /*
         * The RT tenants' threads and where their latency comes from. Threads of one tenant,
         * class and kind add up to one series. The threads need no order.
         */
        LatencySource latency_source;
        const LatencyThread *latency;
        size_t n_latency;
        /* Whether each set of BPF programs is loaded, for sriovd_bpf_available; without have_bpf, nothing. */
        bool have_bpf;
        bool bpf_available[_BPF_FEATURE_MAX];
} SamplerInput;

int sampler_new(RootFs *root, Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

/*
 * Read /proc/interrupts, /proc/softirqs, /proc/stat, /proc/net/softnet_stat and the threads' CPU
 * time under the root.
 * Also take in's traffic counters, for the sriovd_vf_* and sriovd_netdev_* families, and in's
 * latency threads, for the sriovd_thread_latency_* families. The rates
 * use mono_usec, from CLOCK_MONOTONIC. The snapshot's timestamp is real_usec, from
 * CLOCK_REALTIME. *ret is replaced, and the caller frees it with metric_snapshot_done(). A
 * missing /proc/softirqs, /proc/stat or /proc/net/softnet_stat gives no samples of its own. /proc/interrupts is
 * required: its error is returned, and the previous counters are kept for the next try.
 * Returns -ENOMEM when out of memory.
 */
int sampler_sample(Sampler *s, const SamplerInput *in, uint64_t mono_usec, uint64_t real_usec,
                   MetricSnapshot *ret);

/*
 * Format the snapshot as a Prometheus text page, with HELP and TYPE for each family and the
 * counters typed as counters. A gauge without a value this period, which is NaN, is left out.
 * The caller frees *ret.
 */
int sampler_prom_page(const MetricSnapshot *snap, char **ret, size_t *ret_size);
/* The HELP text of a family that sriovd exports, or of a histogram line of one; NULL for a name it does not export. */

const char *sampler_family_help(const char *name);
