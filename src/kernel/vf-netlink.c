/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-netlink.c — VF MAC, VLAN, rate, spoofchk, trust and link state of a PF over rtnetlink */

#include <limits.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/route/link.h>
#include <string.h>
#include <sys/socket.h>

#include "sriovd/netlink.h"

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

/* Every IFLA_VF_* struct starts with __u32 vf; minlen makes nla_data() safe to copy from. */
static struct nla_policy vf_policy[IFLA_VF_MAX + 1] = {
        [IFLA_VF_MAC] = { .minlen = sizeof(struct ifla_vf_mac) },
        [IFLA_VF_VLAN] = { .minlen = sizeof(struct ifla_vf_vlan) },
        [IFLA_VF_TX_RATE] = { .minlen = sizeof(struct ifla_vf_tx_rate) },
        [IFLA_VF_SPOOFCHK] = { .minlen = sizeof(struct ifla_vf_spoofchk) },
        [IFLA_VF_LINK_STATE] = { .minlen = sizeof(struct ifla_vf_link_state) },
        [IFLA_VF_RATE] = { .minlen = sizeof(struct ifla_vf_rate) },
        [IFLA_VF_TRUST] = { .minlen = sizeof(struct ifla_vf_trust) },
};

static struct nla_policy link_policy[IFLA_MAX + 1] = {
        [IFLA_VFINFO_LIST] = { .type = NLA_NESTED },
};

/*
 * The kernel presets spoofchk and trust to (u32) -1 before asking the driver,
 * so a driver that does not report them shows up as -1, not as "off".
 */
static int vf_setting(const struct nlattr *a) {
        struct ifla_vf_spoofchk s; /* same layout as ifla_vf_trust */

        if (!a)
                return -1;
        nla_memcpy(&s, a, sizeof(s));
        return s.setting == UINT32_MAX ? -1 : !!s.setting;
}

static int vf_info_parse(struct nlattr *info, VfLink *ret) {
        struct nlattr *tb[IFLA_VF_MAX + 1];
        struct ifla_vf_mac mac;
        VfLink v = { .spoofchk = -1, .trust = -1, .link_state = -1 };

        if (nla_parse_nested(tb, IFLA_VF_MAX, info, vf_policy) < 0)
                return -EBADMSG;
        /* The kernel always sends the MAC; it is our only source of the VF index. */
        if (!tb[IFLA_VF_MAC])
                return -EBADMSG;
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
                /* Pre-3.16 kernels know only the maximum. */
                struct ifla_vf_tx_rate rate;
                nla_memcpy(&rate, tb[IFLA_VF_TX_RATE], sizeof(rate));
                v.max_tx_rate = rate.rate;
        }
        v.spoofchk = vf_setting(tb[IFLA_VF_SPOOFCHK]);
        v.trust = vf_setting(tb[IFLA_VF_TRUST]);
        if (tb[IFLA_VF_LINK_STATE]) {
                struct ifla_vf_link_state ls;
                nla_memcpy(&ls, tb[IFLA_VF_LINK_STATE], sizeof(ls));
                v.link_state = ls.link_state <= INT_MAX ? (int) ls.link_state : -1;
        }

        *ret = v;
        return 0;
}

static int vf_link_cmp(const void *a, const void *b) {
        unsigned x = ((const VfLink *) a)->vf, y = ((const VfLink *) b)->vf;
        return (x > y) - (x < y);
}

