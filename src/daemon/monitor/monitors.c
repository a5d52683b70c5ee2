/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* monitors.c — the kernel's link, ethtool and device monitors, which ask for re-checks */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "sriovd/kernel/device-monitor.h"
#include "sriovd/kernel/ethtool.h"
#include "sriovd/kernel/link-monitor.h"
#include "sriovd/shared/util.h"
#include "base/log.h"
#include "monitors.h"

struct Monitors {
        MonitorsHooks hooks;
        LinkMonitor *link;
        EthtoolMonitor *ethtool;
        DeviceMonitor *device;
        sd_event_source *link_source;
        sd_event_source *ethtool_source;
        sd_event_source *device_source;
};

static void kernel_event(Monitors *m, const char *what) {
        if (m->hooks.kernel_event)
                m->hooks.kernel_event(what, m->hooks.userdata);
}

static void on_link_event(int ifindex, void *userdata) {
        Monitors *m = userdata;
        char what[64];

        if (ifindex <= 0) {
                kernel_event(m, "rtnetlink notifications lost");
                return;
        }
        if (m->hooks.link_up)
                m->hooks.link_up(ifindex, m->hooks.userdata);
        snprintf(what, sizeof(what), "link ifindex %d came up", ifindex);
        kernel_event(m, what);
}

static int on_link_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Monitors *m = userdata;
        int r = link_monitor_dispatch(m->link);
        if (r < 0)
                log_warning_errno(r, "Failed to read rtnetlink notifications, ignoring: %m");
        return 0;
}

static void on_ethtool_event(int ifindex, const char *what, void *userdata) {
        char buf[64];

        snprintf(buf, sizeof(buf), "ethtool %s ifindex %d", what, ifindex);
        kernel_event(userdata, buf);
}

static int on_ethtool_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Monitors *m = userdata;
        int r = ethtool_monitor_dispatch(m->ethtool);
        if (r < 0)
                log_warning_errno(r, "Failed to read ethtool notifications, ignoring: %m");
        return 0;
}

static void on_device_event(const char *subsystem, const char *action, const char *sysname, void *userdata) {
        Monitors *m = userdata;
        char what[160];

        if (!subsystem) {
                /*
                 * The lost events could have named any device. So no probe is waited for, and
                 * the whole host is re-checked.
                 */
                if (m->hooks.devices_lost)
                        m->hooks.devices_lost(m->hooks.userdata);
                kernel_event(m, "udev events lost (receive buffer overflow)");
                return;
        }
        if (streq(subsystem, "pci") && m->hooks.pci_event)
                m->hooks.pci_event(action, sysname, m->hooks.userdata);
        snprintf(what, sizeof(what), "%s %s %s", subsystem, action, sysname);
        kernel_event(m, what);
}

static int on_device_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Monitors *m = userdata;
        (void) device_monitor_dispatch(m->device);
        return 0;
}

/*
 * sriovd still works without these monitors, on the drift timer alone. So a monitor that
 * fails to start is a warning, not an error.
 */
int monitors_new(sd_event *event, const Kernel *kernel, const MonitorsHooks *hooks, Monitors **ret) {
        Monitors *m;
        int r;

        m = calloc(1, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->hooks = *hooks;

        r = link_monitor_new(on_link_event, m, &m->link);
        if (r >= 0)
                r = sd_event_add_io(event, &m->link_source, link_monitor_fd(m->link), EPOLLIN, on_link_io, m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch rtnetlink link events, relying on the drift timer: %m");

        /*
         * With this monitor, sriovd repairs at once a change to coalescing or offloads that was
         * made behind its back, for example with ethtool -C.
         */
        if (kernel->ethtool) {
                r = ethtool_monitor_new(on_ethtool_event, m, &m->ethtool);
                if (r >= 0)
                        r = sd_event_add_io(event, &m->ethtool_source, ethtool_monitor_fd(m->ethtool), EPOLLIN,
                                            on_ethtool_io, m);
                if (r < 0)
                        log_warning_errno(r, "Failed to watch ethtool notifications, relying on the drift timer: %m");
        }

        r = device_monitor_new(on_device_event, m, &m->device);
        if (r >= 0)
                r = sd_event_add_io(event, &m->device_source, device_monitor_fd(m->device), EPOLLIN, on_device_io, m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch udev device events, relying on the drift timer: %m");

        *ret = m;
        return 0;
}

Monitors *monitors_free(Monitors *m) {
        if (!m)
                return NULL;
        sd_event_source_disable_unref(m->link_source);
        sd_event_source_disable_unref(m->ethtool_source);
        sd_event_source_disable_unref(m->device_source);
        link_monitor_free(m->link);
        ethtool_monitor_free(m->ethtool);
        device_monitor_free(m->device);
        free(m);
        return NULL;
}

static bool source_pending(sd_event_source *s) {
        return s && sd_event_source_get_pending(s) > 0;
}

bool monitors_pending(const Monitors *m) {
        return m && (source_pending(m->link_source) || source_pending(m->ethtool_source) ||
                     source_pending(m->device_source));
}
