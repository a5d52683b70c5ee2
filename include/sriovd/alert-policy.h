/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * alert-policy.h — the alert rules of the policy: [alert NAME] sections and the built-in rules
 * they may change or switch off, and which samples of a snapshot each rule watches. Pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sriovd/alert.h"
#include "sriovd/metrics.h"

#define ALERT_NAME_MAX 64
#define ALERT_METRIC_MAX 64
/* A label filter is a glob (fnmatch, no flags) on one label's value. */
#define ALERT_FILTER_MAX METRIC_LABEL_VALUE_MAX

typedef struct AlertFilter {
        MetricLabelName label;
        char pattern[ALERT_FILTER_MAX];
} AlertFilter;

typedef struct AlertPolicy {
        char name[ALERT_NAME_MAX];          /* [a-z0-9][a-z0-9_-]*, as in [alert NAME] */
        char metric[ALERT_METRIC_MAX];      /* the sample family it watches */
        AlertRule rule;
        /* Every filter must match (a sample without the label does not); one per label at most. */
        AlertFilter filters[_METRIC_LABEL_MAX];
        unsigned n_filters;
        /*
         * "" or a gate family: a period counts towards raising only while the gate's samples
         * that agree with the subject on the labels both have add up to more than 0; a period
         * with the gate shut counts towards clearing.
         */
        char gate[ALERT_METRIC_MAX];
        bool enabled;
        bool builtin;                       /* one of alert_builtins[], as changed by its section */
        /* The built-in pool rule follows [daemon] vf_target_utilization unless threshold is set. */
        bool follows_target;
        unsigned line;                      /* where its section starts, 0 = built in, not named */
} AlertPolicy;

/* The built-in rules, each enabled, in this order; sriovd.conf(5) documents them. */
#define ALERT_BUILTIN_RT_INTERFERENCE "rt-cpu-interference"
#define ALERT_BUILTIN_LATENCY_DROPS "latency-critical-drops"
#define ALERT_BUILTIN_POOL_UNDERUSED "vf-pool-underused"
extern const AlertPolicy alert_builtins[];
extern const size_t alert_n_builtins;
/* The built-in rule of this name, NULL when there is none. */
const AlertPolicy *alert_builtin_find(const char *name);

/* An empty rule named name (not built in): above, default periods, enabled, no metric yet. */
void alert_policy_init(AlertPolicy *p, const char *name, unsigned line);
/* Whether two rules watch the same thing the same way (line aside): a reload keeps its state. */
bool alert_policy_equal(const AlertPolicy *a, const AlertPolicy *b);
/* The sample is of the rule's metric and passes every filter. */
bool alert_policy_matches(const AlertPolicy *p, const MetricSample *m);
/* [a-zA-Z_:][a-zA-Z0-9_:]*, shorter than ALERT_METRIC_MAX: a Prometheus metric name. */
bool alert_metric_name_valid(const char *s);
/* "pf", "cpu", ... back to the label; -EINVAL for no label of that name. */
int metric_label_name_from_string(const char *s);
const char *alert_direction_to_string(AlertDirection d);
