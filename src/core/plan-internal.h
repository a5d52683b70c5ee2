/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-internal.h — the plan builder shared by the planner's parts */
#pragma once

#include "sriovd/core/plan.h"

typedef struct PlanBuilder {
        Plan *plan;
        size_t allocated_actions, allocated_notes;
        int error;
        const Inventory *inv;
        const Config *cfg;
        const PlanContext *ctx;
        HostCpus cpus;
} PlanBuilder;

/* plan-builder.c: the plan under construction, and the questions that the parts below ask of it. */
Action *plan_add_action(PlanBuilder *b, ActionKind kind, const char *target, long before, long after);
_printf_(4, 5) void plan_add_note(PlanBuilder *b, NoteLevel level, const char *target, const char *fmt, ...);
/* The tenant that holds VF vf, or NULL for none. The allocations are sorted by VF. */
const PlanAllocation *plan_find_allocation(const PlanBuilder *b, const char *vf);
/* Whether the plan binds VF vf to vfio-pci, which means that its host netdev is going away. */
bool plan_vf_leaves_host(const PlanBuilder *b, const char *vf);
/* Whether the plan already changes the PF's VF count, which means that its present VFs are going away. */
bool plan_pf_vfs_replaced(const PlanBuilder *b, const Pf *pf);

/* A netdev that the planner tunes: the PF's first netdev, or a VF's on the host. ifindex is 0 in a guest. */
typedef struct PlanNetdev {
        const char *addr;                 /* the PCI function */
        int ifindex;
        const char *name;
        const NetdevTune *tune;
        const TenantClass *cls;           /* the tenant's class, or the PF's; NULL for none */
        const PlanAllocation *alloc;      /* a VF's tenant, or NULL */
        const unsigned *irqs;             /* the function's vectors */
        size_t n_irqs;
} PlanNetdev;
typedef void (*PlanNetdevFn)(PlanBuilder *b, const PlanNetdev *nd, void *userdata);
void plan_for_each_netdev(PlanBuilder *b, PlanNetdevFn fn, void *userdata);

/* The class that the PF's [pf] or [match] section names, or NULL for none. */
const TenantClass *plan_pf_class(const PlanBuilder *b, const Pf *pf);
/*
 * What sriovd found on thread pid before it changed it, or NULL for nothing. Only an entry with
 * the same IRQ and the same name counts, because a reused PID is not sriovd's. The IRQ is 0 for
 * threads other than IRQ threads, and the name is "" for IRQ threads.
 */
const SavedSched *plan_find_saved(const PlanBuilder *b, pid_t pid, unsigned irq, const char *name);

/*
 * The planner's parts. Each adds to the plan through the builder above, and calls no other
 * part. plan.c runs them in order, so that the VF counts come before the IRQs and the tuning
 * that depend on them.
 */

/* plan-irq.c: affinities and handler threads of every in-scope PF and VF. */
void plan_irqs(PlanBuilder *b);
/* The same for one VF of pf only, and for pf's own vectors only. */
void plan_vf_irqs(PlanBuilder *b, const Pf *pf, const Vf *vf);
void plan_pf_irqs(PlanBuilder *b, const Pf *pf);
/* Keep the host's other IRQs, and the default for new ones, off the RT CPUs, as [cpus] keep_irqs_off_rt asks. */
void plan_irq_default(PlanBuilder *b);
void plan_other_irqs(PlanBuilder *b);

/* plan-vf.c: VF count, link settings and driver of every in-scope PF. */
void plan_pf_num_vfs(PlanBuilder *b, const Pf *pf, const PfPolicy *pol);
void plan_pf_vf_links(PlanBuilder *b, const Pf *pf, const PfPolicy *pol);
/* Plan only VF index of pf, for plan_build_vf_link(). Nothing is planned if pf has no such VF. */
void plan_vf_link_one(PlanBuilder *b, const Pf *pf, const PfPolicy *pol, unsigned index);
void plan_pf_vf_drivers(PlanBuilder *b, const Pf *pf, const PfPolicy *pol);

/* plan-kthreads.c: ksoftirqd/N, ktimers/N and rcuc/N of the RT CPUs, by [rt] *_priority, and the host's order. */
void plan_kthreads(PlanBuilder *b);

/*
 * plan-cpu.c: the RT CPUs' idle states and governor, by [rt] idle_states and cpufreq_governor,
 * from the inventory's cpu_power. What sriovd changed and no key asks for any more goes back.
 */
void plan_cpu_power(PlanBuilder *b);

/* plan-tune.c: channels, coalescing and offloads of every PF and VF netdev. */
void plan_tune(PlanBuilder *b);
char *tune_format(const Action *a, bool after, char *buf, size_t size);

/*
 * plan-napi.c: plan_napi() plans threaded NAPI and the per-NAPI settings of every netdev, and
 * runs before the IRQs. plan_napi_threads() puts the napi/ threads on their IRQs' CPUs at the
 * class's priority. It runs after the IRQs, because it follows what plan_irqs() chose.
 */

void plan_napi(PlanBuilder *b);
void plan_napi_threads(PlanBuilder *b);
char *napi_params_format(const NapiParams *p, const NapiParams *mask, char *buf, size_t size);
