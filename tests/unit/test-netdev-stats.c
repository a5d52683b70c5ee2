/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-netdev-stats.c — IFLA_STATS64 and IFLA_VF_STATS parsed from built messages, and read across a veth in a netns */

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sriovd/kernel/netdev-stats.h"
#include "test.h"

#define ALL_VF (VF_COUNTER_RX_PACKETS | VF_COUNTER_TX_PACKETS | VF_COUNTER_RX_BYTES | VF_COUNTER_TX_BYTES | \
                VF_COUNTER_RX_DROPPED | VF_COUNTER_TX_DROPPED | VF_COUNTER_BROADCAST | VF_COUNTER_MULTICAST)
#define ALL_STATS64 (ALL_VF & ~(unsigned) VF_COUNTER_BROADCAST)

/* --- 1. Messages shaped as the kernel's rtnl_fill_ifinfo() / rtnl_fill_vfinfo() write them. --- */

enum { STATS_ALL, STATS_NO_DROPS, STATS_NONE };

static struct nl_msg *new_link(int ifindex, const char *name) {
        struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
        struct ifinfomsg ifi = { .ifi_index = ifindex };

        ASSERT(msg);
        ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
        if (name)
                ASSERT_EQ(nla_put_string(msg, IFLA_IFNAME, name), 0);
        return msg;
}

/* Counter a of VF vf: distinct everywhere, so a field read from the wrong place shows. */
static uint64_t vf_value(uint32_t vf, int a) {
        return 1000000ull * (vf + 1) + 1000ull * (unsigned) a + 7;
}

static void put_vf(struct nl_msg *msg, uint32_t vf, int stats, bool mac) {
        struct nlattr *info = nla_nest_start(msg, IFLA_VF_INFO), *nest;
        struct ifla_vf_mac m = { .vf = vf, .mac = { 0x02, 0xaa, 0, 0, (uint8_t) (vf >> 8), (uint8_t) vf } };
        struct ifla_vf_spoofchk sc = { .vf = vf, .setting = 1 };

        ASSERT(info);
        if (mac)
                ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(m), &m), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_SPOOFCHK, sizeof(sc), &sc), 0);
        if (stats != STATS_NONE) {
                nest = nla_nest_start(msg, IFLA_VF_STATS);
                ASSERT(nest);
                for (int a = IFLA_VF_STATS_RX_PACKETS; a <= IFLA_VF_STATS_TX_DROPPED; a++) {
                        if (a == IFLA_VF_STATS_PAD) {
                                /* nla_put_u64_64bit()'s alignment pad: an attribute to skip */
                                ASSERT_EQ(nla_put(msg, IFLA_VF_STATS_PAD, 0, NULL), 0);
                                continue;
                        }
                        if (stats == STATS_NO_DROPS && a > IFLA_VF_STATS_PAD)
                                break;
                        ASSERT_EQ(nla_put_u64(msg, a, vf_value(vf, a)), 0);
                }
                ASSERT_EQ(nla_nest_end(msg, nest), 0);
        }
        ASSERT_EQ(nla_nest_end(msg, info), 0);
}

static void put_stats64(struct nl_msg *msg, size_t len) {
        struct rtnl_link_stats64 s = {
                .rx_packets = 11, .tx_packets = 12, .rx_bytes = 13, .tx_bytes = 14, .rx_errors = 99,
                .tx_errors = 98, .rx_dropped = 17, .tx_dropped = 18, .multicast = 19, .collisions = 97,
        };
        ASSERT(len <= sizeof(s));
        ASSERT_EQ(nla_put(msg, IFLA_STATS64, (int) len, &s), 0);
}

