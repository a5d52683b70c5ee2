/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ethtool.c — reads and sets coalescing, offload features and RSS channels by ifindex over ethtool generic netlink */

#include <assert.h>
#include <limits.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "sriovd/kernel/ethtool.h"

struct EthtoolNl {
        struct nl_sock *sk;
        int family;
        unsigned long writes;
};

/* --- Offloads and the kernel features behind them --- */

/* These are all the kernel features that sriovd reads or writes. Each Offload owns one or more of them, in this order. */
static const struct {
        Offload offload;
        const char *name;
} feature_bits[] = {
        { OFFLOAD_TSO, "tx-tcp-segmentation" },
        { OFFLOAD_TSO, "tx-tcp6-segmentation" },
        { OFFLOAD_GSO, "tx-generic-segmentation" },
        { OFFLOAD_GRO, "rx-gro" },
        { OFFLOAD_LRO, "rx-lro" },
};
#define N_FEATURE_BITS ELEMENTSOF(feature_bits)

/* One kernel feature, as FEATURES_GET describes it. */
typedef struct FeatureBit {
        bool hw, active, nochange;
} FeatureBit;

static bool feature_changeable(const FeatureBit *b) {
        return b->hw && !b->nochange;
}

static bool feature_present(const FeatureBit *b) {
        return b->active || feature_changeable(b);
}

const char *offload_feature_name(Offload o) {
        for (size_t i = 0; i < N_FEATURE_BITS; i++)
                if (feature_bits[i].offload == o)
                        return feature_bits[i].name;
        return NULL;
}

/* --- Coalescing fields and their attributes, in the order of inventory.h and coalesce_field_get/set --- */

static const uint16_t coalesce_attrs[COALESCE_N_FIELDS] = {
        ETHTOOL_A_COALESCE_RX_USECS,         ETHTOOL_A_COALESCE_TX_USECS,
        ETHTOOL_A_COALESCE_RX_MAX_FRAMES,    ETHTOOL_A_COALESCE_TX_MAX_FRAMES,
        ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX,  ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX,
};

#define field_get coalesce_field_get
#define field_set coalesce_field_set

static bool field_valid(size_t i, long v) {
        if (v == -1)
                return true;
        if (coalesce_field_is_flag(i))
                return v == 0 || v == 1;
        return v >= 0 && (unsigned long) v <= UINT32_MAX;
}

/* --- Requests --- */

/* Builds a request with its header nest. With flags 0, ETHTOOL_A_HEADER_FLAGS is left out. */
static int request_new(int family, uint8_t cmd, int ifindex, uint32_t flags, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct nlattr *hdr;

        if (family <= 0 || ifindex <= 0)
                return -EINVAL;
        msg = nlmsg_alloc();
        if (!msg)
                return -ENOMEM;
        if (!genlmsg_put(msg, NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST, cmd,
                         ETHTOOL_GENL_VERSION))
                return -EMSGSIZE;
        /* Every ETHTOOL_A_*_HEADER is attribute 1, so the coalesce one serves every command. */
        hdr = nla_nest_start(msg, ETHTOOL_A_COALESCE_HEADER);
        if (!hdr)
                return -EMSGSIZE;
        if (nla_put_u32(msg, ETHTOOL_A_HEADER_DEV_INDEX, (uint32_t) ifindex) < 0)
                return -EMSGSIZE;
        if (flags != 0 && nla_put_u32(msg, ETHTOOL_A_HEADER_FLAGS, flags) < 0)
                return -EMSGSIZE;
        if (nla_nest_end(msg, hdr) < 0)
                return -EMSGSIZE;
        *ret = TAKE_PTR(msg);
        return 0;
}

static int coalesce_validate(const CoalesceChange *c, unsigned *ret_n) {
        unsigned n = 0;

        for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                long v = field_get(c, i);
                if (!field_valid(i, v))
                        return -EINVAL;
                n += v >= 0;
        }
        *ret_n = n;
        return 0;
}

int ethtool_build_coalesce_set(int family, int ifindex, const CoalesceChange *c, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        unsigned n;
        int r;

        r = coalesce_validate(c, &n);
        if (r < 0)
                return r;
        r = request_new(family, ETHTOOL_MSG_COALESCE_SET, ifindex, 0, &msg);
        if (r < 0)
                return r;
        if (n == 0)
                return -ENODATA;

        for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                long v = field_get(c, i);

                if (v < 0)
                        continue;
                r = coalesce_field_is_flag(i) ? nla_put_u8(msg, coalesce_attrs[i], (uint8_t) v)
                                              : nla_put_u32(msg, coalesce_attrs[i], (uint32_t) v);
                if (r < 0)
                        return -EMSGSIZE;
        }
        *ret = TAKE_PTR(msg);
        return 0;
}

