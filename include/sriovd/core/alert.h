/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert.h — an alert raised by N periods past a threshold and cleared by N periods back past a clear level */
#pragma once

#include <stdbool.h>

#define ALERT_PERIODS_DEFAULT 3       /* past the threshold for 3 consecutive periods, as R12 asks */
#define ALERT_PERIODS_MAX 10000

typedef enum AlertDirection {
        ALERT_ABOVE,                  /* raise when the value is above the threshold */
        ALERT_BELOW,                  /* raise when it is below, as for a VF pool under its target */
} AlertDirection;

typedef struct AlertRule {
        double threshold;
        /*
         * The clear level gives hysteresis. An active alert clears once the value is back at or
         * past this level. For ABOVE that means value <= clear, and for BELOW value >= clear.
         * Between clear and threshold, an active alert stays active and an inactive one stays
         * inactive.
         */
        double clear;
        AlertDirection direction;
        unsigned periods;             /* 0 means ALERT_PERIODS_DEFAULT */
} AlertRule;

/* A rule with no hysteresis: it clears where it raises. */
static inline AlertRule alert_rule_simple(double threshold, AlertDirection direction, unsigned periods) {
        return (AlertRule) { .threshold = threshold, .clear = threshold, .direction = direction, .periods = periods };
}

/*
 * Returns 0 for a valid rule. Returns -EINVAL for a threshold or clear level that is not a finite
 * number, or for a clear level on the wrong side of the threshold. ABOVE needs clear <= threshold.
 * It also returns -EINVAL for an unknown direction or more than ALERT_PERIODS_MAX periods.
 */
int alert_rule_validate(const AlertRule *rule);

/*
 * Where one rule stands for one subject, such as a tenant's VF or a CPU. A state initialized to
 * zero is inactive.
 */
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
 * Feeds one period's value and returns the transition it caused, for the caller to log and
 * signal. An inactive alert raises on the Nth consecutive value over the threshold. For ABOVE
 * that means value > threshold, and for BELOW value < threshold. An active alert clears on the
 * Nth consecutive value back past the clear level. Any other value starts the count again. NaN
 * is a period with no value, as when the IRQ or VF was gone. It breaks a run, because
 * "consecutive" means consecutive measurements. It keeps the alert as it is. The rule must be
 * valid.
 */
AlertTransition alert_feed(const AlertRule *rule, AlertState *state, double value);
