/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* plan.h — the pure planner: (inventory, policy) -> typed actions with before/after values */
#pragma once

#include <stdbool.h>

#include "sriovd/config.h"
#include "sriovd/inventory.h"
#include "sriovd/macro.h"

typedef enum ActionKind {
        ACTION_SET_AUTOPROBE,       /* PF sriov_drivers_autoprobe: before VFs appear */
        ACTION_SET_NUM_VFS,         /* PF sriov_numvfs */
        ACTION_SET_RTNET_PRIO,      /* net.core.rtnet_prio */
        ACTION_SET_IRQ_AFFINITY,    /* /proc/irq/N/smp_affinity_list */
        ACTION_SET_IRQ_THREAD,      /* sched_setscheduler() of the irq/N- thread */
        _ACTION_KIND_MAX,
} ActionKind;

typedef struct Action {
        ActionKind kind;
        char target[PCI_ADDR_MAX];  /* PF or VF address; "" for host-wide actions */
        long before, after;         /* counts, flags, sysctl values, thread priorities */
        unsigned irq;               /* IRQ actions */
        pid_t pid;                  /* ACTION_SET_IRQ_THREAD */
        int policy_before, policy_after;
        CpuSet cpus_before, cpus_after;   /* ACTION_SET_IRQ_AFFINITY */
        bool restore;               /* puts back what sriovd changed (thread left its RT class) */
        /* What else the action does, for the operator ("destroys 8 VFs"). */
        char effect[96];
        /* Filled by apply: 1 changed, 0 already so, <0 errno. */
        int result;
        bool applied;
        bool skipped;               /* not carried out on purpose; see effect */
} Action;

typedef enum NoteLevel {
        NOTE_INFO,
        NOTE_WARNING,
        NOTE_ERROR,                 /* policy cannot be met; nothing planned for it */
} NoteLevel;

/* Something the operator should know that is not an action. */
typedef struct PlanNote {
        NoteLevel level;
        char target[PCI_ADDR_MAX];
        char text[200];
} PlanNote;

/* What sriovd changed on IRQ threads, to restore it later. */
typedef struct SavedSched {
        pid_t pid;
        unsigned irq;
        int policy, priority;
} SavedSched;

/* State the planner needs besides inventory and policy; all optional. */
typedef struct PlanContext {
        const SavedSched *saved;        /* sorted by pid */
        size_t n_saved;
        const unsigned *unmanaged_irqs; /* sorted; IRQs the kernel refused for good */
        size_t n_unmanaged;
} PlanContext;

/* The CPUs IRQs may go to, after defaults: RT = config or isolated, housekeeping = the rest. */
typedef struct HostCpus {
        CpuSet rt, housekeeping;
} HostCpus;
void host_cpus(const Inventory *inv, const Config *cfg, HostCpus *ret);

typedef struct Plan {
        Action *actions;
        size_t n_actions;
        PlanNote *notes;
        size_t n_notes;
} Plan;

/*
 * Pure: reads only its arguments, allocates the result, never touches the
 * system. Same inputs, same plan (actions ordered by kind, then target).
 */
int plan_build(const Inventory *inv, const Config *cfg, const PlanContext *ctx, Plan **ret);
/* The before (after = false) or after value of an action as text: "8", "0-31", "fifo/99". */
char *action_format_value(const Action *a, bool after, char *buf, size_t size);
const char *sched_policy_to_string(int policy);
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

const char *action_kind_to_string(ActionKind k);
const char *note_level_to_string(NoteLevel l);
