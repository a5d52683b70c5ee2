/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-netlink.c — reads and sets the MAC, VLAN, rate, spoofchk, trust and link state of a PF's VFs over rtnetlink */

/*
 * The VF settings use libnl-route's objects, rtnl_link_vf_*. rtnl_link_build_change_request()
 * builds the request. libnl's link parser, rtnl_link_vf_get() and its getters read the answer.
 * This file works around the places where libnl 3.7 does not fit:
 *
 * - Requests go out through netlink_transact(), not rtnl_link_change() or rtnl_link_get_kernel().
 *   Those two return -NLE_* codes and drop the kernel's extack text. rtnl_link_change() also
 *   re-sends an RTM_NEWLINK that was refused with EOPNOTSUPP as RTM_SETLINK. A driver without
 *   trust would then be asked twice.
 * - rtnl_link_build_change_request() makes an RTM_NEWLINK, which as_setlink() turns into RTM_SETLINK.
 * - libnl's VF filler ignores a failed nla_put(). The attribute is then just missing, with no
 *   error. So as_setlink() counts the attributes of the built IFLA_VF_INFO against those asked for.
 * - A VLAN is one 802.1Q entry, which libnl sends as IFLA_VF_VLAN with vf, vlan and qos.
 *   802.1ad would need IFLA_VF_VLAN_LIST, and VfLinkChange does not ask for it.
 * - The rate uses RTNL_LINK_VF_RATE_API_NEW. libnl then sends IFLA_VF_RATE with both min and
 *   max, never the old IFLA_VF_TX_RATE.
 * - The read request comes from rtnl_link_build_get_request() for one ifindex. In libnl 3.7 it
 *   carries IFLA_EXT_MASK = RTEXT_FILTER_VF, and test-vf-netlink asserts that. The request is
 *   not a dump, so the VF list has no size limit.
 * - libnl 3.7 has no iterator over a link's VFs, only a lookup by VF index. So vf_links_parse()
 *   looks up 0 to IFLA_NUM_VF - 1 and counts the list's entries itself. An entry that the lookup
 *   cannot reach makes the answer -EBADMSG. Such an entry lacks IFLA_VF_MAC and so an index,
 *   repeats an index, or has an index beyond IFLA_NUM_VF. libnl reads the list only when
 *   IFLA_NUM_VF is there, and the kernel always sends both.
 * - libnl reads some values differently from the kernel's message. A spoofchk or trust of
 *   (u32) -1 means that the driver did not say. libnl treats it as absent, and sriovd reports -1.
 *   A kernel before 4.9 has no IFLA_VF_VLAN_LIST. With such a kernel, libnl drops VLAN 0 and
 *   its qos, and both read as 0.
 * - vfinfo_entries() refuses the lists that libnl's VF list parser does not handle before libnl
 *   sees them. That is not a complete guard. A short libFuzzer run still found libnl's own
 *   nl_msg_parse() leaking on a garbled VF list that its policy passes. So vf_links_parse() is
 *   only for the kernel's answers, and it has no fuzzer. libnl's link parser also refuses a link
 *   without IFLA_IFNAME, which the kernel always sends.
 *
 * The errors stay the kernel's. The kernel applies the MAC, VLAN, rate, spoofchk, link state and
 * trust in that order. It stops at the first one that a driver refuses, e.g. with EOPNOTSUPP from
 * a driver without trust. netlink_transact() returns that errno.
 */

#include <limits.h>
#include <linux/if_ether.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/errno.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>
#include <string.h>
#include <sys/socket.h>

#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/vf-netlink.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct rtnl_link *, rtnl_link_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct rtnl_link_vf *, rtnl_link_vf_put);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_addr *, nl_addr_put);

/* PCIe's NumVFs field has 16 bits, so no VF index can go beyond this. */
#define VF_INDEX_MAX 0xffffu

struct RouteNl {
        struct nl_sock *sk;
};

int route_nl_open(RouteNl **ret) {
        _cleanup_(route_nl_freep) RouteNl *nl = NULL;
        int r;

        nl = calloc(1, sizeof(*nl));
        if (!nl)
                return -ENOMEM;
        r = netlink_socket_open(NETLINK_ROUTE, &nl->sk);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(nl);
        return 0;
}

RouteNl *route_nl_free(RouteNl *nl) {
        if (!nl)
                return NULL;
        nl_socket_free(nl->sk);
        free(nl);
        return NULL;
}

struct nl_sock *route_nl_socket(RouteNl *nl) {
        return nl->sk;
}

