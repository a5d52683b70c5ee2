/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert-metrics.h — the alert engine's own state as pure metric samples: the active alerts and each rule's raises */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "metrics.h"

/*
 * Both families are made after a period's snapshot was fed to the rules, and they are appended
 * to that snapshot. So the metrics file, GetMetrics and ActiveAlerts tell of the same period's
 * alerts. No rule watches these families, because the snapshot a rule is fed has none yet.
 *   sriovd_alert_active          1 for each active alert; its labels are alert, which names the rule,
 *                                and the subject's labels
 *   sriovd_alerts_raised_total   the raises of each enabled rule since the daemon started; its label is alert
 */
#define ALERT_FAMILY_ACTIVE "sriovd_alert_active"
#define ALERT_FAMILY_RAISED "sriovd_alerts_raised_total"

/*
 * Whether name is one of the two families above. A rule's metric or gate may not be one, because it
 * would never match.
 */
bool alert_metrics_family(const char *name);

/*
 * Appends to s a sample for an active alert of the rule alert on the subject. The subject's
 * labels are those of the watched sample. The sample's labels are alert first, then the
 * subject's labels in their order. Returns -E2BIG for a subject with METRIC_LABELS_MAX labels,
 * because the alert label has no room then. Returns -EINVAL for an alert name that is empty or
 * does not fit a label value, and -ENOMEM when memory runs out.
 */
int alert_metrics_add_active(MetricSnapshot *s, const char *alert, const MetricLabel *subject, unsigned n_subject);
/* Appends to s the count of raises of the rule alert. It returns -EINVAL and -ENOMEM as above. */
int alert_metrics_add_raised(MetricSnapshot *s, const char *alert, uint64_t n_raised);
