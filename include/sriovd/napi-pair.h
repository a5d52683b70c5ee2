/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi-pair.h — which IRQ schedules which NAPI, where the kernel does not say (before Linux 6.8) */
#pragma once

#include <stddef.h>

#include "sriovd/inventory.h"

/*
 * Pure: the queue an IRQ serves, from its handler's name, for netdev: "eth0-TxRx-3" (igb,
 * i40e, ice), "eth0-rx-3" (igbvf, e1000e), "mlx5_comp3@pci:..." (mlx5): 3. -1: not a queue IRQ
 * (a mailbox, "eth0" alone, a tx-only vector, another device's).
 */
int irq_queue_index(const char *action, const char *netdev);

/* A netdev's queue IRQ and the queue it serves. */
typedef struct QueueIrq {
        unsigned irq;
        int queue;
} QueueIrq;

/*
 * Pure: pair napis (sorted by id) with the queue IRQs, by order: drivers add one NAPI per queue
 * vector, in queue order, and the kernel hands out NAPI ids in the order they are added, so the
 * i-th NAPI by id belongs to the i-th queue by index. Only when the counts agree (else nothing
 * is paired: a guess would pin threads to the wrong CPUs). Sets napis[i].irq; returns how many.
 */
size_t napi_pair_by_queues(Napi *napis, size_t n_napis, QueueIrq *irqs, size_t n_irqs);
