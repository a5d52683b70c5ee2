/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-kthreads.c — the per-CPU kernel threads of the RT CPUs: ksoftirqd/N, ktimers/N and rcuc/N */

/*
 * The planner gives these threads their SCHED_FIFO priorities from [rt], and puts them back
 * when sriovd no longer sets them. It also checks whether the host keeps the order that R6 in
 * docs/REQUIREMENTS.md asks for, in which the RT NIC's threads run above these.
 */

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "plan-internal.h"


static bool kind_is_per_cpu(KthreadKind k) {
        return k == KTHREAD_KSOFTIRQD || k == KTHREAD_KTIMERS || k == KTHREAD_RCUC;
}

/* Why a kind of thread can be missing altogether. The kernel decides whether these threads exist. */
static const char *kind_absent_reason(KthreadKind k) {
        switch (k) {
        case KTHREAD_KTIMERS:
                return "not a PREEMPT_RT kernel";
        case KTHREAD_RCUC:
                return "RCU callbacks run in softirq here (rcuc/N threads need PREEMPT_RT or rcutree.use_softirq=0)";
        default:
                return "none found in /proc";
        }
}

static void plan_kthread(PlanBuilder *b, const Kthread *k) {
        int want = 0;
        const SavedSched *saved;
        Action *a;

        if (cpuset_has(&b->cpus.rt, k->num))
                want = b->cfg->kthread_priority[k->kind];

        if (want > 0) {
                if (k->policy == SCHED_FIFO && k->priority == want)
                        return;
                a = plan_add_action(b, ACTION_SET_KTHREAD_SCHED, "", k->priority, want);
                if (!a)
                        return;
                a->policy_after = SCHED_FIFO;
                snprintf(a->effect, sizeof(a->effect), "%s on RT CPU %u", k->name, k->num);
        } else {
                /* The priority went back to 0, or the CPU left the RT set, so put back what sriovd found. */
                saved = plan_find_saved(b, k->pid, 0, k->name);
                if (!saved || (k->policy == saved->policy && k->priority == saved->priority))
                        return;
                a = plan_add_action(b, ACTION_SET_KTHREAD_SCHED, "", k->priority, saved->priority);
                if (!a)
                        return;
                a->policy_after = saved->policy;
                a->restore = true;
                snprintf(a->effect, sizeof(a->effect), "%s back as sriovd found it", k->name);
        }
        a->policy_before = k->policy;
        a->pid = k->pid;
        strscpy(a->thread_name, sizeof(a->thread_name), k->name);
}

/*
 * Add one note per kind of thread that is asked for and that some RT CPU lacks. The cause is
 * the kernel's configuration, not an error.
 */
static void note_missing(PlanBuilder *b, KthreadKind kind) {
        int prio = b->cfg->kthread_priority[kind];
        char buf[CPUSET_LIST_MAX];
        CpuSet missing = {};
        bool any = false;

        for (size_t i = 0; i < b->inv->n_kthreads; i++)
                any = any || b->inv->kthreads[i].kind == kind;
        for (unsigned c = 0; c < CPUSET_MAX; c++)
                if (cpuset_has(&b->cpus.rt, c) && !inventory_find_kthread(b->inv, kind, c))
                        cpuset_add(&missing, c);
        if (cpuset_is_empty(&missing))
                return;
        if (!any)
                plan_add_note(b, NOTE_INFO, "", "no %s/N threads: %s; %s = %d not applied",
                              kthread_kind_to_string(kind), kind_absent_reason(kind), kthread_priority_key(kind), prio);
        else
                plan_add_note(b, NOTE_INFO, "", "no %s/N thread on RT CPUs %s; %s = %d not applied there",
                              kthread_kind_to_string(kind), cpuset_format_list(&missing, buf, sizeof(buf)),
                              kthread_priority_key(kind), prio);
}

/*
 * Whether a class's IRQs run on the RT CPUs, as the planner places them. This is the config
 * check's class_is_rt(), in terms of this host's RT set.
 */
