/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-ethtool.c — ethtool genl requests attribute by attribute, replies parsed, a veth in a netns (coalescing, features, channels) */

#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <poll.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/kernel/ethtool.h"
#include "test.h"

#define FAMILY 31       /* any id will do for messages that are never sent */
#define BIT(t) (1u << (t))
#define LEAVE_ALL { -1, -1, -1, -1 }

/* --- 1. Requests, parsed back with libnl. --- */

/* The genl header and the header nest; returns the parsed top-level attributes. */
static void check_request(struct nl_msg *msg, uint8_t cmd, int ifindex, uint32_t flags,
                          struct nlattr **tb, int maxtype) {
        static struct nla_policy hpol[ETHTOOL_A_HEADER_MAX + 1] = {
                [ETHTOOL_A_HEADER_DEV_INDEX] = { .type = NLA_U32 },
                [ETHTOOL_A_HEADER_FLAGS] = { .type = NLA_U32 },
        };
        struct nlmsghdr *h = nlmsg_hdr(msg);
        struct genlmsghdr *g;
        struct nlattr *htb[ETHTOOL_A_HEADER_MAX + 1], *a;
        unsigned n = 0;
        int rem;

        ASSERT_EQ(h->nlmsg_type, FAMILY);
        ASSERT(h->nlmsg_flags & NLM_F_REQUEST);
        ASSERT(!(h->nlmsg_flags & NLM_F_DUMP));
        ASSERT(genlmsg_valid_hdr(h, 0));
        g = nlmsg_data(h);
        ASSERT_EQ(g->cmd, cmd);
        ASSERT_EQ(g->version, ETHTOOL_GENL_VERSION);
        ASSERT_EQ(genlmsg_parse(h, 0, tb, maxtype, NULL), 0);

        /* Each ETHTOOL_A_*_HEADER is 1: the device by index, never by name. */
        ASSERT(tb[1]);
        ASSERT_EQ(nla_parse_nested(htb, ETHTOOL_A_HEADER_MAX, tb[1], hpol), 0);
        nla_for_each_nested(a, tb[1], rem)
                n++;
        ASSERT_EQ(rem, 0);
        ASSERT_EQ(n, flags ? 2 : 1);
        ASSERT(htb[ETHTOOL_A_HEADER_DEV_INDEX]);
        ASSERT_EQ(nla_len(htb[ETHTOOL_A_HEADER_DEV_INDEX]), 4);
        ASSERT_EQ(nla_get_u32(htb[ETHTOOL_A_HEADER_DEV_INDEX]), ifindex);
        ASSERT(!htb[ETHTOOL_A_HEADER_DEV_NAME]);
        if (flags) {
                ASSERT(htb[ETHTOOL_A_HEADER_FLAGS]);
                ASSERT_EQ(nla_get_u32(htb[ETHTOOL_A_HEADER_FLAGS]), flags);
        }
}

TEST(build_coalesce_set) {
        const struct {
                const char *name;
                CoalesceChange c;
                long expect[ETHTOOL_A_COALESCE_MAX + 1];        /* -1 = must be absent */
        } cases[] = {
                { "rx-usecs alone", { 50, -1, -1, -1, -1, -1 },
                  { [ETHTOOL_A_COALESCE_RX_USECS] = 50 } },
                { "zero is a value", { -1, 0, -1, 0, -1, -1 },
                  { [ETHTOOL_A_COALESCE_TX_USECS] = 0, [ETHTOOL_A_COALESCE_TX_MAX_FRAMES] = 0 } },
                { "everything", { 1, 2, 3, UINT32_MAX, 1, 0 },
                  { [ETHTOOL_A_COALESCE_RX_USECS] = 1, [ETHTOOL_A_COALESCE_TX_USECS] = 2,
                    [ETHTOOL_A_COALESCE_RX_MAX_FRAMES] = 3, [ETHTOOL_A_COALESCE_TX_MAX_FRAMES] = UINT32_MAX,
                    [ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX] = 1, [ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX] = 0 } },
                { "adaptive rx off", { -1, -1, -1, -1, 0, -1 },
                  { [ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX] = 0 } },
        };
        /* Which attributes each case carries: the designated ones above, all others absent. */
        const unsigned present[] = {
                BIT(ETHTOOL_A_COALESCE_RX_USECS),
                BIT(ETHTOOL_A_COALESCE_TX_USECS) | BIT(ETHTOOL_A_COALESCE_TX_MAX_FRAMES),
                BIT(ETHTOOL_A_COALESCE_RX_USECS) | BIT(ETHTOOL_A_COALESCE_TX_USECS) |
                        BIT(ETHTOOL_A_COALESCE_RX_MAX_FRAMES) | BIT(ETHTOOL_A_COALESCE_TX_MAX_FRAMES) |
                        BIT(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX) | BIT(ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX),
                BIT(ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX),
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
                struct nlattr *tb[ETHTOOL_A_COALESCE_MAX + 1], *a;
                unsigned seen = 0;
                int rem;

                fprintf(stderr, "   %s\n", cases[i].name);
                ASSERT_EQ(ethtool_build_coalesce_set(FAMILY, 7, &cases[i].c, &msg), 0);
                check_request(msg, ETHTOOL_MSG_COALESCE_SET, 7, 0, tb, ETHTOOL_A_COALESCE_MAX);

                nlmsg_for_each_attr(a, nlmsg_hdr(msg), GENL_HDRLEN, rem) {
                        int t = nla_type(a);

                        ASSERT(t <= ETHTOOL_A_COALESCE_MAX);
                        ASSERT(!(seen & BIT(t)));
                        seen |= BIT(t);
                        if (t == ETHTOOL_A_COALESCE_HEADER)
                                continue;
                        if (t == ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX || t == ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX) {
                                /* the kernel's policy: NLA_U8 */
                                ASSERT_EQ(nla_len(a), 1);
                                ASSERT_EQ(nla_get_u8(a), cases[i].expect[t]);
                        } else {
                                ASSERT_EQ(nla_len(a), 4);
                                ASSERT_EQ(nla_get_u32(a), cases[i].expect[t]);
                        }
                }
                ASSERT_EQ(rem, 0);
                ASSERT_EQ(seen, BIT(ETHTOOL_A_COALESCE_HEADER) | present[i]);
        }
}

