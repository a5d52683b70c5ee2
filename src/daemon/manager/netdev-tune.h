/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* netdev-tune.h — the netdev settings that the classes govern, read before planning */
#pragma once

#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "sriovd/core/policy.h"
#include "apply/apply.h"
#include "apply/saved-sched.h"

/*
 * Read the netdevs that a class of c governs into inv: the PF's netdev, and those of its VFs on
 * the host. A tenant's VF, one of allocations, follows the tenant's class. The NAPI threads
 * that saved names are read too, so that they can be put back. What cannot be read is left
 * unknown, and an out-of-memory is logged.
 */
void netdev_tune_read(Kernel *k, const Config *c, const SavedSchedTable *saved, const PlanAllocation *allocations,
                      size_t n_allocations, Inventory *inv);
