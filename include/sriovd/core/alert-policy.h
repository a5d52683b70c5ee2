/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * alert-policy.h — the policy's alert rules: [alert NAME] sections, the built-in rules they may
 * change or switch off, and which samples of a snapshot each rule watches. All of it is pure.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "alert.h"
#include "metrics.h"

#define ALERT_NAME_MAX 64
#define ALERT_METRIC_MAX 64
/* A label filter is a glob on one label's value, matched by fnmatch() with no flags. */
#define ALERT_FILTER_MAX METRIC_LABEL_VALUE_MAX

typedef struct AlertFilter {
        MetricLabelName label;
        char pattern[ALERT_FILTER_MAX];
} AlertFilter;

typedef struct AlertPolicy {
        char name[ALERT_NAME_MAX];          /* [a-z0-9][a-z0-9_-]*, as in [alert NAME] */
        char metric[ALERT_METRIC_MAX];      /* the sample family it watches */
        AlertRule rule;
        /*
         * Every filter must match, and a sample without the label does not match. There is at
         * most one filter per label.
         */
        AlertFilter filters[_METRIC_LABEL_MAX];
        unsigned n_filters;
        /*
         * The gate is "" or a gate family. With a gate, a period counts towards raising only
         * while the gate's samples add up to more than 0. Only the gate's samples that agree
         * with the subject on the labels both have are added. A period with the gate shut
         * counts towards clearing.
         */
        char gate[ALERT_METRIC_MAX];
        /*
         * The fallback is "" or a family that the rule watches instead of metric in a period
         * whose snapshot has no sample of metric at all. The latency rule watches the p99 from
         * BPF, and the mean from schedstat where BPF is not loaded.
         */
        char fallback[ALERT_METRIC_MAX];
        bool enabled;
        bool builtin;                       /* one of alert_builtins[], as changed by its section */
        /* The built-in pool rule follows [daemon] vf_target_utilization unless threshold is set. */
        bool follows_target;
        unsigned line;                      /* where its section starts; 0 for a built-in rule not named */
} AlertPolicy;

/* The built-in rules come in this order, and each is enabled. sriovd.conf(5) documents them. */
#define ALERT_BUILTIN_RT_INTERFERENCE "rt-cpu-interference"
#define ALERT_BUILTIN_LATENCY_DROPS "latency-critical-drops"
#define ALERT_BUILTIN_POOL_UNDERUSED "vf-pool-underused"
#define ALERT_BUILTIN_RT_LATENCY "rt-thread-latency"
#define ALERT_BUILTIN_RT_SOFTNET "rt-softnet-overload"
extern const AlertPolicy alert_builtins[];
extern const size_t alert_n_builtins;
/* Returns the built-in rule of this name, or NULL when there is none. */
const AlertPolicy *alert_builtin_find(const char *name);

/*
 * Sets p to an empty rule named name that is not built in. The rule is enabled, its direction is
 * ABOVE, its periods are the default, and it has no metric yet.
 */
void alert_policy_init(AlertPolicy *p, const char *name, unsigned line);
/*
 * Whether two rules watch the same thing in the same way, leaving line aside. A reload keeps the
 * state of such a rule.
 */
bool alert_policy_equal(const AlertPolicy *a, const AlertPolicy *b);
/* Whether the sample is of the rule's metric and passes every filter. */
bool alert_policy_matches(const AlertPolicy *p, const MetricSample *m);
/* The family the rule watches in the snapshot: its metric, or its fallback when the snapshot has no sample of metric. */
const char *alert_policy_family(const AlertPolicy *p, const MetricSnapshot *s);
/* Whether the sample is of family and passes every filter of the rule. */
bool alert_policy_matches_family(const AlertPolicy *p, const char *family, const MetricSample *m);
/* Whether s is a Prometheus metric name, [a-zA-Z_:][a-zA-Z0-9_:]*, shorter than ALERT_METRIC_MAX. */
bool alert_metric_name_valid(const char *s);
/*
 * Turns a label name such as "pf" or "cpu" back into the label. Returns -EINVAL when no label has
 * that name.
 */
int metric_label_name_from_string(const char *s);
const char *alert_direction_to_string(AlertDirection d);
