/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-vf-netlink.c — VF requests attribute by attribute, kernel answers parsed, a veth in a netns */

#include <arpa/inet.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <poll.h>
#include <netlink/attr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/device-monitor.h"
#include "sriovd/kernel/link-monitor.h"
#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/vf-netlink.h"
#include "test.h"

#define BIT(t) (1u << (t))
static const uint8_t MAC_A[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };

/* --- 1. The set request, parsed back with libnl. --- */

typedef struct BuildCase {
        const char *name;
        int ifindex;
        VfLinkChange c;
        unsigned expect;        /* BIT(IFLA_VF_*) that must be there, and nothing else */
} BuildCase;

static void check_set_request(const BuildCase *t) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct nlattr *tb[IFLA_MAX + 1], *a, *info = NULL, *vf[IFLA_VF_MAX + 1];
        struct nlmsghdr *h;
        struct ifinfomsg *ifi;
        unsigned seen = 0, n_top = 0, n_info = 0;
        int rem;

        fprintf(stderr, "   %s\n", t->name);
        ASSERT_EQ(route_nl_build_set_vf(t->ifindex, &t->c, &msg), 0);
        h = nlmsg_hdr(msg);
        ASSERT_EQ(h->nlmsg_type, RTM_SETLINK);
        ASSERT(h->nlmsg_flags & NLM_F_REQUEST);
        ASSERT(!(h->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL | NLM_F_REPLACE)));
        ASSERT(nlmsg_valid_hdr(h, sizeof(*ifi)));
        ifi = nlmsg_data(h);
        ASSERT_EQ(ifi->ifi_index, t->ifindex);
        ASSERT_EQ(ifi->ifi_family, AF_UNSPEC);
        /* flags and change 0: the PF's up/down, promisc, ... are not touched */
        ASSERT_EQ(ifi->ifi_flags, 0);
        ASSERT_EQ(ifi->ifi_change, 0);

        /* Exactly one top-level attribute: no IFLA_IFNAME, IFLA_MTU, IFLA_AF_SPEC, ... */
        nlmsg_for_each_attr(a, h, sizeof(*ifi), rem) {
                ASSERT_EQ(nla_type(a), IFLA_VFINFO_LIST);
                n_top++;
        }
        ASSERT_EQ(rem, 0);
        ASSERT_EQ(n_top, 1);
        ASSERT_EQ(nlmsg_parse(h, sizeof(*ifi), tb, IFLA_MAX, NULL), 0);
        ASSERT(tb[IFLA_VFINFO_LIST]);

        nla_for_each_nested(a, tb[IFLA_VFINFO_LIST], rem) {
                ASSERT_EQ(nla_type(a), IFLA_VF_INFO);
                info = a;
                n_info++;
        }
        ASSERT_EQ(n_info, 1);

        nla_for_each_nested(a, info, rem) {
                ASSERT(nla_type(a) <= IFLA_VF_MAX);
                ASSERT(!(seen & BIT(nla_type(a))));     /* each at most once */
                seen |= BIT(nla_type(a));
        }
        ASSERT_EQ(rem, 0);
        ASSERT_EQ(seen, t->expect);
        ASSERT_EQ(nla_parse_nested(vf, IFLA_VF_MAX, info, NULL), 0);

        if (vf[IFLA_VF_MAC]) {
                struct ifla_vf_mac m;
                ASSERT_EQ(nla_len(vf[IFLA_VF_MAC]), sizeof(m));
                nla_memcpy(&m, vf[IFLA_VF_MAC], sizeof(m));
                ASSERT_EQ(m.vf, t->c.vf);
                ASSERT(memcmp(m.mac, t->c.mac, 6) == 0);
                for (size_t i = 6; i < sizeof(m.mac); i++)
                        ASSERT_EQ(m.mac[i], 0);
        }
        if (vf[IFLA_VF_VLAN]) {
                struct ifla_vf_vlan v;
                ASSERT_EQ(nla_len(vf[IFLA_VF_VLAN]), sizeof(v));
                nla_memcpy(&v, vf[IFLA_VF_VLAN], sizeof(v));
                ASSERT_EQ(v.vf, t->c.vf);
                ASSERT_EQ(v.vlan, t->c.vlan);
                ASSERT_EQ(v.qos, t->c.qos);
        }
        if (vf[IFLA_VF_RATE]) {
                struct ifla_vf_rate v;
                ASSERT_EQ(nla_len(vf[IFLA_VF_RATE]), sizeof(v));
                nla_memcpy(&v, vf[IFLA_VF_RATE], sizeof(v));
                ASSERT_EQ(v.vf, t->c.vf);
                ASSERT_EQ(v.min_tx_rate, t->c.min_tx_rate);
                ASSERT_EQ(v.max_tx_rate, t->c.max_tx_rate);
        }
        if (vf[IFLA_VF_SPOOFCHK]) {
                struct ifla_vf_spoofchk v;
                ASSERT_EQ(nla_len(vf[IFLA_VF_SPOOFCHK]), sizeof(v));
                nla_memcpy(&v, vf[IFLA_VF_SPOOFCHK], sizeof(v));
                ASSERT_EQ(v.vf, t->c.vf);
                ASSERT_EQ(v.setting, t->c.spoofchk);
        }
        if (vf[IFLA_VF_TRUST]) {
                struct ifla_vf_trust v;
                ASSERT_EQ(nla_len(vf[IFLA_VF_TRUST]), sizeof(v));
                nla_memcpy(&v, vf[IFLA_VF_TRUST], sizeof(v));
                ASSERT_EQ(v.vf, t->c.vf);
                ASSERT_EQ(v.setting, t->c.trust);
        }
        if (vf[IFLA_VF_LINK_STATE]) {
                struct ifla_vf_link_state v;
                ASSERT_EQ(nla_len(vf[IFLA_VF_LINK_STATE]), sizeof(v));
                nla_memcpy(&v, vf[IFLA_VF_LINK_STATE], sizeof(v));
                ASSERT_EQ(v.vf, t->c.vf);
                ASSERT_EQ(v.link_state, t->c.link_state);
        }
}

TEST(build_set_vf) {
        VfLinkChange mac = VF_LINK_CHANGE_NULL(0), vlan = VF_LINK_CHANGE_NULL(3),
                     rate = VF_LINK_CHANGE_NULL(7), all = VF_LINK_CHANGE_NULL(127),
                     off = VF_LINK_CHANGE_NULL(1), untag = VF_LINK_CHANGE_NULL(2),
                     ls = VF_LINK_CHANGE_NULL(5), clean = VF_LINK_CHANGE_NULL(6);

        mac.set_mac = true;
        memcpy(mac.mac, MAC_A, 6);
        vlan.set_vlan = true, vlan.vlan = 4095, vlan.qos = 7;
        rate.set_rate = true, rate.min_tx_rate = 100, rate.max_tx_rate = 25000;
        all.set_mac = true;
        memcpy(all.mac, MAC_A, 6);
        all.set_vlan = true, all.vlan = 100, all.qos = 3;
        all.set_rate = true, all.max_tx_rate = 1000;
        all.spoofchk = 1, all.trust = 1, all.link_state = IFLA_VF_LINK_STATE_ENABLE;
        /* 0s are values to set, not "leave" */
        off.spoofchk = 0, off.trust = 0, off.link_state = IFLA_VF_LINK_STATE_AUTO;
        untag.set_vlan = true;
        ls.link_state = IFLA_VF_LINK_STATE_DISABLE;
        /* The clean baseline (vf_clean): the all-zero MAC ("none set") is a MAC to send, as is link auto. */
        clean.set_mac = true, clean.set_vlan = true, clean.set_rate = true;
        clean.spoofchk = 1, clean.trust = 0, clean.link_state = IFLA_VF_LINK_STATE_AUTO;

        const BuildCase cases[] = {
                { "mac only", 4, mac, BIT(IFLA_VF_MAC) },
                { "vlan+qos only", 9, vlan, BIT(IFLA_VF_VLAN) },
                { "untag (vlan 0 qos 0)", 9, untag, BIT(IFLA_VF_VLAN) },
                { "rate only", 1, rate, BIT(IFLA_VF_RATE) },
                { "link state only", 2, ls, BIT(IFLA_VF_LINK_STATE) },
                { "zeros are set, not left", 2, off,
                  BIT(IFLA_VF_SPOOFCHK) | BIT(IFLA_VF_TRUST) | BIT(IFLA_VF_LINK_STATE) },
                { "clean baseline", 3, clean,
                  BIT(IFLA_VF_MAC) | BIT(IFLA_VF_VLAN) | BIT(IFLA_VF_RATE) | BIT(IFLA_VF_SPOOFCHK) |
                  BIT(IFLA_VF_TRUST) | BIT(IFLA_VF_LINK_STATE) },
                { "everything", 1000000, all,
                  BIT(IFLA_VF_MAC) | BIT(IFLA_VF_VLAN) | BIT(IFLA_VF_RATE) | BIT(IFLA_VF_SPOOFCHK) |
                  BIT(IFLA_VF_TRUST) | BIT(IFLA_VF_LINK_STATE) },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++)
                check_set_request(&cases[i]);
}

