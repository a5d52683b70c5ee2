/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* monitor.h — kernel event sources that make sriovd re-check at once: link-up and device add */
#pragma once

#include "sriovd/macro.h"

/*
 * rtnetlink (libnl-route): links coming up; drivers re-request their IRQs on open. fn gets the
 * link's ifindex, or 0 when notifications were lost (which links came up is unknown).
 */
typedef void (*LinkEventFn)(int ifindex, void *userdata);
typedef struct LinkMonitor LinkMonitor;
int link_monitor_new(LinkEventFn fn, void *userdata, LinkMonitor **ret);
LinkMonitor *link_monitor_free(LinkMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(LinkMonitor *, link_monitor_free);
int link_monitor_fd(const LinkMonitor *m);
/* Drain pending messages, calling fn for each link that came up. */
int link_monitor_dispatch(LinkMonitor *m);

/*
 * libudev: PCI and net devices added, removed or (un)bound (new VFs, driver reloads). The
 * event's subsystem, action and sysname ("pci", "bind", "0000:17:00.2"); all three NULL when
 * events were lost (the receive buffer overflowed): which devices changed is unknown.
 */
typedef void (*DeviceEventFn)(const char *subsystem, const char *action, const char *sysname, void *userdata);
typedef struct DeviceMonitor DeviceMonitor;
int device_monitor_new(DeviceEventFn fn, void *userdata, DeviceMonitor **ret);
DeviceMonitor *device_monitor_free(DeviceMonitor *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(DeviceMonitor *, device_monitor_free);
int device_monitor_fd(const DeviceMonitor *m);
int device_monitor_dispatch(DeviceMonitor *m);