/*
 * Maps libnl's -NLE_* code from parsing the kernel's answer. Every code but one for memory
 * means a malformed message. The link parser also requires IFLA_IFNAME, which the kernel always sends.
 */
static int parse_errno(int nle) {
        int r = netlink_errno_from_nle(nle);

        return r == -ENOMEM ? r : -EBADMSG;
}

/* Returns -1 when the getter says "not there" with -NLE_NOATTR, and 0 or 1 for a setting. */
static int vf_flag(int (*get)(struct rtnl_link_vf *, uint32_t *), struct rtnl_link_vf *vf) {
        uint32_t v;

        return get(vf, &v) < 0 ? -1 : !!v;
}

static int vf_from_libnl(struct rtnl_link_vf *vf, VfLink *ret) {
        VfLink v = { .spoofchk = -1, .trust = -1, .link_state = -1 };
        nl_vf_vlans_t *vlans = NULL;
        struct nl_vf_rate rate;
        struct nl_addr *addr;
        uint32_t index, ls;

        /* The kernel always sends the MAC, and libnl takes the VF index from it. */
        if (rtnl_link_vf_get_index(vf, &index) < 0 || rtnl_link_vf_get_addr(vf, &addr) < 0 ||
            nl_addr_get_len(addr) < sizeof(v.mac))
                return -EBADMSG;
        v.vf = index;
        memcpy(v.mac, nl_addr_get_binary_addr(addr), sizeof(v.mac));

        if (rtnl_link_vf_get_vlans(vf, &vlans) == 0) {
                /* The kernel's list holds the one VLAN that ndo_get_vf_config() reports. */
                if (vlans->size >= 1) {
                        v.vlan = vlans->vlans[0].vf_vlan;
                        v.qos = vlans->vlans[0].vf_vlan_qos;
                }
                rtnl_link_vf_vlan_put(vlans);
        }
        if (rtnl_link_vf_get_rate(vf, &rate) == 0) {
                if (rate.api == RTNL_LINK_VF_RATE_API_NEW) {
                        v.min_tx_rate = rate.min_tx_rate;
                        v.max_tx_rate = rate.max_tx_rate;
                } else
                        /* Kernels before 3.16 know only the maximum. */
                        v.max_tx_rate = rate.rate;
        }
        v.spoofchk = vf_flag(rtnl_link_vf_get_spoofchk, vf);
        v.trust = vf_flag(rtnl_link_vf_get_trust, vf);
        if (rtnl_link_vf_get_linkstate(vf, &ls) == 0)
                v.link_state = ls <= INT_MAX ? (int) ls : -1;

        *ret = v;
        return 0;
}

static void take_link(struct nl_object *obj, void *userdata) {
        struct rtnl_link **link = userdata;

        if (!*link) {
                nl_object_get(obj);
                *link = (struct rtnl_link *) obj;
        }
}

/*
 * libnl 3.7's VF list parser has three bugs:
 * - It leaks the list when an entry fails its policy, e.g. with a short IFLA_VF_MAC or a
 *   short IFLA_VF_STATS counter.
 * - It reads the entries of IFLA_VF_VLAN_LIST without checking their length.
 * - For an empty VLAN list, it marks the VF as having VLANs but gives it no VLAN object.
 *   rtnl_link_vf_get_vlans() then dereferences NULL. After a VF with VLANs, libnl's source
 *   shows that the VF takes the earlier VF's VLANs instead.
 * The kernel never sends such a list. This function checks that none is handed to libnl.
 * It also counts all of the list's entries, whatever their type, because libnl reads each
 * one as a VF. Returns -EBADMSG if an entry is bad.
 */
