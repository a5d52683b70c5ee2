/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bind.h — a PCI function moved between drivers through driver_override */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/*
 * Binds the PCI function addr to driver, such as "vfio-pci", the way the kernel documents it. It
 * writes driver to driver_override. If the function is bound to another driver, it writes addr
 * to that driver's unbind. Then it writes addr to /sys/bus/pci/drivers_probe. The override is
 * kept, so a later re-probe, as on a driver reload, cannot hand the device back to its native
 * driver. Each step is written only when needed. When the function is bound there already, only
 * the override is written. The first write that fails ends the call with its error. A
 * drivers_probe that succeeds does not mean the probe bound the device, so verify with
 * pci_driver_read(). It does not check the IOMMU group, because that is the planner's job.
 * Returns 1 when it changed something, and 0 when the function was already bound there with the
 * override set. Returns -EINVAL for an invalid addr or driver name, and -ENODEV when addr does
 * not exist. Returns -ENOENT when the driver is not loaded, so that
 * /sys/bus/pci/drivers/DRIVER does not exist. Other failures are a negative errno.
 */
int pci_driver_bind(RootFs *root, const char *addr, const char *driver);
/*
 * Undoes pci_driver_bind(). It writes original to driver_override, unbinds the function from its
 * current driver and writes drivers_probe. An original of "" or NULL lets the kernel choose by its
 * ID table. Then it clears driver_override by writing "\n", so nothing sticky is left. When the
 * function already sits where it should, only the override is cleared. Returns 1 when it changed
 * something. Returns 0 when there was nothing to do: there was no override, and the function was
 * bound to original, or to any driver that is not a vfio driver when original is "". Returns
 * -ENOENT when original is given but not loaded, and then nothing is written.
 */
int pci_driver_restore(RootFs *root, const char *addr, const char *original);
/*
 * Reads the current driver and driver_override, for planning and verification. The driver is ""
 * when the function is unbound, and the override is "" when the kernel shows "(null)". Either
 * output may be NULL, and both are untouched on failure. Returns -ENOBUFS when a name does not
 * fit, and -ENODEV when addr does not exist.
 */
int pci_driver_read(RootFs *root, const char *addr, char *ret_driver, size_t driver_size, char *ret_override,
                    size_t override_size);