TEST(parse_pf) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(9, "pf0");
        /* out of order, as ndo_get_vf_config() failures leave gaps (VF 4 is missing) */
        const struct { uint32_t vf; int stats; } vfs[] = {
                { 3, STATS_ALL }, { 0, STATS_ALL }, { 5, STATS_NO_DROPS }, { 1, STATS_NONE }, { 2, STATS_ALL },
        };
        NetdevStats s;
        struct nlattr *list;

        ASSERT_EQ(nla_put_u32(msg, IFLA_MTU, 1500), 0);
        put_stats64(msg, sizeof(struct rtnl_link_stats64));
        ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, 6), 0);
        list = nla_nest_start(msg, IFLA_VFINFO_LIST);
        for (size_t i = 0; i < ELEMENTSOF(vfs); i++)
                put_vf(msg, vfs[i].vf, vfs[i].stats, true);
        ASSERT_EQ(nla_nest_end(msg, list), 0);

        ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), 0);
        ASSERT_EQ(s.ifindex, 9);
        ASSERT_STREQ(s.ifname, "pf0");
        ASSERT_EQ(s.netdev.have, ALL_STATS64);
        ASSERT_EQ(s.netdev.rx_packets, 11);
        ASSERT_EQ(s.netdev.tx_packets, 12);
        ASSERT_EQ(s.netdev.rx_bytes, 13);
        ASSERT_EQ(s.netdev.tx_bytes, 14);
        ASSERT_EQ(s.netdev.rx_dropped, 17);
        ASSERT_EQ(s.netdev.tx_dropped, 18);
        ASSERT_EQ(s.netdev.multicast, 19);
        ASSERT_EQ(s.netdev.broadcast, 0);

        ASSERT_EQ(s.n_vfs, 5);
        for (size_t i = 0; i < s.n_vfs; i++) {
                const VfCounters *c = &s.vfs[i].counters;
                unsigned vf = s.vfs[i].vf;

                fprintf(stderr, "   VF %u: have 0x%x rx %llu tx %llu drops %llu/%llu\n", vf, c->have,
                        (unsigned long long) c->rx_packets, (unsigned long long) c->tx_packets,
                        (unsigned long long) c->rx_dropped, (unsigned long long) c->tx_dropped);
                ASSERT_EQ(vf, (unsigned) (i < 4 ? i : 5));
                if (vf == 1) {
                        ASSERT_EQ(c->have, 0);
                        ASSERT_EQ(c->rx_packets, 0);
                        continue;
                }
                ASSERT_EQ(c->rx_packets, vf_value(vf, IFLA_VF_STATS_RX_PACKETS));
                ASSERT_EQ(c->tx_packets, vf_value(vf, IFLA_VF_STATS_TX_PACKETS));
                ASSERT_EQ(c->rx_bytes, vf_value(vf, IFLA_VF_STATS_RX_BYTES));
                ASSERT_EQ(c->tx_bytes, vf_value(vf, IFLA_VF_STATS_TX_BYTES));
                ASSERT_EQ(c->broadcast, vf_value(vf, IFLA_VF_STATS_BROADCAST));
                ASSERT_EQ(c->multicast, vf_value(vf, IFLA_VF_STATS_MULTICAST));
                if (vf == 5) {
                        /* a kernel before 4.20: no drop counters, "not available", not 0 drops */
                        ASSERT_EQ(c->have, ALL_VF & ~(unsigned) (VF_COUNTER_RX_DROPPED | VF_COUNTER_TX_DROPPED));
                        ASSERT_EQ(c->rx_dropped, 0);
                } else {
                        ASSERT_EQ(c->have, ALL_VF);
                        ASSERT_EQ(c->rx_dropped, vf_value(vf, IFLA_VF_STATS_RX_DROPPED));
                        ASSERT_EQ(c->tx_dropped, vf_value(vf, IFLA_VF_STATS_TX_DROPPED));
                }
        }
        netdev_stats_done(&s);
        ASSERT(s.vfs == NULL && s.n_vfs == 0);
        netdev_stats_done(&s);
}

TEST(parse_none) {
        NetdevStats s;

        /* No stats at all, no VF list: nothing available, no error. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "lo");
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), 0);
                ASSERT_EQ(s.netdev.have, 0);
                ASSERT_EQ(s.n_vfs, 0);
                ASSERT(s.vfs == NULL);
        }
        /* An old kernel's shorter rtnl_link_stats64 (23 counters, before rx_nohandler) reads. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(2, NULL);
                put_stats64(msg, 23 * sizeof(uint64_t));
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), 0);
                ASSERT_EQ(s.netdev.have, ALL_STATS64);
                ASSERT_EQ(s.netdev.multicast, 19);
                ASSERT_STREQ(s.ifname, "");
        }
        /* IFLA_NUM_VF 0 and an empty list: a PF with its VFs off. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(3, "pf1");
                struct nlattr *list;

                ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, 0), 0);
                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                ASSERT_EQ(nla_put(msg, IFLA_VFINFO_LIST, 0, NULL), 0);  /* keeps nla_nest_end from dropping it */
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), 0);
                ASSERT_EQ(s.n_vfs, 0);
        }
}