/*
 * Builds ETHTOOL_A_FEATURES_WANTED in the verbose form. The listed bits are the mask, and
 * ETHTOOL_A_BITSET_BIT_VALUE marks the ones to switch on. The bits go by name, which the
 * kernel resolves against its netdev_features_strings.
 */
static int features_build(int family, int ifindex, const bool mask[N_FEATURE_BITS],
                          const bool value[N_FEATURE_BITS], struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct nlattr *set, *bits, *bit;
        unsigned n = 0;
        int r;

        r = request_new(family, ETHTOOL_MSG_FEATURES_SET, ifindex, ETHTOOL_FLAG_OMIT_REPLY, &msg);
        if (r < 0)
                return r;
        set = nla_nest_start(msg, ETHTOOL_A_FEATURES_WANTED);
        if (!set)
                return -EMSGSIZE;
        bits = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS);
        if (!bits)
                return -EMSGSIZE;
        for (size_t i = 0; i < N_FEATURE_BITS; i++) {
                if (!mask[i])
                        continue;
                bit = nla_nest_start(msg, ETHTOOL_A_BITSET_BITS_BIT);
                if (!bit || nla_put_string(msg, ETHTOOL_A_BITSET_BIT_NAME, feature_bits[i].name) < 0)
                        return -EMSGSIZE;
                if (value[i] && nla_put_flag(msg, ETHTOOL_A_BITSET_BIT_VALUE) < 0)
                        return -EMSGSIZE;
                if (nla_nest_end(msg, bit) < 0)
                        return -EMSGSIZE;
                n++;
        }
        if (n == 0)
                return -ENODATA;
        if (nla_nest_end(msg, bits) < 0 || nla_nest_end(msg, set) < 0)
                return -EMSGSIZE;
        *ret = TAKE_PTR(msg);
        return 0;
}

static int offloads_validate(const int want[_OFFLOAD_MAX]) {
        for (size_t o = 0; o < _OFFLOAD_MAX; o++)
                if (want[o] < -1 || want[o] > 1)
                        return -EINVAL;
        return 0;
}

int ethtool_build_features_set(int family, int ifindex, const int want[_OFFLOAD_MAX], struct nl_msg **ret) {
        bool mask[N_FEATURE_BITS] = {}, value[N_FEATURE_BITS] = {};
        int r;

        r = offloads_validate(want);
        if (r < 0)
                return r;
        for (size_t i = 0; i < N_FEATURE_BITS; i++) {
                int w = want[feature_bits[i].offload];
                mask[i] = w >= 0;
                value[i] = w == 1;
        }
        return features_build(family, ifindex, mask, value, ret);
}

/* --- Channels: the counts of ChannelsChange and their attributes --- */

static const struct {
        size_t off;                 /* the offset of the long in ChannelsChange */
        uint16_t attr;
} channel_counts[] = {
        { offsetof(ChannelsChange, rx), ETHTOOL_A_CHANNELS_RX_COUNT },
        { offsetof(ChannelsChange, tx), ETHTOOL_A_CHANNELS_TX_COUNT },
        { offsetof(ChannelsChange, combined), ETHTOOL_A_CHANNELS_COMBINED_COUNT },
};
#define N_CHANNEL_COUNTS ELEMENTSOF(channel_counts)

static long channels_change_get(const ChannelsChange *c, size_t i) {
        return *(const long *) ((const char *) c + channel_counts[i].off);
}

static void channels_change_set(ChannelsChange *c, size_t i, long v) {
        *(long *) ((char *) c + channel_counts[i].off) = v;
}

/* Gives the count and the maximum in Channels that belong to the i-th count of ChannelsChange. */
static void channels_field(const Channels *ch, size_t i, long *ret_count, long *ret_max) {
        const long counts[N_CHANNEL_COUNTS] = { ch->rx, ch->tx, ch->combined };
        const long maxes[N_CHANNEL_COUNTS] = { ch->max_rx, ch->max_tx, ch->max_combined };
        *ret_count = counts[i];
        *ret_max = maxes[i];
}

