/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink.h — netlink requests that keep the kernel's own errno and extack text, and VF config over rtnetlink */
#pragma once

#include <linux/if_link.h> /* IFLA_VF_LINK_STATE_AUTO/ENABLE/DISABLE */
#include <netlink/handlers.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <stdbool.h>
#include <stdint.h>

#include "sriovd/core/inventory.h"
#include "sriovd/shared/macro.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_msg *, nlmsg_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_sock *, nl_socket_free);
DEFINE_TRIVIAL_CLEANUP_FUNC(struct nl_cb *, nl_cb_put);

/*
 * netlink.c holds the plumbing that the rtnetlink, ethtool and netdev genl modules share.
 *
 * An NlError is what the kernel said about a request: its errno and the extended-ack text, if
 * it gave one. A successful ACK may carry a warning text too, so message can be non-empty with
 * an error of 0.
 */
typedef struct NlError {
        int error;              /* negative errno, or 0 */
        char message[256];      /* NLMSGERR_ATTR_MSG, truncated, or "" if none */
} NlError;

static inline void nl_error_clear(NlError *e) {
        if (e)
                *e = (NlError) {};
}

/*
 * Opens a connected, blocking socket of the given protocol, such as NETLINK_ROUTE or
 * NETLINK_GENERIC, with extended ACKs enabled. The caller frees it with nl_socket_free().
 * Returns 0 or a negative errno. *ret is untouched on failure.
 */
int netlink_socket_open(int protocol, struct nl_sock **ret);

/*
 * Sends msg on sk and reads until the kernel's ACK, error or NLMSG_DONE for it. The sequence
 * number and port are completed here, and NLM_F_ACK is added. Each reply message goes to
 * on_reply, which may be NULL. on_reply returns NL_OK or NL_SKIP, or a negative errno to fail
 * the transaction. The remaining replies are still drained then, so the socket stays usable. err
 * may be NULL. It is always reset, and then filled with the kernel's errno and extack text.
 *
 * Returns 0, the kernel's negative errno, on_reply's negative errno, or a negative errno for a
 * socket failure. It never returns a libnl -NLE_* code. msg stays owned by the caller. The call
 * blocks until the answer, and netlink requests to the local kernel answer at once.
 */
int netlink_transact(struct nl_sock *sk, struct nl_msg *msg, nl_recvmsg_msg_cb_t on_reply,
                     void *userdata, NlError *err);

/*
 * Parses the kernel's answer, and it does no I/O. The answer is an NLMSG_ERROR or an NLMSG_DONE.
 * An NLMSG_ERROR is an error or an ACK, with the request echoed or capped. The payload of an
 * NLMSG_DONE may carry a dump's error. It fills ret with the errno and extack text. Returns
 * -EBADMSG when h is neither or is truncated. The extack TLVs are optional, and they are ignored
 * when malformed.
 */
int netlink_error_parse(const struct nlmsghdr *h, NlError *ret);

/*
 * Returns the nearest negative errno for a libnl -NLE_* code, or for the positive code. Returns 0
 * for 0, and -EIO for a code that has no errno, such as NLE_FAILURE, or that libnl does not know.
 * This is the one translation from libnl's codes. An errno given here is read as an -NLE_* code.
 */
int netlink_errno_from_nle(int nle);

/*
 * A NetlinkMonitor is a non-blocking socket that has joined a multicast group. It hands each
 * notification to fn. The link and ethtool monitors are built on it. fn gets NULL when the
 * socket overflowed and notifications were lost. Then what changed is unknown.
 */
typedef void (*NetlinkMonitorFn)(const struct nlmsghdr *h, void *userdata);
typedef struct NetlinkMonitor NetlinkMonitor;
/*
 * Opens a connected socket of the given protocol, such as NETLINK_ROUTE or NETLINK_GENERIC. It
 * receives nothing until netlink_monitor_join(). The caller frees it with netlink_monitor_free().
 * Returns 0 or a negative errno. *ret is untouched on failure.
 */
int netlink_monitor_new(int protocol, NetlinkMonitorFn fn, void *userdata, NetlinkMonitor **ret);
NetlinkMonitor *netlink_monitor_free(NetlinkMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(NetlinkMonitor *, netlink_monitor_free);
/*
 * Returns the socket, which m still owns. Before the join it keeps libnl's default callbacks and
 * sequence checks, so a request such as resolving a generic netlink family works on it.
 */
struct nl_sock *netlink_monitor_socket(NetlinkMonitor *m);
/*
 * Joins group, routes every notification to fn and makes the socket non-blocking. It is called
 * once. Returns 0 or a negative errno.
 */
int netlink_monitor_join(NetlinkMonitor *m, int group);
/* Returns the fd to poll for input. */
int netlink_monitor_fd(const NetlinkMonitor *m);
/*
 * Reads until the socket is drained and calls fn for each notification. It never blocks. An
 * overflow calls fn with NULL, and reading goes on. Returns 0 or a negative errno.
 */
int netlink_monitor_dispatch(NetlinkMonitor *m);

/* vf-netlink.c reads and sets the VF attributes of a PF netdev, by ifindex, over rtnetlink. */
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

