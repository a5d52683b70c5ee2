/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-monitor.c — rtnetlink link notifications through libnl, to learn which links just came up */

#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include "sriovd/monitor.h"

struct LinkMonitor {
        struct nl_sock *sock;
        LinkEventFn fn;
        void *userdata;
};

static int on_message(struct nl_msg *msg, void *arg) {
        LinkMonitor *m = arg;
        struct nlmsghdr *h = nlmsg_hdr(msg);
        const struct ifinfomsg *ifi;

        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(*ifi)))
                return NL_OK;
        ifi = nlmsg_data(h);
        /* Only the transition to up matters, because that is when drivers request their vectors. */
        if ((ifi->ifi_change & IFF_UP) && (ifi->ifi_flags & IFF_UP) && ifi->ifi_index > 0)
                m->fn(ifi->ifi_index, m->userdata);
        return NL_OK;
}

/* libnl returns -NLE_* codes. The socket calls below fail only for these few reasons from the kernel. */
static int nl_to_errno(int r) {
        return r == -NLE_NOMEM ? -ENOMEM : r == -NLE_PERM ? -EPERM : r == -NLE_AGAIN ? -EAGAIN : -EIO;
}

int link_monitor_new(LinkEventFn fn, void *userdata, LinkMonitor **ret) {
        _cleanup_(link_monitor_freep) LinkMonitor *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->fn = fn;
        m->userdata = userdata;
        m->sock = nl_socket_alloc();
        if (!m->sock)
                return -ENOMEM;
        /* Notifications carry the kernel's sequence numbers, not sriovd's, so the check is off. */
        nl_socket_disable_seq_check(m->sock);
        r = nl_socket_modify_cb(m->sock, NL_CB_VALID, NL_CB_CUSTOM, on_message, m);
        if (r < 0)
                return nl_to_errno(r);
        r = nl_connect(m->sock, NETLINK_ROUTE);
        if (r < 0)
                return nl_to_errno(r);
        r = nl_socket_add_membership(m->sock, RTNLGRP_LINK);
        if (r < 0)
                return nl_to_errno(r);
        r = nl_socket_set_nonblocking(m->sock);
        if (r < 0)
                return nl_to_errno(r);

        *ret = TAKE_PTR(m);
        return 0;
}

LinkMonitor *link_monitor_free(LinkMonitor *m) {
        if (!m)
                return NULL;
        nl_socket_free(m->sock);
        free(m);
        return NULL;
}

int link_monitor_fd(const LinkMonitor *m) {
        return nl_socket_get_fd(m->sock);
}

int link_monitor_dispatch(LinkMonitor *m) {
        for (;;) {
                int r = nl_recvmsgs_default(m->sock);
                if (r == -NLE_AGAIN)
                        return 0;
                /* A burst can overflow the socket buffer. Events were lost, so the callback re-checks all links. */
                if (r == -NLE_NOMEM || r == -NLE_MSG_OVERFLOW) {
                        m->fn(0, m->userdata);
                        continue;
                }
                if (r < 0)
                        return nl_to_errno(r);
        }
}
