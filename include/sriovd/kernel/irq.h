/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* irq.h — /proc/irq read and written, and the IRQ handler threads found */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/* Reads the affinity, effective affinity and writability of one IRQ. The thread fields are left 0. */
int irq_read(RootFs *root, unsigned irq, Irq *ret);
/* Reads effective_affinity_list alone. Returns -ENOENT on a kernel before 4.15, which has none. */
int irq_read_effective(RootFs *root, unsigned irq, CpuSet *ret);

typedef struct IrqThread {
        unsigned irq;
        pid_t pid;
        int policy, priority;
} IrqThread;
/*
 * Finds three things in one walk over /proc. *ret gets all irq/N- kernel threads, sorted by irq.
 * Only threads with PF_KTHREAD count, because user space can fake the name. *ret_kthreads gets
 * the other kernel threads that sriovd places, napi/, ksoftirqd/, ktimers/ and rcuc/, sorted by
 * kind, num and pid. Each NAPI thread comes with its allowed CPUs. *ret_irqbalance says whether
 * irqbalance runs. The caller frees *ret and *ret_kthreads.
 */
int irq_threads_scan(RootFs *root, IrqThread **ret, size_t *ret_n, Kthread **ret_kthreads, size_t *ret_n_kthreads,
                     bool *ret_irqbalance);
/*
 * Parses what a kernel thread's name says. It does no I/O. "napi/DEV-ID" gives KTHREAD_NAPI, with
 * num set to ID and netdev to DEV. "ksoftirqd/N", "ktimers/N" and "rcuc/N" give num N and a
 * netdev of "". Returns -EINVAL for any other name. Older kernels cut names at 15 characters. A
 * NAPI name cut inside its ID parses with the wrong ID. napi_pair_by_queues() refuses to pair
 * such names, because their ids repeat.
 */
int kthread_name_parse(const char *comm, KthreadKind *ret_kind, unsigned *ret_num, char ret_netdev[static IF_NAMESIZE]);

/* Writes smp_affinity_list, which the caller knows differs. Returns 1 when written, or a negative errno. */
int irq_set_affinity(RootFs *root, unsigned irq, const CpuSet *cpus);
/* Reads every IRQ number under /proc/irq into *ret, sorted. The caller frees *ret. */
int irq_list(RootFs *root, unsigned **ret, size_t *ret_n);
/*
 * Reads the name of the IRQ's first handler, which is its directory in /proc/irq/N, such as
 * "nvme0q1" or "acpi". buf is "" when there is none.
 */
int irq_read_action(RootFs *root, unsigned irq, char *buf, size_t size);
/* These read and write /proc/irq/default_smp_affinity, where the kernel puts IRQs requested from now on. */
int irq_read_default_affinity(RootFs *root, CpuSet *ret);
int irq_set_default_affinity(RootFs *root, const CpuSet *cpus);