static int channels_validate(const ChannelsChange *c, unsigned *ret_n) {
        unsigned n = 0;

        for (size_t i = 0; i < N_CHANNEL_COUNTS; i++) {
                long v = channels_change_get(c, i);
                if (v < -1 || (v >= 0 && (unsigned long) v > UINT32_MAX))
                        return -EINVAL;
                n += v >= 0;
        }
        *ret_n = n;
        return 0;
}

int ethtool_build_channels_set(int family, int ifindex, const ChannelsChange *c, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        unsigned n;
        int r;

        r = channels_validate(c, &n);
        if (r < 0)
                return r;
        r = request_new(family, ETHTOOL_MSG_CHANNELS_SET, ifindex, 0, &msg);
        if (r < 0)
                return r;
        if (n == 0)
                return -ENODATA;
        for (size_t i = 0; i < N_CHANNEL_COUNTS; i++) {
                long v = channels_change_get(c, i);
                if (v >= 0 && nla_put_u32(msg, channel_counts[i].attr, (uint32_t) v) < 0)
                        return -EMSGSIZE;
        }
        *ret = TAKE_PTR(msg);
        return 0;
}

/*
 * Puts in ret the counts of want that differ from cur. Returns -EINVAL for a count above the
 * driver's maximum. A kind of channel that the driver lacks has a maximum of 0. Only 0 then
 * counts as already set, and the kernel would agree.
 */
static int channels_diff(const Channels *cur, const ChannelsChange *want, ChannelsChange *ret, unsigned *ret_n) {
        ChannelsChange d = CHANNELS_CHANGE_NONE;
        unsigned n = 0;

        for (size_t i = 0; i < N_CHANNEL_COUNTS; i++) {
                long w = channels_change_get(want, i), count, max;

                if (w < 0)
                        continue;
                channels_field(cur, i, &count, &max);
                if (w > max)
                        return -EINVAL;
                /* A kind that the driver lacks reads -1, which means that it has 0 of them. */
                if (w == (count < 0 ? 0 : count))
                        continue;
                channels_change_set(&d, i, w);
                n++;
        }
        *ret = d;
        *ret_n = n;
        return 0;
}

/* --- Answers --- */

/* Reads the device from the header nest of a reply or a notification. */
static int reply_ifindex(struct nlattr *hdr, int *ret) {
        static struct nla_policy policy[ETHTOOL_A_HEADER_MAX + 1] = {
                [ETHTOOL_A_HEADER_DEV_INDEX] = { .type = NLA_U32 },
        };
        struct nlattr *tb[ETHTOOL_A_HEADER_MAX + 1];
        uint32_t i;

        if (!hdr || nla_parse_nested(tb, ETHTOOL_A_HEADER_MAX, hdr, policy) < 0 ||
            !tb[ETHTOOL_A_HEADER_DEV_INDEX])
                return -EBADMSG;
        i = nla_get_u32(tb[ETHTOOL_A_HEADER_DEV_INDEX]);
        if (i == 0 || i > INT_MAX)
                return -EBADMSG;
        *ret = (int) i;
        return 0;
}

/* Checks that h is a well-formed generic netlink message of one of the two commands. */
static int genl_check(const struct nlmsghdr *h, uint8_t cmd_a, uint8_t cmd_b) {
        const struct genlmsghdr *g;

        if (!genlmsg_valid_hdr((struct nlmsghdr *) h, 0))
                return -EBADMSG;
        g = nlmsg_data(h);
        if (g->cmd != cmd_a && g->cmd != cmd_b)
                return -EBADMSG;
        return 0;
}

int ethtool_coalesce_parse(const struct nlmsghdr *h, Coalesce *ret) {
        static struct nla_policy policy[ETHTOOL_A_COALESCE_MAX + 1] = {
                [ETHTOOL_A_COALESCE_HEADER] = { .type = NLA_NESTED },
                [ETHTOOL_A_COALESCE_RX_USECS] = { .type = NLA_U32 },
                [ETHTOOL_A_COALESCE_TX_USECS] = { .type = NLA_U32 },
                [ETHTOOL_A_COALESCE_RX_MAX_FRAMES] = { .type = NLA_U32 },
                [ETHTOOL_A_COALESCE_TX_MAX_FRAMES] = { .type = NLA_U32 },
                [ETHTOOL_A_COALESCE_USE_ADAPTIVE_RX] = { .type = NLA_U8 },
                [ETHTOOL_A_COALESCE_USE_ADAPTIVE_TX] = { .type = NLA_U8 },
        };
        struct nlattr *tb[ETHTOOL_A_COALESCE_MAX + 1];
        Coalesce c = { -1, -1, -1, -1, -1, -1 };

        if (genl_check(h, ETHTOOL_MSG_COALESCE_GET_REPLY, ETHTOOL_MSG_COALESCE_NTF) < 0)
                return -EBADMSG;
        /* libnl's parser does not write to the message. Its prototype just lacks the const. */
        if (genlmsg_parse((struct nlmsghdr *) h, 0, tb, ETHTOOL_A_COALESCE_MAX, policy) < 0)
                return -EBADMSG;

        for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                struct nlattr *a = tb[coalesce_attrs[i]];
                uint32_t v;

                if (!a)
                        continue;
                if (coalesce_field_is_flag(i))
                        v = !!nla_get_u8(a);
                else {
                        v = nla_get_u32(a);
#if LONG_MAX < UINT32_MAX
                        /* This applies where long has 32 bits. Such a value could not be asked for either. */
                        if (v > LONG_MAX)
                                return -EBADMSG;
#endif
                }
                field_set(&c, i, (long) v);
        }
        *ret = c;
        return 0;
}

