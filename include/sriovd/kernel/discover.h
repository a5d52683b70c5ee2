/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* discover.h — the whole host read in one pass: PCI, SR-IOV, IRQs, threads and topology */
#pragma once

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"

/*
 * Reads the whole inventory in one pass into *ret. The result owns all its memory, and the caller
 * frees it with inventory_free(). It fails only when the host itself cannot be read, or with
 * -ENOMEM. The host cannot be read without /sys/bus/pci, without online CPUs, or with a CPU or
 * node list that does not parse. A PCI function or IRQ whose attributes are not what a kernel
 * writes is left out and recorded in problems. Or the attribute is taken as unknown and recorded.
 */
int inventory_read(RootFs *root, const Scope *scope, Inventory **ret);
