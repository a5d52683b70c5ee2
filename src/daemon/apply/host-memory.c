/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-memory.c — what the applied actions taught about the host: threads to put back, changes refused */

#include <stdlib.h>

#include "base/log.h"
#include "host-memory.h"

int host_memory_learn(HostMemory *h, const Action *a) {
        PciSet *refused;
        int r;

        if ((a->kind == ACTION_SET_IRQ_THREAD || a->kind == ACTION_SET_NAPI_SCHED ||
             a->kind == ACTION_SET_KTHREAD_SCHED) && a->result > 0)
                return saved_sched_table_track(&h->saved, a);
        if ((a->kind == ACTION_SET_CPU_IDLE || a->kind == ACTION_SET_CPU_GOVERNOR) && !a->skipped &&
            (a->result > 0 || (a->result == 0 && a->restore && a->applied)))
                return saved_cpu_table_track(&h->saved_cpu, a);
        if (a->result >= 0 || a->error.class != ERROR_UNMANAGED)
                return 0;
        switch (a->kind) {
        case ACTION_SET_IRQ_AFFINITY:
                r = unmanaged_irqs_add(&h->unmanaged, a->irq);
                return r < 0 ? r : 0;
        case ACTION_SET_VF_LINK:
                refused = &h->vf_link_unsupported;
                break;
        case ACTION_SET_COALESCE:
                refused = &h->coalesce_unsupported;
                break;
        case ACTION_SET_OFFLOADS:
                refused = &h->offloads_unsupported;
                break;
        case ACTION_SET_CHANNELS:
                refused = &h->channels_unsupported;
                break;
        default:
                return 0;
        }
        r = pci_set_add(refused, a->target);
        return r < 0 ? r : 0;
}

void host_memory_plan_context(const HostMemory *h, PlanContext *ctx) {
        ctx->saved = h->saved.items;
        ctx->n_saved = h->saved.n;
        ctx->saved_cpu = h->saved_cpu.items;
        ctx->n_saved_cpu = h->saved_cpu.n;
        ctx->unmanaged_irqs = h->unmanaged.irqs;
        ctx->n_unmanaged = h->unmanaged.n;
        ctx->coalesce_unsupported = pci_set_array(&h->coalesce_unsupported);
        ctx->n_coalesce_unsupported = pci_set_size(&h->coalesce_unsupported);
        ctx->offloads_unsupported = pci_set_array(&h->offloads_unsupported);
        ctx->n_offloads_unsupported = pci_set_size(&h->offloads_unsupported);
        ctx->channels_unsupported = pci_set_array(&h->channels_unsupported);
        ctx->n_channels_unsupported = pci_set_size(&h->channels_unsupported);
        ctx->vf_link_unsupported = pci_set_array(&h->vf_link_unsupported);
        ctx->n_vf_link_unsupported = pci_set_size(&h->vf_link_unsupported);
}

void host_memory_forget_refusals(HostMemory *h) {
        pci_set_clear(&h->vf_link_unsupported);
        pci_set_clear(&h->coalesce_unsupported);
        pci_set_clear(&h->offloads_unsupported);
        pci_set_clear(&h->channels_unsupported);
}

int host_memory_load_saved(HostMemory *h) {
        int r;

        /* Before anything is restored, each entry is checked again: is the PID still the same kernel thread? */
        r = saved_sched_table_load(&h->saved);
        if (r < 0)
                return log_warning_errno(r, "Failed to read what a previous sriovd changed on IRQ threads, ignoring: %m");
        if (h->saved.n > 0)
                log_info("Restoring knowledge of %zu IRQ threads a previous sriovd changed", h->saved.n);
        r = saved_cpu_table_load(&h->saved_cpu);
        if (r < 0)
                return log_warning_errno(r, "Failed to read what a previous sriovd changed on CPUs, ignoring: %m");
        if (h->saved_cpu.n > 0)
                log_info("Restoring knowledge of %zu CPU idle states and governors a previous sriovd changed",
                         h->saved_cpu.n);
        return 0;
}

void host_memory_save_dirty(HostMemory *h) {
        int r;

        if (h->saved.dirty) {
                r = saved_sched_table_save(&h->saved);
                if (r < 0)
                        log_warning_errno(r, "Failed to record the IRQ threads' original scheduling, ignoring: %m");
        }
        if (h->saved_cpu.dirty) {
                r = saved_cpu_table_save(&h->saved_cpu);
                if (r < 0)
                        log_warning_errno(r, "Failed to record the CPUs' original idle states and governors, "
                                          "ignoring: %m");
        }
}

int host_memory_restore_saved(HostMemory *h, RootFs *root) {
        int r, c, k;

        r = saved_sched_table_restore(&h->saved, root);
        c = saved_cpu_table_restore(&h->saved_cpu, root);
        /* Everything is put back, so nothing is left for a later sriovd to restore. */
        k = saved_sched_table_save(&h->saved);
        if (k < 0)
                log_warning_errno(k, "Failed to clear %s/saved-sched, ignoring: %m", getenv("RUNTIME_DIRECTORY"));
        k = saved_cpu_table_save(&h->saved_cpu);
        if (k < 0)
                log_warning_errno(k, "Failed to clear %s/saved-cpu, ignoring: %m", getenv("RUNTIME_DIRECTORY"));
        h->n_cpu_restored = c > 0 ? (unsigned) c : 0;
        if (r < 0)
                return r;
        return c < 0 ? c : r;
}

void host_memory_done(HostMemory *h) {
        saved_sched_table_done(&h->saved);
        saved_cpu_table_done(&h->saved_cpu);
        unmanaged_irqs_done(&h->unmanaged);
        pci_set_done(&h->vf_link_unsupported);
        pci_set_done(&h->coalesce_unsupported);
        pci_set_done(&h->offloads_unsupported);
        pci_set_done(&h->channels_unsupported);
}