/*
 * Parses one bitset of a FEATURES reply in the verbose form. sriovd never asks for the compact
 * form. With ETHTOOL_A_BITSET_NOMASK, the listed bits are the set ones. Without it, the list
 * is the mask, and BIT_VALUE says which bits are set.
 */
static int bitset_parse(struct nlattr *set, bool ret[N_FEATURE_BITS]) {
        static struct nla_policy set_policy[ETHTOOL_A_BITSET_MAX + 1] = {
                [ETHTOOL_A_BITSET_NOMASK] = { .type = NLA_FLAG },
                [ETHTOOL_A_BITSET_BITS] = { .type = NLA_NESTED },
        };
        static struct nla_policy bit_policy[ETHTOOL_A_BITSET_BIT_MAX + 1] = {
                [ETHTOOL_A_BITSET_BIT_NAME] = { .type = NLA_STRING },
                [ETHTOOL_A_BITSET_BIT_VALUE] = { .type = NLA_FLAG },
        };
        struct nlattr *tb[ETHTOOL_A_BITSET_MAX + 1], *bit[ETHTOOL_A_BITSET_BIT_MAX + 1], *a;
        bool nomask;
        int rem;

        for (size_t i = 0; i < N_FEATURE_BITS; i++)
                ret[i] = false;
        if (!set)
                return -EBADMSG;
        if (nla_parse_nested(tb, ETHTOOL_A_BITSET_MAX, set, set_policy) < 0)
                return -EBADMSG;
        /* The compact form has VALUE without BITS and no names to match. An empty verbose list has no BITS. */
        if (!tb[ETHTOOL_A_BITSET_BITS])
                return tb[ETHTOOL_A_BITSET_VALUE] ? -EBADMSG : 0;
        nomask = tb[ETHTOOL_A_BITSET_NOMASK];

        nla_for_each_nested(a, tb[ETHTOOL_A_BITSET_BITS], rem) {
                if (nla_type(a) != ETHTOOL_A_BITSET_BITS_BIT)
                        continue;
                if (nla_parse_nested(bit, ETHTOOL_A_BITSET_BIT_MAX, a, bit_policy) < 0)
                        return -EBADMSG;
                if (!bit[ETHTOOL_A_BITSET_BIT_NAME])
                        continue;
                for (size_t i = 0; i < N_FEATURE_BITS; i++)
                        if (nla_strcmp(bit[ETHTOOL_A_BITSET_BIT_NAME], feature_bits[i].name) == 0)
                                ret[i] = nomask || bit[ETHTOOL_A_BITSET_BIT_VALUE];
        }
        return 0;
}

static int features_parse_bits(const struct nlmsghdr *h, FeatureBit ret[N_FEATURE_BITS]) {
        static struct nla_policy policy[ETHTOOL_A_FEATURES_MAX + 1] = {
                [ETHTOOL_A_FEATURES_HEADER] = { .type = NLA_NESTED },
                [ETHTOOL_A_FEATURES_HW] = { .type = NLA_NESTED },
                [ETHTOOL_A_FEATURES_ACTIVE] = { .type = NLA_NESTED },
                [ETHTOOL_A_FEATURES_NOCHANGE] = { .type = NLA_NESTED },
        };
        struct nlattr *tb[ETHTOOL_A_FEATURES_MAX + 1];
        bool hw[N_FEATURE_BITS], active[N_FEATURE_BITS], nochange[N_FEATURE_BITS];

        if (genl_check(h, ETHTOOL_MSG_FEATURES_GET_REPLY, ETHTOOL_MSG_FEATURES_NTF) < 0)
                return -EBADMSG;
        if (genlmsg_parse((struct nlmsghdr *) h, 0, tb, ETHTOOL_A_FEATURES_MAX, policy) < 0)
                return -EBADMSG;
        if (bitset_parse(tb[ETHTOOL_A_FEATURES_HW], hw) < 0 ||
            bitset_parse(tb[ETHTOOL_A_FEATURES_ACTIVE], active) < 0 ||
            bitset_parse(tb[ETHTOOL_A_FEATURES_NOCHANGE], nochange) < 0)
                return -EBADMSG;
        for (size_t i = 0; i < N_FEATURE_BITS; i++)
                ret[i] = (FeatureBit) { .hw = hw[i], .active = active[i], .nochange = nochange[i] };
        return 0;
}