TEST(build_coalesce_set_invalid) {
        const struct {
                const char *name;
                int family, ifindex;
                CoalesceChange c;
                int expect;
        } cases[] = {
                { "nothing asked", FAMILY, 1, COALESCE_CHANGE_NONE, -ENODATA },
                { "ifindex 0", FAMILY, 0, { 1, -1, -1, -1, -1, -1 }, -EINVAL },
                { "no family", 0, 1, { 1, -1, -1, -1, -1, -1 }, -EINVAL },
                { "below -1", FAMILY, 1, { -2, -1, -1, -1, -1, -1 }, -EINVAL },
                { "beyond u32", FAMILY, 1, { -1, -1, (long) UINT32_MAX + 1, -1, -1, -1 }, -EINVAL },
                { "adaptive 2", FAMILY, 1, { -1, -1, -1, -1, 2, -1 }, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                struct nl_msg *msg = NULL;

                fprintf(stderr, "   %s\n", cases[i].name);
                ASSERT_EQ(ethtool_build_coalesce_set(cases[i].family, cases[i].ifindex, &cases[i].c, &msg),
                          cases[i].expect);
                ASSERT(msg == NULL);
        }
}

TEST(build_channels_set) {
        const struct {
                const char *name;
                ChannelsChange c;
                long expect[ETHTOOL_A_CHANNELS_MAX + 1];        /* for the attributes in present */
                unsigned present;
        } cases[] = {
                { "combined alone", { -1, -1, 2 },
                  { [ETHTOOL_A_CHANNELS_COMBINED_COUNT] = 2 }, BIT(ETHTOOL_A_CHANNELS_COMBINED_COUNT) },
                { "rx and tx", { 3, 1, -1 },
                  { [ETHTOOL_A_CHANNELS_RX_COUNT] = 3, [ETHTOOL_A_CHANNELS_TX_COUNT] = 1 },
                  BIT(ETHTOOL_A_CHANNELS_RX_COUNT) | BIT(ETHTOOL_A_CHANNELS_TX_COUNT) },
                { "zero is a value, u32 max too", { 0, UINT32_MAX, 0 },
                  { [ETHTOOL_A_CHANNELS_RX_COUNT] = 0, [ETHTOOL_A_CHANNELS_TX_COUNT] = UINT32_MAX,
                    [ETHTOOL_A_CHANNELS_COMBINED_COUNT] = 0 },
                  BIT(ETHTOOL_A_CHANNELS_RX_COUNT) | BIT(ETHTOOL_A_CHANNELS_TX_COUNT) |
                          BIT(ETHTOOL_A_CHANNELS_COMBINED_COUNT) },
        };
        const struct {
                const char *name;
                int family, ifindex;
                ChannelsChange c;
                int expect;
        } bad[] = {
                { "nothing asked", FAMILY, 1, CHANNELS_CHANGE_NONE, -ENODATA },
                { "ifindex 0", FAMILY, 0, { 1, -1, -1 }, -EINVAL },
                { "no family", 0, 1, { 1, -1, -1 }, -EINVAL },
                { "below -1", FAMILY, 1, { -1, -2, -1 }, -EINVAL },
                { "beyond u32", FAMILY, 1, { -1, -1, (long) UINT32_MAX + 1 }, -EINVAL },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
                struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1], *a;
                unsigned seen = 0;
                int rem;

                fprintf(stderr, "   %s\n", cases[i].name);
                ASSERT_EQ(ethtool_build_channels_set(FAMILY, 9, &cases[i].c, &msg), 0);
                check_request(msg, ETHTOOL_MSG_CHANNELS_SET, 9, 0, tb, ETHTOOL_A_CHANNELS_MAX);
                nlmsg_for_each_attr(a, nlmsg_hdr(msg), GENL_HDRLEN, rem) {
                        int t = nla_type(a);

                        ASSERT(t <= ETHTOOL_A_CHANNELS_MAX);
                        ASSERT(!(seen & BIT(t)));
                        seen |= BIT(t);
                        if (t == ETHTOOL_A_CHANNELS_HEADER)
                                continue;
                        /* never a maximum, never "other" (sriovd leaves it to the driver) */
                        ASSERT(cases[i].present & BIT(t));
                        ASSERT_EQ(nla_len(a), 4);
                        ASSERT_EQ(nla_get_u32(a), cases[i].expect[t]);
                }
                ASSERT_EQ(rem, 0);
                ASSERT_EQ(seen, BIT(ETHTOOL_A_CHANNELS_HEADER) | cases[i].present);
        }
        for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
                struct nl_msg *msg = NULL;

                fprintf(stderr, "   %s\n", bad[i].name);
                ASSERT_EQ(ethtool_build_channels_set(bad[i].family, bad[i].ifindex, &bad[i].c, &msg), bad[i].expect);
                ASSERT(msg == NULL);
        }
}

/* The bits of a verbose bitset: name → 1 (VALUE flag) or 0, with only NAME and VALUE allowed. */
typedef struct Bit {
        char name[64];
        int value;
} Bit;

static size_t bits_of(struct nlattr *set, Bit *ret, size_t max) {
        struct nlattr *a, *b;
        size_t n = 0;
        unsigned seen = 0;
        int rem, rem2;

        nla_for_each_nested(a, set, rem) {
                /* only the list: no NOMASK (the list is the mask), no SIZE, no compact VALUE/MASK */
                ASSERT_EQ(nla_type(a), ETHTOOL_A_BITSET_BITS);
                ASSERT(!(seen & BIT(nla_type(a))));
                seen |= BIT(nla_type(a));
                nla_for_each_nested(b, a, rem2) {
                        struct nlattr *f;
                        int rem3;

                        ASSERT_EQ(nla_type(b), ETHTOOL_A_BITSET_BITS_BIT);
                        ASSERT(n < max);
                        ret[n] = (Bit) {};
                        nla_for_each_nested(f, b, rem3) {
                                if (nla_type(f) == ETHTOOL_A_BITSET_BIT_NAME) {
                                        ASSERT(ret[n].name[0] == 0);
                                        ASSERT(memchr(nla_data(f), 0, nla_len(f)));
                                        nla_strlcpy(ret[n].name, f, sizeof(ret[n].name));
                                } else {
                                        ASSERT_EQ(nla_type(f), ETHTOOL_A_BITSET_BIT_VALUE);
                                        ASSERT_EQ(nla_len(f), 0);
                                        ASSERT(!ret[n].value);
                                        ret[n].value = 1;
                                }
                        }
                        ASSERT(ret[n].name[0] != 0);
                        n++;
                }
        }
        ASSERT_EQ(seen, BIT(ETHTOOL_A_BITSET_BITS));
        return n;
}

