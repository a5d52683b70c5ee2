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

Action *plan_add_action(PlanBuilder *b, ActionKind kind, const char *target, long before, long after);
_printf_(4, 5) void plan_add_note(PlanBuilder *b, NoteLevel level, const char *target, const char *fmt, ...);

/* plan-irq.c: affinities and handler threads of every in-scope PF and VF. */
void plan_irqs(PlanBuilder *b);
