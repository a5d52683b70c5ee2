/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager.h — the daemon: one observe → plan → apply → verify cycle, driven by sd-event */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "sriovd/config.h"
#include "sriovd/inventory.h"
#include "sriovd/plan.h"
#include "sriovd/rootfs.h"

typedef enum CycleMode {
        CYCLE_DRY_RUN,      /* observe and plan only */
        CYCLE_APPLY,        /* observe, plan, apply, verify */
} CycleMode;

typedef struct CycleResult {
        unsigned n_actions;
        unsigned n_done;
        unsigned n_skipped;      /* not carried out on purpose (thread priorities on a fixture) */
        unsigned n_failed;
        unsigned n_drift;        /* actions the verify pass still finds needed */
        unsigned n_policy_errors;
} CycleResult;

typedef struct Manager Manager;

/* config_path NULL = the default path, where a missing file means built-in defaults. */
int manager_new(const char *root, const char *config_path, Manager **ret);
Manager *manager_free(Manager *m);
DEFINE_TRIVIAL_CLEANUP_FUNC(Manager *, manager_free);

/* Load the configuration; on failure the one in use is kept and errors are logged. */
int manager_load_config(Manager *m);
/*
 * One cycle. The plan (with apply results) and the inventory it was built from
 * stay available until the next cycle. Returns 0 or a negative errno when the
 * host could not be observed at all; action failures are counted in ret.
 */
int manager_cycle(Manager *m, CycleMode mode, CycleResult *ret);
const Inventory *manager_inventory(const Manager *m);
const Plan *manager_plan(const Manager *m);
const Config *manager_config(const Manager *m);

/*
 * --once: one cycle, then, if it created VFs, follow the kernel's events until
 * they are all there or late, re-checking as they come. ret adds up every cycle;
 * manager_plan() then holds all their actions.
 */
int manager_once(Manager *m, CycleResult *ret);

/* Put IRQ threads back to the scheduling sriovd found them with (done at daemon stop). */
int manager_restore_sched(Manager *m);
/* Run as a daemon until SIGTERM/SIGINT. */
int manager_run(Manager *m);
