/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* refresh.h — what can drift without an event, read again into a copy of the inventory */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/*
 * refresh.c reads again, into inv, only what can drift without an event. inv is a copy of the
 * last full read, made with inventory_dup(). What can drift is the IRQ affinities and effective
 * affinities, and the scheduling of IRQ, NAPI and per-CPU threads. It is also a NAPI thread's
 * CPUs, rtnet_prio and the default affinity. Returns -ESTALE when the host is no longer what inv
 * describes, and then the caller reads it whole instead. That happens when an IRQ is gone, a
 * thread is gone or its PID is another's, or a passthrough VF's vectors changed. Returns -ENOMEM
 * when memory runs out. The affinities are read through files with irq_files_read_affinity(). A
 * files of NULL reads them by path.
 */
int inventory_refresh(RootFs *root, IrqFiles *files, Inventory *inv);
/*
 * Reads again only the named IRQs, and the IRQ and kernel threads with the named PIDs, as
 * inventory_refresh() does. A kernel event named them. A name that inv does not hold is passed
 * over. It returns what inventory_refresh() returns.
 */
int inventory_refresh_only(RootFs *root, IrqFiles *files, Inventory *inv, const unsigned *irqs, size_t n_irqs,
                           const pid_t *pids, size_t n_pids);
/*
 * Reads again q's affinity, and the scheduling of its handler thread, each only when asked. The
 * effective affinity is not read. A drift event's repair reads only what the event named, before
 * its write and after it. Returns -ESTALE when the IRQ or the thread is gone.
 */
int irq_refresh_named(RootFs *root, IrqFiles *files, Irq *q, bool affinity, bool thread);
