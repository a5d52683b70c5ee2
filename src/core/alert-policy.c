/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* alert-policy.c — the built-in alert rules, and which samples a rule watches */

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <string.h>

#include "sriovd/core/alert-policy.h"
#include "sriovd/shared/util.h"

/*
 * What R12 in docs/REQUIREMENTS.md asks to be watched out of the box. The thresholds are loose
 * on purpose. A built-in rule that cries wolf gets switched off, and then it watches nothing.
 */
const AlertPolicy alert_builtins[] = {
        {
                /* Any steady stream of foreign interrupts on an RT core is jitter for its guest. */
                .name = ALERT_BUILTIN_RT_INTERFERENCE,
                .metric = "sriovd_rt_cpu_interference_rate",
                .rule = { .threshold = 10, .clear = 1, .direction = ALERT_ABOVE, .periods = ALERT_PERIODS_DEFAULT },
                .enabled = true,
                .builtin = true,
        },
        {
                /* A latency-critical tenant loses packets, because its VF's queues overflow. */
                .name = ALERT_BUILTIN_LATENCY_DROPS,
                .metric = "sriovd_vf_drop_rate",
                .rule = { .threshold = 0, .clear = 0, .direction = ALERT_ABOVE, .periods = ALERT_PERIODS_DEFAULT },
                .filters = { { .label = METRIC_LABEL_CLASS, .pattern = "latency-critical" } },
                .n_filters = 1,
                .enabled = true,
                .builtin = true,
        },
        {
                /* VFs sit idle while tenants make do with virtio-net, so the pool is set up wrong. */
                .name = ALERT_BUILTIN_POOL_UNDERUSED,
                .metric = "sriovd_vf_node_utilization_ratio",
                .rule = { .threshold = 0.85, .clear = 0.85, .direction = ALERT_BELOW, .periods = ALERT_PERIODS_DEFAULT },
                .gate = "sriovd_tenants_waiting_virtio",
                .enabled = true,
                .builtin = true,
                .follows_target = true,
        },
        {
                /*
                 * An RT tenant's threads wait too long to run. R13 asks for an alert on the 99th
                 * percentile, above 80 ms for 3 periods in a row. Without BPF there is no
                 * percentile, so the rule compares the mean.
                 */
                .name = ALERT_BUILTIN_RT_LATENCY,
                .metric = "sriovd_thread_latency_p99_seconds",
                .fallback = "sriovd_thread_latency_mean_seconds",
                .rule = { .threshold = 0.08, .clear = 0.08, .direction = ALERT_ABOVE, .periods = ALERT_PERIODS_DEFAULT },
                .enabled = true,
                .builtin = true,
        },
        {
                /*
                 * NET_RX on an RT CPU cannot keep up: its backlog drops packets, or it runs out of
                 * budget with work left. R15 asks to watch both. Any of them in 3 periods in a row
                 * is overload that the RT guest on that CPU feels, not a one-off burst.
                 */
                .name = ALERT_BUILTIN_RT_SOFTNET,
                .metric = "sriovd_rt_cpu_softnet_overload_rate",
                .rule = { .threshold = 0, .clear = 0, .direction = ALERT_ABOVE, .periods = ALERT_PERIODS_DEFAULT },
                .enabled = true,
                .builtin = true,
        },
};

const size_t alert_n_builtins = ELEMENTSOF(alert_builtins);

const AlertPolicy *alert_builtin_find(const char *name) {
        for (size_t i = 0; i < alert_n_builtins; i++)
                if (streq(alert_builtins[i].name, name))
                        return &alert_builtins[i];
        return NULL;
}

void alert_policy_init(AlertPolicy *p, const char *name, unsigned line) {
        *p = (AlertPolicy) {
                .rule = { .direction = ALERT_ABOVE, .periods = ALERT_PERIODS_DEFAULT },
                .enabled = true,
                .line = line,
        };
        snprintf(p->name, sizeof(p->name), "%s", name);
}

bool alert_policy_equal(const AlertPolicy *a, const AlertPolicy *b) {
        if (!streq(a->name, b->name) || !streq(a->metric, b->metric) || !streq(a->gate, b->gate) ||
            !streq(a->fallback, b->fallback))
                return false;
        if (a->enabled != b->enabled || a->n_filters != b->n_filters)
                return false;
        /* The comparison is exact, because a threshold changed in its last digit is a changed rule. */

        if (a->rule.threshold != b->rule.threshold || a->rule.clear != b->rule.clear ||
            a->rule.direction != b->rule.direction ||
            (a->rule.periods ?: ALERT_PERIODS_DEFAULT) != (b->rule.periods ?: ALERT_PERIODS_DEFAULT))
                return false;
        for (unsigned i = 0; i < a->n_filters; i++)
                if (a->filters[i].label != b->filters[i].label ||
                    !streq(a->filters[i].pattern, b->filters[i].pattern))
                        return false;
        return true;
}

bool alert_policy_matches(const AlertPolicy *p, const MetricSample *m) {
        return alert_policy_matches_family(p, p->metric, m);
}

const char *alert_policy_family(const AlertPolicy *p, const MetricSnapshot *s) {
        if (!p->fallback[0])
                return p->metric;
        for (size_t i = 0; i < s->n_samples; i++)
                if (streq(s->samples[i].name, p->metric))
                        return p->metric;
        return p->fallback;
}

bool alert_policy_matches_family(const AlertPolicy *p, const char *family, const MetricSample *m) {
        if (!streq(m->name, family))
                return false;
        for (unsigned i = 0; i < p->n_filters; i++) {
                const char *v = metric_sample_label(m, p->filters[i].label);

                if (!v || fnmatch(p->filters[i].pattern, v, 0) != 0)
                        return false;
        }
        return true;
}

bool alert_metric_name_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n >= ALERT_METRIC_MAX)
                return false;
        if (!(isalpha((unsigned char) s[0]) || s[0] == '_' || s[0] == ':'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!(isalnum((unsigned char) s[i]) || s[i] == '_' || s[i] == ':'))
                        return false;
        return true;
}

int metric_label_name_from_string(const char *s) {
        for (int i = 0; i < _METRIC_LABEL_MAX; i++)
                if (streq(s, metric_label_name_to_string((MetricLabelName) i)))
                        return i;
        return -EINVAL;
}

const char *alert_direction_to_string(AlertDirection d) {
        return d == ALERT_BELOW ? "below" : "above";
}
