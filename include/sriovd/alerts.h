/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alerts.h — the alert rules in force, fed one snapshot per period: what is alerting, logged and told */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/alert-policy.h"
#include "sriovd/macro.h"
#include "sriovd/metrics.h"

typedef struct Alerts Alerts;

/* One alert of one rule for one subject (the labels of the sample it watches). Borrowed from Alerts. */
typedef struct AlertInfo {
        const AlertPolicy *policy;
        const MetricLabel *labels;
        unsigned n_labels;
        double value;              /* raised: the value that raised it; cleared: the last value fed */
        uint64_t since_usec;       /* CLOCK_REALTIME of the snapshot that raised it */
} AlertInfo;

/*
 * Why an alert cleared: its value stayed back past the clear level for the rule's periods;
 * its subject was not in a snapshot (the VF, IRQ or tenant is gone); a reload changed,
 * switched off or removed its rule.
 */
typedef enum AlertClearReason {
        ALERT_CLEAR_BACK,
        ALERT_CLEAR_GONE,
        ALERT_CLEAR_RULE_CHANGED,
        ALERT_CLEAR_RULE_DISABLED,
        ALERT_CLEAR_RULE_REMOVED,
        _ALERT_CLEAR_MAX,
} AlertClearReason;

const char *alert_clear_reason_to_string(AlertClearReason r);

/* After the transition is logged; raised false: cleared, for reason. */
typedef void (*AlertsEventFn)(const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata);

int alerts_new(Alerts **ret);
Alerts *alerts_free(Alerts *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Alerts *, alerts_free);
void alerts_set_event_fn(Alerts *a, AlertsEventFn fn, void *userdata);

/*
 * The rules in force from now (a config load): a rule equal to one in force before
 * (alert_policy_equal()) keeps where each subject stands, active alerts and runs included;
 * the active alerts of any other are cleared (logged, told), and it starts from nothing.
 * Copies rules. -ENOMEM leaves the rules as they were.
 */
int alerts_set_rules(Alerts *a, const AlertPolicy *rules, size_t n);

/*
 * One period. For each enabled rule, each sample it matches is fed to that subject's state
 * machine (alert_feed()); every raise and clear is logged once, with its MESSAGE_ID and
 * fields, then told to the event function. A subject of a rule missing from s is dropped,
 * an active one cleared as gone: the sampler puts in every subject that still exists, with
 * NaN when it has no value this period. Returns the number of transitions, or -ENOMEM
 * (the state stays consistent; what was not fed waits for the next period).
 */
int alerts_feed(Alerts *a, const MetricSnapshot *s);

/*
 * The alerts as samples appended to s (metric_snapshot_append()): sriovd_alert_active for each
 * active alert, sriovd_alerts_raised_total for each enabled rule (alert-metrics.h). After
 * alerts_feed() of the same s, so that they are that period's. -E2BIG for a subject with
 * METRIC_LABELS_MAX labels, -EEXIST for an s that has them already, -ENOMEM; s is left as it
 * was then.
 */
int alerts_export(const Alerts *a, MetricSnapshot *s);

size_t alerts_n_active(const Alerts *a);
/* The i-th active alert, in rule order then label order; -ERANGE past the end. */
int alerts_get_active(const Alerts *a, size_t i, AlertInfo *ret);
/* The rules in force (switched-off ones included), in config order. */
size_t alerts_n_rules(const Alerts *a);
const AlertPolicy *alerts_rule(const Alerts *a, size_t i);
