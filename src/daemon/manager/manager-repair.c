/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* manager-repair.c — a drift event's repair at once, without a cycle, when nothing else changed */

#include "sriovd/kernel/refresh.h"
#include "apply/action-log.h"
#include "apply/drift-expected.h"
#include "manager-internal.h"

/*
 * A drift event names an IRQ, or a thread, that another process changed. The cycle that repairs
 * it plans the whole host, which takes milliseconds in an emulated guest. A NIC vector needs less
 * when the last cycle left it as planned and nothing else is due: the vector is read again, its
 * device's vectors are planned alone, as hotplug.c plans a new VF, and what differs is written
 * back. The write, its journal line and DriftDetected are the cycle's own. What is not that
 * simple is left to the cycle.
 */

/* One NIC vector as the last cycle left it, the device whose vector it is, and what the events named. */
typedef struct RepairTarget {
        Irq *last;
        const Pf *pf;
        const Vf *vf;        /* NULL for the PF's own vector */
        bool affinity, thread;
} RepairTarget;

static bool device_has(const unsigned *irqs, size_t n, unsigned irq) {
        return bsearch_safe(&irq, irqs, n, sizeof(unsigned), unsigned_cmp) != NULL;
}

/* Finds irq in inv's NIC vectors. The host's other IRQs, which keep only off the RT CPUs, are the cycle's. */
static bool repair_target_find(Inventory *inv, unsigned irq, RepairTarget *ret) {
        /* The repair owns the last inventory's copy of the vector, as the cycle owns the whole. */
        Irq *q = (Irq *) inventory_find_irq(inv, irq);

        for (size_t i = 0; q && i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];

                if (device_has(pf->irqs, pf->n_irqs, irq)) {
                        *ret = (RepairTarget) { .last = q, .pf = pf };
                        return true;
                }
                for (size_t j = 0; j < pf->n_vfs; j++)
                        if (device_has(pf->vfs[j].irqs, pf->vfs[j].n_irqs, irq)) {
                                *ret = (RepairTarget) { .last = q, .pf = pf, .vf = &pf->vfs[j] };
                                return true;
                        }
        }
        return false;
}

/* Whether the vector shows what the last cycle left. */
static bool irq_as_left(const Irq *now, const Irq *last) {
        return cpuset_equal(&now->affinity, &last->affinity) && now->thread == last->thread &&
               now->thread_policy == last->thread_policy && now->thread_priority == last->thread_priority;
}

/* Whether a puts the vector back to what the last cycle left, which is then what it planned. */
static bool action_puts_back(const Action *a, const Irq *last) {
        if (a->irq != last->irq)
                return false;
        if (a->kind == ACTION_SET_IRQ_AFFINITY)
                return cpuset_equal(&a->cpus_after, &last->affinity);
        if (a->kind == ACTION_SET_IRQ_THREAD)
                return a->pid == last->thread && a->policy_after == last->thread_policy &&
                       a->after == last->thread_priority;
        return false;
}

/*
 * Repairs one vector, through a view of the host that holds its device and that vector only.
 * Returns 1 when the vector is as planned now, 0 when the cycle must look at it, or a negative
 * errno. A write that fails is the cycle's to classify, log and retry, so it is not logged here.
 */
static int repair_one(Manager *m, const RepairTarget *t, unsigned *n_done) {
        const ExpectedChanges expect = {
                .all = m->expect_changes,
                .last = m->inventory,
                .last_plan = m->plan,
                .vfs = &m->expect_vfs,
        };
        _cleanup_(plan_freep) Plan *plan = NULL;
        Irq now = *t->last;
        Pf pf = *t->pf;
        Vf vf = {};
        PlanContext ctx;
        int r;

        pf.vfs = t->vf ? &vf : NULL;
        pf.n_vfs = t->vf ? 1 : 0;
        if (t->vf)
                vf = *t->vf;
        Inventory view = { .topo = m->inventory->topo, .caps = m->inventory->caps, .pfs = &pf, .n_pfs = 1,
                           .irqs = &now, .n_irqs = 1 };

        /* Only what the events named can have changed since the last cycle, so only that is read. */
        r = irq_refresh_named(m->root, m->irq_files, &now, t->affinity, t->thread);
        if (r < 0)
                return r == -ESTALE ? 0 : r;
        /* The VF users matter only to a VF count change, and a plan with one goes to the cycle. */
        manager_plan_context(m, NULL, 0, &ctx);
        /* The whole PF, as the cycle has it, decides whether its VFs are about to be replaced. */
        r = t->vf ? plan_build_vf_irqs(&view, m->config, &ctx, t->pf, t->vf, &plan)
                  : plan_build_pf_irqs(&view, m->config, &ctx, t->pf, &plan);
        if (r < 0)
                return r;
        /*
         * With nothing to write, the vector is as planned only if it is as the last cycle left it.
         * If it is not, the plan no longer holds it, as for an IRQ the kernel refused for good.
         */
        if (plan->n_actions == 0)
                return irq_as_left(&now, t->last);
        for (size_t i = 0; i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];

                /* A fixture's threads are not this host's. The cycle skips them, and so does the repair. */
                if (a->kind == ACTION_SET_IRQ_THREAD && !rootfs_sched_live(m->root))
                        continue;
                if (!action_puts_back(a, t->last) || action_expected(&expect, &view, a))
                        return 0;
        }

        for (size_t i = 0; i < plan->n_actions; i++) {
                Action *a = &plan->actions[i];

                if (a->kind == ACTION_SET_IRQ_THREAD && !rootfs_sched_live(m->root))
                        continue;
                action_apply(&m->kernel, a);
                if (a->result < 0 || a->skipped)
                        return 0;
                action_log(&view, a, true);
                if (a->result > 0)
                        manager_emit_drift(m, a, "repaired");
                manager_record(m, a);
                *n_done += a->result > 0;
        }
        /* The cycle's verify, for one vector: a write that did not stick is the cycle's to report. */
        r = irq_refresh_named(m->root, m->irq_files, &now, t->affinity, t->thread);
        if (r < 0)
                return r == -ESTALE ? 0 : r;
        if (!irq_as_left(&now, t->last))
                return 0;
        *t->last = now;
        return 1;
}

