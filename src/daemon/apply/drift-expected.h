/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* drift-expected.h — whether a planned action is sriovd's own change or the repair of a drift */
#pragma once

#include <stdbool.h>

#include "sriovd/core/plan.h"
#include "sriovd/shared/pci-set.h"

/* What sriovd expects to change in this cycle, and what the last cycle saw. */
typedef struct ExpectedChanges {
        bool all;                   /* every change, as after a start or a reload */
        const Inventory *last;      /* the last cycle's inventory, or NULL before the first */
        const Plan *last_plan;      /* the last cycle's plan, or NULL */
        const PciSet *vfs;          /* the VFs whose tenant changed since the last cycle */
} ExpectedChanges;

/*
 * Whether a is sriovd's own planned change rather than drift. A start, a reload and a change to
 * a tenant's VF all plan such changes. So do a PF probed again, a retry of a failed action, and
 * vectors and threads that the last cycle did not see.
 */
bool action_expected(const ExpectedChanges *e, const Inventory *inv, const Action *a);
