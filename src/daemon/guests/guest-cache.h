/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* guest-cache.h — a running RT guest's L3 cache group in resctrl, with its RT vCPU threads in it */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/guest-placement.h"
#include "sriovd/kernel/resctrl.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/virt/virt.h"

/* What guest_cache_place() found and did. */
typedef struct GuestCacheResult {
        bool unsupported;                     /* no L3 allocation in resctrl here, so nothing was done */
        char group[RESCTRL_GROUP_NAME_MAX];   /* "sriovd-" and the domain's name */
        bool created;                         /* the group was made, or would be with dry_run */
        bool mask_set;                        /* its L3 mask was written */
        unsigned n_moved;                     /* RT vCPU threads moved into it */
        char why[160];                        /* why the mask does not fit the host; then nothing was done */
} GuestCacheResult;

/*
 * Names the group of domain "sriovd-DOMAIN". Returns -EINVAL for a domain name that cannot be one
 * path component of that length.
 */
int guest_cache_group_name(const char *domain, char ret[static RESCTRL_GROUP_NAME_MAX]);
/*
 * Gives the running domain's RT vCPUs, 0 to p->n_rt - 1, the L3 ways of mask. It makes the
 * domain's group if needed, writes its mask on every L3 domain, and moves each RT vCPU thread into
 * it. It first checks mask against the host's cache and CLOSIDs, and sets ret->why when it does
 * not fit. With dry_run, it only reads. Returns 0 also when resctrl has no L3 here, or when the
 * domain has no QEMU here. Returns a negative errno for a failure, and ret says what was done.
 */
int guest_cache_place(RootFs *root, Virt *v, const char *domain, uint64_t mask, const GuestPlacement *p,
                      bool dry_run, pid_t *qemu_hint, GuestCacheResult *ret, VirtError *err);
/*
 * Removes the domain's group, and the kernel gives its threads back to the default group.
 * Returns 1 when it removed the group, 0 when there was none, or a negative errno.
 */
int guest_cache_remove(RootFs *root, const char *domain, GuestCacheResult *ret);