/* Whether the last cycle's inventory and plan still hold, so that one vector can be planned alone. */
static bool repair_fast_allowed(const Manager *m) {
        return m->inventory && m->plan && m->config && !m->once && !m->expect_changes &&
               pci_set_size(&m->expect_vfs) == 0 && pci_set_size(&m->hotplug.probing) == 0 &&
               vf_wait_next_deadline(&m->vf_waits) == UINT64_MAX && m->last.n_failed == 0 &&
               m->last.n_drift == 0 && !manager_cycle_due(m);
}

/* Adds t to targets, or what it names to the same vector's entry. */
static void targets_add(RepairTarget *targets, size_t *n, const RepairTarget *t) {
        for (size_t i = 0; i < *n; i++)
                if (targets[i].last == t->last) {
                        targets[i].affinity |= t->affinity;
                        targets[i].thread |= t->thread;
                        return;
                }
        targets[(*n)++] = *t;
}

int manager_repair_fast(Manager *m, const unsigned *irqs, size_t n_irqs, const pid_t *pids, size_t n_pids,
                        CycleResult *ret) {
        _cleanup_free_ RepairTarget *targets = NULL;
        uint64_t t0 = now_usec();
        unsigned n_done = 0;
        size_t n = 0;
        int r = 1;

        if (!repair_fast_allowed(m) || n_irqs + n_pids == 0)
                return 0;
        targets = calloc(n_irqs + n_pids, sizeof(*targets));
        if (!targets)
                return -ENOMEM;
        for (size_t i = 0; i < n_irqs; i++) {
                RepairTarget t;

                if (!repair_target_find(m->inventory, irqs[i], &t))
                        return 0;
                t.affinity = true;
                targets_add(targets, &n, &t);
        }
        /* A named thread must be a NIC vector's handler. NAPI, per-CPU and guest threads are the cycle's. */
        for (size_t i = 0; i < n_pids; i++) {
                const Irq *q = NULL;
                RepairTarget t;

                for (size_t j = 0; j < m->inventory->n_irqs && !q; j++)
                        if (pids[i] > 0 && m->inventory->irqs[j].thread == pids[i])
                                q = &m->inventory->irqs[j];
                if (!q || !repair_target_find(m->inventory, q->irq, &t))
                        return 0;
                t.thread = true;
                targets_add(targets, &n, &t);
        }

        for (size_t i = 0; i < n && r > 0; i++)
                r = repair_one(m, &targets[i], &n_done);
        if (r > 0 && m->host.saved.dirty) {
                int k = saved_sched_table_save(&m->host.saved);
                if (k < 0)
                        log_warning_errno(k, "Failed to record the IRQ threads' original scheduling, ignoring: %m");
        }
        if (n_done > 0 || r > 0)
                log_info("Drift events: %u of %zu IRQs put back in %.2f ms, without a cycle%s", n_done, n,
                         (double) (now_usec() - t0) / 1000.0, r > 0 ? "" : "; a cycle looks at the rest");
        if (ret)
                *ret = (CycleResult) { .n_actions = n_done, .n_done = n_done };
        return r;
}

bool manager_repair_named(Manager *m) {
        const DriftTargets *d = kernel_events_drift(m->kernel_events);
        int r;

        r = manager_repair_fast(m, d->irqs, d->n_irqs, d->pids, d->n_pids, NULL);
        if (r < 0)
                log_warning_errno(r, "Failed to repair the drift events' targets at once, running a cycle instead: %m");
        if (r <= 0)
                return false;
        kernel_events_drift_clear(m->kernel_events);
        return true;
}