TEST(build_features_set) {
        const struct {
                const char *name;
                int want[_OFFLOAD_MAX];
                Bit expect[8];
                size_t n;
        } cases[] = {
                { "gro off", { [OFFLOAD_TSO] = -1, [OFFLOAD_GSO] = -1, [OFFLOAD_GRO] = 0, [OFFLOAD_LRO] = -1 },
                  { { "rx-gro", 0 } }, 1 },
                { "tso on: both families", { 1, -1, -1, -1 },
                  { { "tx-tcp-segmentation", 1 }, { "tx-tcp6-segmentation", 1 } }, 2 },
                { "all four", { 0, 1, 1, 0 },
                  { { "tx-tcp-segmentation", 0 }, { "tx-tcp6-segmentation", 0 },
                    { "tx-generic-segmentation", 1 }, { "rx-gro", 1 }, { "rx-lro", 0 } }, 5 },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
                struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1], *a;
                Bit got[16];
                unsigned seen = 0;
                size_t n;
                int rem;

                fprintf(stderr, "   %s\n", cases[i].name);
                ASSERT_EQ(ethtool_build_features_set(FAMILY, 12, cases[i].want, &msg), 0);
                /* OMIT_REPLY: the setter reads back itself. */
                check_request(msg, ETHTOOL_MSG_FEATURES_SET, 12, ETHTOOL_FLAG_OMIT_REPLY, tb,
                              ETHTOOL_A_FEATURES_MAX);
                nlmsg_for_each_attr(a, nlmsg_hdr(msg), GENL_HDRLEN, rem) {
                        ASSERT(!(seen & BIT(nla_type(a))));
                        seen |= BIT(nla_type(a));
                }
                ASSERT_EQ(rem, 0);
                ASSERT_EQ(seen, BIT(ETHTOOL_A_FEATURES_HEADER) | BIT(ETHTOOL_A_FEATURES_WANTED));

                n = bits_of(tb[ETHTOOL_A_FEATURES_WANTED], got, ELEMENTSOF(got));
                ASSERT_EQ(n, cases[i].n);
                for (size_t j = 0; j < n; j++) {
                        ASSERT_STREQ(got[j].name, cases[i].expect[j].name);
                        ASSERT_EQ(got[j].value, cases[i].expect[j].value);
                }
        }

        /* invalid */
        struct nl_msg *msg = NULL;
        ASSERT_EQ(ethtool_build_features_set(FAMILY, 12, (int[]) LEAVE_ALL, &msg), -ENODATA);
        ASSERT_EQ(ethtool_build_features_set(FAMILY, 12, (int[]) { 2, -1, -1, -1 }, &msg), -EINVAL);
        ASSERT_EQ(ethtool_build_features_set(FAMILY, 12, (int[]) { -1, -2, -1, -1 }, &msg), -EINVAL);
        ASSERT_EQ(ethtool_build_features_set(FAMILY, -3, (int[]) { 1, -1, -1, -1 }, &msg), -EINVAL);
        ASSERT_EQ(ethtool_build_features_set(0, 12, (int[]) { 1, -1, -1, -1 }, &msg), -EINVAL);
        ASSERT(msg == NULL);

        ASSERT_STREQ(offload_feature_name(OFFLOAD_TSO), "tx-tcp-segmentation");
        ASSERT_STREQ(offload_feature_name(OFFLOAD_GSO), "tx-generic-segmentation");
        ASSERT_STREQ(offload_feature_name(OFFLOAD_GRO), "rx-gro");
        ASSERT_STREQ(offload_feature_name(OFFLOAD_LRO), "rx-lro");
        ASSERT(offload_feature_name(_OFFLOAD_MAX) == NULL);
}

/* --- 2. Replies as the kernel builds them, parsed. --- */

static struct nl_msg *reply_new(uint8_t cmd, int ifindex) {
        struct nl_msg *msg = nlmsg_alloc();
        struct nlattr *hdr;

        ASSERT(msg);
        ASSERT(genlmsg_put(msg, 0, 1, FAMILY, 0, 0, cmd, ETHTOOL_GENL_VERSION));
        hdr = nla_nest_start(msg, 1);
        ASSERT(hdr);
        ASSERT_EQ(nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, ifindex), 0);
        ASSERT_EQ(nla_put_string(msg, ETHTOOL_A_HEADER_DEV_NAME, "eth9"), 0);
        ASSERT_EQ(nla_nest_end(msg, hdr), 0);
        return msg;
}

TEST(parse_coalesce) {
        _cleanup_(nlmsg_freep) struct nl_msg *full = reply_new(ETHTOOL_MSG_COALESCE_GET_REPLY, 3);
        _cleanup_(nlmsg_freep) struct nl_msg *some = reply_new(ETHTOOL_MSG_COALESCE_NTF, 3);
        _cleanup_(nlmsg_freep) struct nl_msg *bad = reply_new(ETHTOOL_MSG_COALESCE_GET_REPLY, 3);
        _cleanup_(nlmsg_freep) struct nl_msg *other = reply_new(ETHTOOL_MSG_FEATURES_GET_REPLY, 3);
        Coalesce c;

        ASSERT_EQ(nla_put_u32(full, ETHTOOL_A_COALESCE_RX_USECS, 8), 0);
        ASSERT_EQ(nla_put_u32(full, ETHTOOL_A_COALESCE_RX_MAX_FRAMES, 128), 0);
        ASSERT_EQ(nla_put_u32(full, ETHTOOL_A_COALESCE_TX_USECS, UINT32_MAX), 0);
        ASSERT_EQ(nla_put_u32(full, ETHTOOL_A_COALESCE_TX_MAX_FRAMES, 0), 0);
        ASSERT_EQ(nla_put_u32(full, ETHTOOL_A_COALESCE_STATS_BLOCK_USECS, 9), 0); /* not ours */
        ASSERT_EQ(nla_put_u8(full, ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX, 1), 0);
        ASSERT_EQ(nla_put_u8(full, ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX, 0), 0);
        ASSERT_EQ(ethtool_coalesce_parse(nlmsg_hdr(full), &c), 0);
        ASSERT_EQ(c.rx_usecs, 8);
        ASSERT_EQ(c.rx_frames, 128);
        ASSERT_EQ(c.tx_usecs, UINT32_MAX);
        ASSERT_EQ(c.tx_frames, 0);
        ASSERT_EQ(c.adaptive_rx, 1);
        ASSERT_EQ(c.adaptive_tx, 0);

        /* what the driver lacks, the kernel leaves out */
        ASSERT_EQ(nla_put_u32(some, ETHTOOL_A_COALESCE_RX_USECS, 3), 0);
        ASSERT_EQ(ethtool_coalesce_parse(nlmsg_hdr(some), &c), 0);
        ASSERT_EQ(c.rx_usecs, 3);
        ASSERT_EQ(c.tx_usecs, -1);
        ASSERT_EQ(c.rx_frames, -1);
        ASSERT_EQ(c.tx_frames, -1);
        ASSERT_EQ(c.adaptive_rx, -1);
        ASSERT_EQ(c.adaptive_tx, -1);

        /* a u32 two bytes long; a reply of another kind */
        ASSERT_EQ(nla_put_u16(bad, ETHTOOL_A_COALESCE_RX_USECS, 3), 0);
        ASSERT_EQ(ethtool_coalesce_parse(nlmsg_hdr(bad), &c), -EBADMSG);
        ASSERT_EQ(ethtool_coalesce_parse(nlmsg_hdr(other), &c), -EBADMSG);
}

