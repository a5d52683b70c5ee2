/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-wait.h — the VFs that sriovd asked the kernel for and waits to see, ready in time or late */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/core/inventory.h"

/*
 * Writing sriov_numvfs returns once the VF functions exist, but their drivers, netdevs and
 * vectors arrive later, as udev events. The daemon does not sleep on that. It records what it
 * waits for, and checks again on every event. It reports each PF as ready, with how long it
 * took, or as late, with what is missing.
 */
typedef struct VfWait {
        char pf[PCI_ADDR_MAX];
        unsigned want;
        uint64_t since, deadline;   /* CLOCK_MONOTONIC, in µs */
} VfWait;

typedef struct VfWaitList {
        VfWait *items;
        size_t n, allocated;
} VfWaitList;

/* Start waiting, or start again, for want VFs of pf. */
int vf_wait_add(VfWaitList *l, const char *pf, unsigned want, uint64_t now, uint64_t timeout);
/*
 * Describe what keeps pf from having want usable VFs, without I/O, such as "virtfn 8-11
 * missing, 0000:41:00.5 has no driver". Returns false when nothing does. A NULL pf means that
 * the PF itself is gone. A VF counts once it exists and, when drivers_autoprobe is on, once a
 * driver holds it.
 */
bool vf_wait_missing(const Pf *pf, unsigned want, char *buf, size_t size);

/* Called for each wait that ends, as ready, or as late with what is missing. */
typedef void (*VfWaitDoneFn)(const VfWait *w, bool ready, const char *missing, uint64_t now, void *userdata);
/* Settle every wait against inv; returns how many are still open. */
size_t vf_wait_check(VfWaitList *l, const Inventory *inv, uint64_t now, VfWaitDoneFn fn, void *userdata);
/* The earliest deadline, or UINT64_MAX when nothing is awaited. */
uint64_t vf_wait_next_deadline(const VfWaitList *l);
/* Whether target, a PF or one of its VFs in inv, belongs to a PF that is still awaited. */

bool vf_wait_covers(const VfWaitList *l, const Inventory *inv, const char *target);
void vf_wait_list_done(VfWaitList *l);
