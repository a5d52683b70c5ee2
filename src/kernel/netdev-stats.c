/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-stats.c — reads a netdev's IFLA_STATS64 and its VFs' IFLA_VF_STATS from one RTM_NEWLINK */

/*
 * vf-netlink.c reads the VF settings through libnl's link object. This file does not use it
 * for the counters, for three reasons:
 *
 * - libnl 3.7 knows only six VF counters, because RTNL_LINK_VF_STATS_MAX is MULTICAST.
 *   It never reads the kernel's IFLA_VF_STATS_RX_DROPPED and TX_DROPPED from 4.20.
 *   The alerts on a latency-critical VF watch exactly those drops.
 * - rtnl_link_get_stat() answers 0 for a counter that the kernel did not send.
 *   sriovd must tell "not available" apart from "no traffic".
 * - libnl's VF list parser leaks or crashes on lists that the kernel never sends, as
 *   vf-netlink.c explains. A fuzzer cannot be pointed at such a parser.
 *
 * So the attributes are walked here with libnl's nla_parse() and policies, which do the
 * length checks. The fuzzer fuzz-netdev-stats covers this walk. The request for one ifindex
 * comes from libnl's rtnl_link_build_get_request(). In libnl 3.7 it carries
 * IFLA_EXT_MASK = RTEXT_FILTER_VF, so the answer has the VF list. The dump of all links is
 * built here without that mask.
 *
 * In 6.x kernels, rtnl_fill_vfinfo() sends one IFLA_VF_INFO for each VF whose
 * ndo_get_vf_config() succeeds, with IFLA_VF_MAC first. It adds IFLA_VF_STATS with all eight
 * counters unless the request asked for RTEXT_FILTER_SKIP_STATS. The counters are zeroed and
 * then filled by ndo_get_vf_stats() where the driver has one. igb has none, so its VFs'
 * counters are always 0, and no reader can tell them from an idle VF's.
 */

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/route/link.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "sriovd/kernel/netdev-stats.h"

/* PCIe's NumVFs field has 16 bits, so no VF index can go beyond this. */
#define VF_INDEX_MAX 0xffffu

/* sriovd reads IFLA_STATS64 up to and including multicast.
 * The struct has grown since, with fields such as rx_nohandler. */
#define STATS64_MIN (offsetof(struct rtnl_link_stats64, multicast) + sizeof(uint64_t))

void netdev_stats_done(NetdevStats *s) {
        if (!s)
                return;
        free(s->vfs);
        *s = (NetdevStats) {};
}

void netdev_stats_array_free(NetdevStats *a, size_t n) {
        for (size_t i = 0; i < n && a; i++)
                netdev_stats_done(&a[i]);
        free(a);
}

static void stats64_read(const struct nlattr *a, VfCounters *ret) {
        struct rtnl_link_stats64 s = {};

        /* nla_memcpy() copies at most the attribute's length, so an older kernel's shorter struct is zero-filled. */
        nla_memcpy(&s, (struct nlattr *) a, sizeof(s));
        *ret = (VfCounters) {
                .rx_packets = s.rx_packets, .tx_packets = s.tx_packets,
                .rx_bytes = s.rx_bytes, .tx_bytes = s.tx_bytes,
                .rx_dropped = s.rx_dropped, .tx_dropped = s.tx_dropped,
                .multicast = s.multicast,
                .have = VF_COUNTER_RX_PACKETS | VF_COUNTER_TX_PACKETS | VF_COUNTER_RX_BYTES |
                        VF_COUNTER_TX_BYTES | VF_COUNTER_RX_DROPPED | VF_COUNTER_TX_DROPPED |
                        VF_COUNTER_MULTICAST,
        };
}