TEST(parse_channels) {
        _cleanup_(nlmsg_freep) struct nl_msg *combined = reply_new(ETHTOOL_MSG_CHANNELS_GET_REPLY, 4);
        _cleanup_(nlmsg_freep) struct nl_msg *split = reply_new(ETHTOOL_MSG_CHANNELS_NTF, 4);
        _cleanup_(nlmsg_freep) struct nl_msg *none = reply_new(ETHTOOL_MSG_CHANNELS_GET_REPLY, 4);
        _cleanup_(nlmsg_freep) struct nl_msg *bad = reply_new(ETHTOOL_MSG_CHANNELS_GET_REPLY, 4);
        _cleanup_(nlmsg_freep) struct nl_msg *wide = reply_new(ETHTOOL_MSG_CHANNELS_GET_REPLY, 4);
        _cleanup_(nlmsg_freep) struct nl_msg *other = reply_new(ETHTOOL_MSG_COALESCE_GET_REPLY, 4);
        Channels c;

        /* igb: combined only, plus one "other" (its link vector) */
        ASSERT_EQ(nla_put_u32(combined, ETHTOOL_A_CHANNELS_OTHER_MAX, 1), 0);
        ASSERT_EQ(nla_put_u32(combined, ETHTOOL_A_CHANNELS_OTHER_COUNT, 1), 0);
        ASSERT_EQ(nla_put_u32(combined, ETHTOOL_A_CHANNELS_COMBINED_MAX, 8), 0);
        ASSERT_EQ(nla_put_u32(combined, ETHTOOL_A_CHANNELS_COMBINED_COUNT, 4), 0);
        ASSERT_EQ(ethtool_channels_parse(nlmsg_hdr(combined), &c), 0);
        ASSERT_EQ(c.rx, -1);
        ASSERT_EQ(c.max_rx, 0);
        ASSERT_EQ(c.tx, -1);
        ASSERT_EQ(c.max_tx, 0);
        ASSERT_EQ(c.other, 1);
        ASSERT_EQ(c.max_other, 1);
        ASSERT_EQ(c.combined, 4);
        ASSERT_EQ(c.max_combined, 8);

        /* veth: rx and tx, the count may be 0 where the maximum is not */
        ASSERT_EQ(nla_put_u32(split, ETHTOOL_A_CHANNELS_RX_MAX, 4), 0);
        ASSERT_EQ(nla_put_u32(split, ETHTOOL_A_CHANNELS_TX_MAX, UINT32_MAX), 0);
        ASSERT_EQ(nla_put_u32(split, ETHTOOL_A_CHANNELS_RX_COUNT, 0), 0);
        ASSERT_EQ(nla_put_u32(split, ETHTOOL_A_CHANNELS_TX_COUNT, 3), 0);
        ASSERT_EQ(ethtool_channels_parse(nlmsg_hdr(split), &c), 0);
        ASSERT_EQ(c.rx, 0);
        ASSERT_EQ(c.max_rx, 4);
        ASSERT_EQ(c.tx, 3);
        ASSERT_EQ(c.max_tx, UINT32_MAX);
        ASSERT_EQ(c.other, -1);
        ASSERT_EQ(c.combined, -1);
        ASSERT_EQ(c.max_combined, 0);

        /* a driver with get_channels that reports nothing */
        ASSERT_EQ(ethtool_channels_parse(nlmsg_hdr(none), &c), 0);
        ASSERT_EQ(c.rx, -1);
        ASSERT_EQ(c.tx, -1);
        ASSERT_EQ(c.other, -1);
        ASSERT_EQ(c.combined, -1);
        ASSERT_EQ(c.max_rx + c.max_tx + c.max_other + c.max_combined, 0);

        /* a u32 two bytes long, one eight bytes long; a reply of another kind */
        ASSERT_EQ(nla_put_u16(bad, ETHTOOL_A_CHANNELS_COMBINED_MAX, 3), 0);
        ASSERT_EQ(ethtool_channels_parse(nlmsg_hdr(bad), &c), -EBADMSG);
        ASSERT_EQ(nla_put_u64(wide, ETHTOOL_A_CHANNELS_COMBINED_COUNT, 3), 0);
        ASSERT_EQ(ethtool_channels_parse(nlmsg_hdr(wide), &c), -EBADMSG);
        ASSERT_EQ(ethtool_channels_parse(nlmsg_hdr(other), &c), -EBADMSG);
}

/* A verbose bitset: with NOMASK the listed bits are the set ones, else VALUE marks them. */
static void put_bitset(struct nl_msg *msg, int type, bool nomask, const char *const *names,
                       const bool *values, size_t n) {
        struct nlattr *set = nla_nest_start(msg, type), *bits, *bit;

        ASSERT(set);
        if (nomask)
                ASSERT_EQ(nla_put_flag(msg, ETHTOOL_A_BITSET_NOMASK), 0);
        ASSERT_EQ(nla_put_u32(msg, ETHTOOL_A_BITSET_SIZE, 64), 0);
        bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS);
        for (size_t i = 0; i < n; i++) {
                bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT);
                ASSERT_EQ(nla_put_u32(msg, ETHTOOL_A_BITSET_BIT_INDEX, (uint32_t) i), 0);
                ASSERT_EQ(nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, names[i]), 0);
                if (values && values[i])
                        ASSERT_EQ(nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE), 0);
                nla_nest_end(msg, bit);
        }
        nla_nest_end(msg, bits);
        nla_nest_end(msg, set);
}

TEST(parse_features) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = reply_new(ETHTOOL_MSG_FEATURES_GET_REPLY, 4);
        _cleanup_(nlmsg_freep) struct nl_msg *compact = reply_new(ETHTOOL_MSG_FEATURES_GET_REPLY, 4);
        /* hw: what the user may change. tcp6 TSO is fixed on, LRO the device lacks. */
        const char *hw[] = { "tx-scatter-gather", "tx-tcp-segmentation", "tx-generic-segmentation",
                             "rx-gro", "netns-local" };
        const char *active[] = { "tx-tcp-segmentation", "tx-tcp6-segmentation", "rx-gro", "netns-local" };
        const char *nochange[] = { "netns-local", "vlan-challenged" };
        /* a masked list: the same "active" set in the other verbose form */
        const char *masked[] = { "tx-tcp-segmentation", "tx-tcp6-segmentation", "tx-generic-segmentation",
                                 "rx-gro", "rx-lro" };
        const bool masked_v[] = { true, true, false, true, false };
        Features f;

        put_bitset(msg, ETHTOOL_A_FEATURES_HW, true, hw, NULL, ELEMENTSOF(hw));
        put_bitset(msg, ETHTOOL_A_FEATURES_WANTED, true, active, NULL, ELEMENTSOF(active));
        put_bitset(msg, ETHTOOL_A_FEATURES_ACTIVE, true, active, NULL, ELEMENTSOF(active));
        put_bitset(msg, ETHTOOL_A_FEATURES_NOCHANGE, true, nochange, NULL, ELEMENTSOF(nochange));
        ASSERT_EQ(ethtool_features_parse(nlmsg_hdr(msg), &f), 0);
        ASSERT_EQ(f.active[OFFLOAD_TSO], 1);
        ASSERT_EQ(f.changeable[OFFLOAD_TSO], 0);        /* one half fixed on */
        ASSERT_EQ(f.active[OFFLOAD_GSO], 0);
        ASSERT_EQ(f.changeable[OFFLOAD_GSO], 1);
        ASSERT_EQ(f.active[OFFLOAD_GRO], 1);
        ASSERT_EQ(f.changeable[OFFLOAD_GRO], 1);
        ASSERT_EQ(f.active[OFFLOAD_LRO], -1);
        ASSERT_EQ(f.changeable[OFFLOAD_LRO], 0);

        /* compact bitsets have no names: refused (we never ask for them) */
        struct nlattr *set = nla_nest_start(compact, ETHTOOL_A_FEATURES_ACTIVE);
        uint32_t words[2] = { 0xffffffff, 0 };
        ASSERT_EQ(nla_put_u32(compact, ETHTOOL_A_BITSET_SIZE, 64), 0);
        ASSERT_EQ(nla_put(compact, ETHTOOL_A_BITSET_VALUE, sizeof(words), words), 0);
        nla_nest_end(compact, set);
        ASSERT_EQ(ethtool_features_parse(nlmsg_hdr(compact), &f), -EBADMSG);

        /* masked form; TSO half on reads as not on */
        _cleanup_(nlmsg_freep) struct nl_msg *m2 = reply_new(ETHTOOL_MSG_FEATURES_NTF, 4);
        const bool half[] = { true, false, false, true, false };
        put_bitset(m2, ETHTOOL_A_FEATURES_HW, false, masked, masked_v, ELEMENTSOF(masked));
        /* every bitset the kernel always sends must be there */
        ASSERT_EQ(ethtool_features_parse(nlmsg_hdr(m2), &f), -EBADMSG);
        put_bitset(m2, ETHTOOL_A_FEATURES_ACTIVE, false, masked, half, ELEMENTSOF(masked));
        ASSERT_EQ(ethtool_features_parse(nlmsg_hdr(m2), &f), -EBADMSG);
        put_bitset(m2, ETHTOOL_A_FEATURES_NOCHANGE, true, nochange, NULL, 0);
        ASSERT_EQ(ethtool_features_parse(nlmsg_hdr(m2), &f), 0);
        ASSERT_EQ(f.active[OFFLOAD_TSO], 0);
        ASSERT_EQ(f.changeable[OFFLOAD_TSO], 1);
        ASSERT_EQ(f.active[OFFLOAD_GSO], -1);   /* masked out of hw, not active */
        ASSERT_EQ(f.active[OFFLOAD_GRO], 1);
        ASSERT_EQ(f.active[OFFLOAD_LRO], -1);
}

