/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * metrics.h — one sampling period's values, as the sampler makes them and everyone else reads them:
 * the Prometheus file, the D-Bus metrics, the alert rules, sriovctl top. Pure data.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/shared/macro.h"

/*
 * The built-in alert rules in src/core/alert-policy.c watch these families. The sampler makes
 * them, and each one is a METRIC_GAUGE:
 *   sriovd_rt_cpu_interference_rate   interrupts/s on an RT CPU from IRQs no RT tenant owns; label cpu
 *   sriovd_vf_drop_rate               packets/s a tenant's VF dropped, rx + tx; labels pf, vf, tenant, class
 *   sriovd_vf_node_utilization_ratio  allocated / usable VFs of a NUMA node, 0..1; label node
 *   sriovd_tenants_waiting_virtio     sriov-preferred tenants on virtio-net that want a VF; no label
 * sriovd-metrics(7) documents every family.
 *
 * A subject that still exists goes into every snapshot, with NaN when it has no value in this
 * period. The alert engine takes a subject that is missing as gone, and clears its alert.
 */

/* The sampler's samples have at most six (an IRQ of a tenant's VF on one CPU: pf, vf, tenant,
 * class, irq, cpu); one more is the alert rule watching one of them (sriovd_alert_active). */
#define METRIC_SUBJECT_LABELS_MAX 6
#define METRIC_LABELS_MAX (METRIC_SUBJECT_LABELS_MAX + 1)
#define METRIC_LABEL_VALUE_MAX 64

typedef enum MetricKind {
        METRIC_GAUGE,                 /* a rate or a level: per second, a ratio, a count now */
        METRIC_COUNTER,               /* a kernel counter as read (name ends in _total) */
        /*
         * One line of a Prometheus histogram: NAME_bucket with an le label, NAME_sum or NAME_count.
         * Each is a cumulative count, and the three together make the family NAME.
         */
        METRIC_HISTOGRAM,
} MetricKind;

/* Label names are from one fixed set, so that every consumer can filter on them. */
typedef enum MetricLabelName {
        METRIC_LABEL_PF,
        METRIC_LABEL_VF,
        METRIC_LABEL_TENANT,
        METRIC_LABEL_CLASS,
        METRIC_LABEL_CPU,
        METRIC_LABEL_IRQ,
        METRIC_LABEL_NODE,
        METRIC_LABEL_THREAD,
        METRIC_LABEL_ALERT,           /* the rule's name, on the alerts' own families (alert-metrics.h) */
        METRIC_LABEL_KIND,            /* a thread's kind: vcpu, irq, napi, vhost, ksoftirqd */
        METRIC_LABEL_SOURCE,          /* where a latency figure came from: bpf or schedstat */
        METRIC_LABEL_FEATURE,         /* a BPF feature: latency or drift */
        METRIC_LABEL_CHECK,           /* a host check: isolcpus, nohz_full, ... */
        METRIC_LABEL_SEVERITY,        /* a host check's severity: error, warning or info */
        /* A histogram bucket's upper bound, in seconds. It is always a sample's last label and sorts as a number. */
        METRIC_LABEL_LE,
        _METRIC_LABEL_MAX,
} MetricLabelName;

typedef struct MetricLabel {
        MetricLabelName name;
        char value[METRIC_LABEL_VALUE_MAX];
} MetricLabel;

/* A sample's label: its value is the snapshot's (see MetricStrings), valid while the snapshot is. */
typedef struct MetricSampleLabel {
        MetricLabelName name;
        const char *value;
} MetricSampleLabel;

typedef struct MetricSample {
        const char *name;             /* a family name: static storage ("sriovd_irq_rate") */
        MetricKind kind;
        MetricSampleLabel labels[METRIC_LABELS_MAX];
        unsigned n_labels;
        double value;                 /* NaN: no value this period (the first sample, a counter reset) */
} MetricSample;

/*
 * The label values of a snapshot's samples, in blocks that never move. Held inline, as MetricLabel
 * is, a sample was 500 bytes, and the large host's period of 10,800 samples 5.4 MB kept between
 * periods; as pointers it is 136, and the values, most of them the previous sample's again
 * (shared), take a few hundred KB.
 */
typedef struct MetricStrings MetricStrings;

/*
 * One period: every sample, sorted by name then labels (metric_snapshot_sort), but for families
 * appended whole after the sort (metric_snapshot_append: the alerts', alert-metrics.h), which
 * follow, each sorted by labels. Every family's samples are contiguous either way.
 */
typedef struct MetricSnapshot {
        uint64_t timestamp_usec;      /* CLOCK_REALTIME of the sample */
        uint64_t period_usec;         /* measured time since the previous sample */
        MetricSample *samples;
        size_t n_samples, allocated;
        MetricStrings *strings;       /* the newest block first */
        const char *last[_METRIC_LABEL_MAX];   /* each label's last value, shared when it repeats */
} MetricSnapshot;

const char *metric_label_name_to_string(MetricLabelName n);
void metric_snapshot_done(MetricSnapshot *s);
/* Append a sample; labels given as (name, value) pairs, n_labels of them. -ENOMEM, -E2BIG (labels). */
int metric_snapshot_add(MetricSnapshot *s, const char *name, MetricKind kind, double value,
                        const MetricLabel *labels, unsigned n_labels);
void metric_snapshot_sort(MetricSnapshot *s);
/*
 * Append add's samples (sorted) to s, families whole: s's own stay where they are. Keeping the
 * whole sorted instead would move every sample of a period behind the first appended one
 * (sriovd_alert_* sort near the front): 1.7 ms of the large host's 10,839 samples, a sixth of
 * the sampler's period. -EEXIST when s has a family of add's (it would be split), -ENOMEM; s is
 * left as it was then. add is not changed.
 */
int metric_snapshot_append(MetricSnapshot *s, const MetricSnapshot *add);
/* The order of two samples' label lists within a family: label by label, name then value; a
 * list that is the other's start first. The le label compares as a number, with +Inf last. */
int metric_labels_cmp(const MetricLabel *a, unsigned n_a, const MetricLabel *b, unsigned n_b);
/* The same order between two samples' labels, and between a label list and a sample's. */
int metric_sample_labels_cmp(const MetricSample *a, const MetricSample *b);
int metric_labels_sample_cmp(const MetricLabel *a, unsigned n_a, const MetricSample *b);
/* Whether a histogram line is NAME_bucket, NAME_sum or NAME_count; returns the length of NAME, or 0. */
size_t metric_histogram_family_len(const char *name);
/* The value of label n in sample m, NULL when it has none. */
const char *metric_sample_label(const MetricSample *m, MetricLabelName n);
