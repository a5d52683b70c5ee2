/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-monitors.c — the kernel's link, ethtool and device monitors, which ask for re-checks */

#include "manager-internal.h"

static void on_link_event(int ifindex, void *userdata) {
        Manager *m = userdata;
        char what[64];

        if (ifindex <= 0) {
                manager_on_kernel_event("rtnetlink notifications lost", m);
                return;
        }
        manager_hotplug_link_up(m, ifindex);
        snprintf(what, sizeof(what), "link ifindex %d came up", ifindex);
        manager_on_kernel_event(what, m);
}

static int on_link_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r = link_monitor_dispatch(m->link_monitor);
        if (r < 0)
                log_warning_errno(r, "Failed to read rtnetlink notifications, ignoring: %m");
        return 0;
}

static void on_ethtool_event(int ifindex, const char *what, void *userdata) {
        char buf[64];

        snprintf(buf, sizeof(buf), "ethtool %s ifindex %d", what, ifindex);
        manager_on_kernel_event(buf, userdata);
}

static int on_ethtool_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        int r = ethtool_monitor_dispatch(m->ethtool_monitor);
        if (r < 0)
                log_warning_errno(r, "Failed to read ethtool notifications, ignoring: %m");
        return 0;
}

static void on_device_event(const char *subsystem, const char *action, const char *sysname, void *userdata) {
        Manager *m = userdata;
        char what[160];

        if (!subsystem) {
                /*
                 * The lost events could have named any device. So no probe is waited for, and
                 * the whole host is re-checked.
                 */
                pci_set_clear(&m->hotplug.probing);
                manager_on_kernel_event("udev events lost (receive buffer overflow)", m);
                return;
        }
        if (streq(subsystem, "pci"))
                manager_hotplug_event(m, action, sysname);
        snprintf(what, sizeof(what), "%s %s %s", subsystem, action, sysname);
        manager_on_kernel_event(what, m);
}

static int on_device_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        (void) device_monitor_dispatch(m->device_monitor);
        return 0;
}

/*
 * sriovd still works without these monitors, on the drift timer alone. So a monitor that
 * fails to start is a warning, not an error.
 */
void manager_add_monitors(Manager *m) {
        int r;

        r = link_monitor_new(on_link_event, m, &m->link_monitor);
        if (r >= 0)
                r = sd_event_add_io(m->event, NULL, link_monitor_fd(m->link_monitor), EPOLLIN, on_link_io, m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch rtnetlink link events, relying on the drift timer: %m");

        /*
         * With this monitor, sriovd repairs at once a change to coalescing or offloads that was
         * made behind its back, for example with ethtool -C.
         */
        if (m->kernel.ethtool) {
                r = ethtool_monitor_new(on_ethtool_event, m, &m->ethtool_monitor);
                if (r >= 0)
                        r = sd_event_add_io(m->event, NULL, ethtool_monitor_fd(m->ethtool_monitor), EPOLLIN,
                                            on_ethtool_io, m);
                if (r < 0)
                        log_warning_errno(r, "Failed to watch ethtool notifications, relying on the drift timer: %m");
        }

        r = device_monitor_new(on_device_event, m, &m->device_monitor);
        if (r >= 0)
                r = sd_event_add_io(m->event, NULL, device_monitor_fd(m->device_monitor), EPOLLIN, on_device_io, m);
        if (r < 0)
                log_warning_errno(r, "Failed to watch udev device events, relying on the drift timer: %m");
}
