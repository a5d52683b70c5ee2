/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* action-log.h — the journal lines and fields for the actions a cycle took and the notes it made */
#pragma once

#include <stdbool.h>

#include "sriovd/core/plan.h"
#include "sriovd/shared/cpuset.h"
#include "base/log.h"

/* Describes an action for a log line, such as "irq-affinity 0000:41:00.2 IRQ 53". Returns buf. */
const char *action_describe(const Action *a, char *buf, size_t size);
/*
 * The journal fields for a device: SRIOVD_PF= always names a PF, and SRIOVD_VF= names the VF,
 * found by its address or by its index vf_index on the PF. irq is -1 for none.
 */
LogFields log_fields_device(const Inventory *inv, const char *addr, int vf_index, int irq, const char *message_id);
LogFields log_fields_action(const Inventory *inv, const Action *a, const char *message_id);
/* Log what an applied action did. A drift repair is logged as one, with its own MESSAGE_ID. */
void action_log(const Inventory *inv, const Action *a, bool drift);
/* Log an action that succeeded but is still needed: it did not stick. */
void action_log_not_stuck(const Inventory *inv, const Action *a);
/* Log the plan's notes at their levels. */
void action_log_notes(const Inventory *inv, const Plan *p);

#define ACTION_DRIFT_TEXT_MAX (CPUSET_LIST_MAX * 2 + 208)
/* The text of a DriftDetected signal, such as "irq-affinity 0000:41:00.3 IRQ 60: 2-7 -> 0-1 (repaired)". */
const char *action_drift_text(const Action *a, const char *outcome, char *buf, size_t size);
