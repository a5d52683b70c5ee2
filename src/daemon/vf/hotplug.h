/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* hotplug.h — pin a new VF's vectors as soon as its driver has them, ahead of the cycle */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "sriovd/core/policy.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/pci-set.h"

/* What a pin asks of the one who runs the cycles. */
typedef struct HotplugHooks {
        /* Fill in what the planner takes from the cycle: tenants, saved scheduling and refusals. */
        void (*plan_context)(PlanContext *ret, void *userdata);
        /* Carry out one action, logged and recorded as a cycle's actions are. view holds the VF. */
        void (*apply)(const Inventory *view, Action *a, void *userdata);
        void *userdata;
} HotplugHooks;

/*
 * The VFs between their "add" event and their driver's "bind" event. Kernel events wait for
 * them until probing_until_usec.
 */
typedef struct Hotplug {
        RootFs *root;
        HotplugHooks hooks;
        PciSet probing;
        uint64_t probing_until_usec;
} Hotplug;

void hotplug_init(Hotplug *h, RootFs *root, const HotplugHooks *hooks);
void hotplug_done(Hotplug *h);

/*
 * Handle a PCI device event before the cycle that it asks for. The event is an "add", "bind",
 * "unbind" or "remove" of a function. A VF of a PF in inv, the last cycle's inventory, is
 * waited for while its driver probes it, and its vectors are pinned under c at its "bind".
 * A NULL inv, before the first cycle, means nothing to do.
 */
void hotplug_event(Hotplug *h, const Inventory *inv, const Config *c, const char *action, const char *addr);
/* A link came up. Some VF drivers, such as igbvf, request their vectors at open, so they are pinned then. */
void hotplug_link_up(Hotplug *h, const Inventory *inv, const Config *c, int ifindex);
/* Whether the cycle for kernel events waits for a probing VF now, and until when. Forgets VFs past the wait. */
bool hotplug_waiting(Hotplug *h, uint64_t now, uint64_t *ret_until);
