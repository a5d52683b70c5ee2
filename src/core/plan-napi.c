/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-napi.c — threaded NAPI per tenant class */

/*
 * With threaded NAPI, a netdev's receive work runs in napi/ kernel threads. Each thread runs on
 * the CPU of the IRQ that schedules it, at the class's FIFO priority. On a stock kernel, this is
 * the nearest thing to the RT softirq partition of R7. The RT NIC's packets no longer wait
 * behind another NIC's in the shared softirq or in ksoftirqd.
 */

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "plan-internal.h"

static const char *const pairing_names[_NAPI_PAIRED_MAX] = {
        [NAPI_PAIRED_NONE] = "napi-get named no IRQ, and the queue IRQs do not match the NAPIs in number",
        [NAPI_PAIRED_KERNEL] = "netdev napi-get",
        [NAPI_PAIRED_QUEUES] = "queue order",
};

static void plan_threaded(PlanBuilder *b, const PlanNetdev *nd) {
        const NetdevNapi *napi = &nd->tune->napi;
        bool want = nd->cls->napi_threads == TRISTATE_ON;
        Action *a;

        if (napi->threaded < 0) {
                plan_add_note(b, NOTE_INFO, nd->addr, "threaded NAPI unavailable on this kernel (Linux 5.12+): "
                              "class %s's napi_threads not applied to %s", nd->cls->name, nd->name);
                return;
        }
        if (napi->threaded == want)
                return;
        a = plan_add_action(b, ACTION_SET_NAPI_THREADED, nd->addr, napi->threaded, want);
        if (!a)
                return;
        a->netdev_ifindex = nd->ifindex;
        strscpy(a->netdev, sizeof(a->netdev), nd->name);
        a->tune_before_known = true;
        snprintf(a->effect, sizeof(a->effect), want ? "class %s: napi/%s-N threads start, placed next pass"
                                                    : "class %s: %s's NAPI back in softirq context",
                 nd->cls->name, nd->name);
}

static void plan_params(PlanBuilder *b, const PlanNetdev *nd) {
        const NetdevNapi *napi = &nd->tune->napi;
        const NapiParams *want = &nd->cls->napi_params;

        if (!napi->have_napi_set) {
                /* This is never an error, because older kernels simply do not have per-NAPI settings. */
                plan_add_note(b, NOTE_INFO, nd->addr, "per-NAPI settings unavailable on this kernel (netdev "
                              "napi-set, Linux 6.13+): class %s's napi_* keys not applied to %s",
                              nd->cls->name, nd->name);
                return;
        }
        for (size_t i = 0; i < napi->n_napis; i++) {
                const Napi *n = &napi->napis[i];
                NapiParams diff = NAPI_PARAMS_NONE;
                Action *a;

                /* napi-set would refuse a setting that napi-get did not report, so it is left out. */
                if (want->defer_hard_irqs >= 0 && n->params.defer_hard_irqs >= 0 &&
                    n->params.defer_hard_irqs != want->defer_hard_irqs)
                        diff.defer_hard_irqs = want->defer_hard_irqs;
                if (want->gro_flush_timeout >= 0 && n->params.gro_flush_timeout >= 0 &&
                    n->params.gro_flush_timeout != want->gro_flush_timeout)
                        diff.gro_flush_timeout = want->gro_flush_timeout;
                if (want->irq_suspend_timeout >= 0 && n->params.irq_suspend_timeout >= 0 &&
                    n->params.irq_suspend_timeout != want->irq_suspend_timeout)
                        diff.irq_suspend_timeout = want->irq_suspend_timeout;
                if (diff.defer_hard_irqs < 0 && diff.gro_flush_timeout < 0 && diff.irq_suspend_timeout < 0)
                        continue;
                a = plan_add_action(b, ACTION_SET_NAPI_PARAMS, nd->addr, 0, 0);
                if (!a)
                        return;
                a->netdev_ifindex = nd->ifindex;
                strscpy(a->netdev, sizeof(a->netdev), nd->name);
                a->tune_before_known = true;
                a->napi_id = n->id;
                a->irq = n->irq;
                a->napi_before = n->params;
                a->napi_after = diff;
                snprintf(a->effect, sizeof(a->effect), "class %s, NAPI %u of %s", nd->cls->name, n->id, nd->name);
        }
}

static void napi_netdev(PlanBuilder *b, const PlanNetdev *nd, void *userdata) {
        if (nd->ifindex <= 0 || !nd->cls || !nd->tune->napi_known)
                return;
        if (nd->cls->napi_threads != TRISTATE_LEAVE)
                plan_threaded(b, nd);
        if (tenant_class_wants_napi_params(nd->cls))
                plan_params(b, nd);
}

void plan_napi(PlanBuilder *b) {
        plan_for_each_netdev(b, napi_netdev, NULL);
}

/* Where IRQ irq will be once this plan is carried out: where plan_irqs() put it, or else where it is now. */
static bool irq_cpus_after(const PlanBuilder *b, unsigned irq, CpuSet *ret) {
        const Irq *q;

        for (size_t i = 0; i < b->plan->n_actions; i++) {
                const Action *a = &b->plan->actions[i];
                if (a->kind == ACTION_SET_IRQ_AFFINITY && a->irq == irq) {
                        *ret = a->cpus_after;
                        return true;
                }
        }
        q = inventory_find_irq(b->inv, irq);
        if (!q)
                return false;
        /* A kernel-managed vector stays where the kernel put it, and its thread follows it to that CPU. */
        *ret = !q->writable && q->has_effective ? q->effective : q->affinity;
        return !cpuset_is_empty(ret);
}