static int vfinfo_entries(const struct nlmsghdr *h, size_t *ret) {
        static struct nla_policy vf_policy[IFLA_VF_MAX + 1] = {
                [IFLA_VF_MAC] = { .minlen = sizeof(struct ifla_vf_mac) },
                [IFLA_VF_VLAN] = { .minlen = sizeof(struct ifla_vf_vlan) },
                [IFLA_VF_VLAN_LIST] = { .type = NLA_NESTED },
                [IFLA_VF_TX_RATE] = { .minlen = sizeof(struct ifla_vf_tx_rate) },
                [IFLA_VF_SPOOFCHK] = { .minlen = sizeof(struct ifla_vf_spoofchk) },
                [IFLA_VF_RATE] = { .minlen = sizeof(struct ifla_vf_rate) },
                [IFLA_VF_LINK_STATE] = { .minlen = sizeof(struct ifla_vf_link_state) },
                [IFLA_VF_RSS_QUERY_EN] = { .minlen = sizeof(struct ifla_vf_rss_query_en) },
                [IFLA_VF_STATS] = { .type = NLA_NESTED },
                [IFLA_VF_TRUST] = { .minlen = sizeof(struct ifla_vf_trust) },
                [IFLA_VF_IB_NODE_GUID] = { .minlen = sizeof(struct ifla_vf_guid) },
                [IFLA_VF_IB_PORT_GUID] = { .minlen = sizeof(struct ifla_vf_guid) },
        };
        /* These are the six counters that libnl 3.7 reads, up to RTNL_LINK_VF_STATS_MAX, as its policy has them. */
        static struct nla_policy stats_policy[IFLA_VF_STATS_MULTICAST + 1] = {
                [IFLA_VF_STATS_RX_PACKETS] = { .type = NLA_U64 }, [IFLA_VF_STATS_TX_PACKETS] = { .type = NLA_U64 },
                [IFLA_VF_STATS_RX_BYTES] = { .type = NLA_U64 },   [IFLA_VF_STATS_TX_BYTES] = { .type = NLA_U64 },
                [IFLA_VF_STATS_BROADCAST] = { .type = NLA_U64 },  [IFLA_VF_STATS_MULTICAST] = { .type = NLA_U64 },
        };
        struct nlattr *list, *info, *a;
        size_t n = 0;
        int rem, rem2;

        list = nlmsg_find_attr((struct nlmsghdr *) h, sizeof(struct ifinfomsg), IFLA_VFINFO_LIST);
        if (list)
                nla_for_each_nested(info, list, rem) {
                        struct nlattr *tb[IFLA_VF_MAX + 1], *st[IFLA_VF_STATS_MULTICAST + 1];
                        size_t n_vlans = 0;

                        if (nla_parse_nested(tb, IFLA_VF_MAX, info, vf_policy) < 0)
                                return -EBADMSG;
                        if (tb[IFLA_VF_VLAN_LIST]) {
                                nla_for_each_nested(a, tb[IFLA_VF_VLAN_LIST], rem2) {
                                        if (nla_len(a) < (int) sizeof(struct ifla_vf_vlan_info))
                                                return -EBADMSG;
                                        n_vlans++;
                                }
                                if (n_vlans == 0)
                                        return -EBADMSG;
                        }
                        if (tb[IFLA_VF_STATS] &&
                            nla_parse_nested(st, IFLA_VF_STATS_MULTICAST, tb[IFLA_VF_STATS], stats_policy) < 0)
                                return -EBADMSG;
                        n++;
                }
        *ret = n;
        return 0;
}

static int vf_link_cmp(const void *a, const void *b) {
        unsigned x = ((const VfLink *) a)->vf, y = ((const VfLink *) b)->vf;
        return (x > y) - (x < y);
}

int vf_links_parse(const struct nlmsghdr *h, VfLink **ret, size_t *ret_n) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        _cleanup_(rtnl_link_putp) struct rtnl_link *link = NULL;
        _cleanup_free_ VfLink *vfs = NULL;
        size_t n = 0, entries;
        uint32_t num_vf = 0;
        int r;

        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(struct ifinfomsg)))
                return -EBADMSG;
        r = vfinfo_entries(h, &entries);
        if (r < 0)
                return r;
        /* libnl's prototypes lack the const, so libnl parses a copy. The link cache's parser reads that copy. */
        msg = nlmsg_convert((struct nlmsghdr *) h);
        if (!msg)
                return -ENOMEM;
        nlmsg_set_proto(msg, NETLINK_ROUTE);
        r = nl_msg_parse(msg, take_link, &link);
        if (r < 0)
                return parse_errno(r);
        if (!link)
                return -EBADMSG;

        if (rtnl_link_has_vf_list(link) && rtnl_link_get_num_vf(link, &num_vf) == 0 && entries > 0) {
                vfs = calloc(entries, sizeof(*vfs));
                if (!vfs)
                        return -ENOMEM;
                for (uint32_t i = 0; i < num_vf && i <= VF_INDEX_MAX && n < entries; i++) {
                        _cleanup_(rtnl_link_vf_putp) struct rtnl_link_vf *vf = rtnl_link_vf_get(link, i);

                        if (!vf)
                                continue;  /* the kernel left the VF out because ndo_get_vf_config() failed for it */
                        r = vf_from_libnl(vf, &vfs[n]);
                        if (r < 0)
                                return r;
                        n++;
                }
        }
        if (n != entries)
                return -EBADMSG;

        qsort_safe(vfs, n, sizeof(*vfs), vf_link_cmp);
        *ret = n > 0 ? TAKE_PTR(vfs) : NULL;
        *ret_n = n;
        return 0;
}