static bool class_on_rt(const PlanBuilder *b, const TenantClass *cls) {
        CpuSet outside;

        switch (cls->irq_cpus) {
        case IRQ_CPUS_RT:
                return true;
        case IRQ_CPUS_VCPU:
                return cls->vcpu_pin_rt;
        case IRQ_CPUS_LIST:
                cpuset_andnot(&outside, &cls->irq_cpu_list, &b->cpus.rt);
                return !cpuset_is_empty(&cls->irq_cpu_list) && cpuset_is_empty(&outside);
        default:
                return false;
        }
}

typedef struct LowestRt {
        const TenantClass *cls;
        int prio;
        const char *threads;        /* "IRQ" or "NAPI" */
} LowestRt;

static void consider_class(const PlanBuilder *b, const TenantClass *cls, LowestRt *low) {
        int napi;

        if (!cls || !class_on_rt(b, cls))
                return;
        if (cls->irq_thread_priority > 0 && (!low->cls || cls->irq_thread_priority < low->prio))
                *low = (LowestRt) { cls, cls->irq_thread_priority, "IRQ" };
        napi = tenant_class_napi_priority(cls);
        if (cls->napi_threads == TRISTATE_ON && napi > 0 && (!low->cls || napi < low->prio))
                *low = (LowestRt) { cls, napi, "NAPI" };
}

/* The lowest RT thread priority of the classes in use: those of the PFs in scope and of the tenants. */
static LowestRt lowest_rt_in_use(const PlanBuilder *b) {
        LowestRt low = {};

        for (size_t i = 0; i < b->inv->n_pfs; i++)
                consider_class(b, plan_pf_class(b, &b->inv->pfs[i]), &low);
        for (size_t i = 0; i < b->ctx->n_allocations; i++) {
                const PlanAllocation *al = &b->ctx->allocations[i];
                if (al->class_name[0])
                        consider_class(b, config_find_class(b->cfg, al->class_name), &low);
        }
        return low;
}

/* What a thread will run at once this plan is carried out: its planned change, or else what it runs now. */
static void kthread_outcome(const PlanBuilder *b, const Kthread *k, int *ret_policy, int *ret_prio) {
        *ret_policy = k->policy;
        *ret_prio = k->priority;
        for (size_t i = 0; i < b->plan->n_actions; i++) {
                const Action *a = &b->plan->actions[i];
                if (a->kind == ACTION_SET_KTHREAD_SCHED && a->pid == k->pid) {
                        *ret_policy = a->policy_after;
                        *ret_prio = (int) a->after;
                }
        }
}

/*
 * The config check keeps [rt]'s own priorities in order. What the operator, TuneD or the kernel
 * set outside the config is only visible here. On an RT CPU, a per-CPU thread at or above the
 * RT NIC's threads makes the RT NIC's receive work wait behind everyone else's softirqs.
 */

static void check_host_order(PlanBuilder *b) {
        LowestRt low = lowest_rt_in_use(b);

        if (!low.cls)
                return;
        for (size_t i = 0; i < b->inv->n_kthreads; i++) {
                const Kthread *k = &b->inv->kthreads[i];
                int policy, prio;

                if (!kind_is_per_cpu(k->kind) || !cpuset_has(&b->cpus.rt, k->num))
                        continue;
                kthread_outcome(b, k, &policy, &prio);
                if ((policy != SCHED_FIFO && policy != SCHED_RR) || prio < low.prio)
                        continue;
                plan_add_note(b, NOTE_WARNING, "",
                              "%s (pid %d) runs at %s %d on RT CPU %u, not below class %s's %s threads at "
                              "FIFO %d: the RT priority order is broken on this host; "
                              "set %s below %d",
                              k->name, (int) k->pid, sched_policy_to_string(policy), prio, k->num, low.cls->name,
                              low.threads, low.prio, kthread_priority_key(k->kind), low.prio);
        }
}

void plan_kthreads(PlanBuilder *b) {
        for (size_t i = 0; i < b->inv->n_kthreads; i++)
                if (kind_is_per_cpu(b->inv->kthreads[i].kind))
                        plan_kthread(b, &b->inv->kthreads[i]);
        for (KthreadKind kind = 0; kind < _KTHREAD_KIND_MAX; kind++)
                if (kind_is_per_cpu(kind) && b->cfg->kthread_priority[kind] > 0)
                        note_missing(b, kind);
        check_host_order(b);
}