int vf_links_parse(const struct nlmsghdr *h, VfLink **ret, size_t *ret_n) {
        _cleanup_free_ VfLink *vfs = NULL;
        size_t n = 0, allocated = 0;
        struct nlattr *tb[IFLA_MAX + 1], *a;
        int rem, r;

        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(struct ifinfomsg)))
                return -EBADMSG;
        /* libnl's parser does not write to the message; its prototype just lacks the const. */
        if (nlmsg_parse((struct nlmsghdr *) h, sizeof(struct ifinfomsg), tb, IFLA_MAX, link_policy) < 0)
                return -EBADMSG;

        if (tb[IFLA_VFINFO_LIST]) {
                nla_for_each_nested(a, tb[IFLA_VFINFO_LIST], rem) {
                        if (nla_type(a) != IFLA_VF_INFO)
                                continue;
                        if (GREEDY_REALLOC(vfs, allocated, n + 1) < 0)
                                return -ENOMEM;
                        r = vf_info_parse(a, &vfs[n]);
                        if (r < 0)
                                return r;
                        n++;
                }
        }

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
        /* libnl asserts on ifindex <= 0 without a name; the kernel would say ENODEV. */
        if (ifindex <= 0)
                return -ENODEV;
        /* RTM_GETLINK for one ifindex with IFLA_EXT_MASK = RTEXT_FILTER_VF: no dump, so no
         * size limit on the VF list. */
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

int route_nl_build_set_vf(int ifindex, const VfLinkChange *c, struct nl_msg **ret) {
        _cleanup_(nlmsg_freep) struct nl_msg *msg = NULL;
        /* ifi_flags = ifi_change = 0: the kernel leaves the PF's flags alone. */
        struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex };
        struct nlattr *list, *info;

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

        /*
         * Built with libnl's attribute API rather than rtnl_link_vf_* and
         * rtnl_link_build_change_request(): that one sends RTM_NEWLINK (and
         * rtnl_link_change() re-sends as RTM_SETLINK on EOPNOTSUPP, so a driver
         * without the op is asked twice), later libnl versions add an empty
         * IFLA_AF_SPEC, and its VF filler ignores put failures. This way the
         * request holds exactly what c asks for.
         */
        msg = nlmsg_alloc_simple(RTM_SETLINK, NLM_F_REQUEST | NLM_F_ACK);
        if (!msg)
                return -ENOMEM;
        if (nlmsg_append(msg, &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0)
                return -EMSGSIZE;
        list = nla_nest_start(msg, IFLA_VFINFO_LIST);
        if (!list)
                return -EMSGSIZE;
        info = nla_nest_start(msg, IFLA_VF_INFO);
        if (!info)
                return -EMSGSIZE;

        if (c->set_mac) {
                struct ifla_vf_mac m = { .vf = c->vf };
                memcpy(m.mac, c->mac, sizeof(c->mac));
                if (nla_put(msg, IFLA_VF_MAC, sizeof(m), &m) < 0)
                        return -EMSGSIZE;
        }
        if (c->set_vlan) {
                /* IFLA_VF_VLAN is 802.1Q; 802.1ad would need IFLA_VF_VLAN_LIST. */
                struct ifla_vf_vlan v = { .vf = c->vf, .vlan = c->vlan, .qos = c->qos };
                if (nla_put(msg, IFLA_VF_VLAN, sizeof(v), &v) < 0)
                        return -EMSGSIZE;
        }
        if (c->set_rate) {
                struct ifla_vf_rate v = { .vf = c->vf, .min_tx_rate = c->min_tx_rate,
                                          .max_tx_rate = c->max_tx_rate };
                if (nla_put(msg, IFLA_VF_RATE, sizeof(v), &v) < 0)
                        return -EMSGSIZE;
        }
        if (c->spoofchk >= 0) {
                struct ifla_vf_spoofchk v = { .vf = c->vf, .setting = (uint32_t) c->spoofchk };
                if (nla_put(msg, IFLA_VF_SPOOFCHK, sizeof(v), &v) < 0)
                        return -EMSGSIZE;
        }
        if (c->link_state >= 0) {
                struct ifla_vf_link_state v = { .vf = c->vf, .link_state = (uint32_t) c->link_state };
                if (nla_put(msg, IFLA_VF_LINK_STATE, sizeof(v), &v) < 0)
                        return -EMSGSIZE;
        }
        if (c->trust >= 0) {
                struct ifla_vf_trust v = { .vf = c->vf, .setting = (uint32_t) c->trust };
                if (nla_put(msg, IFLA_VF_TRUST, sizeof(v), &v) < 0)
                        return -EMSGSIZE;
        }

        if (nla_nest_end(msg, info) < 0 || nla_nest_end(msg, list) < 0)
                return -EMSGSIZE;
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