static bool threaded_toggled(const PlanBuilder *b, const char *addr) {
        for (size_t i = 0; i < b->plan->n_actions; i++)
                if (b->plan->actions[i].kind == ACTION_SET_NAPI_THREADED && streq(b->plan->actions[i].target, addr))
                        return true;
        return false;
}

/*
 * Run the thread at the class's priority. With a priority of 0, put back what sriovd found, as
 * plan_thread() does for IRQ threads.
 */
static void plan_napi_sched(PlanBuilder *b, const PlanNetdev *nd, const Napi *n, int want) {
        const SavedSched *saved = plan_find_saved(b, n->thread, 0, n->thread_name);
        int policy = SCHED_FIFO;
        bool restore = want <= 0;
        Action *a;

        if (restore) {
                if (!saved || (n->thread_policy == saved->policy && n->thread_priority == saved->priority))
                        return;
                want = saved->priority;
                policy = saved->policy;
        } else if (n->thread_policy == SCHED_FIFO && n->thread_priority == want)
                return;
        a = plan_add_action(b, ACTION_SET_NAPI_SCHED, nd->addr, n->thread_priority, want);
        if (!a)
                return;
        a->pid = n->thread;
        a->irq = n->irq;
        a->policy_before = n->thread_policy;
        a->policy_after = policy;
        a->restore = restore;
        strscpy(a->thread_name, sizeof(a->thread_name), n->thread_name);
        snprintf(a->effect, sizeof(a->effect), "class %s: %s", nd->cls ? nd->cls->name : "(none)", n->thread_name);
}

static void napi_threads_netdev(PlanBuilder *b, const PlanNetdev *nd, void *userdata) {
        const NetdevNapi *napi = &nd->tune->napi;
        bool on = nd->cls && nd->cls->napi_threads == TRISTATE_ON;
        unsigned unpaired = 0;

        if (nd->ifindex <= 0 || !nd->tune->napi_known || threaded_toggled(b, nd->addr))
                return;
        for (size_t i = 0; i < napi->n_napis; i++) {
                const Napi *n = &napi->napis[i];
                CpuSet want;
                Action *a;

                if (n->thread <= 0)
                        continue;
                /*
                 * The thread is not the class's, or no longer is. Only what sriovd changed is put
                 * back, and the CPUs stay.
                 */
                if (!on) {
                        plan_napi_sched(b, nd, n, 0);
                        continue;
                }
                /* An unpaired thread at FIFO could preempt whatever runs on any CPU, the RT CPUs included. */
                if (n->irq == 0 || !irq_cpus_after(b, n->irq, &want)) {
                        unpaired++;
                        plan_napi_sched(b, nd, n, 0);
                        continue;
                }
                if (!kthread_name_savable(n->thread_name)) {
                        plan_add_note(b, NOTE_WARNING, nd->addr, "%s: its netdev's name cannot be recorded to put "
                                      "it back later; left as it is", nd->name);
                        continue;
                }
                /*
                 * Pin the thread to its CPUs first. Raised while it may still run anywhere, it
                 * would preempt anyone.
                 */

                if (!cpuset_equal(&want, &n->thread_cpus)) {
                        a = plan_add_action(b, ACTION_SET_NAPI_PIN, nd->addr, 0, 0);
                        if (!a)
                                return;
                        a->pid = n->thread;
                        a->irq = n->irq;
                        a->cpus_before = n->thread_cpus;
                        a->cpus_after = want;
                        strscpy(a->thread_name, sizeof(a->thread_name), n->thread_name);
                        snprintf(a->effect, sizeof(a->effect), "%s follows IRQ %u (paired by %s)", n->thread_name,
                                 n->irq, pairing_names[napi->pairing]);
                }
                plan_napi_sched(b, nd, n, tenant_class_napi_priority(nd->cls));
        }
        if (unpaired > 0)
                plan_add_note(b, NOTE_WARNING, nd->addr, "%u napi/ threads of %s not paired with an IRQ (%s); left "
                              "on the CPUs they have", unpaired, nd->name, pairing_names[napi->pairing]);
}

void plan_napi_threads(PlanBuilder *b) {
        plan_for_each_netdev(b, napi_threads_netdev, NULL);
}

char *napi_params_format(const NapiParams *p, const NapiParams *mask, char *buf, size_t size) {
        size_t k = 0;

        buf[0] = 0;
        if (mask->defer_hard_irqs >= 0)
                strjoin_appendf(buf, size, &k, "defer-hard-irqs %ld", p->defer_hard_irqs);
        if (mask->gro_flush_timeout >= 0)
                strjoin_appendf(buf, size, &k, "gro-flush-timeout %ld", p->gro_flush_timeout);
        if (mask->irq_suspend_timeout >= 0)
                strjoin_appendf(buf, size, &k, "irq-suspend-timeout %ld", p->irq_suspend_timeout);
        return buf;
}
