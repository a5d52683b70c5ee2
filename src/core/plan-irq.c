/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-irq.c — where each NIC vector goes, and at what priority its handler thread runs */

#include <sched.h>
#include <string.h>

#include "plan-internal.h"

static const char *class_name(const TenantClass *cls) {
        return cls ? cls->name : "(none)";
}

/*
 * The CPUs that the vectors of a PF and its VFs may use. A device without a class is treated
 * as numa-local, so that the IRQs of devices that are not latency-critical stay off the RT
 * cores. Returns false, with a note that says why, when there is no such CPU.
 */
static bool pf_irq_cpus(PlanBuilder *b, const Pf *pf, const TenantClass *cls, const PlanAllocation *alloc,
                        CpuSet *ret) {
        const Topology *t = &b->inv->topo;
        const CpuSet *node = pf->numa_node >= 0 && (unsigned) pf->numa_node < t->n_nodes
                                     ? &t->node_cpus[pf->numa_node] : NULL;
        IrqCpuPolicy policy = cls ? cls->irq_cpus : IRQ_CPUS_NUMA_LOCAL;
        char buf[CPUSET_LIST_MAX];

        switch (policy) {
        case IRQ_CPUS_VCPU:
                /* R5: a VF's interrupts on the CPU that runs its guest's vCPU 0. */
                if (alloc && alloc->vcpu0_cpu >= 0 && cpuset_has(&t->online, (unsigned) alloc->vcpu0_cpu)) {
                        cpuset_clear(ret);
                        cpuset_add(ret, (unsigned) alloc->vcpu0_cpu);
                        break;
                }
                /*
                 * The CPU is not known yet because the guest is not running, or this is the PF
                 * itself. Use the NUMA-local CPUs meanwhile.
                 */
                if (alloc)
                        plan_add_note(b, NOTE_INFO, alloc->vf,
                                      "tenant %s: vCPU 0's host CPU is not known yet (guest not running?); "
                                      "NUMA-local housekeeping CPUs meanwhile", alloc->tenant);
                _fallthrough_;
        case IRQ_CPUS_NUMA_LOCAL:
                if (node)
                        cpuset_and(ret, &b->cpus.housekeeping, node);
                else {
                        /* Do not guess a node. Use any housekeeping CPU, never an RT one. */
                        *ret = b->cpus.housekeeping;
                        plan_add_note(b, NOTE_INFO, pf->addr,
                                      "NUMA node unknown: IRQs spread over all housekeeping CPUs %s",
                                      cpuset_format_list(ret, buf, sizeof(buf)));
                }
                break;
        case IRQ_CPUS_RT:
                if (node)
                        cpuset_and(ret, &b->cpus.rt, node);
                else
                        *ret = b->cpus.rt;
                break;
        case IRQ_CPUS_LIST:
                cpuset_and(ret, &cls->irq_cpu_list, &t->online);
                break;
        }

        if (cpuset_is_empty(ret)) {
                if (node)
                        plan_add_note(b, NOTE_ERROR, pf->addr,
                                      "class %s (irq_cpus = %s) leaves no online CPU on NUMA node %d; "
                                      "its IRQs are left as they are",
                                      class_name(cls), irq_cpu_policy_to_string(policy), pf->numa_node);
                else
                        plan_add_note(b, NOTE_ERROR, pf->addr,
                                      "class %s (irq_cpus = %s) leaves no online CPU; its IRQs are left "
                                      "as they are", class_name(cls), irq_cpu_policy_to_string(policy));
                return false;
        }
        return true;
}

static void plan_thread(PlanBuilder *b, const char *addr, const Irq *q, const TenantClass *cls) {
        int want = cls ? cls->irq_thread_priority : 0;
        const SavedSched *saved;
        Action *a;

        if (q->thread <= 0)
                return;
        saved = plan_find_saved(b, q->thread, q->irq, "");   /* NULL for a reused PID, which is not sriovd's */

        if (want > 0) {
                if (q->thread_policy == SCHED_FIFO && q->thread_priority == want)
                        return;
                a = plan_add_action(b, ACTION_SET_IRQ_THREAD, addr, q->thread_priority, want);
                if (!a)
                        return;
                a->policy_before = q->thread_policy;
                a->policy_after = SCHED_FIFO;
        } else if (saved) {
                /* The device left its RT class, so put back what sriovd found. */
                if (q->thread_policy == saved->policy && q->thread_priority == saved->priority)
                        return;
                a = plan_add_action(b, ACTION_SET_IRQ_THREAD, addr, q->thread_priority, saved->priority);
                if (!a)
                        return;
                a->policy_before = q->thread_policy;
                a->policy_after = saved->policy;
                a->restore = true;
        } else
                return;
        a->irq = q->irq;
        a->pid = q->thread;
}

