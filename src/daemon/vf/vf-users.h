/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vf-users.h — who, besides sriovd's tenants, uses the VFs that a VF count change would destroy */
#pragma once

#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "sriovd/core/policy.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/virt/virt.h"

/*
 * Find who uses the VFs of inv's PFs whose VF count change under c would destroy VFs: the
 * libvirt domains that name them, and the processes under root that hold them through vfio.
 * virt is the libvirt connection, or NULL when there is none now; then only processes are
 * looked for. Each search is best effort, and its failure is logged. The list is sorted, and the
 * caller frees it. Returns 0, or -ENOMEM.
 */
int vf_users_read(RootFs *root, const Config *c, Virt *virt, const Inventory *inv, PlanVfUser **ret, size_t *ret_n);
