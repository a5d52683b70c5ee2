/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-monitor.c — rtnetlink link notifications through libnl, to learn which links just came up */

#include <linux/rtnetlink.h>
#include <net/if.h>

#include "sriovd/kernel/device-monitor.h"
#include "sriovd/kernel/link-monitor.h"
#include "sriovd/kernel/netlink-monitor.h"
#include "sriovd/kernel/netlink.h"
#include "sriovd/kernel/vf-netlink.h"

struct LinkMonitor {
        NetlinkMonitor *nl;
        LinkEventFn fn;
        void *userdata;
};

static void on_message(const struct nlmsghdr *h, void *userdata) {
        LinkMonitor *m = userdata;
        const struct ifinfomsg *ifi;

        /* Events were lost, so the callback re-checks all links. */
        if (!h) {
                m->fn(0, m->userdata);
                return;
        }
        if (h->nlmsg_type != RTM_NEWLINK || !nlmsg_valid_hdr(h, sizeof(*ifi)))
                return;
        ifi = nlmsg_data(h);
        /* Only the transition to up matters, because that is when drivers request their vectors. */
        if ((ifi->ifi_change & IFF_UP) && (ifi->ifi_flags & IFF_UP) && ifi->ifi_index > 0)
                m->fn(ifi->ifi_index, m->userdata);
}

int link_monitor_new(LinkEventFn fn, void *userdata, LinkMonitor **ret) {
        _cleanup_(link_monitor_freep) LinkMonitor *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->fn = fn;
        m->userdata = userdata;
        r = netlink_monitor_new(NETLINK_ROUTE, on_message, m, &m->nl);
        if (r < 0)
                return r;
        r = netlink_monitor_join(m->nl, RTNLGRP_LINK);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

LinkMonitor *link_monitor_free(LinkMonitor *m) {
        if (!m)
                return NULL;
        netlink_monitor_free(m->nl);
        free(m);
        return NULL;
}

int link_monitor_fd(const LinkMonitor *m) {
        return netlink_monitor_fd(m->nl);
}

int link_monitor_dispatch(LinkMonitor *m) {
        return netlink_monitor_dispatch(m->nl);
}