typedef struct VfRead {
        int ifindex;
        VfLink *vfs;
        size_t n;
        bool seen;
} VfRead;

static int on_link(struct nl_msg *msg, void *userdata) {
        VfRead *rd = userdata;
        const struct nlmsghdr *h = nlmsg_hdr(msg);
        const struct ifinfomsg *ifi;
        int r;

        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(*ifi)))
                return NL_SKIP;
        ifi = nlmsg_data(h);
        if (ifi->ifi_index != rd->ifindex || rd->seen)
                return NL_SKIP;
        r = vf_links_parse(h, &rd->vfs, &rd->n);
        if (r < 0)
                return r;
        rd->seen = true;
        return NL_OK;
}

int route_nl_read_vfs(RouteNl *nl, int ifindex, VfLink **ret, size_t *ret_n, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        VfRead rd = { .ifindex = ifindex };
        int r;

        nl_error_clear(err);
        /* libnl asserts on an ifindex <= 0 without a name. The kernel would answer ENODEV. */
        if (ifindex <= 0)
                return -ENODEV;
        /* This is an RTM_GETLINK for one ifindex with IFLA_EXT_MASK = RTEXT_FILTER_VF.
         * It is not a dump, so the VF list has no size limit. */
        r = rtnl_link_build_get_request(ifindex, NULL, &msg);
        if (r < 0)
                return netlink_errno_from_nle(r);

        r = netlink_transact(nl->sk, msg, on_link, &rd, err);
        if (r >= 0 && !rd.seen)
                r = -EBADMSG;
        if (r < 0) {
                free(rd.vfs);
                return r;
        }

        *ret = rd.vfs;
        *ret_n = rd.n;
        return 0;
}

static bool vf_link_change_any(const VfLinkChange *c) {
        return c->set_mac || c->set_vlan || c->set_rate ||
               c->spoofchk >= 0 || c->trust >= 0 || c->link_state >= 0;
}

/* Turns the VF settings that c asks for into libnl's VF object.
 * Returns how many IFLA_VF_* attributes they make. */
static int vf_to_libnl(const VfLinkChange *c, struct rtnl_link_vf **ret) {
        _cleanup_(rtnl_link_vf_putp) struct rtnl_link_vf *vf = NULL;
        int n = 0;

        vf = rtnl_link_vf_alloc();
        if (!vf)
                return -ENOMEM;
        rtnl_link_vf_set_index(vf, c->vf);
        if (c->set_mac) {
                _cleanup_(nl_addr_putp) struct nl_addr *a = nl_addr_build(AF_LLC, c->mac, sizeof(c->mac));
                if (!a)
                        return -ENOMEM;
                rtnl_link_vf_set_addr(vf, a);
                n++;
        }
        if (c->set_vlan) {
                nl_vf_vlans_t *vlans = NULL;

                /* libnl sends one 802.1Q VLAN as IFLA_VF_VLAN, not as IFLA_VF_VLAN_LIST. */
                if (rtnl_link_vf_vlan_alloc(&vlans, 1) < 0)
                        return -ENOMEM;
                vlans->vlans[0] = (nl_vf_vlan_info_t) { .vf_vlan = c->vlan, .vf_vlan_qos = c->qos,
                                                        .vf_vlan_proto = ETH_P_8021Q };
                rtnl_link_vf_set_vlans(vf, vlans);
                rtnl_link_vf_vlan_put(vlans);
                n++;
        }
        if (c->set_rate) {
                struct nl_vf_rate rate = { .api = RTNL_LINK_VF_RATE_API_NEW, .min_tx_rate = c->min_tx_rate,
                                           .max_tx_rate = c->max_tx_rate };
                rtnl_link_vf_set_rate(vf, &rate);
                n++;
        }
        if (c->spoofchk >= 0) {
                rtnl_link_vf_set_spoofchk(vf, (uint32_t) c->spoofchk);
                n++;
        }
        if (c->link_state >= 0) {
                rtnl_link_vf_set_linkstate(vf, (uint32_t) c->link_state);
                n++;
        }
        if (c->trust >= 0) {
                rtnl_link_vf_set_trust(vf, (uint32_t) c->trust);
                n++;
        }
        *ret = TAKE_PTR(vf);
        return n;
}