static void features_summarize(const FeatureBit b[N_FEATURE_BITS], Features *ret) {
        for (size_t o = 0; o < _OFFLOAD_MAX; o++) {
                unsigned present = 0, on = 0, changeable = 0;

                for (size_t i = 0; i < N_FEATURE_BITS; i++) {
                        if (feature_bits[i].offload != o || !feature_present(&b[i]))
                                continue;
                        present++;
                        on += b[i].active;
                        changeable += feature_changeable(&b[i]);
                }
                ret->active[o] = present == 0 ? -1 : on == present;
                ret->changeable[o] = present > 0 && changeable == present;
        }
}

int ethtool_features_parse(const struct nlmsghdr *h, Features *ret) {
        FeatureBit b[N_FEATURE_BITS];
        int r;

        r = features_parse_bits(h, b);
        if (r < 0)
                return r;
        features_summarize(b, ret);
        return 0;
}

int ethtool_channels_parse(const struct nlmsghdr *h, Channels *ret) {
        static struct nla_policy policy[ETHTOOL_A_CHANNELS_MAX + 1] = {
                [ETHTOOL_A_CHANNELS_HEADER] = { .type = NLA_NESTED },
                [ETHTOOL_A_CHANNELS_RX_MAX] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_TX_MAX] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_OTHER_MAX] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_COMBINED_MAX] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_RX_COUNT] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_TX_COUNT] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_OTHER_COUNT] = { .type = NLA_U32 },
                [ETHTOOL_A_CHANNELS_COMBINED_COUNT] = { .type = NLA_U32 },
        };
        /* the count attribute, the max attribute, and where each goes */
        static const struct {
                uint16_t count_attr, max_attr;
                size_t count_off, max_off;
        } kinds[] = {
                { ETHTOOL_A_CHANNELS_RX_COUNT, ETHTOOL_A_CHANNELS_RX_MAX,
                  offsetof(Channels, rx), offsetof(Channels, max_rx) },
                { ETHTOOL_A_CHANNELS_TX_COUNT, ETHTOOL_A_CHANNELS_TX_MAX,
                  offsetof(Channels, tx), offsetof(Channels, max_tx) },
                { ETHTOOL_A_CHANNELS_OTHER_COUNT, ETHTOOL_A_CHANNELS_OTHER_MAX,
                  offsetof(Channels, other), offsetof(Channels, max_other) },
                { ETHTOOL_A_CHANNELS_COMBINED_COUNT, ETHTOOL_A_CHANNELS_COMBINED_MAX,
                  offsetof(Channels, combined), offsetof(Channels, max_combined) },
        };
        struct nlattr *tb[ETHTOOL_A_CHANNELS_MAX + 1];
        Channels c = {};

        if (genl_check(h, ETHTOOL_MSG_CHANNELS_GET_REPLY, ETHTOOL_MSG_CHANNELS_NTF) < 0)
                return -EBADMSG;
        if (genlmsg_parse((struct nlmsghdr *) h, 0, tb, ETHTOOL_A_CHANNELS_MAX, policy) < 0)
                return -EBADMSG;

        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                struct nlattr *ca = tb[kinds[i].count_attr], *ma = tb[kinds[i].max_attr];
                long *count = (long *) ((char *) &c + kinds[i].count_off);
                long *max = (long *) ((char *) &c + kinds[i].max_off);
                uint32_t cv, mv;

                /* libnl's policy checks only a minimum length, but a u32 must be exactly four bytes. */
                if ((ca && nla_len(ca) != 4) || (ma && nla_len(ma) != 4))
                        return -EBADMSG;
                /* The kernel sends both, and only for a kind whose maximum is not 0. A count above
                 * its maximum is for the driver to explain, so it is taken as the driver says. */
                mv = ma ? nla_get_u32(ma) : 0;
                cv = ca ? nla_get_u32(ca) : 0;