TEST(build_set_vf_invalid) {
        struct nl_msg *msg = NULL;
        VfLinkChange c = VF_LINK_CHANGE_NULL(0);

        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -ENODATA);    /* nothing asked */
        c.spoofchk = 1;
        ASSERT_EQ(route_nl_build_set_vf(0, &c, &msg), -EINVAL);
        ASSERT_EQ(route_nl_build_set_vf(-3, &c, &msg), -EINVAL);
        c.spoofchk = 2;
        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -EINVAL);
        c = VF_LINK_CHANGE_NULL(0);
        c.trust = -2;
        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -EINVAL);
        c = VF_LINK_CHANGE_NULL(0);
        c.link_state = IFLA_VF_LINK_STATE_DISABLE + 1;
        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -EINVAL);
        c = VF_LINK_CHANGE_NULL(0);
        c.set_vlan = true, c.vlan = 4096;
        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -EINVAL);
        c.vlan = 1, c.qos = 8;
        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -EINVAL);
        c = VF_LINK_CHANGE_NULL(0x7fffffffu);
        c.trust = 1;
        ASSERT_EQ(route_nl_build_set_vf(4, &c, &msg), -EINVAL);
        ASSERT(msg == NULL);
}

/*
 * The hand-made request sriovd sent before libnl's VF objects built it, kept as the reference:
 * the same change must make the same bytes, attribute by attribute.
 */
static struct nl_msg *reference_set_vf(int ifindex, const VfLinkChange *c) {
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
        struct nl_msg *msg = nlmsg_alloc_simple(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK);
        struct nlattr *list, *info;

        ASSERT(msg);
        ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
        list = nla_nest_start(msg, IFLA_VFINFO_LIST);
        info = nla_nest_start(msg, IFLA_VF_INFO);
        ASSERT(list && info);
        if (c->set_mac) {
                struct ifla_vf_mac m = { .vf = c->vf };
                memcpy(m.mac, c->mac, sizeof(c->mac));
                ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(m), &m), 0);
        }
        if (c->set_vlan) {
                struct ifla_vf_vlan v = { .vf = c->vf, .vlan = c->vlan, .qos = c->qos };
                ASSERT_EQ(nla_put(msg, IFLA_VF_VLAN, sizeof(v), &v), 0);
        }
        if (c->set_rate) {
                struct ifla_vf_rate v = { .vf = c->vf, .min_tx_rate = c->min_tx_rate, .max_tx_rate = c->max_tx_rate };
                ASSERT_EQ(nla_put(msg, IFLA_VF_RATE, sizeof(v), &v), 0);
        }
        if (c->spoofchk >= 0) {
                struct ifla_vf_spoofchk v = { .vf = c->vf, .setting = (uint32_t) c->spoofchk };
                ASSERT_EQ(nla_put(msg, IFLA_VF_SPOOFCHK, sizeof(v), &v), 0);
        }
        if (c->link_state >= 0) {
                struct ifla_vf_link_state v = { .vf = c->vf, .link_state = (uint32_t) c->link_state };
                ASSERT_EQ(nla_put(msg, IFLA_VF_LINK_STATE, sizeof(v), &v), 0);
        }
        if (c->trust >= 0) {
                struct ifla_vf_trust v = { .vf = c->vf, .setting = (uint32_t) c->trust };
                ASSERT_EQ(nla_put(msg, IFLA_VF_TRUST, sizeof(v), &v), 0);
        }
        ASSERT_EQ(nla_nest_end(msg, info), 0);
        ASSERT_EQ(nla_nest_end(msg, list), 0);
        return msg;
}

/* Where two requests part: the header, or which attribute of the VF info. */
static void explain_difference(const struct nlmsghdr *a, const struct nlmsghdr *b) {
        const size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct ifinfomsg)) + 2 * NLA_HDRLEN;
        size_t i = 0, n = a->nlmsg_len < b->nlmsg_len ? a->nlmsg_len : b->nlmsg_len;

        while (i < n && ((const uint8_t *) a)[i] == ((const uint8_t *) b)[i])
                i++;
        fprintf(stderr, "   lengths %u vs %u, first difference at byte %zu (%s)\n", a->nlmsg_len, b->nlmsg_len, i,
                i < hdr ? "headers or nests" : "in IFLA_VF_INFO");
        for (const struct nlmsghdr *h = a; h; h = h == a ? b : NULL) {
                struct nlattr *tb[IFLA_MAX + 1], *x;
                int rem, rem2;

                fprintf(stderr, "   %s: type %u flags 0x%x:", h == a ? "libnl" : "reference", h->nlmsg_type, h->nlmsg_flags);
                if (nlmsg_parse((struct nlmsghdr *) h, sizeof(struct ifinfomsg), tb, IFLA_MAX, NULL) == 0 &&
                    tb[IFLA_VFINFO_LIST])
                        nla_for_each_nested(x, tb[IFLA_VFINFO_LIST], rem) {
                                struct nlattr *y;
                                nla_for_each_nested(y, x, rem2)
                                        fprintf(stderr, " %d(%d)", nla_type(y), nla_len(y));
                        }
                fprintf(stderr, "\n");
        }
}

/* Every combination of what a change may ask, at edge values: libnl's request is the old one, byte for byte. */
TEST(build_set_vf_same_bytes) {
        const uint32_t vfs[] = { 0, 1, 63, 65535, 0x7ffffffe };
        const struct { uint32_t vlan, qos; } vlans[] = { { 0, 0 }, { 1, 0 }, { 100, 3 }, { 4095, 7 }, { 0, 5 } };
        const struct { uint32_t min, max; } rates[] = { { 0, 0 }, { 0, 1000 }, { 100, 25000 }, { UINT32_MAX, UINT32_MAX } };
        unsigned n_cases = 0;

        for (unsigned mask = 1; mask < 64; mask++)
                for (size_t k = 0; k < ELEMENTSOF(vfs) * ELEMENTSOF(vlans) * ELEMENTSOF(rates); k++) {
                        _cleanup_(nlmsg_freep) struct nl_msg *got = NULL, *want = NULL;
                        VfLinkChange c = VF_LINK_CHANGE_NULL(vfs[k % ELEMENTSOF(vfs)]);
                        size_t v = (k / ELEMENTSOF(vfs)) % ELEMENTSOF(vlans), r = k / (ELEMENTSOF(vfs) * ELEMENTSOF(vlans));
                        struct nlmsghdr *a, *b;

                        if (mask & 1) {
                                c.set_mac = true;
                                memcpy(c.mac, MAC_A, 6);
                                c.mac[5] = (uint8_t) k;
                        }
                        if (mask & 2)
                                c.set_vlan = true, c.vlan = vlans[v].vlan, c.qos = vlans[v].qos;
                        if (mask & 4)
                                c.set_rate = true, c.min_tx_rate = rates[r].min, c.max_tx_rate = rates[r].max;
                        if (mask & 8)
                                c.spoofchk = (int) (k & 1);
                        if (mask & 16)
                                c.link_state = (int) (k % 3);
                        if (mask & 32)
                                c.trust = (int) ((k >> 1) & 1);

                        ASSERT_EQ(route_nl_build_set_vf(7 + (int) k, &c, &got), 0);
                        want = reference_set_vf(7 + (int) k, &c);
                        a = nlmsg_hdr(got);
                        b = nlmsg_hdr(want);
                        if (a->nlmsg_len != b->nlmsg_len || memcmp(a, b, a->nlmsg_len) != 0) {
                                fprintf(stderr, "   mask 0x%x case %zu differs\n", mask, k);
                                explain_difference(a, b);
                                abort();
                        }
                        n_cases++;
                }
        fprintf(stderr, "   %u requests, each the same bytes as the hand-made one\n", n_cases);
}

