/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* saved-cpu.h — the idle states and governors that sriovd found on the CPUs it changed, to put back later */
#pragma once

#include <stdbool.h>
#include <stdio.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/rootfs.h"

/*
 * The first value that sriovd found in each CPU file it wrote, sorted by saved_cpu_cmp(). The
 * table is kept in $RUNTIME_DIRECTORY/saved-cpu, so that a restart and sriovd --restore can
 * still put the CPUs back as sriovd found them.
 */
typedef struct SavedCpuTable {
        SavedCpu *items;
        size_t n, allocated;
        bool dirty;           /* not yet written to $RUNTIME_DIRECTORY/saved-cpu */
} SavedCpuTable;

/*
 * Remembers what a successful CPU action a found, unless the table has that file already. An
 * action that put the value back forgets it. Returns -ENOMEM when the table cannot grow.
 */
int saved_cpu_table_track(SavedCpuTable *t, const Action *a);
/*
 * Reads into inv->cpu_power the idle states and governors of the RT CPUs when [rt] idle_states
 * or cpufreq_governor asks for a change, and of every CPU that t has yet to put back. With both
 * keys at leave and an empty table, nothing is read. Returns 0 or -ENOMEM.
 */
int saved_cpu_observe(RootFs *root, const Config *cfg, const SavedCpuTable *t, Inventory *inv);
/*
 * Puts every file back as sriovd found it, and empties the table. Each failure is logged. A CPU
 * that went offline is passed over. Returns the number of files changed, or the last failure.
 */
int saved_cpu_table_restore(SavedCpuTable *t, RootFs *root);
/* Replaces the table with $RUNTIME_DIRECTORY/saved-cpu. Returns 0 also when the file is absent. */
int saved_cpu_table_load(SavedCpuTable *t);
/* Writes the table to $RUNTIME_DIRECTORY/saved-cpu, and clears dirty once it is written. */
int saved_cpu_table_save(SavedCpuTable *t);
void saved_cpu_table_done(SavedCpuTable *t);

/*
 * The file holds one line per CPU file: "CPU idle K VALUE" for cpuidle/stateK/disable, with a
 * VALUE of 0 or 1, or "CPU governor NAME". The parser does no I/O and is strict: it returns
 * -EBADMSG on a malformed line. *ret is sorted by saved_cpu_cmp().
 */
void saved_cpu_format(FILE *f, const SavedCpu *s, size_t n);
int saved_cpu_parse(const char *text, SavedCpu **ret, size_t *ret_n);
