/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* napi-pair.h — which IRQ schedules which NAPI, where the kernel does not say so itself */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "inventory.h"

/*
 * Returns the queue that an IRQ of netdev serves, read from the IRQ handler's name. It does no
 * I/O. The names "eth0-TxRx-3" of igb, i40e and ice, "eth0-rx-3" of igbvf, e1000e and igb with
 * separate vectors, and "mlx5_comp3@pci:..." of mlx5 all give 3. So does "eth0-tx-3", and it sets
 * *ret_tx_only. Returns -1 for an IRQ that serves no queue, such as a mailbox, a plain "eth0" or
 * another device's IRQ.
 */
int irq_queue_index(const char *action, const char *netdev, bool *ret_tx_only);

/* A netdev's queue IRQ and the queue it serves. */
typedef struct QueueIrq {
        unsigned irq;
        int queue;
        bool tx_only;
} QueueIrq;

/*
 * Pairs napis, sorted by id, with the queue IRQs in order. It does no I/O. It serves where the
 * kernel does not say which IRQ schedules a NAPI: before Linux 6.8, or when the driver does not
 * tell the kernel. A driver adds one NAPI per queue vector as it sets the vectors up. The kernel
 * hands out NAPI ids in the order NAPIs are added. So the i-th NAPI by id belongs to the i-th queue
 * vector by IRQ number, since the kernel numbers a device's MSI-X vectors in table order. The
 * receive vectors are tried first, because drivers that clean tx in the hard IRQ have a NAPI for rx
 * only. Then every queue vector is tried. Pairing happens only when the counts agree and the ids
 * ascend. Otherwise nothing is paired, since a guess would pin threads to the wrong CPUs. It sets
 * napis[i].irq and sorts irqs. Returns how many NAPIs were paired.
 */
size_t napi_pair_by_queues(Napi *napis, size_t n_napis, QueueIrq *irqs, size_t n_irqs);
