/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* monitor.h — kernel event sources, such as a link up or a device added, that make sriovd check again at once */
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

/*
 * The device monitor reports, through libudev, PCI and net devices that are added, removed,
 * bound or unbound. New VFs and driver reloads cause such events. fn gets the event's
 * subsystem, action and sysname, such as "pci", "bind" and "0000:17:00.2". All three are NULL
 * when events were lost because the receive buffer overflowed. Then which devices changed is unknown.
 */
typedef void (*DeviceEventFn)(const char *subsystem, const char *action, const char *sysname, void *userdata);
typedef struct DeviceMonitor DeviceMonitor;
int device_monitor_new(DeviceEventFn fn, void *userdata, DeviceMonitor **ret);
DeviceMonitor *device_monitor_free(DeviceMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(DeviceMonitor *, device_monitor_free);
int device_monitor_fd(const DeviceMonitor *m);
int device_monitor_dispatch(DeviceMonitor *m);
