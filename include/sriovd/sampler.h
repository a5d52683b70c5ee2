/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler.h — one period of the kernel's counters turned into a MetricSnapshot, and its Prometheus page */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "sriovd/allocator.h"
#include "sriovd/config.h"
#include "sriovd/inventory.h"
#include "sriovd/metrics.h"
#include "sriovd/netdev-stats.h"
#include "sriovd/rootfs.h"
#include "sriovd/tenants.h"

/*
 * The sampler keeps the previous period's counters: every rate is against them, over the
 * elapsed time measured between the two reads. The first sample (and the first after a
 * counter went down or a row appeared) has NaN rates and the kernel's counters as they are.
 */
typedef struct Sampler Sampler;

/* What the daemon knows that the kernel's counters do not: whose an IRQ is, the pools. */
typedef struct SamplerInput {
        const Inventory *inv;         /* NULL: no NIC known, only per-CPU samples */
        const Config *cfg;            /* RT CPUs, classes, vf_target_utilization */
        const TenantInfo *tenants;    /* any order */
        size_t n_tenants;
        const AllocRtNode *rt_nodes;
        size_t n_rt_nodes;
        /* Traffic over rtnetlink, read by the daemon where there is a kernel (none on a fixture
         * root: no VF or netdev samples). pf_stats: route_nl_read_stats() of PFs by their
         * ifindex, any order (the VFs' IFLA_VF_STATS); netdevs: route_nl_dump_stats(), sorted
         * by ifindex (the PFs' and VF netdevs' IFLA_STATS64). */
        const NetdevStats *pf_stats;
        size_t n_pf_stats;
        const NetdevStats *netdevs;
        size_t n_netdevs;
} SamplerInput;

int sampler_new(RootFs *root, Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

/*
 * Read /proc/interrupts, /proc/softirqs, /proc/stat and the threads' CPU time under the root
 * (and take in's traffic counters: the sriovd_vf_* and sriovd_netdev_* families),
 * at mono_usec (CLOCK_MONOTONIC, for the rates) and real_usec (CLOCK_REALTIME, the snapshot's
 * timestamp), into *ret (replaced; the caller's to metric_snapshot_done()). A missing
 * /proc/softirqs or /proc/stat gives no samples of theirs; /proc/interrupts is needed: its
 * error is returned, and the previous counters are kept for the next try. -ENOMEM.
 */
int sampler_sample(Sampler *s, const SamplerInput *in, uint64_t mono_usec, uint64_t real_usec,
                   MetricSnapshot *ret);

/*
 * The snapshot as a Prometheus text page (HELP and TYPE per family, counters as counters; a
 * gauge without a value this period, NaN, is left out). The caller frees *ret.
 */
int sampler_prom_page(const MetricSnapshot *snap, char **ret, size_t *ret_size);
/* The HELP text of a family sriovd exports, NULL for a name it does not. */
const char *sampler_family_help(const char *name);
