/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-netlink.h — the VF attributes of a PF netdev, read and set by ifindex over rtnetlink */
#pragma once

#include <stdbool.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/netlink.h"

/* VfLink, VfLinkChange and VF_LINK_CHANGE_NULL are declared in inventory.h, and vf_link_diff() in plan.h. */

/* A NETLINK_ROUTE socket, opened once and reused. It is not for concurrent use. */
typedef struct RouteNl RouteNl;
int route_nl_open(RouteNl **ret);
RouteNl *route_nl_free(RouteNl *nl);
DEFINE_TRIVIAL_CLEANUP_FUNC(RouteNl *, route_nl_free);
/* Returns the socket under nl, for the other rtnetlink readers such as netdev-stats.c. nl still owns it. */
struct nl_sock *route_nl_socket(RouteNl *nl);

/*
 * Reads the VF info of the netdev ifindex with RTM_GETLINK and RTEXT_FILTER_VF, sorted by vf.
 * Finding none, for a netdev without VFs, is not an error, and then *ret is NULL and *ret_n is 0.
 * The caller frees *ret with free(). Returns -ENODEV when there is no such ifindex, and -EBADMSG
 * when the kernel's VF info is malformed. err is filled in as netlink_transact() fills it.
 */
int route_nl_read_vfs(RouteNl *nl, int ifindex, VfLink **ret, size_t *ret_n, NlError *err);

/*
 * Parses the IFLA_VFINFO_LIST of an RTM_NEWLINK message into *ret, sorted by vf. It does no I/O.
 * It reads with libnl-route's link parser and the rtnl_link_vf_* getters. Finding none is not an
 * error, and then *ret is NULL and *ret_n is 0. The caller frees *ret. Returns -EBADMSG when h is
 * not an RTM_NEWLINK or has no IFLA_IFNAME, which libnl wants. It also returns -EBADMSG when the
 * VF info is malformed. That is an entry that libnl's policy refuses, or one that its lookup by
 * VF index cannot reach. Such an entry has no IFLA_VF_MAC, repeats a VF index, or has one beyond
 * IFLA_NUM_VF.
 */
int vf_links_parse(const struct nlmsghdr *h, VfLink **ret, size_t *ret_n);

/*
 * Sends one RTM_SETLINK that carries only what c asks to change. Returns 0 or a negative errno,
 * and err holds the kernel's extack text. A change that asks for nothing sends nothing and
 * returns 0. The change is not atomic. The kernel applies MAC, VLAN, rate, spoofchk, link state
 * and trust in that order, and it stops at the first driver error. So after a failure, read back
 * what took effect.
 */
int route_nl_set_vf(RouteNl *nl, int ifindex, const VfLinkChange *c, NlError *err);

/*
 * Builds the request that route_nl_set_vf() sends, for message-level tests. The caller frees *ret
 * with nlmsg_free(). rtnl_link_build_change_request() builds it from rtnl_link_vf_* objects, and
 * it is sent as RTM_SETLINK. Returns -EINVAL for values out of range: a vlan above 4095, a qos
 * above 7, a spoofchk or trust other than -1, 0 or 1, an unknown link state, or an ifindex of 0
 * or less. Returns -ENODATA when c asks for nothing. Returns -EPROTO or -EMSGSIZE when libnl's
 * request holds more or less than c asks.
 */
int route_nl_build_set_vf(int ifindex, const VfLinkChange *c, struct nl_msg **ret);

/*
 * Sends an RTM_SETLINK that sets IFF_UP of ifindex when up is true, or clears it, and changes
 * nothing else. Returns 0 or a negative errno, and err holds the extack text.
 */
int route_nl_set_link_up(RouteNl *nl, int ifindex, bool up, NlError *err);
/*
 * Builds the request that route_nl_set_link_up() sends, for message-level tests. Returns -EINVAL
 * for an ifindex of 0 or less.
 */
int route_nl_build_set_link_up(int ifindex, bool up, struct nl_msg **ret);