/* The read request comes from libnl-route; check it asks for VF info of one link, no dump. */
TEST(build_get_request) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct nlattr *tb[IFLA_MAX + 1];
        struct nlmsghdr *h;
        uint32_t mask;

        ASSERT_EQ(rtnl_link_build_get_request(42, NULL, &msg), 0);
        h = nlmsg_hdr(msg);
        ASSERT_EQ(h->nlmsg_type, RTM_GETLINK);
        ASSERT(!(h->nlmsg_flags & NLM_F_DUMP));
        ASSERT_EQ(((struct ifinfomsg *) nlmsg_data(h))->ifi_index, 42);
        ASSERT_EQ(nlmsg_parse(h, sizeof(struct ifinfomsg), tb, IFLA_MAX, NULL), 0);
        ASSERT(!tb[IFLA_IFNAME]);
        ASSERT(tb[IFLA_EXT_MASK]);
        nla_memcpy(&mask, tb[IFLA_EXT_MASK], sizeof(mask));
        ASSERT(mask & RTEXT_FILTER_VF);
}

/* --- 2. Parsing what the kernel answers, from messages built here. --- */

static void put_vf(struct nl_msg *msg, uint32_t vf, bool with_rate, uint32_t spoofchk, uint32_t trust) {
        struct nlattr *info = nla_nest_start(msg, IFLA_VF_INFO);
        struct ifla_vf_mac m = { .vf = vf, .mac = { 0x02, 0, 0, 0, 0, (uint8_t) vf } };
        struct ifla_vf_vlan v = { .vf = vf, .vlan = 10 + vf, .qos = 1 };
        struct ifla_vf_tx_rate tx = { .vf = vf, .rate = 500 };
        struct ifla_vf_rate r = { .vf = vf, .min_tx_rate = 10, .max_tx_rate = 900 };
        struct ifla_vf_spoofchk s = { .vf = vf, .setting = spoofchk };
        struct ifla_vf_trust t = { .vf = vf, .setting = trust };
        struct ifla_vf_link_state ls = { .vf = vf, .link_state = IFLA_VF_LINK_STATE_DISABLE };

        ASSERT(info);
        ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(m), &m), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_VLAN, sizeof(v), &v), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_TX_RATE, sizeof(tx), &tx), 0);
        if (with_rate)
                ASSERT_EQ(nla_put(msg, IFLA_VF_RATE, sizeof(r), &r), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_SPOOFCHK, sizeof(s), &s), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_LINK_STATE, sizeof(ls), &ls), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_TRUST, sizeof(t), &t), 0);
        ASSERT_EQ(nla_nest_end(msg, info), 0);
}

static struct nl_msg *newlink_msg(void) {
        struct ifinfomsg ifi = { .ifi_index = 5 };
        struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);

        ASSERT(msg);
        ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
        ASSERT_EQ(nla_put_string(msg, IFLA_IFNAME, "pf0"), 0);
        ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, 3), 0);
        return msg;
}

TEST(parse_vfs) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = newlink_msg();
        _cleanup_free_ VfLink *vfs = NULL;
        struct nlattr *list;
        size_t n = 99;

        /* out of order, as a driver may report; one without IFLA_VF_RATE (old kernel) */
        list = nla_nest_start(msg, IFLA_VFINFO_LIST);
        put_vf(msg, 2, true, 1, 0);
        put_vf(msg, 0, true, UINT32_MAX, UINT32_MAX);
        put_vf(msg, 1, false, 0, 1);
        ASSERT_EQ(nla_nest_end(msg, list), 0);

        ASSERT_EQ(vf_links_parse(nlmsg_hdr(msg), &vfs, &n), 0);
        ASSERT_EQ(n, 3);
        for (unsigned i = 0; i < 3; i++) {
                ASSERT_EQ(vfs[i].vf, i);
                ASSERT_EQ(vfs[i].mac[0], 0x02);
                ASSERT_EQ(vfs[i].mac[5], i);
                ASSERT_EQ(vfs[i].vlan, 10 + i);
                ASSERT_EQ(vfs[i].qos, 1);
                ASSERT_EQ(vfs[i].link_state, IFLA_VF_LINK_STATE_DISABLE);
        }
        /* (u32) -1 is the kernel's "driver did not say" */
        ASSERT_EQ(vfs[0].spoofchk, -1);
        ASSERT_EQ(vfs[0].trust, -1);
        ASSERT_EQ(vfs[1].spoofchk, 0);
        ASSERT_EQ(vfs[1].trust, 1);
        ASSERT_EQ(vfs[2].spoofchk, 1);
        ASSERT_EQ(vfs[2].trust, 0);
        ASSERT_EQ(vfs[0].min_tx_rate, 10);
        ASSERT_EQ(vfs[0].max_tx_rate, 900);
        /* IFLA_VF_TX_RATE only: the old maximum */
        ASSERT_EQ(vfs[1].min_tx_rate, 0);
        ASSERT_EQ(vfs[1].max_tx_rate, 500);
}

TEST(parse_vfs_none_and_bad) {
        _cleanup_(nlmsg_freep) struct nl_msg *plain = newlink_msg(), *nomac = newlink_msg(),
                                             *shortmac = newlink_msg(), *other = NULL;
        VfLink *vfs = (VfLink *) 1;
        size_t n = 99;
        struct nlattr *list, *info;
        struct ifla_vf_vlan v = {};
        uint32_t tiny = 0;

        ASSERT_EQ(vf_links_parse(nlmsg_hdr(plain), &vfs, &n), 0);
        ASSERT(vfs == NULL);
        ASSERT_EQ(n, 0);

        list = nla_nest_start(nomac, IFLA_VFINFO_LIST);
        info = nla_nest_start(nomac, IFLA_VF_INFO);
        ASSERT_EQ(nla_put(nomac, IFLA_VF_VLAN, sizeof(v), &v), 0);
        nla_nest_end(nomac, info);
        nla_nest_end(nomac, list);
        ASSERT_EQ(vf_links_parse(nlmsg_hdr(nomac), &vfs, &n), -EBADMSG);

        list = nla_nest_start(shortmac, IFLA_VFINFO_LIST);
        info = nla_nest_start(shortmac, IFLA_VF_INFO);
        ASSERT_EQ(nla_put(shortmac, IFLA_VF_MAC, sizeof(tiny), &tiny), 0);
        nla_nest_end(shortmac, info);
        nla_nest_end(shortmac, list);
        ASSERT_EQ(vf_links_parse(nlmsg_hdr(shortmac), &vfs, &n), -EBADMSG);

        other = nlmsg_alloc_simple(RTM_NEWADDR, 0);
        ASSERT_EQ(vf_links_parse(nlmsg_hdr(other), &vfs, &n), -EBADMSG);
        ASSERT(vfs == NULL);
}

