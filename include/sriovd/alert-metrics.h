/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert-metrics.h — the alert engine's own state as metric samples: which alerts are active, how often each rule raised. Pure. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "sriovd/metrics.h"

/*
 * The families, both made after a period's snapshot was fed to the rules and appended to it,
 * so the file, GetMetrics and ActiveAlerts tell the same period's alerts. No rule watches them:
 * the snapshot a rule is fed has none yet.
 *   sriovd_alert_active          1 for each active alert; labels alert (the rule) and the subject's
 *   sriovd_alerts_raised_total   raises of each enabled rule since the daemon started; label alert
 */
#define ALERT_FAMILY_ACTIVE "sriovd_alert_active"
#define ALERT_FAMILY_RAISED "sriovd_alerts_raised_total"

/* name is one of the two above: a rule's metric or gate may not be (it would never match). */
bool alert_metrics_family(const char *name);

/*
 * An active alert of rule alert on the subject with those labels (as the watched sample has
 * them): alert first, then the subject's in their order. -E2BIG for a subject with
 * METRIC_LABELS_MAX labels (no room for alert's), -EINVAL for an alert name that is empty or
 * does not fit a label value, -ENOMEM.
 */
int alert_metrics_add_active(MetricSnapshot *s, const char *alert, const MetricLabel *subject, unsigned n_subject);
/* The count of raises of rule alert. -EINVAL, -ENOMEM as above. */
int alert_metrics_add_raised(MetricSnapshot *s, const char *alert, uint64_t n_raised);