/*
 * Place one device's vectors. With spread, vector i goes on the (ordinal + i)-th CPU of the set,
 * so that the PF and its VFs start on different CPUs. With single, all vectors go on one CPU,
 * chosen by ordinal, so that devices do not pile onto the set's first CPU.
 */
static void plan_device(PlanBuilder *b, const char *addr, const unsigned *irqs, size_t n, unsigned ordinal,
                        const CpuSet *set, const TenantClass *cls, unsigned *managed) {
        unsigned count = cpuset_count(set);
        IrqSpread spread = cls ? cls->irq_spread : IRQ_SPREAD_SPREAD;

        for (size_t i = 0; i < n; i++) {
                const Irq *q = inventory_find_irq(b->inv, irqs[i]);
                CpuSet want = {};
                Action *a;

                if (!q)
                        continue;
                plan_thread(b, addr, q, cls);

                if (!q->writable) {
                        (*managed)++;   /* The kernel places managed vectors itself. */
                        continue;
                }
                if (bsearch_safe(&q->irq, b->ctx->unmanaged_irqs, b->ctx->n_unmanaged, sizeof(unsigned),
                                 unsigned_cmp))
                        continue;
                cpuset_add(&want, (unsigned) cpuset_nth(set, (ordinal + (spread == IRQ_SPREAD_SPREAD ? i : 0)) % count));
                if (cpuset_equal(&want, &q->affinity))
                        continue;
                a = plan_add_action(b, ACTION_SET_IRQ_AFFINITY, addr, 0, 0);
                if (!a)
                        return;
                a->irq = q->irq;
                a->cpus_before = q->affinity;
                a->cpus_after = want;
        }
}

/* Place a VF's vectors on its PF's CPUs, set for the PF's class cls, or on its tenant's class's CPUs. */
static void plan_vf(PlanBuilder *b, const Pf *pf, const TenantClass *cls, const CpuSet *set, const Vf *vf,
                    unsigned *managed) {
        const PlanAllocation *alloc = plan_find_allocation(b, vf->addr);
        const TenantClass *vcls = alloc && alloc->class_name[0] ? config_find_class(b->cfg, alloc->class_name) : NULL;
        CpuSet vset;

        /* A tenant's VF follows the tenant's class, so a trader's VF goes on RT cores on any PF. */
        if (!vcls || vcls == cls) {
                if (vcls && vcls->irq_cpus == IRQ_CPUS_VCPU && pf_irq_cpus(b, pf, vcls, alloc, &vset))
                        plan_device(b, vf->addr, vf->irqs, vf->n_irqs, vf->index + 1, &vset, vcls, managed);
                else
                        plan_device(b, vf->addr, vf->irqs, vf->n_irqs, vf->index + 1, set, cls, managed);
        } else if (pf_irq_cpus(b, pf, vcls, alloc, &vset))
                plan_device(b, vf->addr, vf->irqs, vf->n_irqs, vf->index + 1, &vset, vcls, managed);
}

void plan_irqs(PlanBuilder *b) {
        const Inventory *inv = b->inv;
        const Config *cfg = b->cfg;

        if (cfg->have_rt_cpus) {
                CpuSet offline;
                char buf[CPUSET_LIST_MAX];

                cpuset_andnot(&offline, &cfg->rt_cpus, &inv->topo.online);
                if (!cpuset_is_empty(&offline))
                        plan_add_note(b, NOTE_WARNING, "", "RT CPUs %s are not online",
                                      cpuset_format_list(&offline, buf, sizeof(buf)));
        }

        for (size_t i = 0; i < inv->n_pfs; i++) {
                const Pf *pf = &inv->pfs[i];
                const TenantClass *cls = plan_pf_class(b, pf);
                unsigned managed = 0;
                CpuSet set;

                if (cls && cls->irq_thread_priority > 0 && !inv->caps.threaded_irqs)
                        plan_add_note(b, NOTE_WARNING, pf->addr,
                                      "class %s wants IRQ threads at SCHED_FIFO %d, but this kernel runs "
                                      "IRQ handlers unthreaded (boot with threadirqs or PREEMPT_RT): "
                                      "affinity is enforced, priority cannot be",
                                      cls->name, cls->irq_thread_priority);

                if (!pf_irq_cpus(b, pf, cls, NULL, &set))
                        continue;
                plan_device(b, pf->addr, pf->irqs, pf->n_irqs, 0, &set, cls, &managed);
                /* VFs about to be destroyed are not worth pinning. Their successors are, in the next pass. */
                for (size_t j = 0; j < pf->n_vfs && !plan_pf_vfs_replaced(b, pf); j++)
                        plan_vf(b, pf, cls, &set, &pf->vfs[j], &managed);
                if (managed > 0)
                        plan_add_note(b, NOTE_INFO, pf->addr,
                                      "%u kernel-managed IRQs (read-only affinity) left to the kernel", managed);
        }
}