/* The hand-made parser sriovd had before libnl's read the VF list, kept as the reference. */
static void reference_vf_info(struct nlattr *info, VfLink *ret) {
        static struct nla_policy policy[IFLA_VF_MAX + 1] = {
                [IFLA_VF_MAC] = { .minlen = sizeof(struct ifla_vf_mac) },
                [IFLA_VF_VLAN] = { .minlen = sizeof(struct ifla_vf_vlan) },
                [IFLA_VF_TX_RATE] = { .minlen = sizeof(struct ifla_vf_tx_rate) },
                [IFLA_VF_SPOOFCHK] = { .minlen = sizeof(struct ifla_vf_spoofchk) },
                [IFLA_VF_LINK_STATE] = { .minlen = sizeof(struct ifla_vf_link_state) },
                [IFLA_VF_RATE] = { .minlen = sizeof(struct ifla_vf_rate) },
                [IFLA_VF_TRUST] = { .minlen = sizeof(struct ifla_vf_trust) },
        };
        struct nlattr *tb[IFLA_VF_MAX + 1];
        VfLink v = { .spoofchk = -1, .trust = -1, .link_state = -1 };
        struct ifla_vf_mac mac;

        ASSERT_EQ(nla_parse_nested(tb, IFLA_VF_MAX, info, policy), 0);
        ASSERT(tb[IFLA_VF_MAC]);
        nla_memcpy(&mac, tb[IFLA_VF_MAC], sizeof(mac));
        v.vf = mac.vf;
        memcpy(v.mac, mac.mac, sizeof(v.mac));
        if (tb[IFLA_VF_VLAN]) {
                struct ifla_vf_vlan vlan;
                nla_memcpy(&vlan, tb[IFLA_VF_VLAN], sizeof(vlan));
                v.vlan = vlan.vlan;
                v.qos = vlan.qos;
        }
        if (tb[IFLA_VF_RATE]) {
                struct ifla_vf_rate rate;
                nla_memcpy(&rate, tb[IFLA_VF_RATE], sizeof(rate));
                v.min_tx_rate = rate.min_tx_rate;
                v.max_tx_rate = rate.max_tx_rate;
        } else if (tb[IFLA_VF_TX_RATE]) {
                struct ifla_vf_tx_rate rate;
                nla_memcpy(&rate, tb[IFLA_VF_TX_RATE], sizeof(rate));
                v.max_tx_rate = rate.rate;
        }
        for (int i = 0; i < 2; i++) {
                struct nlattr *a = tb[i == 0 ? IFLA_VF_SPOOFCHK : IFLA_VF_TRUST];
                struct ifla_vf_spoofchk x;
                int *out = i == 0 ? &v.spoofchk : &v.trust;
                if (a) {
                        nla_memcpy(&x, a, sizeof(x));
                        *out = x.setting == UINT32_MAX ? -1 : !!x.setting;
                }
        }
        if (tb[IFLA_VF_LINK_STATE]) {
                struct ifla_vf_link_state ls;
                nla_memcpy(&ls, tb[IFLA_VF_LINK_STATE], sizeof(ls));
                v.link_state = ls.link_state <= INT_MAX ? (int) ls.link_state : -1;
        }
        *ret = v;
}

typedef struct KernelVf {
        uint32_t vf, vlan, qos, min_rate, max_rate, spoofchk, trust, link_state;
        uint16_t vlan_proto;
} KernelVf;

/* One IFLA_VF_INFO as rtnl_fill_vfinfo() (Linux 6.x) writes it: every attribute, the VLAN list, stats. */
static void put_kernel_vf(struct nl_msg *msg, const KernelVf *k) {
        struct nlattr *info = nla_nest_start(msg, IFLA_VF_INFO), *nest;
        struct ifla_vf_mac m = { .vf = k->vf, .mac = { 0x02, 0xaa, 0, 0, (uint8_t) (k->vf >> 8), (uint8_t) k->vf } };
        struct ifla_vf_broadcast bc;
        struct ifla_vf_vlan v = { .vf = k->vf, .vlan = k->vlan, .qos = k->qos };
        struct ifla_vf_rate r = { .vf = k->vf, .min_tx_rate = k->min_rate, .max_tx_rate = k->max_rate };
        struct ifla_vf_tx_rate tx = { .vf = k->vf, .rate = k->max_rate };
        struct ifla_vf_spoofchk sc = { .vf = k->vf, .setting = k->spoofchk };
        struct ifla_vf_link_state ls = { .vf = k->vf, .link_state = k->link_state };
        struct ifla_vf_rss_query_en rss = { .vf = k->vf, .setting = UINT32_MAX };
        struct ifla_vf_trust t = { .vf = k->vf, .setting = k->trust };
        struct ifla_vf_vlan_info vi = { .vf = k->vf, .vlan = k->vlan, .qos = k->qos, .vlan_proto = htons(k->vlan_proto) };

        memset(bc.broadcast, 0xff, sizeof(bc.broadcast));
        ASSERT(info);
        ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(m), &m), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_BROADCAST, sizeof(bc), &bc), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_VLAN, sizeof(v), &v), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_RATE, sizeof(r), &r), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_TX_RATE, sizeof(tx), &tx), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_SPOOFCHK, sizeof(sc), &sc), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_LINK_STATE, sizeof(ls), &ls), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_RSS_QUERY_EN, sizeof(rss), &rss), 0);
        ASSERT_EQ(nla_put(msg, IFLA_VF_TRUST, sizeof(t), &t), 0);
        nest = nla_nest_start(msg, IFLA_VF_VLAN_LIST);
        ASSERT(nest);
        ASSERT_EQ(nla_put(msg, IFLA_VF_VLAN_INFO, sizeof(vi), &vi), 0);
        ASSERT_EQ(nla_nest_end(msg, nest), 0);
        nest = nla_nest_start(msg, IFLA_VF_STATS);
        ASSERT(nest);
        for (int a = IFLA_VF_STATS_RX_PACKETS; a <= IFLA_VF_STATS_TX_DROPPED; a++)
                if (a != IFLA_VF_STATS_PAD)
                        ASSERT_EQ(nla_put_u64(msg, a, 1000u * k->vf + (unsigned) a), 0);
        ASSERT_EQ(nla_nest_end(msg, nest), 0);
        ASSERT_EQ(nla_nest_end(msg, info), 0);
}

/* The kernel's form of the answer, read by libnl, reads as the hand-made parser read it. */
TEST(parse_vfs_kernel_shaped) {
        const KernelVf kv[] = {
                { 3, 100, 3, 0, 10000, 1, 0, IFLA_VF_LINK_STATE_AUTO, ETH_P_8021Q },
                { 0, 0, 0, 0, 0, UINT32_MAX, UINT32_MAX, IFLA_VF_LINK_STATE_AUTO, ETH_P_8021Q },  /* nothing set */
                { 1, 4095, 7, 100, 25000, 0, 1, IFLA_VF_LINK_STATE_ENABLE, ETH_P_8021Q },
                { 2, 0, 5, 1, 0, 1, 1, IFLA_VF_LINK_STATE_DISABLE, ETH_P_8021Q },               /* priority tag only */
                { 5, 42, 0, 0, 0, 0, 0, 0x80000000u, ETH_P_8021AD },                          /* odd link state */
                /* VF 4: ndo_get_vf_config() failed for it, so the kernel left it out */
        };
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct ifinfomsg ifi = { .ifi_index = 5 };
        _cleanup_free_ VfLink *vfs = NULL;
        struct nlattr *list, *a;
        VfLink want[ELEMENTSOF(kv)];
        size_t n = 0, i = 0;
        int rem;

        msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
        ASSERT(msg);
        ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
        ASSERT_EQ(nla_put_string(msg, IFLA_IFNAME, "pf0"), 0);
        ASSERT_EQ(nla_put_u32(msg, IFLA_MTU, 9000), 0);
        ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, 6), 0);
        list = nla_nest_start(msg, IFLA_VFINFO_LIST);
        for (size_t k = 0; k < ELEMENTSOF(kv); k++)
                put_kernel_vf(msg, &kv[k]);
        ASSERT_EQ(nla_nest_end(msg, list), 0);

        /* The reference, sorted by VF as vf_links_parse() sorts. */
        nla_for_each_nested(a, list, rem)
                reference_vf_info(a, &want[i++]);
        for (size_t x = 0; x < i; x++)
                for (size_t y = x + 1; y < i; y++)
                        if (want[y].vf < want[x].vf) {
                                VfLink t = want[x];
                                want[x] = want[y];
                                want[y] = t;
                        }

        ASSERT_EQ(vf_links_parse(nlmsg_hdr(msg), &vfs, &n), 0);
        ASSERT_EQ(n, ELEMENTSOF(kv));
        for (size_t k = 0; k < n; k++) {
                fprintf(stderr, "   VF %u: vlan %u qos %u rate %u-%u spoofchk %d trust %d link state %d\n", vfs[k].vf,
                        vfs[k].vlan, vfs[k].qos, vfs[k].min_tx_rate, vfs[k].max_tx_rate, vfs[k].spoofchk, vfs[k].trust,
                        vfs[k].link_state);
                ASSERT_EQ(vfs[k].vf, want[k].vf);
                ASSERT(memcmp(vfs[k].mac, want[k].mac, 6) == 0);
                ASSERT_EQ(vfs[k].vlan, want[k].vlan);
                ASSERT_EQ(vfs[k].qos, want[k].qos);
                ASSERT_EQ(vfs[k].min_tx_rate, want[k].min_tx_rate);
                ASSERT_EQ(vfs[k].max_tx_rate, want[k].max_tx_rate);
                ASSERT_EQ(vfs[k].spoofchk, want[k].spoofchk);
                ASSERT_EQ(vfs[k].trust, want[k].trust);
                ASSERT_EQ(vfs[k].link_state, want[k].link_state);
        }
        ASSERT_EQ(vfs[0].spoofchk, -1);
        ASSERT_EQ(vfs[2].qos, 5);
        ASSERT_EQ(vfs[4].vf, 5);
        ASSERT_EQ(vfs[4].link_state, -1);
}

