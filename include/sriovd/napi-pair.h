/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi-pair.h — which IRQ schedules which NAPI, where the kernel does not say (before 6.8, or the driver does not tell it) */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sriovd/inventory.h"

/*
 * Pure: the queue an IRQ serves, from its handler's name, for netdev: "eth0-TxRx-3" (igb, i40e,
 * ice), "eth0-rx-3" (igbvf, e1000e, igb with separate vectors), "mlx5_comp3@pci:..." (mlx5): 3;
 * "eth0-tx-3" too, with *ret_tx_only set. -1: not a queue IRQ (a mailbox, "eth0" alone, another
 * device's).
 */
int irq_queue_index(const char *action, const char *netdev, bool *ret_tx_only);

/* A netdev's queue IRQ and the queue it serves. */
typedef struct QueueIrq {
        unsigned irq;
        int queue;
        bool tx_only;
} QueueIrq;

/*
 * Pure: pair napis (sorted by id) with the queue IRQs, by order. A driver adds one NAPI per
 * queue vector as it sets the vectors up, and the kernel hands out NAPI ids in the order NAPIs
 * are added, so the i-th NAPI by id belongs to the i-th queue vector (by IRQ number: the
 * kernel numbers a device's MSI-X vectors in table order). The receive vectors are tried first
 * (drivers that clean tx in the hard IRQ have a NAPI for rx only), then every queue vector.
 * Only when the counts agree and the ids ascend: otherwise nothing is paired, since a guess
 * would pin threads to the wrong CPUs. Sets napis[i].irq (sorts irqs); returns how many were paired.
 */
size_t napi_pair_by_queues(Napi *napis, size_t n_napis, QueueIrq *irqs, size_t n_irqs);
