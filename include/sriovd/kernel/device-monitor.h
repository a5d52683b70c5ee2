/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* device-monitor.h — PCI and net devices added, removed, bound or unbound, from libudev */
#pragma once

#include "sriovd/shared/macro.h"

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