/* A VF the lookup by index cannot reach is a malformed answer, not one VF fewer. */
TEST(parse_vfs_unreachable) {
        const struct { const char *what; uint32_t num_vf; uint32_t vfs[3]; size_t n; } cases[] = {
                { "the same VF twice", 4, { 0, 1, 1 }, 3 },
                { "a VF beyond IFLA_NUM_VF", 2, { 0, 2 }, 2 },
        };

        for (size_t c = 0; c < ELEMENTSOF(cases); c++) {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
                struct ifinfomsg ifi = { .ifi_index = 5 };
                VfLink *vfs = NULL;
                struct nlattr *list;
                size_t n = 99;

                fprintf(stderr, "   %s\n", cases[c].what);
                ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
                ASSERT_EQ(nla_put_string(msg, IFLA_IFNAME, "pf0"), 0);
                ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, cases[c].num_vf), 0);
                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                for (size_t k = 0; k < cases[c].n; k++) {
                        KernelVf kv = { .vf = cases[c].vfs[k], .spoofchk = 1, .trust = 1, .vlan_proto = ETH_P_8021Q };
                        put_kernel_vf(msg, &kv);
                }
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(vf_links_parse(nlmsg_hdr(msg), &vfs, &n), -EBADMSG);
                ASSERT(vfs == NULL);
        }
}

/* What libnl's VF list parser would leak on or read past: refused before it sees it. */
TEST(parse_vfs_libnl_unsafe) {
        const char *const what[] = { "empty VLAN list", "short VLAN list entry", "short RSS query (libnl leaked)",
                                     "an empty VLAN list after a good one", "short stats counter (libnl leaked)" };

        for (size_t c = 0; c < ELEMENTSOF(what); c++) {
                _cleanup_(nlmsg_freep) struct nl_msg *msg = nlmsg_alloc_simple(RTM_NEWLINK, 0);
                struct ifinfomsg ifi = { .ifi_index = 5 };
                struct ifla_vf_mac m = { .vf = 0 };
                struct ifla_vf_vlan_info vi = { .vf = 0, .vlan = 5 };
                struct nlattr *list, *info, *nest;
                VfLink *vfs = NULL;
                size_t n = 99;
                uint16_t two = 0;

                fprintf(stderr, "   %s\n", what[c]);
                ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
                ASSERT_EQ(nla_put_string(msg, IFLA_IFNAME, "pf0"), 0);
                ASSERT_EQ(nla_put_u32(msg, IFLA_NUM_VF, 2), 0);
                list = nla_nest_start(msg, IFLA_VFINFO_LIST);
                if (c == 3) {
                        KernelVf kv = { .vf = 1, .vlan = 7, .vlan_proto = ETH_P_8021Q };
                        put_kernel_vf(msg, &kv);
                }
                info = nla_nest_start(msg, IFLA_VF_INFO);
                ASSERT_EQ(nla_put(msg, IFLA_VF_MAC, sizeof(m), &m), 0);
                switch (c) {
                case 0:
                case 3:
                        /* nla_nest_end() would drop an empty nest; the kernel never sends one. */
                        nest = nla_nest_start(msg, IFLA_VF_VLAN_LIST);
                        ASSERT_EQ(nla_nest_end_keep_empty(msg, nest), 0);
                        break;
                case 1:
                        nest = nla_nest_start(msg, IFLA_VF_VLAN_LIST);
                        ASSERT_EQ(nla_put(msg, IFLA_VF_VLAN_INFO, sizeof(vi) - 4, &vi), 0);
                        ASSERT_EQ(nla_nest_end(msg, nest), 0);
                        break;
                case 2:
                        ASSERT_EQ(nla_put(msg, IFLA_VF_RSS_QUERY_EN, sizeof(two), &two), 0);
                        break;
                case 4:
                        nest = nla_nest_start(msg, IFLA_VF_STATS);
                        ASSERT_EQ(nla_put_u64(msg, IFLA_VF_STATS_RX_PACKETS, 1), 0);
                        ASSERT_EQ(nla_put(msg, IFLA_VF_STATS_TX_BYTES, sizeof(two), &two), 0);
                        ASSERT_EQ(nla_nest_end(msg, nest), 0);
                        break;
                }
                ASSERT_EQ(nla_nest_end(msg, info), 0);
                ASSERT_EQ(nla_nest_end(msg, list), 0);
                ASSERT_EQ(vf_links_parse(nlmsg_hdr(msg), &vfs, &n), -EBADMSG);
                ASSERT(vfs == NULL);
        }
}

/* An NLMSG_ERROR/DONE as the kernel builds it; echo = bytes of request payload echoed. */
static struct nl_msg *answer(int type, int flags, int error, size_t echo, const char *text) {
        struct nl_msg *msg = nlmsg_alloc_simple(type, flags);
        uint8_t pad[64] = {};

        ASSERT(msg);
        if (type == NLMSG_ERROR) {
                struct nlmsgerr e = { .error = error };
                e.msg.nlmsg_len = NLMSG_HDRLEN + echo;
                e.msg.nlmsg_type = RTM_SETLINK;
                ASSERT_EQ(nlmsg_append(msg, &e, sizeof(e), NLMSG_ALIGNTO), 0);
                if (echo)
                        ASSERT_EQ(nlmsg_append(msg, pad, echo, NLMSG_ALIGNTO), 0);
        } else
                ASSERT_EQ(nlmsg_append(msg, &error, sizeof(error), NLMSG_ALIGNTO), 0);
        if (text) {
                ASSERT_EQ(nla_put_u32(msg, NLMSGERR_ATTR_OFFS, 20), 0);
                ASSERT_EQ(nla_put_string(msg, NLMSGERR_ATTR_MSG, text), 0);
        }
        return msg;
}

