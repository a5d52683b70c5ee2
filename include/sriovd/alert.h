/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert.h — a threshold held for N periods raises an alert, N periods back past the clear level clear it */
#pragma once

#include <stdbool.h>

#define ALERT_PERIODS_DEFAULT 3       /* R12: past its threshold for 3 consecutive periods */
#define ALERT_PERIODS_MAX 10000

typedef enum AlertDirection {
        ALERT_ABOVE,                  /* raise when the value is above the threshold */
        ALERT_BELOW,                  /* raise when it is below (a VF pool under its target) */
} AlertDirection;

typedef struct AlertRule {
        double threshold;
        /*
         * Hysteresis: an active alert clears once the value is back at or past this level
         * (ABOVE: value <= clear; BELOW: value >= clear). Between clear and threshold an
         * active alert stays active and an inactive one stays inactive.
         */
        double clear;
        AlertDirection direction;
        unsigned periods;             /* 0: ALERT_PERIODS_DEFAULT */
} AlertRule;

/* A rule with no hysteresis: it clears where it raises. */
static inline AlertRule alert_rule_simple(double threshold, AlertDirection direction, unsigned periods) {
        return (AlertRule) { .threshold = threshold, .clear = threshold, .direction = direction, .periods = periods };
}

/*
 * -EINVAL for a threshold or clear level that is not a finite number, a clear level on
 * the wrong side of the threshold (ABOVE needs clear <= threshold), an unknown direction,
 * or more than ALERT_PERIODS_MAX periods.
 */
int alert_rule_validate(const AlertRule *rule);

/* Where one rule stands for one subject (a tenant's VF, a CPU); zero-initialized = inactive. */
typedef struct AlertState {
        bool active;
        unsigned run;                 /* consecutive periods towards the next transition */
} AlertState;

typedef enum AlertTransition {
        ALERT_NONE,
        ALERT_RAISED,
        ALERT_CLEARED,
} AlertTransition;

/*
 * Feed one period's value; the transition it caused, for the caller to log and signal.
 * Inactive, the alert raises on the Nth consecutive value over the threshold (ABOVE:
 * value > threshold; BELOW: value < threshold); active, it clears on the Nth consecutive
 * value back past the clear level. Any other value starts the count again. NaN is a
 * period with no value (the IRQ or VF was gone): it breaks a run, "consecutive" being
 * consecutive measurements, and keeps the alert as it is. The rule must be valid.
 */
AlertTransition alert_feed(const AlertRule *rule, AlertState *state, double value);
