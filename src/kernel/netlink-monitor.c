/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netlink-monitor.c — a non-blocking netlink socket that joins a multicast group and hands on each notification */

#include <netlink/errno.h>

#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/vf-netlink.h"

struct NetlinkMonitor {
        struct nl_sock *sk;
        NetlinkMonitorFn fn;
        void *userdata;
};

static int on_valid(struct nl_msg *msg, void *arg) {
        NetlinkMonitor *m = arg;

        m->fn(nlmsg_hdr(msg), m->userdata);
        return NL_OK;
}

int netlink_monitor_new(int protocol, NetlinkMonitorFn fn, void *userdata, NetlinkMonitor **ret) {
        _cleanup_(netlink_monitor_freep) NetlinkMonitor *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->fn = fn;
        m->userdata = userdata;
        m->sk = nl_socket_alloc();
        if (!m->sk)
                return -ENOMEM;
        r = nl_connect(m->sk, protocol);
        if (r < 0)
                return netlink_errno_from_nle(r);

        *ret = TAKE_PTR(m);
        return 0;
}

NetlinkMonitor *netlink_monitor_free(NetlinkMonitor *m) {
        if (!m)
                return NULL;
        nl_socket_free(m->sk);
        free(m);
        return NULL;
}

struct nl_sock *netlink_monitor_socket(NetlinkMonitor *m) {
        return m->sk;
}

int netlink_monitor_join(NetlinkMonitor *m, int group) {
        int r;

        /* Notifications carry the kernel's sequence numbers, not sriovd's, so the check is off. */
        nl_socket_disable_seq_check(m->sk);
        r = nl_socket_modify_cb(m->sk, NL_CB_VALID, NL_CB_CUSTOM, on_valid, m);
        if (r < 0)
                return netlink_errno_from_nle(r);
        r = nl_socket_add_membership(m->sk, group);
        if (r < 0)
                return netlink_errno_from_nle(r);
        r = nl_socket_set_nonblocking(m->sk);
        if (r < 0)
                return netlink_errno_from_nle(r);
        return 0;
}

int netlink_monitor_fd(const NetlinkMonitor *m) {
        return nl_socket_get_fd(m->sk);
}

int netlink_monitor_dispatch(NetlinkMonitor *m) {
        for (;;) {
                int r = nl_recvmsgs_default(m->sk);

                if (r == -NLE_AGAIN)
                        return 0;
                /*
                 * A burst can overflow the socket buffer, and the kernel then answers ENOBUFS,
                 * which libnl reports as -NLE_NOMEM. Notifications were lost, so fn is told to
                 * read everything again, and the rest is still received.
                 */
                if (r == -NLE_NOMEM || r == -NLE_MSG_OVERFLOW) {
                        m->fn(NULL, m->userdata);
                        continue;
                }
                if (r < 0)
                        return netlink_errno_from_nle(r);
        }
}
