/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq-files.h — the smp_affinity_list files that a drift check holds open */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/*
 * irq-files.c holds open the smp_affinity_list files that a drift check reads on the real /proc,
 * up to budget files. A fixture's files are read by path. irq_files_read_affinity() does
 * rootfs_read_attr() of /proc/irq/IRQ/smp_affinity_list through the held file when there is one.
 * A held file that fails is dropped, and the path is read instead. With an f of NULL it reads by
 * path. irq_files_prune() closes the files of IRQs that the inventory no longer has.
 */
typedef struct IrqFiles IrqFiles;
int irq_files_new(size_t budget, IrqFiles **ret);
IrqFiles *irq_files_free(IrqFiles *f);
DEFINE_TRIVIAL_CLEANUP_FUNC(IrqFiles *, irq_files_free);
int irq_files_read_affinity(IrqFiles *f, RootFs *root, unsigned irq, char *buf, size_t size);
void irq_files_prune(IrqFiles *f, const Inventory *inv);
size_t irq_files_held(const IrqFiles *f);
