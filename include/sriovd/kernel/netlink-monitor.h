/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink-monitor.h — a netlink socket that joins multicast groups and hands each message to a callback */
#pragma once

#include <netlink/msg.h>
#include <netlink/socket.h>

#include "sriovd/shared/macro.h"

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
