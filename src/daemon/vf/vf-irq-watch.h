/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-irq-watch.h — a started guest's passthrough VFs, watched for the vectors that its driver enables */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "tenants/tenants.h"

struct sd_event;
struct sd_event_source;

/*
 * A passthrough VF's host-side vectors, named vfio-msix[N](ADDR), exist only once the guest's
 * driver enables MSI-X. That happens tens of seconds after libvirt's STARTED event, and no
 * uevent announces them. The drift check finds them within its period. After a start, sriovd
 * also looks on its own a few times, at the msi_irqs/ of that guest's VFs only.
 */
typedef struct VfIrqWatch {
        char vf[PCI_ADDR_MAX];
        uint64_t since, next;   /* the guest's start and the next look, CLOCK_MONOTONIC in µs */
        unsigned looks;         /* the looks done so far */
        bool found;             /* vectors came, so one more look for stragglers, then done */
} VfIrqWatch;

typedef struct VfIrqWatchList {
        VfIrqWatch *items;
        size_t n, allocated;
} VfIrqWatchList;

/* The looks after a start, at 1, 2, 4 and so on up to 64 s. vf-irq-watch.c explains why. */
#define VF_IRQ_WATCH_LOOKS 7
#define VF_IRQ_WATCH_FIRST_USEC (1000u * 1000u)

/* Start watching vf, or start again for a guest that started again. */
int vf_irq_watch_add(VfIrqWatchList *l, const char *vf, uint64_t now);
/* The earliest look due, or UINT64_MAX when nothing is watched. */
uint64_t vf_irq_watch_next(const VfIrqWatchList *l);
/*
 * Look at every VF due at now. A VF on a vfio driver in inv has its msi_irqs/ read, and a vector
 * that inv does not have is news. Each watch moves on to its next look, or ends when its
 * schedule is done or its vectors have settled. Returns how many VFs had news, with the first
 * one in ret_vf, which holds PCI_ADDR_MAX bytes. Returns -ENOMEM when out of memory.
 */
int vf_irq_watch_look(VfIrqWatchList *l, RootFs *root, const Inventory *inv, uint64_t now, char *ret_vf);
/*
 * A cycle saw vectors on watched VFs, perhaps the drift check before a look. Each such watch
 * ends at its next quiet look.
 */
void vf_irq_watch_seen(VfIrqWatchList *l, const Inventory *inv);
void vf_irq_watch_list_done(VfIrqWatchList *l);

/* Whether driver is of the vfio family, such as vfio-pci or mlx5_vfio_pci, so that the VF is passed through. */
bool vf_irq_watch_driver_is_vfio(const char *driver);

/*
 * Log where the new vfio-msix vectors of the VFs in allocations went. New vectors are those that
 * inv has and old had not. Each new set is logged once. Failed pins are found in plan.
 */
void vf_irq_watch_log_found(RootFs *root, const PlanAllocation *allocations, size_t n_allocations,
                            const Inventory *old, const Inventory *inv, const Plan *plan);

/* What the watcher asks of the one who runs the cycles. */
typedef struct VfIrqWatchHooks {
        /* The last cycle's inventory, which a look compares the VFs' vectors with. */
        const Inventory *(*inventory)(void *userdata);
        /* A look found new vectors: run a cycle now, for why. */
        void (*found)(const char *why, void *userdata);
        void *userdata;
} VfIrqWatchHooks;

/* The watched VFs, and the timer that makes their looks on the event loop. */
typedef struct VfIrqWatcher {
        VfIrqWatchList list;
        RootFs *root;
        struct sd_event_source *timer;
        VfIrqWatchHooks hooks;
} VfIrqWatcher;

void vf_irq_watcher_init(VfIrqWatcher *w, RootFs *root, const VfIrqWatchHooks *hooks);
void vf_irq_watcher_done(VfIrqWatcher *w);
/*
 * On libvirt's STARTED event, watch the VFs that the domain's tenants hold. domain is its name or
 * a tenant's name for it, and uuid, which may be NULL, its UUID. tenants may be NULL, and inv is
 * the last cycle's inventory. The looks run on event. Without an event loop, nothing is looked at.
 */
void vf_irq_watcher_guest_started(VfIrqWatcher *w, struct sd_event *event, const Tenants *tenants,
                                  const Inventory *inv, const char *domain, const char *uuid);