/* --- 3. coalesce_diff --- */

TEST(diff) {
        const Coalesce cur = { .rx_usecs = 50, .tx_usecs = 0, .rx_frames = 64, .tx_frames = -1,
                               .adaptive_rx = 1, .adaptive_tx = -1 };
        const struct {
                const char *name;
                CoalesceChange want;
                unsigned n;
                CoalesceChange expect;
        } cases[] = {
                { "nothing asked", COALESCE_CHANGE_NONE, 0, COALESCE_CHANGE_NONE },
                { "all equal", { 50, 0, 64, -1, 1, -1 }, 0, COALESCE_CHANGE_NONE },
                { "rx-usecs differs", { 20, 0, 64, -1, 1, -1 }, 1, { 20, -1, -1, -1, -1, -1 } },
                { "zero vs nonzero", { 0, 10, -1, -1, -1, -1 }, 2, { 0, 10, -1, -1, -1, -1 } },
                { "absent counts as differing", { -1, -1, -1, 0, -1, 0 }, 2, { -1, -1, -1, 0, -1, 0 } },
                { "adaptive off", { -1, -1, -1, -1, 0, -1 }, 1, { -1, -1, -1, -1, 0, -1 } },
                { "every field", { 1, 1, 1, 1, 0, 1 }, 6, { 1, 1, 1, 1, 0, 1 } },
                { "several, equal ones left out", { 50, 5, 64, 8, 1, -1 }, 2, { -1, 5, -1, 8, -1, -1 } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const CoalesceChange *x = &cases[i].expect;
                CoalesceChange got;

                fprintf(stderr, "   %s\n", cases[i].name);
                memset(&got, 0xaa, sizeof(got));
                ASSERT_EQ(coalesce_diff(&cur, &cases[i].want, &got), cases[i].n);
                ASSERT_EQ(got.rx_usecs, x->rx_usecs);
                ASSERT_EQ(got.tx_usecs, x->tx_usecs);
                ASSERT_EQ(got.rx_frames, x->rx_frames);
                ASSERT_EQ(got.tx_frames, x->tx_frames);
                ASSERT_EQ(got.adaptive_rx, x->adaptive_rx);
                ASSERT_EQ(got.adaptive_tx, x->adaptive_tx);
                /* nothing to change builds nothing to send */
                if (cases[i].n == 0) {
                        struct nl_msg *m = NULL;
                        ASSERT_EQ(ethtool_build_coalesce_set(FAMILY, 1, &got, &m), -ENODATA);
                }
        }
}

/* --- 4. The real kernel, in a network namespace of our own. --- */

typedef struct Events {
        int ifindex[16];
        const char *what[16];
        size_t n;
} Events;

static void on_event(int ifindex, const char *what, void *userdata) {
        Events *ev = userdata;

        if (ev->n < ELEMENTSOF(ev->ifindex)) {
                ev->ifindex[ev->n] = ifindex;
                ev->what[ev->n] = what;
        }
        ev->n++;
}

/* Wait up to timeout_ms for the monitor to have something, and dispatch it. */
static void pump(EthtoolMonitor *m, int timeout_ms) {
        struct pollfd p = { .fd = ethtool_monitor_fd(m), .events = POLLIN };
        int r = poll(&p, 1, timeout_ms);

        ASSERT(r >= 0);
        ASSERT_EQ(ethtool_monitor_dispatch(m), 0);
}

/* Whether a notification of that kind for ifindex arrived. */
static bool saw(const Events *ev, int ifindex, const char *what) {
        for (size_t i = 0; i < ev->n && i < ELEMENTSOF(ev->ifindex); i++)
                if (ev->ifindex[i] == ifindex && streq(ev->what[i], what))
                        return true;
        return false;
}

static bool saw_features(const Events *ev, int ifindex) {
        return saw(ev, ifindex, "features");
}

static int veth_add(struct nl_sock *sk, const char *name, const char *peer_name) {
        struct rtnl_link *veth, *peer, *link = NULL;
        int ifindex;

        veth = rtnl_link_veth_alloc();
        ASSERT(veth);
        peer = rtnl_link_veth_get_peer(veth);
        rtnl_link_set_name(veth, name);
        rtnl_link_set_name(peer, peer_name);
        /* several queues, as real multi-queue NICs have (and as CHANNELS needs on veth) */
        rtnl_link_set_num_tx_queues(veth, 4);
        rtnl_link_set_num_rx_queues(veth, 4);
        rtnl_link_set_num_tx_queues(peer, 4);
        rtnl_link_set_num_rx_queues(peer, 4);
        ASSERT_EQ(rtnl_link_add(sk, veth, NLM_F_CREATE | NLM_F_EXCL), 0);
        rtnl_link_put(peer);
        rtnl_link_veth_release(veth);

        ASSERT_EQ(rtnl_link_get_kernel(sk, 0, name, &link), 0);
        ifindex = rtnl_link_get_ifindex(link);
        ASSERT_EQ(rtnl_link_get_num_tx_queues(link), 4);
        rtnl_link_put(link);
        ASSERT(ifindex > 0);
        return ifindex;
}

static void features_print(const char *when, const Features *f) {
        fprintf(stderr, "   features %s:", when);
        for (Offload o = 0; o < _OFFLOAD_MAX; o++)
                fprintf(stderr, " %s=%d%s", offload_feature_name(o), f->active[o],
                        f->changeable[o] ? "" : "[fixed]");
        fprintf(stderr, "\n");
}

static void assert_features_eq(const Features *a, const Features *b) {
        for (Offload o = 0; o < _OFFLOAD_MAX; o++) {
                ASSERT_EQ(a->active[o], b->active[o]);
                ASSERT_EQ(a->changeable[o], b->changeable[o]);
        }
}

static struct nl_sock *rtnl;    /* the test's own setup socket, in the namespace */
static int veth;                /* ifindex of the veth the kernel tests work on */

/* Test-side raw FEATURES requests, for features sriovd does not manage. */
typedef struct Lookup {
        const char *name;
        int active;
} Lookup;

static int on_features(struct nl_msg *msg, void *userdata) {
        Lookup *l = userdata;
        struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1], *a, *b, *f;
        int rem, rem2, rem3;

        ASSERT_EQ(genlmsg_parse(nlmsg_hdr(msg), 0, tb, ETHTOOL_A_FEATURES_MAX, NULL), 0);
        ASSERT(tb[ETHTOOL_A_FEATURES_ACTIVE]);
        l->active = 0;
        nla_for_each_nested(a, tb[ETHTOOL_A_FEATURES_ACTIVE], rem)
                if (nla_type(a) == ETHTOOL_A_BITSET_BITS)
                        nla_for_each_nested(b, a, rem2)
                                nla_for_each_nested(f, b, rem3)
                                        if (nla_type(f) == ETHTOOL_A_BITSET_BIT_NAME &&
                                            nla_strcmp(f, l->name) == 0)
                                                l->active = 1;
        return NL_OK;
}