#if LONG_MAX < UINT32_MAX
                if (mv > LONG_MAX || cv > LONG_MAX)
                        return -EBADMSG;
#endif
                *max = (long) mv;
                *count = mv == 0 ? -1 : (long) cv;
        }
        *ret = c;
        return 0;
}

/* --- The socket --- */

int ethtool_nl_open(EthtoolNl **ret) {
        _cleanup_(ethtool_nl_freep) EthtoolNl *e = NULL;
        int r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        r = netlink_socket_open(NETLINK_GENERIC, &e->sk);
        if (r < 0)
                return r;
        r = genl_ctrl_resolve(e->sk, ETHTOOL_GENL_NAME);
        /* A missing family means that the kernel was built without ethtool netlink. */
        if (r == -NLE_OBJ_NOTFOUND)
                return -EOPNOTSUPP;
        if (r < 0)
                return netlink_errno_from_nle(r);
        e->family = r;

        *ret = TAKE_PTR(e);
        return 0;
}

EthtoolNl *ethtool_nl_free(EthtoolNl *e) {
        if (!e)
                return NULL;
        nl_socket_free(e->sk);
        free(e);
        return NULL;
}

int ethtool_nl_family(const EthtoolNl *e) {
        return e->family;
}

unsigned long ethtool_nl_writes(const EthtoolNl *e) {
        return e->writes;
}

typedef struct Reply {
        int ifindex;
        int (*parse)(const struct nlmsghdr *h, void *ret);
        void *ret;
        bool seen;
} Reply;

static int on_reply(struct nl_msg *msg, void *userdata) {
        Reply *rp = userdata;
        const struct nlmsghdr *h = nlmsg_hdr(msg);
        struct nlattr *hdr;
        int ifindex, r;

        if (rp->seen)
                return NL_SKIP;
        /* Every reply's header nest is attribute 1. The reply must be about the device that was asked for. */
        hdr = genlmsg_valid_hdr((struct nlmsghdr *) h, 0)
                      ? nla_find(genlmsg_attrdata(nlmsg_data(h), 0), genlmsg_attrlen(nlmsg_data(h), 0),
                                 ETHTOOL_A_COALESCE_HEADER)
                      : NULL;
        if (reply_ifindex(hdr, &ifindex) < 0 || ifindex != rp->ifindex)
                return -EBADMSG;
        r = rp->parse(h, rp->ret);
        if (r < 0)
                return r;
        rp->seen = true;
        return NL_OK;
}

static int get(EthtoolNl *e, uint8_t cmd, int ifindex, int (*parse)(const struct nlmsghdr *, void *),
               void *ret, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        Reply rp = { .ifindex = ifindex, .parse = parse, .ret = ret };
        int r;

        nl_error_clear(err);
        if (ifindex <= 0)
                return -ENODEV;
        r = request_new(e->family, cmd, ifindex, 0, &msg);
        if (r < 0)
                return r;
        r = netlink_transact(e->sk, msg, on_reply, &rp, err);
        /* An ACK without a reply is not how this command answers. */
        if (r >= 0 && !rp.seen) {
                r = -EBADMSG;
                if (err)
                        err->error = r;
        }
        return r;
}

static int coalesce_parse_any(const struct nlmsghdr *h, void *ret) {
        return ethtool_coalesce_parse(h, ret);
}

static int features_parse_any(const struct nlmsghdr *h, void *ret) {
        return features_parse_bits(h, ret);
}

