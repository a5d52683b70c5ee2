/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert.c — the alert state machine: raised after N periods in a row, cleared after N past the clear level */

#include <errno.h>
#include <math.h>

#include "sriovd/core/alert.h"

int alert_rule_validate(const AlertRule *rule) {
        if (!isfinite(rule->threshold) || !isfinite(rule->clear))
                return -EINVAL;
        if (rule->periods > ALERT_PERIODS_MAX)
                return -EINVAL;
        switch (rule->direction) {
        case ALERT_ABOVE:
                return rule->clear <= rule->threshold ? 0 : -EINVAL;
        case ALERT_BELOW:
                return rule->clear >= rule->threshold ? 0 : -EINVAL;
        }
        return -EINVAL;
}

static bool over(const AlertRule *rule, double value) {
        return rule->direction == ALERT_ABOVE ? value > rule->threshold : value < rule->threshold;
}

static bool back(const AlertRule *rule, double value) {
        return rule->direction == ALERT_ABOVE ? value <= rule->clear : value >= rule->clear;
}

AlertTransition alert_feed(const AlertRule *rule, AlertState *state, double value) {
        unsigned periods = rule->periods ?: ALERT_PERIODS_DEFAULT;

        if (isnan(value)) {
                state->run = 0;
                return ALERT_NONE;
        }
        if (!(state->active ? back(rule, value) : over(rule, value))) {
                state->run = 0;
                return ALERT_NONE;
        }
        if (++state->run < periods)
                return ALERT_NONE;
        state->run = 0;
        state->active = !state->active;
        return state->active ? ALERT_RAISED : ALERT_CLEARED;
}
