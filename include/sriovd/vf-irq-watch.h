/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-irq-watch.h — a started guest's passthrough VFs, looked at soon for the vectors its driver enables */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/inventory.h"

typedef struct Manager Manager;

/*
 * A passthrough VF's host-side vectors (vfio-msix[N](ADDR)) exist only once the guest's driver
 * enables MSI-X, tens of seconds after libvirt's STARTED event, and no uevent announces them.
 * The drift check finds them within its period; after a start sriovd also looks on its own,
 * a few times, at the msi_irqs/ of that guest's VFs only.
 */
typedef struct VfIrqWatch {
        char vf[PCI_ADDR_MAX];
        uint64_t since, next;   /* CLOCK_MONOTONIC, µs: the guest's start, the next look */
        unsigned looks;         /* done so far */
        bool found;             /* vectors came: one more look for stragglers, then done */
} VfIrqWatch;

typedef struct VfIrqWatchList {
        VfIrqWatch *items;
        size_t n, allocated;
} VfIrqWatchList;

/* The looks after a start: at 1, 2, 4, ... 64 s (see vf-irq-watch.c for why). */
#define VF_IRQ_WATCH_LOOKS 7
#define VF_IRQ_WATCH_FIRST_USEC (1000u * 1000u)

/* Start (or restart, for a guest started again) watching vf. */
int vf_irq_watch_add(VfIrqWatchList *l, const char *vf, uint64_t now);
/* The earliest look due, UINT64_MAX when nothing is watched. */
uint64_t vf_irq_watch_next(const VfIrqWatchList *l);
/*
 * Look at every VF due at now: one on a vfio driver in inv has its msi_irqs/ read, and a
 * vector inv does not have is news. Watches move on to their next look, or end (schedule
 * done; settled after vectors came). Returns how many VFs had news, and the first in
 * ret_vf (PCI_ADDR_MAX), or a negative errno (-ENOMEM).
 */
int vf_irq_watch_look(VfIrqWatchList *l, RootFs *root, const Inventory *inv, uint64_t now, char *ret_vf);
/* A cycle saw vectors on watched VFs (the drift check may come first): each ends at its next quiet look. */
void vf_irq_watch_seen(VfIrqWatchList *l, const Inventory *inv);
void vf_irq_watch_list_done(VfIrqWatchList *l);

/* A driver of the vfio family (vfio-pci, mlx5_vfio_pci): the VF is passed through. */
bool vf_irq_watch_driver_is_vfio(const char *driver);

/* guests.c, on libvirt's STARTED: watch the VFs that domain's tenants hold. */
void manager_watch_guest_irqs(Manager *m, const char *domain);