static struct nl_msg *raw_request(int family, uint8_t cmd, int ifindex) {
        struct nl_msg *msg = nlmsg_alloc();
        struct nlattr *hdr;

        ASSERT(msg);
        ASSERT(genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, 0, cmd, ETHTOOL_GENL_VERSION));
        hdr = nla_nest_start(msg, 1);
        ASSERT_EQ(nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, ifindex), 0);
        nla_nest_end(msg, hdr);
        return msg;
}

/* Whether the kernel feature called name is active on ifindex (a verbose FEATURES_GET). */
static int raw_active(struct nl_sock *sk, int family, int ifindex, const char *name) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = raw_request(family, ETHTOOL_MSG_FEATURES_GET, ifindex);
        Lookup l = { .name = name, .active = -1 };

        ASSERT_EQ(netlink_transact(sk, msg, on_features, &l, NULL), 0);
        ASSERT(l.active >= 0);
        return l.active;
}

/* Switch one kernel feature by name, behind the module's back. */
static void raw_set(struct nl_sock *sk, int family, int ifindex, const char *name, bool on) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = raw_request(family, ETHTOOL_MSG_FEATURES_SET, ifindex);
        struct nlattr *set, *bits, *bit;

        set = nla_nest_start(msg, ETHTOOL_A_FEATURES_WANTED);
        bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS);
        bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT);
        ASSERT_EQ(nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, name), 0);
        if (on)
                ASSERT_EQ(nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE), 0);
        nla_nest_end(msg, bit);
        nla_nest_end(msg, bits);
        nla_nest_end(msg, set);
        ASSERT_EQ(netlink_transact(sk, msg, NULL, NULL, NULL), 0);
}

static void netns_setup(void) {
        /* The kernel tests are their own meson test (ethtool-kernel): where they cannot run it skips
         * as a whole, and the message tests above still count as run. */
        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root for a network namespace with a veth pair\n");
                exit(EXIT_TEST_SKIP);
        }
        if (unshare(CLONE_NEWNET) < 0) {
                fprintf(stderr, "SKIP: unshare(CLONE_NEWNET): %m\n");
                exit(EXIT_TEST_SKIP);
        }
        /* Test-side setup through libnl directly; only the module under test is checked for errno. */
        rtnl = nl_socket_alloc();
        ASSERT(rtnl);
        ASSERT_EQ(nl_connect(rtnl, NETLINK_ROUTE), 0);
        veth = veth_add(rtnl, "sriovd-e0", "sriovd-e1");
}

TEST(kernel_coalesce) {
        _cleanup_(ethtool_nl_freep) EthtoolNl *e = NULL;
        _cleanup_(nl_socket_freep) struct nl_sock *raw = NULL;
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        Coalesce c = { 7, 7, 7, 7, 7, 7 };
        CoalesceChange want = COALESCE_CHANGE_NONE;
        Features before, after;
        NlError err;
        int r;

        ASSERT_EQ(ethtool_nl_open(&e), 0);
        ASSERT(ethtool_nl_family(e) > 0);
        ASSERT_EQ(ethtool_features_get(e, veth, &before, &err), 0);

        /* veth has no coalescing ops: the kernel's own errno and text reach us. */
        r = ethtool_coalesce_get(e, veth, &c, &err);
        fprintf(stderr, "   veth COALESCE_GET: %d (%s), extack \"%s\"\n", r, strerror(-r), err.message);
        ASSERT_EQ(r, -EOPNOTSUPP);
        ASSERT_EQ(err.error, -EOPNOTSUPP);
        ASSERT(memchr(err.message, 0, sizeof(err.message)));
        ASSERT_EQ(c.rx_usecs, 7);       /* untouched on failure */

        /* The setter reads first, so that GET's answer is what stops it; nothing is sent. */
        want.rx_usecs = 50;
        r = ethtool_coalesce_set(e, veth, &want, &err);
        fprintf(stderr, "   veth coalesce_set rx-usecs 50: %d (%s), extack \"%s\"\n", r, strerror(-r), err.message);
        ASSERT_EQ(r, -EOPNOTSUPP);
        ASSERT_EQ(err.error, -EOPNOTSUPP);
        ASSERT_EQ(ethtool_nl_writes(e), 0);

        /* The SET itself, sent directly: what the kernel says to it. */
        ASSERT_EQ(netlink_socket_open(NETLINK_GENERIC, &raw), 0);
        ASSERT_EQ(ethtool_build_coalesce_set(ethtool_nl_family(e), veth, &want, &msg), 0);
        r = netlink_transact(raw, msg, NULL, NULL, &err);
        fprintf(stderr, "   veth COALESCE_SET: %d (%s), extack \"%s\"\n", r, strerror(-r), err.message);
        ASSERT_EQ(r, -EOPNOTSUPP);
        ASSERT_EQ(err.error, -EOPNOTSUPP);

        /* Nothing asked: nothing read, nothing sent. Out of range: refused before asking. */
        ASSERT_EQ(ethtool_coalesce_set(e, veth, &COALESCE_CHANGE_NONE, &err), 0);
        ASSERT_EQ(err.error, 0);
        want.rx_usecs = -5;
        ASSERT_EQ(ethtool_coalesce_set(e, veth, &want, &err), -EINVAL);
        ASSERT_EQ(ethtool_nl_writes(e), 0);

        /* ...and nothing else changed. */
        ASSERT_EQ(ethtool_features_get(e, veth, &after, &err), 0);
        assert_features_eq(&before, &after);
}

