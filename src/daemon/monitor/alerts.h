/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alerts.h — the alert rules in force, fed one snapshot per period, and the alerts they raise, log and tell */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/core/alert-policy.h"
#include "sriovd/core/metrics.h"
#include "sriovd/shared/macro.h"

typedef struct Alerts Alerts;

/*
 * One alert of one rule for one subject. The subject is the labels of the sample the rule
 * watches. The pointers are borrowed from Alerts.
 */
typedef struct AlertInfo {
        const AlertPolicy *policy;
        const MetricLabel *labels;
        unsigned n_labels;
        double value;              /* the value that raised it, or for a cleared alert the last value fed */
        uint64_t since_usec;       /* the CLOCK_REALTIME of the snapshot that raised it */
} AlertInfo;

/*
 * Why an alert cleared. Its value stayed back past the clear level for the rule's periods. Or its
 * subject was not in a snapshot, because the VF, IRQ or tenant is gone. Or a reload changed,
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

/* It is called after the transition is logged. When raised is false, the alert cleared for reason. */
typedef void (*AlertsEventFn)(const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata);

int alerts_new(Alerts **ret);
Alerts *alerts_free(Alerts *a);
DEFINE_TRIVIAL_CLEANUP_FUNC(Alerts *, alerts_free);
void alerts_set_event_fn(Alerts *a, AlertsEventFn fn, void *userdata);

/*
 * Puts rules in force from now on, as a config load does. It copies rules. A rule equal to one in
 * force before, by alert_policy_equal(), keeps where each subject stands. That includes active
 * alerts and runs. The active alerts of any other rule are cleared, logged and told, and the
 * rule starts from nothing. Returns -ENOMEM and leaves the rules as they were when memory runs
 * out.
 */
int alerts_set_rules(Alerts *a, const AlertPolicy *rules, size_t n);

/*
 * Feeds one period. For each enabled rule, each sample it matches is fed to that subject's state
 * machine with alert_feed(). Every raise and clear is logged once, with its MESSAGE_ID and fields,
 * and then told to the event function. A rule's subject that is missing from s is dropped, and an
 * active one is cleared as gone. This is safe because the sampler puts in every subject that
 * still exists, with NaN when it has no value this period. Returns the number of transitions.
 * Returns -ENOMEM when memory runs out. The state stays consistent then, and what was not fed
 * waits for the next period.
 */
int alerts_feed(Alerts *a, const MetricSnapshot *s);

/*
 * Appends the alerts to s as samples with metric_snapshot_append(). It adds sriovd_alert_active
 * for each active alert and sriovd_alerts_raised_total for each enabled rule, see alert-metrics.h.
 * Call it after alerts_feed() of the same s, so that the samples are that period's. Returns
 * -E2BIG for a subject with METRIC_LABELS_MAX labels, and -EEXIST for an s that has the samples
 * already. Returns -ENOMEM when memory runs out. On each failure s is left as it was.
 */
int alerts_export(const Alerts *a, MetricSnapshot *s);

size_t alerts_n_active(const Alerts *a);
/* Puts the i-th active alert in *ret, in rule order and then label order. Returns -ERANGE past the end. */
int alerts_get_active(const Alerts *a, size_t i, AlertInfo *ret);
/* These give the rules in force in config order, including those switched off. */
size_t alerts_n_rules(const Alerts *a);
const AlertPolicy *alerts_rule(const Alerts *a, size_t i);
