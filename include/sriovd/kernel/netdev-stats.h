/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-stats.h — the traffic counters of netdevs and of a PF's VFs, read over rtnetlink */
#pragma once

#include <linux/netlink.h>
#include <net/if.h>
#include <stddef.h>

#include "sriovd/core/counters.h"
#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/vf-netlink.h"
#include "sriovd/shared/macro.h"

/* One VF of a PF, by its index on the PF, the N of virtfnN. */
typedef struct VfStats {
        unsigned vf;
        VfCounters counters;
} VfStats;

/*
 * What one RTM_NEWLINK says about a netdev's traffic. The counters are the kernel's totals since
 * the netdev or the VF came up. The sampler computes rates with vf_counters_rates().
 */
typedef struct NetdevStats {
        int ifindex;
        char ifname[IF_NAMESIZE];
        VfCounters netdev;               /* from IFLA_STATS64; .have is 0 when the kernel sent none */
        VfStats *vfs;                    /* the IFLA_VF_STATS of IFLA_VFINFO_LIST, sorted by vf */
        size_t n_vfs;
} NetdevStats;

/* Frees what s holds and zeroes it. s itself belongs to the caller. */
void netdev_stats_done(NetdevStats *s);

/*
 * Parses an RTM_NEWLINK, and it does no I/O. It reads IFLA_STATS64. When the message has the VF
 * list, as with RTEXT_FILTER_VF, it also reads the IFLA_VF_STATS of every IFLA_VF_INFO.
 * Attributes are read with libnl's nla_parse() and a policy. libnl's link object parser is not
 * used, because libnl 3.7 reads no VF drop counters. Nor can its rtnl_link_get_stat() say that a
 * counter was not sent.
 *
 * Missing counters are not an error. A netdev without IFLA_STATS64 has netdev.have 0. A VF
 * without IFLA_VF_STATS is listed with counters.have 0, as with RTEXT_FILTER_SKIP_STATS or on
 * kernels before 4.2. A VF without the drop counters lacks VF_COUNTER_RX_DROPPED and
 * VF_COUNTER_TX_DROPPED, as on kernels before 4.20. IFLA_STATS64 has no broadcast counter. Its
 * multicast counts received multicast, as IFLA_VF_STATS_MULTICAST does.
 *
 * Returns -EBADMSG for what the kernel does not send. That is a message that is not an
 * RTM_NEWLINK, a short header, or an attribute shorter than its policy. It is an IFLA_STATS64
 * shorter than the counters up to multicast. It is a VF entry without IFLA_VF_MAC, which is the
 * kernel's only carrier of the VF's index. It is also a VF index that comes twice, or one beyond
 * IFLA_NUM_VF or beyond 65535. Returns -ENOMEM when memory runs out. *ret is untouched on
 * failure. On success the caller frees it with netdev_stats_done().
 */
int netdev_stats_parse(const struct nlmsghdr *h, NetdevStats *ret);

/*
 * Reads one PF per call with a single RTM_GETLINK for ifindex with RTEXT_FILTER_VF. Its one answer
 * carries the PF's own IFLA_STATS64 and every VF's IFLA_VF_STATS. That includes the VFs passed
 * through to guests, because the PF reports them. The request is not a dump, so the VF list has
 * no size limit. A netdev without VFs is no error, and n_vfs is 0 then. Returns -ENODEV when there
 * is no such ifindex, and -EBADMSG as netdev_stats_parse() does. err is filled in as
 * netlink_transact() fills it. The caller frees *ret with netdev_stats_done().
 */
int route_nl_read_stats(RouteNl *nl, int ifindex, NetdevStats *ret, NlError *err);

/*
 * Reads the IFLA_STATS64 of every netdev of the namespace in one RTM_GETLINK dump, without VF
 * lists. *ret is sorted by ifindex, and the caller frees it with netdev_stats_array_free().
 * Returns -EAGAIN when the links changed during the dump, which NLM_F_DUMP_INTR tells. Call it
 * again then.
 */
int route_nl_dump_stats(RouteNl *nl, NetdevStats **ret, size_t *ret_n, NlError *err);
void netdev_stats_array_free(NetdevStats *a, size_t n);