TEST(error_parse) {
        const struct {
                int type, flags, error;
                size_t echo;
                const char *text, *expect;
        } cases[] = {
                { NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, -EINVAL, 0, "bad mtu", "bad mtu" },
                { NLMSG_ERROR, NLM_F_ACK_TLVS, -EOPNOTSUPP, 16, "echoed first", "echoed first" },
                { NLMSG_ERROR, NLM_F_ACK_TLVS, -EOPNOTSUPP, 18, "unaligned echo", "unaligned echo" },
                { NLMSG_ERROR, NLM_F_CAPPED, -ENODEV, 0, NULL, "" },
                { NLMSG_ERROR, 0, -ENODEV, 24, NULL, "" },
                /* without NLM_F_ACK_TLVS, what follows is not extack */
                { NLMSG_ERROR, NLM_F_CAPPED, -EPERM, 0, "not flagged", "" },
                /* an ACK with a warning */
                { NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, 0, 0, "just so you know", "just so you know" },
                { NLMSG_DONE, NLM_F_MULTI | NLM_F_ACK_TLVS, -EMSGSIZE, 0, "dump failed", "dump failed" },
                { NLMSG_DONE, NLM_F_MULTI, 0, 0, NULL, "" },
                /* a positive error is a bug somewhere, never success */
                { NLMSG_ERROR, NLM_F_CAPPED, EBUSY, 0, NULL, "" },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                _cleanup_(nlmsg_freep) struct nl_msg *m =
                        answer(cases[i].type, cases[i].flags, cases[i].error, cases[i].echo, cases[i].text);
                NlError e = { .error = 1, .message = "stale" };

                ASSERT_EQ(netlink_error_parse(nlmsg_hdr(m), &e), 0);
                ASSERT_EQ(e.error, cases[i].error > 0 ? -cases[i].error : cases[i].error);
                ASSERT_STREQ(e.message, cases[i].expect);
        }

        /* a long text is cut, and terminated */
        char longtext[600];
        memset(longtext, 'x', sizeof(longtext) - 1);
        longtext[sizeof(longtext) - 1] = 0;
        _cleanup_(nlmsg_freep) struct nl_msg *lm = answer(NLMSG_ERROR, NLM_F_CAPPED | NLM_F_ACK_TLVS, -EINVAL, 0, longtext);
        NlError e;
        ASSERT_EQ(netlink_error_parse(nlmsg_hdr(lm), &e), 0);
        ASSERT_EQ(strlen(e.message), sizeof(e.message) - 1);

        /* truncated or not an answer at all */
        _cleanup_(nlmsg_freep) struct nl_msg *shortm = nlmsg_alloc_simple(NLMSG_ERROR, 0);
        uint16_t two = 0;
        nlmsg_append(shortm, &two, sizeof(two), NLMSG_ALIGNTO);
        nlmsg_hdr(shortm)->nlmsg_len = NLMSG_HDRLEN + 2;
        ASSERT_EQ(netlink_error_parse(nlmsg_hdr(shortm), &e), -EBADMSG);
        _cleanup_(nlmsg_freep) struct nl_msg *notans = nlmsg_alloc_simple(RTM_NEWLINK, 0);
        ASSERT_EQ(netlink_error_parse(nlmsg_hdr(notans), &e), -EBADMSG);

        ASSERT_EQ(netlink_errno_from_nle(-NLE_NOMEM), -ENOMEM);
        ASSERT_EQ(netlink_errno_from_nle(-NLE_SEQ_MISMATCH), -EPROTO);
        ASSERT_EQ(netlink_errno_from_nle(-NLE_FAILURE), -EIO);
        ASSERT_EQ(netlink_errno_from_nle(-9999), -EIO);
        ASSERT_EQ(netlink_errno_from_nle(0), 0);
}

/* Every libnl code, as netlink_errno_from_nle() maps it; a code without an errno gives EIO. */
TEST(errno_from_nle_table) {
        static const struct { int nle, err; } table[] = {
                { NLE_SUCCESS, 0 },
                { NLE_FAILURE, EIO },
                { NLE_INTR, EINTR },
                { NLE_BAD_SOCK, EBADF },
                { NLE_AGAIN, EAGAIN },
                { NLE_NOMEM, ENOMEM },
                { NLE_EXIST, EEXIST },
                { NLE_INVAL, EINVAL },
                { NLE_RANGE, ERANGE },
                { NLE_MSGSIZE, EMSGSIZE },
                { NLE_OPNOTSUPP, EOPNOTSUPP },
                { NLE_AF_NOSUPPORT, EAFNOSUPPORT },
                { NLE_OBJ_NOTFOUND, ENOENT },
                { NLE_NOATTR, ENODATA },
                { NLE_MISSING_ATTR, EBADMSG },
                { NLE_AF_MISMATCH, EIO },
                { NLE_SEQ_MISMATCH, EPROTO },
                { NLE_MSG_OVERFLOW, ENOBUFS },
                { NLE_MSG_TRUNC, EBADMSG },
                { NLE_NOADDR, EADDRNOTAVAIL },
                { NLE_SRCRT_NOSUPPORT, EIO },
                { NLE_MSG_TOOSHORT, EBADMSG },
                { NLE_MSGTYPE_NOSUPPORT, EIO },
                { NLE_OBJ_MISMATCH, EIO },
                { NLE_NOCACHE, EIO },
                { NLE_BUSY, EBUSY },
                { NLE_PROTO_MISMATCH, EPROTONOSUPPORT },
                { NLE_NOACCESS, EACCES },
                { NLE_PERM, EPERM },
                { NLE_PKTLOC_FILE, EIO },
                { NLE_PARSE_ERR, EIO },
                { NLE_NODEV, ENODEV },
                { NLE_IMMUTABLE, EROFS },
                { NLE_DUMP_INTR, EAGAIN },
                { NLE_ATTRSIZE, EMSGSIZE },
        };

        /* The table holds every code that this libnl knows, once and in order. */
        ASSERT_EQ(ELEMENTSOF(table), (size_t) NLE_MAX + 1);
        for (size_t i = 0; i < ELEMENTSOF(table); i++) {
                ASSERT_EQ(table[i].nle, (int) i);
                ASSERT_EQ(netlink_errno_from_nle(-table[i].nle), -table[i].err);
                /* libnl returns negative codes, and the positive form maps the same. */
                ASSERT_EQ(netlink_errno_from_nle(table[i].nle), -table[i].err);
        }
        /* Codes beyond what libnl knows have no errno. */
        ASSERT_EQ(netlink_errno_from_nle(-(NLE_MAX + 1)), -EIO);
        ASSERT_EQ(netlink_errno_from_nle(-9999), -EIO);
        ASSERT_EQ(netlink_errno_from_nle(INT_MAX), -EIO);
}

/* --- 3. vf_link_diff --- */

/* Every field "leave", then the case's own; -Wno-override-init lets later ones win. */
#define LEAVE .spoofchk = -1, .trust = -1, .link_state = -1

TEST(diff) {
        const VfLink cur = {
                .vf = 4, .mac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 }, .vlan = 100, .qos = 0,
                .spoofchk = 1, .trust = -1, .link_state = IFLA_VF_LINK_STATE_AUTO,
                .min_tx_rate = 0, .max_tx_rate = 1000,
        };
        const struct {
                const char *name;
                VfLinkChange want;
                unsigned n;
                VfLinkChange expect;
        } cases[] = {
                { "nothing asked", { LEAVE, .vf = 4 }, 0, { LEAVE, .vf = 4 } },
                { "all equal",
                  { LEAVE, .vf = 4, .set_mac = true, .mac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 },
                    .set_vlan = true, .vlan = 100, .spoofchk = 1, .link_state = 0,
                    .set_rate = true, .max_tx_rate = 1000 },
                  0, { LEAVE, .vf = 4 } },
                { "mac differs",
                  { LEAVE, .vf = 4, .set_mac = true, .mac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x56 } },
                  1, { LEAVE, .vf = 4, .set_mac = true, .mac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x56 } } },
                { "qos alone differs: vlan and qos go together",
                  { LEAVE, .vf = 4, .set_vlan = true, .vlan = 100, .qos = 2 },
                  1, { LEAVE, .vf = 4, .set_vlan = true, .vlan = 100, .qos = 2 } },
                { "spoofchk off", { LEAVE, .vf = 4, .spoofchk = 0 }, 1, { LEAVE, .vf = 4, .spoofchk = 0 } },
                { "unknown trust counts as differing", { LEAVE, .vf = 4, .trust = 0 }, 1,
                  { LEAVE, .vf = 4, .trust = 0 } },
                { "link state", { LEAVE, .vf = 4, .link_state = IFLA_VF_LINK_STATE_DISABLE }, 1,
                  { LEAVE, .vf = 4, .link_state = IFLA_VF_LINK_STATE_DISABLE } },
                { "min rate alone differs: both sent",
                  { LEAVE, .vf = 4, .set_rate = true, .min_tx_rate = 10, .max_tx_rate = 1000 },
                  1, { LEAVE, .vf = 4, .set_rate = true, .min_tx_rate = 10, .max_tx_rate = 1000 } },
                { "several, equal ones left out",
                  { LEAVE, .vf = 4, .set_mac = true, .mac = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 },
                    .set_vlan = true, .vlan = 0, .spoofchk = 1, .trust = 1, .set_rate = true },
                  3, { LEAVE, .vf = 4, .set_vlan = true, .trust = 1, .set_rate = true } },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                const VfLinkChange *x = &cases[i].expect;
                VfLinkChange got;

                fprintf(stderr, "   %s\n", cases[i].name);
                memset(&got, 0xaa, sizeof(got));
                ASSERT_EQ(vf_link_diff(&cur, &cases[i].want, &got), cases[i].n);
                ASSERT_EQ(got.vf, x->vf);
                ASSERT_EQ(got.set_mac, x->set_mac);
                if (got.set_mac)
                        ASSERT(memcmp(got.mac, x->mac, 6) == 0);
                ASSERT_EQ(got.set_vlan, x->set_vlan);
                if (got.set_vlan) {
                        ASSERT_EQ(got.vlan, x->vlan);
                        ASSERT_EQ(got.qos, x->qos);
                }
                ASSERT_EQ(got.spoofchk, x->spoofchk);
                ASSERT_EQ(got.trust, x->trust);
                ASSERT_EQ(got.link_state, x->link_state);
                ASSERT_EQ(got.set_rate, x->set_rate);
                if (got.set_rate) {
                        ASSERT_EQ(got.min_tx_rate, x->min_tx_rate);
                        ASSERT_EQ(got.max_tx_rate, x->max_tx_rate);
                }
                /* nothing to change builds nothing to send */
                if (cases[i].n == 0) {
                        struct nl_msg *m = NULL;
                        ASSERT_EQ(route_nl_build_set_vf(1, &got, &m), -ENODATA);
                }
        }
}