void plan_pf_irqs(PlanBuilder *b, const Pf *pf) {
        const TenantClass *cls = plan_pf_class(b, pf);
        unsigned managed = 0;
        CpuSet set;

        if (pf_irq_cpus(b, pf, cls, NULL, &set))
                plan_device(b, pf->addr, pf->irqs, pf->n_irqs, 0, &set, cls, &managed);
}

void plan_vf_irqs(PlanBuilder *b, const Pf *pf, const Vf *vf) {
        const TenantClass *cls = plan_pf_class(b, pf);
        unsigned managed = 0;
        CpuSet set;

        if (!plan_pf_vfs_replaced(b, pf) && pf_irq_cpus(b, pf, cls, NULL, &set))
                plan_vf(b, pf, cls, &set, vf, &managed);
}

/* Where an IRQ kept off the RT CPUs goes: its CPUs minus the RT ones, or the housekeeping CPUs if none remain. */
static bool off_rt(const PlanBuilder *b, const CpuSet *cur, CpuSet *ret) {
        cpuset_andnot(ret, cur, &b->cpus.rt);
        if (cpuset_is_empty(ret))
                *ret = b->cpus.housekeeping;
        return !cpuset_is_empty(ret) && !cpuset_equal(ret, cur);
}

static bool keep_off_rt(const PlanBuilder *b) {
        return b->cfg->keep_irqs_off_rt && !cpuset_is_empty(&b->cpus.rt) && !cpuset_is_empty(&b->cpus.housekeeping);
}

void plan_irq_default(PlanBuilder *b) {
        CpuSet want;
        Action *a;

        if (!keep_off_rt(b) || !b->inv->have_default_affinity || !off_rt(b, &b->inv->default_affinity, &want))
                return;
        a = plan_add_action(b, ACTION_SET_IRQ_DEFAULT, "", 0, 0);
        if (!a)
                return;
        a->cpus_before = b->inv->default_affinity;
        a->cpus_after = want;
        strscpy(a->effect, sizeof(a->effect), "IRQs requested from now on start off the RT CPUs");
}

/*
 * R5 in docs/REQUIREMENTS.md: whatever is not latency-critical stays off the RT cores, the
 * host's other devices included. Their current CPUs are kept minus the RT ones,
 * so an operator's own placement of a disk's IRQ survives.
 */
void plan_other_irqs(PlanBuilder *b) {
        const Inventory *inv = b->inv;
        unsigned managed = 0;
        char first[32] = "";

        if (!keep_off_rt(b))
                return;
        for (size_t i = 0; i < inv->n_other_irqs; i++) {
                const Irq *q = &inv->other_irqs[i];
                CpuSet want, on_rt;
                Action *a;

                if (!q->writable) {
                        /* Managed vectors follow the kernel's own isolation, set with isolcpus=managed_irq. */

                        cpuset_and(&on_rt, q->has_effective ? &q->effective : &q->affinity, &b->cpus.rt);
                        if (!cpuset_is_empty(&on_rt) && managed++ == 0)
                                strscpy(first, sizeof(first), q->action);
                        continue;
                }
                if (bsearch_safe(&q->irq, b->ctx->unmanaged_irqs, b->ctx->n_unmanaged, sizeof(unsigned), unsigned_cmp))
                        continue;
                if (!off_rt(b, &q->affinity, &want))
                        continue;
                a = plan_add_action(b, ACTION_SET_IRQ_AFFINITY, "", 0, 0);
                if (!a)
                        return;
                a->irq = q->irq;
                a->cpus_before = q->affinity;
                a->cpus_after = want;
                snprintf(a->effect, sizeof(a->effect), "%s%soff the RT CPUs", q->action, q->action[0] ? ": " : "");
        }
        if (managed > 0)
                plan_add_note(b, NOTE_INFO, "",
                              "%u kernel-managed IRQs (first: %s) run on RT CPUs; only the kernel can move them: "
                              "boot with isolcpus=managed_irq,<RT CPUs>",
                              managed, first[0] ? first : "unnamed");
}