static int vf_stats_read(struct nlattr *nest, VfCounters *ret) {
        static struct nla_policy policy[IFLA_VF_STATS_MAX + 1] = {
                [IFLA_VF_STATS_RX_PACKETS] = { .type = NLA_U64 }, [IFLA_VF_STATS_TX_PACKETS] = { .type = NLA_U64 },
                [IFLA_VF_STATS_RX_BYTES] = { .type = NLA_U64 },   [IFLA_VF_STATS_TX_BYTES] = { .type = NLA_U64 },
                [IFLA_VF_STATS_BROADCAST] = { .type = NLA_U64 },  [IFLA_VF_STATS_MULTICAST] = { .type = NLA_U64 },
                [IFLA_VF_STATS_RX_DROPPED] = { .type = NLA_U64 }, [IFLA_VF_STATS_TX_DROPPED] = { .type = NLA_U64 },
        };
        static const struct { int attr; uint32_t bit; size_t offset; } fields[] = {
                { IFLA_VF_STATS_RX_PACKETS, VF_COUNTER_RX_PACKETS, offsetof(VfCounters, rx_packets) },
                { IFLA_VF_STATS_TX_PACKETS, VF_COUNTER_TX_PACKETS, offsetof(VfCounters, tx_packets) },
                { IFLA_VF_STATS_RX_BYTES, VF_COUNTER_RX_BYTES, offsetof(VfCounters, rx_bytes) },
                { IFLA_VF_STATS_TX_BYTES, VF_COUNTER_TX_BYTES, offsetof(VfCounters, tx_bytes) },
                { IFLA_VF_STATS_BROADCAST, VF_COUNTER_BROADCAST, offsetof(VfCounters, broadcast) },
                { IFLA_VF_STATS_MULTICAST, VF_COUNTER_MULTICAST, offsetof(VfCounters, multicast) },
                { IFLA_VF_STATS_RX_DROPPED, VF_COUNTER_RX_DROPPED, offsetof(VfCounters, rx_dropped) },
                { IFLA_VF_STATS_TX_DROPPED, VF_COUNTER_TX_DROPPED, offsetof(VfCounters, tx_dropped) },
        };
        struct nlattr *tb[IFLA_VF_STATS_MAX + 1];
        VfCounters c = {};

        if (nla_parse_nested(tb, IFLA_VF_STATS_MAX, nest, policy) < 0)
                return -EBADMSG;
        for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
                uint64_t v;

                if (!tb[fields[i].attr])
                        continue;
                v = nla_get_u64(tb[fields[i].attr]);
                memcpy((uint8_t *) &c + fields[i].offset, &v, sizeof(v));
                c.have |= fields[i].bit;
        }
        *ret = c;
        return 0;
}

static int vf_stats_cmp(const void *a, const void *b) {
        unsigned x = ((const VfStats *) a)->vf, y = ((const VfStats *) b)->vf;
        return (x > y) - (x < y);
}

/* Reads all of the VF list's entries into vfs, which has room for n_max.
 * Returns -EBADMSG for a list that the kernel never sends. */
static int vf_list_read(struct nlattr *list, bool have_num_vf, uint32_t num_vf, VfStats *vfs, size_t n_max,
                        size_t *ret_n) {
        static struct nla_policy policy[IFLA_VF_MAX + 1] = {
                [IFLA_VF_MAC] = { .minlen = sizeof(struct ifla_vf_mac) },
                [IFLA_VF_STATS] = { .type = NLA_NESTED },
        };
        struct nlattr *info;
        size_t n = 0;
        int rem, r;

        nla_for_each_nested(info, list, rem) {
                struct nlattr *tb[IFLA_VF_MAX + 1];
                struct ifla_vf_mac mac;

                /* The kernel puts only IFLA_VF_INFO in the list. */
                if (nla_type(info) != IFLA_VF_INFO)
                        continue;
                if (n >= n_max || nla_parse_nested(tb, IFLA_VF_MAX, info, policy) < 0 || !tb[IFLA_VF_MAC])
                        return -EBADMSG;
                nla_memcpy(&mac, tb[IFLA_VF_MAC], sizeof(mac));
                if (mac.vf > VF_INDEX_MAX || (have_num_vf && mac.vf >= num_vf))
                        return -EBADMSG;
                vfs[n] = (VfStats) { .vf = mac.vf };
                if (tb[IFLA_VF_STATS]) {
                        r = vf_stats_read(tb[IFLA_VF_STATS], &vfs[n].counters);
                        if (r < 0)
                                return r;
                }
                n++;
        }

        qsort_safe(vfs, n, sizeof(*vfs), vf_stats_cmp);
        for (size_t i = 1; i < n; i++)
                if (vfs[i].vf == vfs[i - 1].vf)
                        return -EBADMSG;
        *ret_n = n;
        return 0;
}