int ethtool_coalesce_get(EthtoolNl *e, int ifindex, Coalesce *ret, NlError *err) {
        Coalesce c;
        int r;

        r = get(e, ETHTOOL_MSG_COALESCE_GET, ifindex, coalesce_parse_any, &c, err);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

int ethtool_features_get(EthtoolNl *e, int ifindex, Features *ret, NlError *err) {
        FeatureBit b[N_FEATURE_BITS];
        int r;

        r = get(e, ETHTOOL_MSG_FEATURES_GET, ifindex, features_parse_any, b, err);
        if (r < 0)
                return r;
        features_summarize(b, ret);
        return 0;
}

static int channels_parse_any(const struct nlmsghdr *h, void *ret) {
        return ethtool_channels_parse(h, ret);
}

int ethtool_channels_get(EthtoolNl *e, int ifindex, Channels *ret, NlError *err) {
        Channels c;
        int r;

        r = get(e, ETHTOOL_MSG_CHANNELS_GET, ifindex, channels_parse_any, &c, err);
        if (r < 0)
                return r;
        *ret = c;
        return 0;
}

static int send_set(EthtoolNl *e, struct nl_msg *msg, NlError *err) {
        e->writes++;
        return netlink_transact(e->sk, msg, NULL, NULL, err);
}

/*
 * The read-back runs with its own NlError, so err keeps the SET's answer.
 * An ACK may carry a warning. Only a failing read-back replaces that answer.
 */
static int readback_failed(int r, const NlError *rb, NlError *err) {
        if (err)
                *err = *rb;
        return r;
}

/* The kernel accepted the SET, yet the value is not what was asked.
 * Returns -EIO, with whatever text the SET's ACK had. */
static int readback_differs(NlError *err) {
        if (err)
                err->error = -EIO;
        return -EIO;
}

int ethtool_coalesce_set(EthtoolNl *e, int ifindex, const CoalesceChange *want, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        CoalesceChange d;
        Coalesce cur;
        NlError rb;
        unsigned n;
        int r;

        nl_error_clear(err);
        r = coalesce_validate(want, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        r = ethtool_coalesce_get(e, ifindex, &cur, err);
        if (r < 0)
                return r;
        if (coalesce_diff(&cur, want, &d) == 0)
                return 0;
        r = ethtool_build_coalesce_set(e->family, ifindex, &d, &msg);
        if (r < 0)
                return r;
        r = send_set(e, msg, err);
        if (r == -EINVAL && coalesce_validate(&d, &n) >= 0 && n > 1) {
                /*
                 * The kernel refuses the whole request for one value that the driver will not take.
                 * igb in queue-pair mode refuses tx-usecs, for example. So the values are applied
                 * one by one, and the first refusal is reported. Nothing that the driver takes is
                 * left undone.
                 */
                NlError first = *err;
                unsigned done = 0;

                for (size_t i = 0; i < COALESCE_N_FIELDS; i++) {
                        _cleanup_(nlmsg_freep) struct nl_msg *one_msg = NULL;
                        CoalesceChange one = COALESCE_CHANGE_NONE;
                        NlError one_err;

                        if (field_get(&d, i) < 0)
                                continue;
                        field_set(&one, i, field_get(&d, i));
                        if (ethtool_build_coalesce_set(e->family, ifindex, &one, &one_msg) >= 0 &&
                            send_set(e, one_msg, &one_err) >= 0)
                                done++;
                }
                *err = first;
                if (done == 0)
                        return -EINVAL;
                r = ethtool_coalesce_get(e, ifindex, &cur, &rb);
                if (r < 0)
                        return readback_failed(r, &rb, err);
                /* The change is partly applied. The refused value still differs, and the error says so. */
                err->error = -EINVAL;
                return -EINVAL;
        }
        if (r < 0)
                return r;

        r = ethtool_coalesce_get(e, ifindex, &cur, &rb);
        if (r < 0)
                return readback_failed(r, &rb, err);
        if (coalesce_diff(&cur, want, &d) != 0)
                return readback_differs(err);
        return 1;
}

int ethtool_channels_set(EthtoolNl *e, int ifindex, const ChannelsChange *want, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        ChannelsChange d;
        Channels cur;
        NlError rb;
        unsigned n;
        int r;

        nl_error_clear(err);
        r = channels_validate(want, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        r = ethtool_channels_get(e, ifindex, &cur, err);
        if (r < 0)
                return r;
        r = channels_diff(&cur, want, &d, &n);
        if (r < 0)
                return r;
        if (n == 0)
                return 0;
        r = ethtool_build_channels_set(e->family, ifindex, &d, &msg);
        if (r < 0)
                return r;
        r = send_set(e, msg, err);
        if (r < 0)
                return r;

        r = ethtool_channels_get(e, ifindex, &cur, &rb);
        if (r < 0)
                return readback_failed(r, &rb, err);
        if (channels_diff(&cur, want, &d, &n) < 0 || n != 0)
                return readback_differs(err);
        return 1;
}

int ethtool_features_set(EthtoolNl *e, int ifindex, const int want[_OFFLOAD_MAX], NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        bool mask[N_FEATURE_BITS] = {}, value[N_FEATURE_BITS] = {};
        FeatureBit b[N_FEATURE_BITS];
        unsigned present[_OFFLOAD_MAX] = {}, n = 0;
        NlError rb;
        int r;

        nl_error_clear(err);
        r = offloads_validate(want);
        if (r < 0)
                return r;
        r = get(e, ETHTOOL_MSG_FEATURES_GET, ifindex, features_parse_any, b, err);
        if (r < 0)
                return r;

        /* The comparison is per kernel feature, so an offload that is half on is neither on nor off. */
        for (size_t i = 0; i < N_FEATURE_BITS; i++) {
                Offload o = feature_bits[i].offload;

                if (want[o] < 0 || !feature_present(&b[i]))
                        continue;
                present[o]++;
                if (b[i].active == (want[o] == 1))
                        continue;
                /* hw_features masks this feature, so the kernel would ignore the change silently. An error says so instead. */
                if (!feature_changeable(&b[i]))
                        return -EOPNOTSUPP;
                mask[i] = true;
                value[i] = want[o] == 1;
                n++;
        }
        for (size_t o = 0; o < _OFFLOAD_MAX; o++)
                if (want[o] == 1 && present[o] == 0)
                        return -EOPNOTSUPP;
        if (n == 0)
                return 0;

        r = features_build(e->family, ifindex, mask, value, &msg);
        if (r < 0)
                return r;
        r = send_set(e, msg, err);
        if (r < 0)
                return r;

        r = get(e, ETHTOOL_MSG_FEATURES_GET, ifindex, features_parse_any, b, &rb);
        if (r < 0)
                return readback_failed(r, &rb, err);
        for (size_t i = 0; i < N_FEATURE_BITS; i++)
                if (mask[i] && b[i].active != value[i])
                        return readback_differs(err);
        return 1;
}

/* --- Notifications --- */

struct EthtoolMonitor {
        NetlinkMonitor *nl;
        int family;
        EthtoolMonitorFn fn;
        void *userdata;
};

static void on_notification(const struct nlmsghdr *h, void *userdata) {
        EthtoolMonitor *m = userdata;
        const struct genlmsghdr *g;
        const char *what;
        int ifindex;

        /* Notifications were lost, so the callback re-reads all devices. */
        if (!h) {
                m->fn(0, "lost", m->userdata);
                return;
        }
        if (h->nlmsg_type != m->family || !genlmsg_valid_hdr((struct nlmsghdr *) h, 0))
                return;
        g = nlmsg_data(h);
        if (g->cmd == ETHTOOL_MSG_COALESCE_NTF)
                what = "coalesce";
        else if (g->cmd == ETHTOOL_MSG_FEATURES_NTF)
                what = "features";
        else if (g->cmd == ETHTOOL_MSG_CHANNELS_NTF)
                what = "channels";
        else
                return;
        if (reply_ifindex(nla_find(genlmsg_attrdata(g, 0), genlmsg_attrlen(g, 0), ETHTOOL_A_COALESCE_HEADER),
                          &ifindex) < 0)
                return;
        m->fn(ifindex, what, m->userdata);
}

int ethtool_monitor_new(EthtoolMonitorFn fn, void *userdata, EthtoolMonitor **ret) {
        _cleanup_(ethtool_monitor_freep) EthtoolMonitor *m = NULL;
        struct nl_sock *sk;
        int r, group;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->fn = fn;
        m->userdata = userdata;
        r = netlink_monitor_new(NETLINK_GENERIC, on_notification, m, &m->nl);
        if (r < 0)
                return r;
        sk = netlink_monitor_socket(m->nl);
        /* The family is resolved while the socket still has libnl's default callbacks and sequence checks. */
        r = genl_ctrl_resolve(sk, ETHTOOL_GENL_NAME);
        if (r == -NLE_OBJ_NOTFOUND)
                return -EOPNOTSUPP;
        if (r < 0)
                return netlink_errno_from_nle(r);
        m->family = r;
        group = genl_ctrl_resolve_grp(sk, ETHTOOL_GENL_NAME, ETHTOOL_MCGRP_MONITOR_NAME);
        if (group == -NLE_OBJ_NOTFOUND)
                return -EOPNOTSUPP;
        if (group < 0)
                return netlink_errno_from_nle(group);
        r = netlink_monitor_join(m->nl, group);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

EthtoolMonitor *ethtool_monitor_free(EthtoolMonitor *m) {
        if (!m)
                return NULL;
        netlink_monitor_free(m->nl);
        free(m);
        return NULL;
}

int ethtool_monitor_fd(const EthtoolMonitor *m) {
        return netlink_monitor_fd(m->nl);
}

int ethtool_monitor_dispatch(EthtoolMonitor *m) {
        return netlink_monitor_dispatch(m->nl);
}
