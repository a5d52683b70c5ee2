/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* link-monitor.h — links coming up, from rtnetlink, which make sriovd check again at once */
#pragma once

#include "sriovd/shared/macro.h"

/*
 * The link monitor reports links coming up, through rtnetlink and libnl-route. It matters because
 * drivers request their IRQs again when a link is opened. fn gets the link's ifindex. It gets 0
 * when notifications were lost, and then which links came up is unknown.
 */
typedef void (*LinkEventFn)(int ifindex, void *userdata);
typedef struct LinkMonitor LinkMonitor;
int link_monitor_new(LinkEventFn fn, void *userdata, LinkMonitor **ret);
LinkMonitor *link_monitor_free(LinkMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkMonitor *, link_monitor_free);
int link_monitor_fd(const LinkMonitor *m);
/* Reads the pending messages and calls fn for each link that came up. */
int link_monitor_dispatch(LinkMonitor *m);
