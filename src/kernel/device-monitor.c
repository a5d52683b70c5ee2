/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* device-monitor.c — libudev events for PCI and net devices that appear, leave or bind to drivers */

#include <libudev.h>
#include <string.h>

#include "sriovd/kernel/device-monitor.h"
#include "sriovd/kernel/link-monitor.h"

struct DeviceMonitor {
        struct udev *udev;
        struct udev_monitor *monitor;
        DeviceEventFn fn;
        void *userdata;
};

int device_monitor_new(DeviceEventFn fn, void *userdata, DeviceMonitor **ret) {
        _cleanup_(device_monitor_freep) DeviceMonitor *m = NULL;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->fn = fn;
        m->userdata = userdata;
        m->udev = udev_new();
        if (!m->udev)
                return -ENOMEM;
        /* The monitor listens to "udev", not "kernel", because udev sends its events after the rules ran.
         * By then the netdev names are final. */
        m->monitor = udev_monitor_new_from_netlink(m->udev, "udev");
        if (!m->monitor)
                return negative_errno();
        /* A PF reload sends a burst of hundreds of events, and a cycle may be busy writing meanwhile. */
        (void) udev_monitor_set_receive_buffer_size(m->monitor, 16 * 1024 * 1024);
        r = udev_monitor_filter_add_match_subsystem_devtype(m->monitor, "pci", NULL);
        if (r >= 0)
                r = udev_monitor_filter_add_match_subsystem_devtype(m->monitor, "net", NULL);
        if (r >= 0)
                r = udev_monitor_enable_receiving(m->monitor);
        if (r < 0)
                return r;

        *ret = TAKE_PTR(m);
        return 0;
}

DeviceMonitor *device_monitor_free(DeviceMonitor *m) {
        if (!m)
                return NULL;
        udev_monitor_unref(m->monitor);
        udev_unref(m->udev);
        free(m);
        return NULL;
}

int device_monitor_fd(const DeviceMonitor *m) {
        return udev_monitor_get_fd(m->monitor);
}

int device_monitor_dispatch(DeviceMonitor *m) {
        struct udev_device *d;

        /* The fd is non-blocking, so the loop receives until the socket is drained. */
        for (errno = 0; (d = udev_monitor_receive_device(m->monitor)); errno = 0) {
                const char *action = udev_device_get_action(d) ?: "change";

                if (!streq(action, "change"))
                        m->fn(udev_device_get_subsystem(d) ?: "?", action, udev_device_get_sysname(d) ?: "?",
                              m->userdata);
                udev_device_unref(d);
        }
        /* The socket overflowed, so the list of changed devices is lost. The callback re-checks everything. */
        if (errno == ENOBUFS)
                m->fn(NULL, NULL, NULL, m->userdata);
        return 0;
}
