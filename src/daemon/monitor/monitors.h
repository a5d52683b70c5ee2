/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* monitors.h — the kernel's link, ethtool and device monitors on the event loop */
#pragma once

#include <systemd/sd-event.h>

#include "sriovd/shared/macro.h"
#include "apply/apply.h"

/*
 * What the monitors tell their owner. Each event ends with kernel_event, which names it, such
 * as "link ifindex 7 came up". The other hooks run before it, so that the owner can act on
 * the event before its re-check runs. Every hook may be NULL.
 */
typedef struct MonitorsHooks {
        void (*kernel_event)(const char *what, void *userdata);
        /* A link came up. Some VF drivers request their vectors at open. */
        void (*link_up)(int ifindex, void *userdata);
        /* A PCI function was added, bound, unbound or removed, such as "bind" of "0000:17:00.2". */
        void (*pci_event)(const char *action, const char *addr, void *userdata);
        /* udev events were lost, so which devices changed is unknown. */
        void (*devices_lost)(void *userdata);
        void *userdata;
} MonitorsHooks;

typedef struct Monitors Monitors;

/*
 * Start the link, ethtool and device monitors on event. The ethtool monitor starts only when
 * kernel has ethtool netlink. A monitor that fails to start is logged as a warning and left
 * out, because the drift timer still finds what it would have reported. Returns -ENOMEM only.
 * The caller frees *ret with monitors_free().
 */
int monitors_new(sd_event *event, const Kernel *kernel, const MonitorsHooks *hooks, Monitors **ret);
Monitors *monitors_free(Monitors *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Monitors *, monitors_free);
/* Whether a monitor has events that the loop saw in this wakeup and has not read yet. m may be NULL. */
bool monitors_pending(const Monitors *m);
