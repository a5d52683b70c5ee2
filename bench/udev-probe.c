/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* udev-probe.c — a bare libudev monitor: prints when each pci/net uevent arrives (benchmark floor) */

#include <libudev.h>
#include <poll.h>
#include <stdio.h>
#include <time.h>

/*
 * The same monitor sriovd opens (source "udev", pci and net), nothing else:
 * one line per event, "MONOTONIC_NS ACTION SUBSYSTEM SYSNAME", flushed at
 * once; "READY" when receiving. Exits when stdin closes.
 */
int main(void) {
        struct udev *udev = udev_new();
        struct udev_monitor *mon;
        struct pollfd p[2];

        if (!udev)
                return 1;
        mon = udev_monitor_new_from_netlink(udev, "udev");
        if (!mon || udev_monitor_filter_add_match_subsystem_devtype(mon, "pci", NULL) < 0 ||
            udev_monitor_filter_add_match_subsystem_devtype(mon, "net", NULL) < 0 ||
            udev_monitor_enable_receiving(mon) < 0)
                return 1;
        printf("READY\n");
        fflush(stdout);

        p[0] = (struct pollfd) { .fd = udev_monitor_get_fd(mon), .events = POLLIN };
        p[1] = (struct pollfd) { .fd = 0, .events = POLLIN };
        for (;;) {
                struct udev_device *d;

                if (poll(p, 2, -1) < 0)
                        continue;
                if (p[1].revents)
                        break;
                while ((d = udev_monitor_receive_device(mon))) {
                        struct timespec ts;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        printf("%lld %s %s %s\n", (long long) ts.tv_sec * 1000000000LL + ts.tv_nsec,
                               udev_device_get_action(d) ?: "?", udev_device_get_subsystem(d) ?: "?",
                               udev_device_get_sysname(d) ?: "?");
                        fflush(stdout);
                        udev_device_unref(d);
                }
        }
        udev_monitor_unref(mon);
        udev_unref(udev);
        return 0;
}
