/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-memory.h — what the applied actions taught about the host: threads to put back, changes refused */
#pragma once

#include "sriovd/core/plan.h"
#include "sriovd/shared/pci-set.h"
#include "saved-cpu.h"
#include "saved-sched.h"
#include "unmanaged-irqs.h"

/*
 * What sriovd keeps from one cycle to the next about the host itself. The planner reads it, so
 * that sriovd does not ask the kernel again, every cycle, for what it refused for good.
 */
typedef struct HostMemory {
        /* The scheduling that sriovd changed on threads. sriovd restores it when it stops. */
        SavedSchedTable saved;
        /* The idle states and governors that sriovd changed on CPUs. They are restored like the threads. */
        SavedCpuTable saved_cpu;
        unsigned n_cpu_restored;           /* how many CPU files the last restore changed */
        /* IRQs whose affinity the kernel refused for good. The list lasts across runs in one boot. */
        UnmanagedIrqs unmanaged;
        /* Devices whose netdev refused coalescing, offload or channel changes for good. */
        PciSet coalesce_unsupported, offloads_unsupported, channels_unsupported;
        /* PFs whose driver does not accept VF link settings. */
        PciSet vf_link_unsupported;
} HostMemory;

/*
 * Remembers what an applied action's result teaches: the scheduling that a thread had before
 * sriovd changed it, and the IRQs and devices that refused a kind of change for good. Returns
 * -ENOMEM when it cannot; the action is then asked again in the next cycle.
 */
int host_memory_learn(HostMemory *h, const Action *a);
/* Writes what changed in the saved threads and CPU files to $RUNTIME_DIRECTORY. Each failure is logged. */
void host_memory_save_dirty(HostMemory *h);
/* Fills the planner's fields that come from h. The pointers stay valid until h changes. */
void host_memory_plan_context(const HostMemory *h, PlanContext *ctx);
/*
 * Forgets which devices refused a kind of change. A reload is how the operator asks sriovd to
 * try again, for example after a firmware update. The IRQs and threads stay known.
 */
void host_memory_forget_refusals(HostMemory *h);
/*
 * Reads $RUNTIME_DIRECTORY/saved-sched and saved-cpu, what a previous sriovd changed on threads
 * and CPUs. Returns 0 also when the files are absent. A failure is logged as a warning and returned.
 */
int host_memory_load_saved(HostMemory *h);
/*
 * Puts every saved thread and CPU file back and clears both files. Returns the number of threads
 * changed, or a negative errno. The number of CPU files changed goes to n_cpu_restored.
 */
int host_memory_restore_saved(HostMemory *h, RootFs *root);
void host_memory_done(HostMemory *h);