TEST(kernel_features) {
        _cleanup_(ethtool_nl_freep) EthtoolNl *e = NULL;
        _cleanup_(ethtool_monitor_freep) EthtoolMonitor *m = NULL;
        Events ev = {};
        Features f, orig;
        NlError err;
        unsigned long w;
        int r, gro;

        ASSERT_EQ(ethtool_nl_open(&e), 0);
        ASSERT_EQ(ethtool_monitor_new(on_event, &ev, &m), 0);

        ASSERT_EQ(ethtool_features_get(e, veth, &orig, &err), 0);
        ASSERT_EQ(err.error, 0);
        features_print("veth", &orig);
        /* veth: GSO_SOFTWARE and the soft features are changeable; it has no LRO. */
        for (Offload o = OFFLOAD_TSO; o <= OFFLOAD_GRO; o++) {
                ASSERT(orig.active[o] == 0 || orig.active[o] == 1);
                ASSERT_EQ(orig.changeable[o], 1);
        }
        ASSERT_EQ(orig.active[OFFLOAD_LRO], -1);
        ASSERT_EQ(orig.changeable[OFFLOAD_LRO], 0);
        gro = orig.active[OFFLOAD_GRO];

        /* GRO to the other state and back; each time 1, then 0 with nothing sent. */
        for (int step = 0; step < 2; step++) {
                int want[_OFFLOAD_MAX] = LEAVE_ALL;
                int target = step == 0 ? !gro : gro;

                want[OFFLOAD_GRO] = target;
                pump(m, 0);
                ev.n = 0;
                w = ethtool_nl_writes(e);
                r = ethtool_features_set(e, veth, want, &err);
                fprintf(stderr, "   GRO %d: %d, extack \"%s\"\n", target, r, err.message);
                ASSERT_EQ(r, 1);
                ASSERT_EQ(err.error, 0);
                ASSERT_EQ(ethtool_nl_writes(e), w + 1);
                ASSERT_EQ(ethtool_features_get(e, veth, &f, &err), 0);
                ASSERT_EQ(f.active[OFFLOAD_GRO], target);
                /* nothing else moved */
                for (Offload o = 0; o < _OFFLOAD_MAX; o++)
                        if (o != OFFLOAD_GRO)
                                ASSERT_EQ(f.active[o], orig.active[o]);

                /* The monitor saw it, for our veth. */
                for (int i = 0; i < 20 && !saw_features(&ev, veth); i++)
                        pump(m, 100);
                ASSERT(saw_features(&ev, veth));

                /* Again: already so, nothing sent, no notification. */
                ev.n = 0;
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 0);
                ASSERT_EQ(err.error, 0);
                ASSERT_EQ(ethtool_nl_writes(e), w + 1);
                pump(m, 100);
                ASSERT_EQ(ev.n, 0);
        }

        /*
         * TSO off and back on: both families together. The refinements we do not
         * write follow: the kernel drops ECN and mangleid TSO while TSO is off, and
         * brings them back with it.
         */
        {
                _cleanup_(nl_socket_freep) struct nl_sock *raw = NULL;
                int want[_OFFLOAD_MAX] = LEAVE_ALL, fam = ethtool_nl_family(e);
                const char *refinements[] = { "tx-tcp-ecn-segmentation", "tx-tcp-mangleid-segmentation" };
                int before[2];

                ASSERT_EQ(orig.active[OFFLOAD_TSO], 1);
                ASSERT_EQ(netlink_socket_open(NETLINK_GENERIC, &raw), 0);
                for (size_t i = 0; i < 2; i++) {
                        before[i] = raw_active(raw, fam, veth, refinements[i]);
                        fprintf(stderr, "   %s before: %d\n", refinements[i], before[i]);
                }

                want[OFFLOAD_TSO] = 0;
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 1);
                ASSERT_EQ(ethtool_features_get(e, veth, &f, &err), 0);
                ASSERT_EQ(f.active[OFFLOAD_TSO], 0);
                ASSERT_EQ(raw_active(raw, fam, veth, "tx-tcp-segmentation"), 0);
                ASSERT_EQ(raw_active(raw, fam, veth, "tx-tcp6-segmentation"), 0);
                for (size_t i = 0; i < 2; i++) {
                        int now = raw_active(raw, fam, veth, refinements[i]);
                        fprintf(stderr, "   %s with TSO off: %d\n", refinements[i], now);
                        ASSERT_EQ(now, 0);
                }
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 0);

                want[OFFLOAD_TSO] = 1;
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 1);
                for (size_t i = 0; i < 2; i++)
                        ASSERT_EQ(raw_active(raw, fam, veth, refinements[i]), before[i]);

                /*
                 * Accepted but not activated: TSO needs scatter-gather. The kernel
                 * keeps TSO wanted, so SG back on brings it back by itself.
                 */
                want[OFFLOAD_TSO] = 0;
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 1);
                raw_set(raw, fam, veth, "tx-scatter-gather", false);
                want[OFFLOAD_TSO] = 1;
                w = ethtool_nl_writes(e);
                r = ethtool_features_set(e, veth, want, &err);
                fprintf(stderr, "   TSO on without SG: %d (%s), extack \"%s\"\n", r, strerror(-r), err.message);
                ASSERT_EQ(r, -EIO);
                ASSERT_EQ(err.error, -EIO);
                ASSERT_EQ(ethtool_nl_writes(e), w + 1);
                raw_set(raw, fam, veth, "tx-scatter-gather", true);
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 0);
                ASSERT_EQ(ethtool_nl_writes(e), w + 1);
        }

        /* A feature the device lacks: on is refused without sending, off is already so. */
        {
                int want[_OFFLOAD_MAX] = LEAVE_ALL;
                w = ethtool_nl_writes(e);
                want[OFFLOAD_LRO] = 1;
                want[OFFLOAD_GRO] = !gro;       /* would be possible, but the request is all or nothing */
                r = ethtool_features_set(e, veth, want, &err);
                fprintf(stderr, "   LRO on: %d (%s)\n", r, strerror(-r));
                ASSERT_EQ(r, -EOPNOTSUPP);
                ASSERT_EQ(ethtool_nl_writes(e), w);
                ASSERT_EQ(ethtool_features_get(e, veth, &f, &err), 0);
                ASSERT_EQ(f.active[OFFLOAD_GRO], gro);
                want[OFFLOAD_LRO] = 0;
                want[OFFLOAD_GRO] = -1;
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), 0);
                ASSERT_EQ(ethtool_nl_writes(e), w);
                want[OFFLOAD_LRO] = 2;
                ASSERT_EQ(ethtool_features_set(e, veth, want, &err), -EINVAL);
        }

        ASSERT_EQ(ethtool_features_get(e, veth, &f, &err), 0);
        assert_features_eq(&orig, &f);
}

static void channels_print(const char *when, const Channels *c) {
        fprintf(stderr, "   channels %s: rx %ld/%ld tx %ld/%ld other %ld/%ld combined %ld/%ld\n", when, c->rx,
                c->max_rx, c->tx, c->max_tx, c->other, c->max_other, c->combined, c->max_combined);
}

