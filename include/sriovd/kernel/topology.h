/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* topology.h — the CPUs, the NUMA nodes and the kernel's features */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

int topology_read(RootFs *root, Topology *ret);
void topology_done(Topology *t);
int kernel_caps_read(RootFs *root, bool have_irq_threads, bool irqbalance, KernelCaps *ret);
/*
 * Writes net.core.rtnet_prio. Returns 1 when it changed it, 0 when it was already so, and
 * -ENOENT where the kernel lacks it.
 */
int sysctl_set_rtnet_prio(RootFs *root, long value);
