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
 * The sampler keeps the previous period's counters. Every rate is measured against them, over
 * the time that elapsed between the two reads. The first sample has NaN rates and the kernel's
 * counters as they are. So does the first sample after a counter went down or a row appeared.
 */
typedef struct Sampler Sampler;

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
} SamplerInput;

int sampler_new(RootFs *root, Sampler **ret);
Sampler *sampler_free(Sampler *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sampler *, sampler_free);

/*
 * Read /proc/interrupts, /proc/softirqs, /proc/stat and the threads' CPU time under the root.
 * Also take in's traffic counters, for the sriovd_vf_* and sriovd_netdev_* families. The rates
 * use mono_usec, from CLOCK_MONOTONIC. The snapshot's timestamp is real_usec, from
 * CLOCK_REALTIME. *ret is replaced, and the caller frees it with metric_snapshot_done(). A
 * missing /proc/softirqs or /proc/stat gives no samples of its own. /proc/interrupts is
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
/* The HELP text of a family that sriovd exports, or NULL for a name that it does not export. */

const char *sampler_family_help(const char *name);