TEST(kernel_channels) {
        _cleanup_(ethtool_nl_freep) EthtoolNl *e = NULL;
        _cleanup_(ethtool_monitor_freep) EthtoolMonitor *m = NULL;
        ChannelsChange want = CHANNELS_CHANGE_NONE;
        Events ev = {};
        Channels orig, c;
        unsigned long writes;
        NlError err;
        int r;

        ASSERT_EQ(ethtool_nl_open(&e), 0);
        ASSERT_EQ(ethtool_monitor_new(on_event, &ev, &m), 0);
        ASSERT_EQ(ethtool_channels_get(e, veth, &orig, &err), 0);
        channels_print("veth", &orig);
        /* veth: rx and tx up to the queues it was made with (4), no combined, no other */
        ASSERT_EQ(orig.max_rx, 4);
        ASSERT_EQ(orig.max_tx, 4);
        ASSERT_EQ(orig.max_combined, 0);
        ASSERT_EQ(orig.combined, -1);
        ASSERT(orig.rx >= 1 && orig.rx <= 4);
        ASSERT(orig.tx >= 1 && orig.tx <= 4);

        /* nothing asked, and what already is: nothing sent */
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), 0);
        want.rx = orig.rx;
        want.tx = orig.tx;
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), 0);
        ASSERT_EQ(ethtool_nl_writes(e), 0);

        want = (ChannelsChange) { .rx = 2, .tx = 3, .combined = -1 };
        r = ethtool_channels_set(e, veth, &want, &err);
        fprintf(stderr, "   set rx 2 tx 3: %d, extack \"%s\"\n", r, err.message);
        ASSERT_EQ(r, 1);
        ASSERT_EQ(ethtool_nl_writes(e), 1);
        ASSERT_EQ(ethtool_channels_get(e, veth, &c, &err), 0);
        channels_print("after", &c);
        ASSERT_EQ(c.rx, 2);
        ASSERT_EQ(c.tx, 3);
        ASSERT_EQ(c.max_rx, 4);
        /* the monitor saw it: a channel change behind sriovd's back is repaired at once */
        for (int i = 0; i < 20 && !saw(&ev, veth, "channels"); i++)
                pump(m, 100);
        ASSERT(saw(&ev, veth, "channels"));

        /* a second identical set: read, nothing sent, no notification */
        ev.n = 0;
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), 0);
        ASSERT_EQ(ethtool_nl_writes(e), 1);
        pump(m, 100);
        ASSERT_EQ(ev.n, 0);

        /* only what differs is sent, the rest stays */
        want = (ChannelsChange) { .rx = 2, .tx = 1, .combined = -1 };
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), 1);
        ASSERT_EQ(ethtool_channels_get(e, veth, &c, &err), 0);
        ASSERT_EQ(c.rx, 2);
        ASSERT_EQ(c.tx, 1);
        writes = ethtool_nl_writes(e);

        /* above the maximum, and a kind veth lacks: refused before anything is sent */
        want = (ChannelsChange) { .rx = 5, .tx = -1, .combined = -1 };
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), -EINVAL);
        want = (ChannelsChange) { .rx = -1, .tx = -1, .combined = 2 };
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), -EINVAL);
        /* 0 of a kind it lacks is what it has */
        want = (ChannelsChange) { .rx = -1, .tx = -1, .combined = 0 };
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), 0);
        want = (ChannelsChange) { .rx = -2, .tx = -1, .combined = -1 };
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), -EINVAL);
        ASSERT_EQ(ethtool_nl_writes(e), writes);

        /* What the kernel refuses itself comes back with its text: veth wants at least one rx queue. */
        want = (ChannelsChange) { .rx = 0, .tx = -1, .combined = -1 };
        r = ethtool_channels_set(e, veth, &want, &err);
        fprintf(stderr, "   set rx 0: %d (%s), extack \"%s\"\n", r, strerror(-r), err.message);
        ASSERT(r < 0);
        ASSERT_EQ(err.error, r);
        ASSERT_EQ(ethtool_nl_writes(e), writes + 1);

        /* back as it was */
        want = (ChannelsChange) { .rx = orig.rx, .tx = orig.tx, .combined = -1 };
        ASSERT_EQ(ethtool_channels_set(e, veth, &want, &err), 1);
        ASSERT_EQ(ethtool_channels_get(e, veth, &c, &err), 0);
        ASSERT_EQ(c.rx, orig.rx);
        ASSERT_EQ(c.tx, orig.tx);

        /* no such device */
        ASSERT_EQ(ethtool_channels_get(e, 999999, &c, &err), -ENODEV);
        want.rx = 1;
        ASSERT_EQ(ethtool_channels_set(e, 999999, &want, &err), -ENODEV);
        ASSERT_EQ(ethtool_channels_get(e, 0, &c, &err), -ENODEV);
}

TEST(kernel_nodev) {
        _cleanup_(ethtool_nl_freep) EthtoolNl *e = NULL;
        CoalesceChange cc = COALESCE_CHANGE_NONE;
        int want[_OFFLOAD_MAX] = LEAVE_ALL;
        Coalesce c;
        Features f;
        NlError err;
        int r;

        ASSERT_EQ(ethtool_nl_open(&e), 0);
        cc.rx_usecs = 10;
        want[OFFLOAD_GRO] = 0;

        /* A fresh namespace has lo and our two veths. */
        r = ethtool_features_get(e, 999999, &f, &err);
        fprintf(stderr, "   FEATURES_GET ifindex 999999: %d, extack \"%s\"\n", r, err.message);
        ASSERT_EQ(r, -ENODEV);
        ASSERT_EQ(err.error, -ENODEV);
        r = ethtool_coalesce_get(e, 999999, &c, &err);
        ASSERT_EQ(r, -ENODEV);
        ASSERT_EQ(err.error, -ENODEV);
        ASSERT_EQ(ethtool_coalesce_set(e, 999999, &cc, &err), -ENODEV);
        ASSERT_EQ(ethtool_features_set(e, 999999, want, &err), -ENODEV);
        ASSERT_EQ(ethtool_features_get(e, 0, &f, &err), -ENODEV);
        ASSERT_EQ(ethtool_coalesce_get(e, -1, &c, &err), -ENODEV);
        ASSERT_EQ(ethtool_nl_writes(e), 0);

        /* lo: features work there too (nothing sriovd changes) */
        ASSERT_EQ(ethtool_features_get(e, 1, &f, &err), 0);
        features_print("lo", &f);
}

int main(int argc, char **argv) {
        /* "kernel": the tests against the kernel's ethtool netlink, in the one network namespace
         * made here (exit 77 if it cannot be). */
        if (argc > 1 && strcmp(argv[1], "kernel") == 0) {
                netns_setup();
                RUN(kernel_coalesce);
                RUN(kernel_features);
                RUN(kernel_channels);
                RUN(kernel_nodev);
                nl_socket_free(rtnl);
                return 0;
        }
        RUN(build_coalesce_set);
        RUN(build_coalesce_set_invalid);
        RUN(build_features_set);
        RUN(build_channels_set);
        RUN(parse_coalesce);
        RUN(parse_channels);
        RUN(parse_features);
        RUN(diff);
        return 0;
}
