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
        _ACTION_KIND_MAX,
} ActionKind;

typedef struct Action {
        ActionKind kind;
        char target[PCI_ADDR_MAX];  /* PF address; "" for host-wide actions */
        long before, after;
        /* What else the action does, for the operator ("destroys 8 VFs"). */
        char effect[96];
        /* Filled by apply: 1 changed, 0 already so, <0 errno. */
        int result;
        bool applied;
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
int plan_build(const Inventory *inv, const Config *cfg, Plan **ret);
Plan *plan_free(Plan *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Plan *, plan_free);

const char *action_kind_to_string(ActionKind k);
const char *note_level_to_string(NoteLevel l);