int netdev_stats_parse(const struct nlmsghdr *h, NetdevStats *ret) {
        static struct nla_policy policy[IFLA_MAX + 1] = {
                [IFLA_IFNAME] = { .type = NLA_STRING, .maxlen = IF_NAMESIZE },
                [IFLA_STATS64] = { .minlen = STATS64_MIN },
                [IFLA_NUM_VF] = { .type = NLA_U32 },
                [IFLA_VFINFO_LIST] = { .type = NLA_NESTED },
        };
        _cleanup_free_ VfStats *vfs = NULL;
        struct nlattr *tb[IFLA_MAX + 1], *a;
        const struct ifinfomsg *ifi;
        NetdevStats s = {};
        size_t n_max = 0;
        int rem, r;

        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(*ifi)))
                return -EBADMSG;
        if (nlmsg_parse((struct nlmsghdr *) h, sizeof(*ifi), tb, IFLA_MAX, policy) < 0)
                return -EBADMSG;
        ifi = nlmsg_data(h);
        s.ifindex = ifi->ifi_index;
        if (tb[IFLA_IFNAME])
                nla_strlcpy(s.ifname, tb[IFLA_IFNAME], sizeof(s.ifname));
        if (tb[IFLA_STATS64])
                stats64_read(tb[IFLA_STATS64], &s.netdev);

        if (tb[IFLA_VFINFO_LIST]) {
                /* The array is sized by the entries that are there, not by IFLA_NUM_VF.
                 * The message may hold fewer entries than IFLA_NUM_VF says. */
                nla_for_each_nested(a, tb[IFLA_VFINFO_LIST], rem)
                        n_max++;
                if (n_max > 0) {
                        vfs = calloc(n_max, sizeof(*vfs));
                        if (!vfs)
                                return -ENOMEM;
                        r = vf_list_read(tb[IFLA_VFINFO_LIST], !!tb[IFLA_NUM_VF],
                                         tb[IFLA_NUM_VF] ? nla_get_u32(tb[IFLA_NUM_VF]) : 0, vfs, n_max, &s.n_vfs);
                        if (r < 0)
                                return r;
                }
        }

        s.vfs = s.n_vfs > 0 ? TAKE_PTR(vfs) : NULL;
        *ret = s;
        return 0;
}

typedef struct StatsRead {
        int ifindex;
        NetdevStats one;
        bool seen;
} StatsRead;

static int on_link(struct nl_msg *msg, void *userdata) {
        StatsRead *rd = userdata;
        const struct nlmsghdr *h = nlmsg_hdr(msg);
        const struct ifinfomsg *ifi;

        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(*ifi)))
                return NL_SKIP;
        ifi = nlmsg_data(h);
        if (ifi->ifi_index != rd->ifindex || rd->seen)
                return NL_SKIP;
        rd->seen = true;
        return netdev_stats_parse(h, &rd->one) < 0 ? -EBADMSG : NL_OK;
}

int route_nl_read_stats(RouteNl *nl, int ifindex, NetdevStats *ret, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        StatsRead rd = { .ifindex = ifindex };
        int r;

        nl_error_clear(err);
        /* libnl asserts on an ifindex <= 0 without a name. The kernel would answer ENODEV. */
        if (ifindex <= 0)
                return -ENODEV;
        r = rtnl_link_build_get_request(ifindex, NULL, &msg);
        if (r < 0)
                return netlink_errno_from_nle(r);

        r = netlink_transact(route_nl_socket(nl), msg, on_link, &rd, err);
        if (r >= 0 && !rd.seen)
                r = -EBADMSG;
        if (r < 0) {
                netdev_stats_done(&rd.one);
                return r;
        }
        *ret = rd.one;
        return 0;
}

typedef struct StatsDump {
        NetdevStats *a;
        size_t n, allocated;
} StatsDump;

static int on_dumped_link(struct nl_msg *msg, void *userdata) {
        StatsDump *d = userdata;
        const struct nlmsghdr *h = nlmsg_hdr(msg);
        int r;

        if (h->nlmsg_type != RTM_NEWLINK)
                return NL_SKIP;
        if (d->n == d->allocated) {
                size_t m = d->allocated ? 2 * d->allocated : 16;
                NetdevStats *p = reallocarray(d->a, m, sizeof(*p));

                if (!p)
                        return -ENOMEM;
                d->a = p;
                d->allocated = m;
        }
        r = netdev_stats_parse(h, &d->a[d->n]);
        if (r < 0)
                return r;
        d->n++;
        return NL_OK;
}

static int netdev_stats_cmp(const void *a, const void *b) {
        int x = ((const NetdevStats *) a)->ifindex, y = ((const NetdevStats *) b)->ifindex;
        return (x > y) - (x < y);
}

int route_nl_dump_stats(RouteNl *nl, NetdevStats **ret, size_t *ret_n, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
        StatsDump d = {};
        int r;

        nl_error_clear(err);
        /* The dump has no IFLA_EXT_MASK and so no VF lists. A host with many VFs then does not make the dump big. */
        msg = nlmsg_alloc_simple(RTM_GETLINK, NLM_F_DUMP);
        if (!msg)
                return -ENOMEM;
        if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0)
                return -EMSGSIZE;

        r = netlink_transact(route_nl_socket(nl), msg, on_dumped_link, &d, err);
        if (r < 0) {
                netdev_stats_array_free(d.a, d.n);
                return r;
        }
        qsort_safe(d.a, d.n, sizeof(*d.a), netdev_stats_cmp);
        *ret = d.a;
        *ret_n = d.n;
        return 0;
}