TEST(parse_bad) {
        NetdevStats s = { .ifindex = 12345 };
        struct nlattr *list;

        /* Not an RTM_NEWLINK. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                nlmsg_hdr(msg)->nlmsg_type = RTM_DELLINK;
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        /* IFLA_STATS64 cut before multicast. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                put_stats64(msg, 8 * sizeof(uint64_t));
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        /* A VF without IFLA_VF_MAC: no index to put its counters under. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                put_vf(msg, 0, STATS_ALL, true);
                put_vf(msg, 1, STATS_ALL, false);
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        /* The same VF twice; a VF beyond IFLA_NUM_VF. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                put_vf(msg, 1, STATS_ALL, true);
                put_vf(msg, 0, STATS_ALL, true);
                put_vf(msg, 1, STATS_NO_DROPS, true);
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, 2), 0);
                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                put_vf(msg, 2, STATS_ALL, true);
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        /* A counter of 4 bytes, not 8. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                struct ifla_vf_mac m = { .vf = 0 };
                struct nlattr *info, *nest;

                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                info = nla_nest_start(msg, IFLA_VF_INFO);
                ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(m), &m), 0);
                nest = nla_nest_start(msg, IFLA_VF_STATS);
                ASSERT_EQ(nla_put_u32(msg, IFLA_VF_STATS_RX_PACKETS, 5), 0);
                ASSERT_EQ(nla_nest_end(msg, nest), 0);
                ASSERT_EQ(nla_nest_end(msg, info), 0);
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        /* A short IFLA_VF_MAC. */
        {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = new_link(1, "x");
                struct nlattr *info;
                uint32_t vf = 0;

                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                info = nla_nest_start(msg, IFLA_VF_INFO);
                ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(vf), &vf), 0);
                ASSERT_EQ(nla_nest_end(msg, info), 0);
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(netdev_stats_parse(nlmsg_hdr(msg), &s), -EBADMSG);
        }
        /* Untouched on failure. */
        ASSERT_EQ(s.ifindex, 12345);
}

/* What the sampler will do with two reads: rates, with "not available" carried through. */
TEST(rates_have) {
        VfCounters a = { .rx_packets = 100, .rx_dropped = 0, .have = ALL_VF & ~(unsigned) VF_COUNTER_TX_DROPPED };
        VfCounters b = { .rx_packets = 600, .rx_dropped = 5, .have = ALL_VF };
        VfRates r;

        ASSERT_EQ(vf_counters_rates(&a, &b, 5000000, &r), 0);
        ASSERT(r.rx_packets == 100.0);
        ASSERT(r.rx_dropped == 1.0);
        ASSERT_EQ(r.have, a.have);
        ASSERT(!(r.have & VF_COUNTER_TX_DROPPED));
}

/* --- 2. The real kernel: a veth pair in a network namespace of our own, frames sent across it. --- */

#define FRAMES 500
#define FRAME_LEN 120

static int ifindex_of(struct nl_sock *sk, const char *name) {
        struct rtnl_link *link = NULL;
        int ifindex;

        ASSERT_EQ(rtnl_link_get_kernel(sk, 0, name, &link), 0);
        ifindex = rtnl_link_get_ifindex(link);
        rtnl_link_put(link);
        ASSERT(ifindex > 0);
        return ifindex;
}

static void link_up(struct nl_sock *sk, int ifindex) {
        struct rtnl_link *orig = NULL, *change = rtnl_link_alloc();

        ASSERT(change);
        ASSERT_EQ(rtnl_link_get_kernel(sk, ifindex, NULL, &orig), 0);
        rtnl_link_set_flags(change, IFF_UP);
        ASSERT_EQ(rtnl_link_change(sk, orig, change, 0), 0);
        rtnl_link_put(orig);
        rtnl_link_put(change);
}

