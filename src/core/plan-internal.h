/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan-internal.h — the plan builder shared by the planner's parts */
#pragma once

#include "sriovd/plan.h"

typedef struct PlanBuilder {
        Plan *plan;
        size_t allocated_actions, allocated_notes;
        int error;
        const Inventory *inv;
        const Config *cfg;
        const PlanContext *ctx;
        HostCpus cpus;
} PlanBuilder;

/* plan-builder.c: the plan under construction, and what the parts below ask of it. */
Action *plan_add_action(PlanBuilder *b, ActionKind kind, const char *target, long before, long after);
_printf_(4, 5) void plan_add_note(PlanBuilder *b, NoteLevel level, const char *target, const char *fmt, ...);
/* The tenant holding VF vf, NULL when none (allocations are sorted by VF). */
const PlanAllocation *plan_find_allocation(const PlanBuilder *b, const char *vf);
/* Whether the plan binds VF vf to vfio-pci (its host netdev is going away). */
bool plan_vf_leaves_host(const PlanBuilder *b, const char *vf);
/* Whether the plan already changes the PF's VF count, i.e. its present VFs are going away. */
bool plan_pf_vfs_replaced(const PlanBuilder *b, const Pf *pf);

/* A netdev the planner tunes: the PF's first, or a VF's on the host (ifindex 0: in a guest). */
typedef struct PlanNetdev {
        const char *addr;                 /* the PCI function */
        int ifindex;
        const char *name;
        const NetdevTune *tune;
        const TenantClass *cls;           /* the tenant's class, or the PF's; NULL: none */
        const PlanAllocation *alloc;      /* a VF's tenant, or NULL */
        const unsigned *irqs;             /* the function's vectors */
        size_t n_irqs;
} PlanNetdev;
typedef void (*PlanNetdevFn)(PlanBuilder *b, const PlanNetdev *nd, void *userdata);
void plan_for_each_netdev(PlanBuilder *b, PlanNetdevFn fn, void *userdata);

/* The class of a PF (its [pf]/[match] class), NULL for none. */
const TenantClass *plan_pf_class(const PlanBuilder *b, const Pf *pf);
/*
 * What sriovd found on thread pid before it changed it, NULL when nothing: only an entry of the
 * same IRQ (0 for the others) and the same name ("" for IRQ threads), as a reused PID is not ours.
 */
const SavedSched *plan_find_saved(const PlanBuilder *b, pid_t pid, unsigned irq, const char *name);

/*
 * The planner's parts: each adds through the builder above and calls no other part; plan.c
 * runs them in order (VF counts before the IRQs and tuning that depend on them).
 */

/* plan-irq.c: affinities and handler threads of every in-scope PF and VF. */
void plan_irqs(PlanBuilder *b);
/* The same for one VF of pf only. */
void plan_vf_irqs(PlanBuilder *b, const Pf *pf, const Vf *vf);
/* The host's other IRQs, and the default for new ones, kept off the RT CPUs ([cpus] keep_irqs_off_rt). */
void plan_irq_default(PlanBuilder *b);
void plan_other_irqs(PlanBuilder *b);

/* plan-vf.c: VF count, link settings and driver of every in-scope PF. */
void plan_pf_num_vfs(PlanBuilder *b, const Pf *pf, const PfPolicy *pol);
void plan_pf_vf_links(PlanBuilder *b, const Pf *pf, const PfPolicy *pol);
/* Only VF index of pf (plan_build_vf_link()): nothing if pf has no such VF. */
void plan_vf_link_one(PlanBuilder *b, const Pf *pf, const PfPolicy *pol, unsigned index);
void plan_pf_vf_drivers(PlanBuilder *b, const Pf *pf, const PfPolicy *pol);

/* plan-kthreads.c: ksoftirqd/N, ktimers/N and rcuc/N of the RT CPUs ([rt] *_priority), and the host's order. */
void plan_kthreads(PlanBuilder *b);

/* plan-tune.c: channels, coalescing and offloads of every PF and VF netdev. */
void plan_tune(PlanBuilder *b);
char *tune_format(const Action *a, bool after, char *buf, size_t size);

/* plan-napi.c: threaded NAPI and per-NAPI settings of every netdev (before the IRQs), and the napi/
 * threads onto their IRQs' CPUs at the class's priority (after them: they follow what plan_irqs chose). */
void plan_napi(PlanBuilder *b);
void plan_napi_threads(PlanBuilder *b);
char *napi_params_format(const NapiParams *p, const NapiParams *mask, char *buf, size_t size);
