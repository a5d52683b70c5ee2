/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-stats.h — traffic counters of netdevs (IFLA_STATS64) and of a PF's VFs (IFLA_VF_STATS) over rtnetlink */
#pragma once

#include <linux/netlink.h>
#include <net/if.h>
#include <stddef.h>

#include "sriovd/counters.h"
#include "sriovd/macro.h"
#include "sriovd/netlink.h"

/* One VF of a PF, by its index on the PF (virtfnN). */
typedef struct VfStats {
        unsigned vf;
        VfCounters counters;
} VfStats;

/*
 * What one RTM_NEWLINK says about a netdev's traffic. The counters are the kernel's
 * totals since the netdev (or the VF) came up; rates are the sampler's business
 * (vf_counters_rates()).
 */
typedef struct NetdevStats {
        int ifindex;
        char ifname[IF_NAMESIZE];
        VfCounters netdev;               /* IFLA_STATS64; .have 0 when the kernel sent none */
        VfStats *vfs;                    /* IFLA_VFINFO_LIST's IFLA_VF_STATS, sorted by vf */
        size_t n_vfs;
} NetdevStats;

/* Frees what s holds and zeroes it; s itself is the caller's. */
void netdev_stats_done(NetdevStats *s);

/*
 * Pure parser of an RTM_NEWLINK: IFLA_STATS64 and, when the message has the VF list
 * (RTEXT_FILTER_VF), every IFLA_VF_INFO's IFLA_VF_STATS. Attributes are read with
 * libnl's nla_parse() and a policy; libnl's link object parser is not used (libnl 3.7
 * reads no VF drop counters, and its rtnl_link_get_stat() cannot say "not sent").
 *
 * Missing counters are not an error: a netdev without IFLA_STATS64 has netdev.have 0,
 * a VF without IFLA_VF_STATS (RTEXT_FILTER_SKIP_STATS, kernels before 4.2) is listed
 * with counters.have 0, a VF without the drop counters (kernels before 4.20) lacks
 * VF_COUNTER_RX/TX_DROPPED. IFLA_STATS64 has no broadcast counter; its multicast is
 * received multicast, as IFLA_VF_STATS_MULTICAST is.
 *
 * -EBADMSG for what the kernel does not send: not an RTM_NEWLINK, a short header, an
 * attribute shorter than its policy, IFLA_STATS64 shorter than the counters up to
 * multicast, a VF entry without IFLA_VF_MAC (the kernel's only carrier of the VF's
 * index), a VF index twice, beyond IFLA_NUM_VF or beyond 65535. -ENOMEM. *ret
 * (netdev_stats_done()) untouched on failure.
 */
int netdev_stats_parse(const struct nlmsghdr *h, NetdevStats *ret);

/*
 * One PF per call: a single RTM_GETLINK for ifindex with RTEXT_FILTER_VF, whose one
 * answer carries the PF's own IFLA_STATS64 and every VF's IFLA_VF_STATS, passed-through
 * VFs' too (the PF reports them). Not a dump, so no size limit on the VF list. A
 * netdev without VFs is no error: n_vfs 0. -ENODEV for no such ifindex; -EBADMSG as for
 * netdev_stats_parse(); err as for netlink_transact().
 */
int route_nl_read_stats(RouteNl *nl, int ifindex, NetdevStats *ret, NlError *err);

/*
 * Every netdev of the namespace in one RTM_GETLINK dump, without VF lists: each one's
 * IFLA_STATS64, sorted by ifindex; *ret freed with netdev_stats_array_free().
 * -EAGAIN when the links changed during the dump (NLM_F_DUMP_INTR): call again.
 */
int route_nl_dump_stats(RouteNl *nl, NetdevStats **ret, size_t *ret_n, NlError *err);
void netdev_stats_array_free(NetdevStats *a, size_t n);
