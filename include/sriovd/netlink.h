/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink.h — netlink requests with the kernel's own errno and extack text; VF config over rtnetlink */
#pragma once

#include <linux/if_link.h> /* IFLA_VF_LINK_STATE_AUTO/ENABLE/DISABLE */
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdbool.h>
#include <stdint.h>

#include "sriovd/inventory.h"
#include "sriovd/macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_msg *, nlmsg_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_sock *, nl_socket_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_cb *, nl_cb_put);

/*
 * netlink.c — shared plumbing (rtnetlink here, the ethtool genl module later).
 *
 * What the kernel said about a request: its errno and, when it gave one, the
 * extended-ack text ("" otherwise). A successful ACK may carry a warning text
 * too, so message can be non-empty with error 0.
 */
typedef struct NlError {
        int error;              /* negative errno, or 0 */
        char message[256];      /* NLMSGERR_ATTR_MSG, truncated; "" if none */
} NlError;

static inline void nl_error_clear(NlError *e) {
        if (e)
                *e = (NlError) {};
}

/*
 * A connected, blocking socket of the given protocol (NETLINK_ROUTE,
 * NETLINK_GENERIC) with extended ACKs enabled. The caller frees it with
 * nl_socket_free(). 0 or negative errno; *ret untouched on failure.
 */
int netlink_socket_open(int protocol, struct nl_sock **ret);

/*
 * Send msg on sk (sequence number and port completed here, NLM_F_ACK added)
 * and read until the kernel's ACK, error or NLMSG_DONE for it. Each reply
 * message goes to on_reply (may be NULL); it returns NL_OK/NL_SKIP, or a
 * negative errno to fail the transaction (the remaining replies are still
 * drained, so the socket stays usable). err (may be NULL) is always reset,
 * then filled with the kernel's errno and extack text.
 *
 * Returns 0, the kernel's negative errno, on_reply's negative errno, or a
 * negative errno for a socket failure. Never a libnl -NLE_* code. msg stays
 * owned by the caller. Blocks until the answer; netlink requests to the local
 * kernel answer at once.
 */
int netlink_transact(struct nl_sock *sk, struct nl_msg *msg, nl_recvmsg_msg_cb_t on_reply,
                     void *userdata, NlError *err);

/*
 * Pure parser of the kernel's answer: an NLMSG_ERROR (error or ACK, the
 * request echoed or capped) or an NLMSG_DONE (whose payload may carry a dump's
 * error). Fills ret with the errno and extack text; -EBADMSG if h is neither
 * or is truncated. The extack TLVs are optional, and ignored if malformed.
 */
int netlink_error_parse(const struct nlmsghdr *h, NlError *ret);

/* A libnl -NLE_* code (or an -errno, passed through) as the nearest negative errno. */
int netlink_errno_from_nle(int nle);

/* vf-netlink.c — VF attributes of a PF netdev, by ifindex, over rtnetlink. */
/* VfLink, VfLinkChange and VF_LINK_CHANGE_NULL are in inventory.h; vf_link_diff() in plan.h. */

/* A NETLINK_ROUTE socket, opened once and reused; not for concurrent use. */
typedef struct RouteNl RouteNl;
int route_nl_open(RouteNl **ret);
RouteNl *route_nl_free(RouteNl *nl);
DEFINE_TRIVIAL_CLEANUP_FUNC(RouteNl *, route_nl_free);
/* The socket under nl, for the other rtnetlink readers (netdev-stats.c); still nl's. */
struct nl_sock *route_nl_socket(RouteNl *nl);

/*
 * VF info of the netdev ifindex (RTM_GETLINK with RTEXT_FILTER_VF), sorted by
 * vf; none (a netdev without VFs) is not an error: *ret NULL, *ret_n 0.
 * *ret is freed by the caller with free(). -ENODEV for no such ifindex;
 * -EBADMSG if the kernel's VF info is malformed. err as for netlink_transact().
 */
int route_nl_read_vfs(RouteNl *nl, int ifindex, VfLink **ret, size_t *ret_n, NlError *err);

/*
 * Pure parser of an RTM_NEWLINK message: its IFLA_VFINFO_LIST, sorted by vf,
 * read by libnl-route's link parser and rtnl_link_vf_* getters. None is not an
 * error (*ret NULL, *ret_n 0); *ret freed by the caller. -EBADMSG if h is not
 * an RTM_NEWLINK, has no IFLA_IFNAME (libnl wants one), or its VF info is
 * malformed: an entry libnl's policy refuses, or one its lookup by VF index
 * cannot reach (no IFLA_VF_MAC, a VF index twice, one beyond IFLA_NUM_VF).
 */
int vf_links_parse(const struct nlmsghdr *h, VfLink **ret, size_t *ret_n);

/*
 * One RTM_SETLINK carrying only what c asks to change; 0 or negative errno
 * (+ the kernel's extack text in err). A change that asks for nothing sends
 * nothing and returns 0. Not atomic: the kernel applies MAC, VLAN, rate,
 * spoofchk, link state, trust in that order and stops at the first driver
 * error, so after a failure read back what took effect.
 */
int route_nl_set_vf(RouteNl *nl, int ifindex, const VfLinkChange *c, NlError *err);

/*
 * The request route_nl_set_vf() sends, for message-level tests; freed by the
 * caller with nlmsg_free(). Built from rtnl_link_vf_* objects by
 * rtnl_link_build_change_request(), sent as RTM_SETLINK. -EINVAL for
 * out-of-range values (vlan > 4095, qos > 7, spoofchk/trust not -1/0/1,
 * unknown link state, ifindex <= 0), -ENODATA when c asks for nothing,
 * -EPROTO/-EMSGSIZE when libnl's request holds more or less than c asks.
 */
int route_nl_build_set_vf(int ifindex, const VfLinkChange *c, struct nl_msg **ret);

/* RTM_SETLINK setting (up) or clearing IFF_UP of ifindex only; 0 or negative errno (+ extack in err). */
int route_nl_set_link_up(RouteNl *nl, int ifindex, bool up, NlError *err);
/* The request route_nl_set_link_up() sends, for message-level tests; -EINVAL for ifindex <= 0. */
int route_nl_build_set_link_up(int ifindex, bool up, struct nl_msg **ret);

