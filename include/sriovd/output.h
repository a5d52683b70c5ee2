/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* output.h — the inventory and the plan as readable tables or JSON */
#pragma once

#include <stdio.h>

#include "sriovd/inventory.h"
#include "sriovd/json.h"
#include "sriovd/plan.h"

void output_inventory_text(FILE *f, const Inventory *inv);
void output_plan_text(FILE *f, const Plan *plan);
void output_inventory_json(JsonWriter *w, const Inventory *inv);
void output_plan_json(JsonWriter *w, const Plan *plan);