/* n broadcast frames of len bytes out of ifindex through a packet socket: what veth counts is what went. */
static void send_frames(int ifindex, unsigned n, size_t len) {
        uint8_t frame[1514] = {};
        struct sockaddr_ll to = { .sll_family = AF_PACKET, .sll_ifindex = ifindex, .sll_halen = ETH_ALEN };
        int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

        ASSERT(fd >= 0);
        ASSERT(len <= sizeof(frame));
        memset(frame, 0xff, ETH_ALEN);                          /* broadcast */
        memcpy(frame + ETH_ALEN, (uint8_t[]) { 0x02, 0, 0, 0, 0, 1 }, ETH_ALEN);
        frame[12] = 0x88, frame[13] = 0xb5;                     /* IEEE local experimental EtherType */
        memset(to.sll_addr, 0xff, ETH_ALEN);
        for (unsigned i = 0; i < n; i++)
                ASSERT_EQ(sendto(fd, frame, len, 0, (struct sockaddr *) &to, sizeof(to)), (ssize_t) len);
        close(fd);
}

static const NetdevStats *find(const NetdevStats *a, size_t n, int ifindex) {
        for (size_t i = 0; i < n; i++)
                if (a[i].ifindex == ifindex)
                        return &a[i];
        return NULL;
}

static void check_libnl_agrees(struct nl_sock *sk, int ifindex, const VfCounters *c) {
        struct rtnl_link *link = NULL;

        ASSERT_EQ(rtnl_link_get_kernel(sk, ifindex, NULL, &link), 0);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_RX_PACKETS), c->rx_packets);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_TX_PACKETS), c->tx_packets);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_RX_BYTES), c->rx_bytes);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_TX_BYTES), c->tx_bytes);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_RX_DROPPED), c->rx_dropped);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_TX_DROPPED), c->tx_dropped);
        ASSERT_EQ(rtnl_link_get_stat(link, RTNL_LINK_MULTICAST), c->multicast);
        rtnl_link_put(link);
}

