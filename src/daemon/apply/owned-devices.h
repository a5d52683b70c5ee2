/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* owned-devices.h — the PFs sriovd manages, published for sriovd-irqbalance-policy */
#pragma once

#include <stdbool.h>

#include "sriovd/core/inventory.h"
#include "sriovd/shared/pci-set.h"

/*
 * The PFs last written to $RUNTIME_DIRECTORY/owned-devices. sriovd-irqbalance-policy bans every
 * IRQ of these PFs and of their VFs. So irqbalance also leaves alone the IRQs that appear
 * before a cycle lists them in owned-irqs, such as a new VF's.
 */
typedef struct OwnedDevices {
        PciSet published;     /* in the order of the inventory's PFs, which is sorted */
        bool written;         /* this process wrote the file at least once */
} OwnedDevices;

/*
 * Write the addresses of inv's PFs, one per line, when they differ from the list last written
 * by this process. The first call always writes, so a list of an earlier run is replaced. Like
 * owned-irqs, the file is replaced whole by a rename, and nothing is written without
 * RUNTIME_DIRECTORY. Returns 1 when the list changed, 0 when it did not, or a negative errno.
 * After a failure, the next call tries again.
 */
int owned_devices_publish(OwnedDevices *o, const Inventory *inv);
void owned_devices_done(OwnedDevices *o);
