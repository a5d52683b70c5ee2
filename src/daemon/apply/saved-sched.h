/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* saved-sched.h — the scheduling that sriovd found on the threads it changed, to put back later */
#pragma once

#include <stdbool.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"

/*
 * The first scheduling attributes that sriovd found on each thread it changed, sorted by PID.
 * The table is kept in $RUNTIME_DIRECTORY/saved-sched, so that a restart after a crash can still
 * put the threads back as sriovd found them.
 */
typedef struct SavedSchedTable {
        SavedSched *items;
        size_t n, allocated;
        bool dirty;           /* not yet written to $RUNTIME_DIRECTORY/saved-sched */
} SavedSchedTable;

/*
 * Remember what a successful thread action a found, or forget it when a put it back. Returns
 * -ENOMEM when the table cannot grow, and leaves the table as it was then.
 */
int saved_sched_table_track(SavedSchedTable *t, const Action *a);
/* Forget the NAPI and per-CPU threads that inv no longer has. IRQ threads' entries stay. */
void saved_sched_table_prune(SavedSchedTable *t, const Inventory *inv);
/*
 * Put every thread back as sriovd found it, and empty the table. Each failure is logged.
 * Returns the number of threads changed, or the last failure's negative errno.
 */
int saved_sched_table_restore(SavedSchedTable *t, RootFs *root);
/* Replace the table with $RUNTIME_DIRECTORY/saved-sched. Returns 0 also when the file is absent. */
int saved_sched_table_load(SavedSchedTable *t);
/* Write the table to $RUNTIME_DIRECTORY/saved-sched, and clear dirty once it is written. */
int saved_sched_table_save(SavedSchedTable *t);
void saved_sched_table_done(SavedSchedTable *t);