TEST(kernel_veth) {
        _cleanup_(route_nl_freep) RouteNl *nl = NULL;
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        NetdevStats b0, b1, a0, a1, *all = NULL;
        size_t n_all = 0;
        NlError e;
        int v0, v1;

        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root for a network namespace with a veth pair\n");
                exit(EXIT_TEST_SKIP);
        }
        if (unshare(CLONE_NEWNET) < 0) {
                fprintf(stderr, "SKIP: unshare(CLONE_NEWNET): %m\n");
                exit(EXIT_TEST_SKIP);
        }
        sk = nl_socket_alloc();
        ASSERT(sk);
        ASSERT_EQ(nl_connect(sk, NETLINK_ROUTE), 0);
        ASSERT_EQ(rtnl_link_veth_add(sk, "sriovd-s0", "sriovd-s1", getpid()), 0);
        v0 = ifindex_of(sk, "sriovd-s0");
        v1 = ifindex_of(sk, "sriovd-s1");
        link_up(sk, v0);
        link_up(sk, v1);
        ASSERT_EQ(route_nl_open(&nl), 0);

        ASSERT_EQ(route_nl_read_stats(nl, v0, &b0, &e), 0);
        ASSERT_EQ(route_nl_read_stats(nl, v1, &b1, &e), 0);
        ASSERT_STREQ(b0.ifname, "sriovd-s0");
        ASSERT_EQ(b0.ifindex, v0);
        ASSERT_EQ(b0.netdev.have, ALL_STATS64);
        /* veth has no VFs: an empty list, no error */
        ASSERT_EQ(b0.n_vfs, 0);

        send_frames(v0, FRAMES, FRAME_LEN);

        ASSERT_EQ(route_nl_read_stats(nl, v0, &a0, &e), 0);
        ASSERT_EQ(route_nl_read_stats(nl, v1, &a1, &e), 0);
        fprintf(stderr, "   %d frames of %d bytes s0 -> s1: s0 tx %llu -> %llu packets, %llu -> %llu bytes; "
                "s1 rx %llu -> %llu packets, %llu -> %llu bytes, multicast %llu -> %llu\n", FRAMES, FRAME_LEN,
                (unsigned long long) b0.netdev.tx_packets, (unsigned long long) a0.netdev.tx_packets,
                (unsigned long long) b0.netdev.tx_bytes, (unsigned long long) a0.netdev.tx_bytes,
                (unsigned long long) b1.netdev.rx_packets, (unsigned long long) a1.netdev.rx_packets,
                (unsigned long long) b1.netdev.rx_bytes, (unsigned long long) a1.netdev.rx_bytes,
                (unsigned long long) b1.netdev.multicast, (unsigned long long) a1.netdev.multicast);
        /* ≥, not =: the kernel's own IPv6 DAD/router solicitations on a fresh link may go too. */
        ASSERT(a0.netdev.tx_packets - b0.netdev.tx_packets >= FRAMES);
        ASSERT(a0.netdev.tx_bytes - b0.netdev.tx_bytes >= (uint64_t) FRAMES * FRAME_LEN);
        ASSERT(a1.netdev.rx_packets - b1.netdev.rx_packets >= FRAMES);
        ASSERT(a1.netdev.rx_bytes - b1.netdev.rx_bytes >= (uint64_t) FRAMES * (FRAME_LEN - ETH_HLEN));
        /* and not wildly more: the frames are what moved the counters */
        ASSERT(a0.netdev.tx_packets - b0.netdev.tx_packets < FRAMES + 50);
        ASSERT(a1.netdev.rx_packets - b1.netdev.rx_packets < FRAMES + 50);
        /*
         * No protocol handler takes EtherType 0x88b5: the stack drops each frame s1 received and
         * counts it in rx_dropped (__netif_receive_skb_core()). The drop counter, read for real.
         */
        fprintf(stderr, "   s1 rx_dropped %llu -> %llu, s0 tx_dropped %llu -> %llu\n",
                (unsigned long long) b1.netdev.rx_dropped, (unsigned long long) a1.netdev.rx_dropped,
                (unsigned long long) b0.netdev.tx_dropped, (unsigned long long) a0.netdev.tx_dropped);
        ASSERT(a1.netdev.rx_dropped - b1.netdev.rx_dropped >= FRAMES);
        ASSERT(a1.netdev.rx_dropped - b1.netdev.rx_dropped < FRAMES + 50);
        ASSERT_EQ(a0.netdev.tx_dropped, b0.netdev.tx_dropped);

        /* One dump: every link of the namespace, sorted, the same counters (nothing sent since). */
        ASSERT_EQ(route_nl_dump_stats(nl, &all, &n_all, &e), 0);
        ASSERT_EQ(n_all, 3);
        ASSERT_EQ(all[0].ifindex, 1);
        ASSERT_STREQ(all[0].ifname, "lo");
        ASSERT(find(all, n_all, v0) && find(all, n_all, v1));
        ASSERT(all[0].ifindex < all[1].ifindex && all[1].ifindex < all[2].ifindex);
        for (size_t i = 0; i < n_all; i++)
                ASSERT(all[i].vfs == NULL && all[i].netdev.have == ALL_STATS64);
        ASSERT(find(all, n_all, v0)->netdev.tx_packets >= a0.netdev.tx_packets);
        ASSERT(find(all, n_all, v1)->netdev.rx_packets >= a1.netdev.rx_packets);

        /* libnl's own reader of the link object, independently, says the same. */
        netdev_stats_done(&a1);
        ASSERT_EQ(route_nl_read_stats(nl, v1, &a1, &e), 0);
        check_libnl_agrees(sk, v1, &a1.netdev);

        /* The kernel's errors. */
        ASSERT_EQ(route_nl_read_stats(nl, 999999, &a0, &e), -ENODEV);
        ASSERT_EQ(e.error, -ENODEV);
        ASSERT_EQ(route_nl_read_stats(nl, 0, &a0, &e), -ENODEV);

        netdev_stats_array_free(all, n_all);
        netdev_stats_done(&b0);
        netdev_stats_done(&b1);
        netdev_stats_done(&a1);
}

int main(int argc, char **argv) {
        /* "kernel": the veth test alone, in a network namespace; may skip (77). */
        if (argc > 1 && strcmp(argv[1], "kernel") == 0) {
                RUN(kernel_veth);
                return 0;
        }
        RUN(parse_pf);
        RUN(parse_none);
        RUN(parse_bad);
        RUN(rates_have);
        return 0;
}