/* --- 4. The real kernel, in a network namespace of our own. --- */

typedef struct LinkSnap {
        uint8_t mac[6];
        unsigned flags, mtu;
} LinkSnap;

static void snap(struct nl_sock *sk, int ifindex, LinkSnap *ret) {
        struct rtnl_link *link = NULL;
        struct nl_addr *a;

        ASSERT_EQ(rtnl_link_get_kernel(sk, ifindex, NULL, &link), 0);
        a = rtnl_link_get_addr(link);
        ASSERT(a && nl_addr_get_len(a) == 6);
        memcpy(ret->mac, nl_addr_get_binary_addr(a), 6);
        ret->flags = rtnl_link_get_flags(link);
        ret->mtu = rtnl_link_get_mtu(link);
        rtnl_link_put(link);
}

static int fail_reply(struct nl_msg *msg, void *userdata) {
        (*(int *) userdata)++;
        return -E2BIG;
}

/* RTM_SETLINK IFLA_MTU=1: every kernel with extack refuses it with a reason. */
static void check_extack(struct nl_sock *sk, int ifindex, const char *how) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = nlmsg_alloc_simple(RTM_SETLINK, 0);
        struct ifinfomsg ifi = { .ifi_index = ifindex };
        NlError e;
        int r;

        ASSERT_EQ(nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
        ASSERT_EQ(nla_put_u32(msg, IFLA_MTU, 1), 0);
        r = netlink_transact(sk, msg, NULL, NULL, &e);
        fprintf(stderr, "   MTU 1 (%s): %d (%s), extack \"%s\"\n", how, r, strerror(-r), e.message);
        ASSERT_EQ(r, -EINVAL);
        ASSERT_EQ(e.error, r);
        ASSERT(e.message[0] != 0);
        /* the same message, sent again, gets a fresh sequence number and the same answer */
        ASSERT_EQ(netlink_transact(sk, msg, NULL, NULL, NULL), -EINVAL);
}

TEST(kernel_veth) {
        _cleanup_(route_nl_freep) RouteNl *nl = NULL;
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL, *raw = NULL;
        _cleanup_free_ VfLink *vfs = NULL;
        struct rtnl_link *link = NULL;
        VfLinkChange c;
        LinkSnap before, after;
        NlError e;
        size_t n = 99;
        int ifindex, r, calls = 0, zero = 0;

        /* Its own meson test (vf-netlink-kernel): where it cannot run it skips as a whole. */
        if (geteuid() != 0) {
                fprintf(stderr, "SKIP: needs root for a network namespace with a veth pair\n");
                exit(EXIT_TEST_SKIP);
        }
        if (unshare(CLONE_NEWNET) < 0) {
                fprintf(stderr, "SKIP: unshare(CLONE_NEWNET): %m\n");
                exit(EXIT_TEST_SKIP);
        }

        /* Test-side setup through libnl directly; only the module under test is checked for errno. */
        sk = nl_socket_alloc();
        ASSERT(sk);
        ASSERT_EQ(nl_connect(sk, NETLINK_ROUTE), 0);
        ASSERT_EQ(rtnl_link_veth_add(sk, "sriovd-v0", "sriovd-v1", getpid()), 0);
        ASSERT_EQ(rtnl_link_get_kernel(sk, 0, "sriovd-v0", &link), 0);
        ifindex = rtnl_link_get_ifindex(link);
        rtnl_link_put(link);
        ASSERT(ifindex > 0);
        snap(sk, ifindex, &before);

        ASSERT_EQ(route_nl_open(&nl), 0);

        /* A netdev without VFs: none, no error. So is lo. */
        ASSERT_EQ(route_nl_read_vfs(nl, ifindex, &vfs, &n, &e), 0);
        ASSERT(vfs == NULL);
        ASSERT_EQ(n, 0);
        ASSERT_EQ(e.error, 0);
        ASSERT_EQ(route_nl_read_vfs(nl, 1, &vfs, &n, &e), 0);
        ASSERT_EQ(n, 0);

        /* veth has no ndo_set_vf_*: every VF attribute must fail as the kernel says. */
        const struct { const char *what; VfLinkChange c; } sets[] = {
                { "mac", { .vf = 0, .set_mac = true, .mac = { 0x02, 1, 2, 3, 4, 5 }, .spoofchk = -1, .trust = -1, .link_state = -1 } },
                { "vlan", { .vf = 0, .set_vlan = true, .vlan = 10, .spoofchk = -1, .trust = -1, .link_state = -1 } },
                { "rate", { .vf = 0, .set_rate = true, .max_tx_rate = 100, .spoofchk = -1, .trust = -1, .link_state = -1 } },
                { "spoofchk", { .vf = 0, .spoofchk = 0, .trust = -1, .link_state = -1 } },
                { "trust", { .vf = 0, .spoofchk = -1, .trust = 1, .link_state = -1 } },
                { "link state", { .vf = 0, .spoofchk = -1, .trust = -1, .link_state = IFLA_VF_LINK_STATE_DISABLE } },
                /* The clean's values reach the driver too (rtnetlink has no check of its own that refuses them). */
                { "mac all-zero", { .vf = 0, .set_mac = true, .spoofchk = -1, .trust = -1, .link_state = -1 } },
                { "link state auto", { .vf = 0, .spoofchk = -1, .trust = -1, .link_state = IFLA_VF_LINK_STATE_AUTO } },
        };
        for (size_t i = 0; i < ELEMENTSOF(sets); i++) {
                r = route_nl_set_vf(nl, ifindex, &sets[i].c, &e);
                fprintf(stderr, "   veth VF 0 %s: %d (%s), extack \"%s\"\n", sets[i].what, r,
                        r < 0 ? strerror(-r) : "ok", e.message);
                ASSERT_EQ(r, -EOPNOTSUPP);
                ASSERT_EQ(e.error, r);
                ASSERT(memchr(e.message, 0, sizeof(e.message)));
        }

        /* Nothing asked: nothing sent, nothing fails. */
        c = VF_LINK_CHANGE_NULL(0);
        ASSERT_EQ(route_nl_set_vf(nl, ifindex, &c, &e), 0);
        ASSERT_EQ(e.error, 0);

        /* A nonexistent ifindex (a fresh namespace has lo and our two veths). */
        r = route_nl_read_vfs(nl, 999999, &vfs, &n, &e);
        fprintf(stderr, "   read ifindex 999999: %d, extack \"%s\"\n", r, e.message);
        ASSERT_EQ(r, -ENODEV);
        ASSERT_EQ(e.error, -ENODEV);
        r = route_nl_set_vf(nl, 999999, &sets[0].c, &e);
        fprintf(stderr, "   set ifindex 999999: %d, extack \"%s\"\n", r, e.message);
        ASSERT_EQ(r, -ENODEV);
        ASSERT_EQ(e.error, -ENODEV);
        ASSERT_EQ(route_nl_read_vfs(nl, 0, &vfs, &n, &e), -ENODEV);

        /* A failing reply callback fails the request, and the socket stays in step. */
        ASSERT_EQ(netlink_socket_open(NETLINK_ROUTE, &raw), 0);
        {
                _cleanup_(nlmsg_freep) struct nl_msg *get = NULL;
                ASSERT_EQ(rtnl_link_build_get_request(ifindex, NULL, &get), 0);
                ASSERT_EQ(netlink_transact(raw, get, fail_reply, &calls, &e), -E2BIG);
                ASSERT_EQ(calls, 1);
                ASSERT_EQ(e.error, -E2BIG);
                ASSERT_EQ(netlink_transact(raw, get, NULL, NULL, &e), 0);
        }

        /* The extack text really arrives, capped and with the request echoed. */
        check_extack(raw, ifindex, "capped");
        ASSERT_EQ(setsockopt(nl_socket_get_fd(raw), SOL_NETLINK, NETLINK_CAP_ACK, &zero, sizeof(zero)), 0);
        check_extack(raw, ifindex, "uncapped");

        /* After all that, the veth is as it was. */
        ASSERT_EQ(route_nl_read_vfs(nl, ifindex, &vfs, &n, &e), 0);
        ASSERT_EQ(n, 0);
        snap(sk, ifindex, &after);
        ASSERT(memcmp(before.mac, after.mac, 6) == 0);
        ASSERT_EQ(after.flags, before.flags);
        ASSERT_EQ(after.mtu, before.mtu);

        /* pf_link: the link set up (a new veth is down), and only IFF_UP changed; again is a no-op. */
        ASSERT(!(before.flags & IFF_UP));
        ASSERT_EQ(route_nl_set_link_up(nl, ifindex, true, &e), 0);
        snap(sk, ifindex, &after);
        ASSERT(after.flags & IFF_UP);
        ASSERT_EQ(after.flags & ~(unsigned) (IFF_UP | IFF_RUNNING | 0x10000 /* IFF_LOWER_UP */), before.flags);
        ASSERT_EQ(route_nl_set_link_up(nl, ifindex, true, &e), 0);
        ASSERT_EQ(route_nl_set_link_up(nl, 999999, true, &e), -ENODEV);
}

