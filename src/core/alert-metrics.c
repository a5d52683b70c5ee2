/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert-metrics.c — active alerts and raise counts as samples, labelled like the subjects they are about */

#include <errno.h>
#include <string.h>

#include "sriovd/core/alert-metrics.h"

bool alert_metrics_family(const char *name) {
        return name && (strcmp(name, ALERT_FAMILY_ACTIVE) == 0 || strcmp(name, ALERT_FAMILY_RAISED) == 0);
}

static int alert_label(const char *alert, MetricLabel *ret) {
        size_t n = alert ? strlen(alert) : 0;

        if (n == 0 || n >= sizeof(ret->value))
                return -EINVAL;
        *ret = (MetricLabel) { .name = METRIC_LABEL_ALERT };
        memcpy(ret->value, alert, n + 1);
        return 0;
}

int alert_metrics_add_active(MetricSnapshot *s, const char *alert, const MetricLabel *subject, unsigned n_subject) {
        MetricLabel labels[METRIC_LABELS_MAX];
        int r;

        if (n_subject >= METRIC_LABELS_MAX)
                return -E2BIG;
        r = alert_label(alert, &labels[0]);
        if (r < 0)
                return r;
        if (n_subject > 0)
                memcpy(labels + 1, subject, n_subject * sizeof(MetricLabel));
        return metric_snapshot_add(s, ALERT_FAMILY_ACTIVE, METRIC_GAUGE, 1, labels, n_subject + 1);
}

int alert_metrics_add_raised(MetricSnapshot *s, const char *alert, uint64_t n_raised) {
        MetricLabel label;
        int r;

        r = alert_label(alert, &label);
        if (r < 0)
                return r;
        return metric_snapshot_add(s, ALERT_FAMILY_RAISED, METRIC_COUNTER, (double) n_raised, &label, 1);
}
