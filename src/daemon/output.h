/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output.h — the inventory and the plan as readable tables or JSON */
#pragma once

#include <stdio.h>

#include "sriovd/core/inventory.h"
#include "sriovd/core/plan.h"
#include "base/jsonc.h"

void output_inventory_text(FILE *f, const Inventory *inv);
void output_plan_text(FILE *f, const Plan *plan);
/* The "inventory" and "plan" members of --json output, for the caller to put, or NULL when out of memory. */

json_object *output_inventory_json(const Inventory *inv);
json_object *output_plan_json(const Plan *plan);