typedef struct LinkEvents {
        int ifindex[64];
        size_t n, n_lost;
} LinkEvents;

static void on_link(int ifindex, void *userdata) {
        LinkEvents *ev = userdata;

        if (ifindex == 0)
                ev->n_lost++;
        else if (ev->n < ELEMENTSOF(ev->ifindex))
                ev->ifindex[ev->n++] = ifindex;
}

/* Waits up to timeout_ms for the monitor to have something, and dispatches it. */
static void link_pump(LinkMonitor *lm, int timeout_ms) {
        struct pollfd p = { .fd = link_monitor_fd(lm), .events = POLLIN };

        ASSERT(poll(&p, 1, timeout_ms) >= 0);
        ASSERT_EQ(link_monitor_dispatch(lm), 0);
}

/* Runs after kernel_veth, in its network namespace: links that come up, and lost events. */
TEST(kernel_link_monitor) {
        _cleanup_(route_nl_freep) RouteNl *nl = NULL;
        _cleanup_(link_monitor_freep) LinkMonitor *lm = NULL;
        _cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
        struct rtnl_link *link = NULL;
        LinkEvents ev = {};
        int ifindex, small = 1;
        NlError e;

        sk = nl_socket_alloc();
        ASSERT(sk);
        ASSERT_EQ(nl_connect(sk, NETLINK_ROUTE), 0);
        ASSERT_EQ(route_nl_open(&nl), 0);
        ASSERT_EQ(link_monitor_new(on_link, &ev, &lm), 0);

        ASSERT_EQ(rtnl_link_veth_add(sk, "sriovd-m0", "sriovd-m1", getpid()), 0);
        ASSERT_EQ(rtnl_link_get_kernel(sk, 0, "sriovd-m0", &link), 0);
        ifindex = rtnl_link_get_ifindex(link);
        rtnl_link_put(link);
        ASSERT(ifindex > 0);

        /* A new link is down: its creation is not a link coming up. */
        link_pump(lm, 100);
        ASSERT_EQ(ev.n, 0);
        ASSERT_EQ(ev.n_lost, 0);

        /* Up is reported once with its ifindex; down is not reported. */
        ASSERT_EQ(route_nl_set_link_up(nl, ifindex, true, &e), 0);
        for (int i = 0; i < 20 && ev.n == 0; i++)
                link_pump(lm, 100);
        ASSERT_EQ(ev.n, 1);
        ASSERT_EQ(ev.ifindex[0], ifindex);
        ASSERT_EQ(route_nl_set_link_up(nl, ifindex, false, &e), 0);
        link_pump(lm, 100);
        ASSERT_EQ(ev.n, 1);
        ASSERT_EQ(ev.n_lost, 0);

        /* A receive buffer at the kernel's minimum overflows in a burst. The loss is reported, and the monitor goes on. */
        ASSERT_EQ(setsockopt(link_monitor_fd(lm), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
        for (int i = 0; i < 50; i++) {
                ASSERT_EQ(route_nl_set_link_up(nl, ifindex, true, &e), 0);
                ASSERT_EQ(route_nl_set_link_up(nl, ifindex, false, &e), 0);
        }
        link_pump(lm, 100);
        fprintf(stderr, "   burst of 100 link changes: %zu ups seen, %zu losses\n", ev.n - 1, ev.n_lost);
        ASSERT(ev.n_lost >= 1);
        ASSERT(ev.n - 1 < 50);
        ev = (LinkEvents) {};
        ASSERT_EQ(route_nl_set_link_up(nl, ifindex, true, &e), 0);
        for (int i = 0; i < 20 && ev.n == 0; i++)
                link_pump(lm, 100);
        ASSERT_EQ(ev.n, 1);
        ASSERT_EQ(ev.ifindex[0], ifindex);
        ASSERT_EQ(ev.n_lost, 0);
}

TEST(build_set_link_up) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct nlmsghdr *h;
        struct ifinfomsg *ifi;

        ASSERT_EQ(route_nl_build_set_link_up(7, true, &msg), 0);
        h = nlmsg_hdr(msg);
        ASSERT_EQ(h->nlmsg_type, RTM_SETLINK);
        ASSERT(h->nlmsg_flags & NLM_F_ACK);
        ifi = nlmsg_data(h);
        ASSERT_EQ(ifi->ifi_index, 7);
        ASSERT_EQ(ifi->ifi_flags, (unsigned) IFF_UP);
        /* Only IFF_UP is changed: the kernel keeps every other flag as it is. */
        ASSERT_EQ(ifi->ifi_change, (unsigned) IFF_UP);
        /* No attributes: nothing else of the link is touched. */
        ASSERT_EQ(nlmsg_datalen(h), (int) sizeof(*ifi));
        ASSERT_EQ(route_nl_build_set_link_up(0, true, &msg), -EINVAL);
}

int main(int argc, char **argv) {
        /* "kernel": the veth test alone, in a network namespace; may skip (77). */
        if (argc > 1 && strcmp(argv[1], "kernel") == 0) {
                RUN(kernel_veth);
                RUN(kernel_link_monitor);
                return 0;
        }
        RUN(build_set_vf);
        RUN(build_set_vf_invalid);
        RUN(build_set_vf_same_bytes);
        RUN(build_get_request);
        RUN(build_set_link_up);
        RUN(parse_vfs);
        RUN(parse_vfs_none_and_bad);
        RUN(parse_vfs_kernel_shaped);
        RUN(parse_vfs_unreachable);
        RUN(parse_vfs_libnl_unsafe);
        RUN(error_parse);
        RUN(errno_from_nle_table);
        RUN(diff);
        return 0;
}