/*
 * Turns libnl's change request into the one that sriovd sends. That is an RTM_SETLINK that
 * holds exactly IFLA_VFINFO_LIST with one IFLA_VF_INFO of n_attrs attributes. The vm suite
 * showed igb taking this request. libnl's empty IFLA_AF_SPEC container is not there, because
 * nla_nest_end() drops it since libnl 3.5, the minimum version. test-vf-netlink compares the
 * bytes of the request. Returns -EPROTO if libnl built anything else, so that anything libnl
 * might add one day fails the request and that test instead of going out.
 */
static int as_setlink(struct nl_msg *msg, int n_attrs) {
        struct nlmsghdr *h = nlmsg_hdr(msg);
        struct nlattr *a, *list = NULL, *info = NULL;
        int rem, n_top = 0, n_info = 0, n = 0;

        if (h->nlmsg_type != RTM_NEWLINK && h->nlmsg_type != RTM_SETLINK)
                return -EPROTO;
        h->nlmsg_type = RTM_SETLINK;
        nlmsg_for_each_attr(a, h, sizeof(struct ifinfomsg), rem) {
                n_top++;
                list = a;
        }
        if (n_top != 1 || nla_type(list) != IFLA_VFINFO_LIST)
                return -EPROTO;
        nla_for_each_nested(a, list, rem) {
                n_info++;
                info = a;
        }
        if (n_info != 1 || nla_type(info) != IFLA_VF_INFO)
                return -EPROTO;
        nla_for_each_nested(a, info, rem)
                n++;
        /* libnl's filler returns success even when it left out an attribute that it could not put. */
        return n == n_attrs ? 0 : -EMSGSIZE;
}

int route_nl_build_set_vf(int ifindex, const VfLinkChange *c, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        _cleanup_(rtnl_link_putp) struct rtnl_link *orig = NULL, *changes = NULL;
        _cleanup_(rtnl_link_vf_putp) struct rtnl_link_vf *vf = NULL;
        int n, r;

        if (ifindex <= 0 || c->vf >= INT_MAX)
                return -EINVAL;
        if (c->set_vlan && (c->vlan > 4095 || c->qos > 7))
                return -EINVAL;
        if (c->spoofchk < -1 || c->spoofchk > 1 || c->trust < -1 || c->trust > 1)
                return -EINVAL;
        if (c->link_state < -1 || c->link_state > IFLA_VF_LINK_STATE_DISABLE)
                return -EINVAL;
        if (!vf_link_change_any(c))
                return -ENODATA;

        /* orig holds only what the request needs from the link: its ifindex, with family AF_UNSPEC and no flags. */
        orig = rtnl_link_alloc();
        changes = rtnl_link_alloc();
        if (!orig || !changes)
                return -ENOMEM;
        rtnl_link_set_ifindex(orig, ifindex);
        n = vf_to_libnl(c, &vf);
        if (n < 0)
                return n;
        r = rtnl_link_vf_add(changes, vf);
        if (r < 0)
                return netlink_errno_from_nle(r);

        /* changes has no flags, so ifi_flags and ifi_change are 0, and the kernel leaves the PF's flags alone. */
        r = rtnl_link_build_change_request(orig, changes, NLM_F_REQUEST | NLM_F_ACK, &msg);
        if (r < 0)
                return netlink_errno_from_nle(r);
        r = as_setlink(msg, n);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(msg);
        return 0;
}

int route_nl_set_vf(RouteNl *nl, int ifindex, const VfLinkChange *c, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        int r;

        nl_error_clear(err);
        r = route_nl_build_set_vf(ifindex, c, &msg);
        if (r == -ENODATA)
                return 0;
        if (r < 0)
                return r;
        return netlink_transact(nl->sk, msg, NULL, NULL, err);
}

int route_nl_build_set_link_up(int ifindex, bool up, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        struct ifinfomsg ifi = {
                .ifi_family = AF_UNSPEC, .ifi_index = ifindex, .ifi_flags = up ? IFF_UP : 0, .ifi_change = IFF_UP,
        };

        if (ifindex <= 0)
                return -EINVAL;
        msg = nlmsg_alloc_simple(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK);
        if (!msg)
                return -ENOMEM;
        if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0)
                return -EMSGSIZE;
        *ret = TAKE_PTR(msg);
        return 0;
}

int route_nl_set_link_up(RouteNl *nl, int ifindex, bool up, NlError *err) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        int r;

        nl_error_clear(err);
        r = route_nl_build_set_link_up(ifindex, up, &msg);
        if (r < 0)
                return r;
        return netlink_transact(nl->sk, msg, NULL, NULL, err);
}
