/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-alerts.c — [alert] rules and the engine on synthetic snapshots: periods, hysteresis, filters, built-ins, reloads, vanished subjects, the manager's feed */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/core/alert-metrics.h"
#include "base/log.h"
#include "config/config.h"
#include "manager/manager.h"
#include "monitor/alerts.h"
#include "monitor/metrics-file.h"
#include "monitor/sampler.h"
#include "test.h"

typedef struct Events {
        unsigned raised, cleared;
        AlertClearReason last_reason;
        char last_name[ALERT_NAME_MAX];
        double last_value;
} Events;

static void on_event(const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata) {
        Events *e = userdata;

        if (raised)
                e->raised++;
        else {
                e->cleared++;
                e->last_reason = reason;
        }
        snprintf(e->last_name, sizeof(e->last_name), "%s", a->policy->name);
        e->last_value = a->value;
}

static Config *load(const char *text) {
        _cleanup_free_ char *errors = NULL;
        Config *c = NULL;
        int r = config_load_string("test.conf", text, NULL, &c, &errors);

        if (r < 0)
                fprintf(stderr, "%s\n", errors ?: "");
        ASSERT_EQ(r, 0);
        return c;
}

static char *load_errors(const char *text) {
        char *errors = NULL;
        Config *c = NULL;

        ASSERT_EQ(config_load_string("test.conf", text, NULL, &c, &errors), -EINVAL);
        ASSERT(errors);
        return errors;
}

/* An engine with c's rules and an event counter. */
static Alerts *engine(const Config *c, Events *e) {
        Alerts *a = NULL;

        ASSERT_EQ(alerts_new(&a), 0);
        alerts_set_event_fn(a, on_event, e);
        ASSERT_EQ(alerts_set_rules(a, c->alerts, c->n_alerts), 0);
        return a;
}

static MetricLabel L(MetricLabelName n, const char *v) {
        MetricLabel l = { .name = n };
        snprintf(l.value, sizeof(l.value), "%s", v);
        return l;
}

static void add(MetricSnapshot *s, const char *name, double v, unsigned n, ...) {
        MetricLabel labels[METRIC_LABELS_MAX];
        va_list ap;

        va_start(ap, n);
        for (unsigned i = 0; i < n; i++)
                labels[i] = va_arg(ap, MetricLabel);
        va_end(ap);
        ASSERT_EQ(metric_snapshot_add(s, name, METRIC_GAUGE, v, labels, n), 0);
}

/* One period of one metric on one CPU. */
static int feed_cpu(Alerts *a, const char *metric, const char *cpu, double v) {
        MetricSnapshot s = { .timestamp_usec = 1000 };
        int r;

        add(&s, metric, v, 1, L(METRIC_LABEL_CPU, cpu));
        metric_snapshot_sort(&s);
        r = alerts_feed(a, &s);
        metric_snapshot_done(&s);
        return r;
}

/* The snapshot's order (metrics.h): sorted by family name, then within one by labels, but for the
 * alerts' families, which follow the sampler's, themselves in that order. */
static void assert_sorted(const MetricSnapshot *s) {
        for (size_t i = 1; i < s->n_samples; i++) {
                const MetricSample *a = &s->samples[i - 1], *b = &s->samples[i];
                int c = strcmp(a->name, b->name);

                if (!alert_metrics_family(a->name) && alert_metrics_family(b->name))
                        continue;
                ASSERT(!(alert_metrics_family(a->name) && !alert_metrics_family(b->name)));
                ASSERT(c < 0 || (c == 0 && metric_sample_labels_cmp(a, b) <= 0));
        }
}

static size_t count_family(const MetricSnapshot *s, const char *name) {
        size_t n = 0;

        for (size_t i = 0; i < s->n_samples; i++)
                n += streq(s->samples[i].name, name);
        return n;
}

#define NO_BUILTINS \
        "[alert rt-cpu-interference]\nenabled = no\n[alert latency-critical-drops]\nenabled = no\n" \
        "[alert vf-pool-underused]\nenabled = no\n[alert rt-thread-latency]\nenabled = no\n" \
        "[alert rt-softnet-overload]\nenabled = no\n"

TEST(raise_after_exactly_n_periods) {
        _cleanup_(config_freep) Config *c = load(NO_BUILTINS "[alert hot]\nmetric = m\nthreshold = 5\nperiods = 4\n");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        AlertInfo info;

        for (int i = 0; i < 3; i++)
                ASSERT_EQ(feed_cpu(a, "m", "4", 6), 0);
        ASSERT_EQ(alerts_n_active(a), 0);
        ASSERT_EQ(feed_cpu(a, "m", "4", 7), 1);
        ASSERT_EQ(e.raised, 1);
        ASSERT_EQ(alerts_n_active(a), 1);
        ASSERT_EQ(alerts_get_active(a, 0, &info), 0);
        ASSERT_STREQ(info.policy->name, "hot");
        ASSERT_EQ(info.value, 7);
        ASSERT_EQ(info.since_usec, 1000);
        ASSERT_EQ(info.n_labels, 1);
        ASSERT_STREQ(info.labels[0].value, "4");
        ASSERT_EQ(alerts_get_active(a, 1, &info), -ERANGE);
        /* At the threshold is not over it: a run broken by one value starts again. */
        Events f = {};
        _cleanup_(alerts_freep) Alerts *b = engine(c, &f);
        for (int i = 0; i < 3; i++)
                ASSERT_EQ(feed_cpu(b, "m", "5", 6), 0);
        ASSERT_EQ(feed_cpu(b, "m", "5", 5), 0);
        for (int i = 0; i < 3; i++)
                ASSERT_EQ(feed_cpu(b, "m", "5", 6), 0);
        ASSERT_EQ(f.raised, 0);
        ASSERT_EQ(feed_cpu(b, "m", "5", 6), 1);
        /* Default periods is 3 (R12). */
        _cleanup_(config_freep) Config *d = load(NO_BUILTINS "[alert hot]\nmetric = m\nthreshold = 5\n");
        ASSERT_EQ(d->alerts[3].rule.periods, 3);
}

TEST(clear_with_hysteresis) {
        _cleanup_(config_freep) Config *c = load(NO_BUILTINS "[alert hot]\nmetric = m\nthreshold = 10\nclear = 5\n");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);

        for (int i = 0; i < 3; i++)
                feed_cpu(a, "m", "4", 20);
        ASSERT_EQ(alerts_n_active(a), 1);
        /* Between clear and threshold: stays active, however long. */
        for (int i = 0; i < 6; i++)
                ASSERT_EQ(feed_cpu(a, "m", "4", 7), 0);
        ASSERT_EQ(alerts_n_active(a), 1);
        ASSERT_EQ(feed_cpu(a, "m", "4", 5), 0);
        ASSERT_EQ(feed_cpu(a, "m", "4", 4), 0);
        ASSERT_EQ(feed_cpu(a, "m", "4", 1), 1);
        ASSERT_EQ(e.cleared, 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_BACK);
        ASSERT_EQ(e.last_value, 1);
        ASSERT_EQ(alerts_n_active(a), 0);

        /* Without clear, it clears where it raises; below works the other way round. */
        _cleanup_(config_freep) Config *d = load(NO_BUILTINS "[alert low]\nmetric = m\nthreshold = 0.5\ndirection = below\nperiods = 1\n");
        ASSERT_EQ(d->alerts[3].rule.clear, 0.5);
        Events f = {};
        _cleanup_(alerts_freep) Alerts *b = engine(d, &f);
        ASSERT_EQ(feed_cpu(b, "m", "0", 0.4), 1);
        ASSERT_EQ(feed_cpu(b, "m", "0", 0.49), 0);
        ASSERT_EQ(feed_cpu(b, "m", "0", 0.5), 1);
        ASSERT_EQ(f.raised, 1);
        ASSERT_EQ(f.cleared, 1);
}

TEST(label_filters) {
        _cleanup_(config_freep) Config *c = load(NO_BUILTINS "[alert drops]\nmetric = sriovd_vf_drop_rate\nthreshold = 0\n"
                                                "periods = 1\nclass = latency-critical\ntenant = web-*\n");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        MetricSnapshot s = {};
        AlertInfo info;

        add(&s, "sriovd_vf_drop_rate", 3, 3, L(METRIC_LABEL_VF, "0000:41:00.2"), L(METRIC_LABEL_TENANT, "web-1"),
            L(METRIC_LABEL_CLASS, "latency-critical"));
        add(&s, "sriovd_vf_drop_rate", 3, 3, L(METRIC_LABEL_VF, "0000:41:00.3"), L(METRIC_LABEL_TENANT, "db-1"),
            L(METRIC_LABEL_CLASS, "latency-critical"));
        add(&s, "sriovd_vf_drop_rate", 3, 3, L(METRIC_LABEL_VF, "0000:41:00.4"), L(METRIC_LABEL_TENANT, "web-2"),
            L(METRIC_LABEL_CLASS, "throughput"));
        /* No class label at all: a filter on it does not match. */
        add(&s, "sriovd_vf_drop_rate", 3, 2, L(METRIC_LABEL_VF, "0000:41:00.5"), L(METRIC_LABEL_TENANT, "web-3"));
        add(&s, "sriovd_vf_rx_rate", 3, 3, L(METRIC_LABEL_VF, "0000:41:00.2"), L(METRIC_LABEL_TENANT, "web-1"),
            L(METRIC_LABEL_CLASS, "latency-critical"));
        metric_snapshot_sort(&s);
        ASSERT_EQ(alerts_feed(a, &s), 1);
        ASSERT_EQ(alerts_n_active(a), 1);
        ASSERT_EQ(alerts_get_active(a, 0, &info), 0);
        ASSERT_STREQ(info.labels[0].value, "0000:41:00.2");
        metric_snapshot_done(&s);
}

TEST(builtins_and_switching_one_off) {
        _cleanup_(config_freep) Config *c = load("[daemon]\nvf_target_utilization = 70\n");
        ASSERT_EQ(c->n_alerts, 5);
        ASSERT_STREQ(c->alerts[0].name, "rt-cpu-interference");
        ASSERT_STREQ(c->alerts[0].metric, "sriovd_rt_cpu_interference_rate");
        ASSERT_STREQ(c->alerts[1].metric, "sriovd_vf_drop_rate");
        ASSERT_STREQ(c->alerts[2].metric, "sriovd_vf_node_utilization_ratio");
        ASSERT_STREQ(c->alerts[2].gate, "sriovd_tenants_waiting_virtio");
        ASSERT_EQ(c->alerts[2].rule.threshold, 0.7);
        ASSERT_EQ(c->alerts[2].rule.direction, ALERT_BELOW);
        /* Seed 000: 80 ms for 3 periods in a row, on the p99, or the mean without BPF. */
        ASSERT_STREQ(c->alerts[3].name, "rt-thread-latency");
        ASSERT_STREQ(c->alerts[3].metric, "sriovd_thread_latency_p99_seconds");
        ASSERT_STREQ(c->alerts[3].fallback, "sriovd_thread_latency_mean_seconds");
        ASSERT_EQ(c->alerts[3].rule.threshold, 0.08);
        ASSERT_EQ(c->alerts[3].rule.periods, 3u);
        /* Any backlog drop or time squeeze on an RT CPU, for 3 periods in a row. */
        ASSERT_STREQ(c->alerts[4].name, "rt-softnet-overload");
        ASSERT_STREQ(c->alerts[4].metric, "sriovd_rt_cpu_softnet_overload_rate");
        ASSERT_EQ(c->alerts[4].rule.threshold, 0);
        ASSERT_EQ(c->alerts[4].rule.periods, 3u);
        for (size_t i = 0; i < 5; i++)
                ASSERT(c->alerts[i].enabled && c->alerts[i].builtin);

        /* Switched off by name; a section may also change one key of a built-in and keep the rest. */
        _cleanup_(config_freep) Config *d = load("[alert rt-cpu-interference]\nenabled = no\n\n"
                                                 "[alert latency-critical-drops]\nclass = trading\n\n"
                                                 "[alert mine]\nmetric = sriovd_rt_cpu_interference_rate\nthreshold = 1000\n");
        ASSERT_EQ(d->n_alerts, 6);
        ASSERT(!d->alerts[0].enabled);
        ASSERT_STREQ(d->alerts[1].filters[0].pattern, "trading");
        ASSERT_EQ(d->alerts[1].n_filters, 1);
        ASSERT_STREQ(d->alerts[1].metric, "sriovd_vf_drop_rate");
        ASSERT_EQ(d->alerts[2].rule.threshold, 0.85);
        ASSERT_STREQ(d->alerts[5].name, "mine");

        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(d, &e);
        for (int i = 0; i < 5; i++)
                feed_cpu(a, "sriovd_rt_cpu_interference_rate", "4", 500);
        /* The built-in would have raised at 500/s > 10/s; switched off, only "mine" watches, and 500 < 1000. */
        ASSERT_EQ(e.raised, 0);

        _cleanup_(config_freep) Config *f = load("");
        Events g = {};
        _cleanup_(alerts_freep) Alerts *b = engine(f, &g);
        for (int i = 0; i < 3; i++)
                feed_cpu(b, "sriovd_rt_cpu_interference_rate", "4", 500);
        ASSERT_EQ(g.raised, 1);
        ASSERT_STREQ(g.last_name, "rt-cpu-interference");
}

/* The softnet rule raises on the 3rd period with drops or squeezes on an RT CPU; a section changes it. */
TEST(softnet_rule) {
        _cleanup_(config_freep) Config *c = load("");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        AlertInfo info;

        ASSERT_EQ(feed_cpu(a, "sriovd_rt_cpu_softnet_overload_rate", "2", 0.2), 0);
        ASSERT_EQ(feed_cpu(a, "sriovd_rt_cpu_softnet_overload_rate", "2", 0.2), 0);
        ASSERT_EQ(feed_cpu(a, "sriovd_rt_cpu_softnet_overload_rate", "2", 0.2), 1);
        ASSERT_STREQ(e.last_name, "rt-softnet-overload");
        ASSERT_EQ(alerts_get_active(a, 0, &info), 0);
        ASSERT_STREQ(info.labels[0].value, "2");
        for (int i = 0; i < 2; i++)
                ASSERT_EQ(feed_cpu(a, "sriovd_rt_cpu_softnet_overload_rate", "2", 0), 0);
        ASSERT_EQ(feed_cpu(a, "sriovd_rt_cpu_softnet_overload_rate", "2", 0), 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_BACK);

        _cleanup_(config_freep) Config *d = load("[alert rt-softnet-overload]\nthreshold = 5\nperiods = 1\n");
        Events g = {};
        _cleanup_(alerts_freep) Alerts *b = engine(d, &g);
        ASSERT_EQ(feed_cpu(b, "sriovd_rt_cpu_softnet_overload_rate", "3", 4), 0);
        ASSERT_EQ(feed_cpu(b, "sriovd_rt_cpu_softnet_overload_rate", "3", 6), 1);
        ASSERT_EQ(g.raised, 1);
}

/* One period of an RT tenant's vCPU latency: the p99 from BPF, or only the mean from schedstat. */
static int feed_latency(Alerts *a, bool bpf, double p99, double mean) {
        MetricSnapshot s = {};
        int r;

        if (bpf)
                add(&s, "sriovd_thread_latency_p99_seconds", p99, 4, L(METRIC_LABEL_TENANT, "rt-1"),
                    L(METRIC_LABEL_CLASS, "rt-vcpu"), L(METRIC_LABEL_KIND, "vcpu"), L(METRIC_LABEL_SOURCE, "bpf"));
        add(&s, "sriovd_thread_latency_mean_seconds", mean, 4, L(METRIC_LABEL_TENANT, "rt-1"),
            L(METRIC_LABEL_CLASS, "rt-vcpu"), L(METRIC_LABEL_KIND, "vcpu"),
            L(METRIC_LABEL_SOURCE, bpf ? "bpf" : "schedstat"));
        metric_snapshot_sort(&s);
        r = alerts_feed(a, &s);
        metric_snapshot_done(&s);
        return r;
}

TEST(latency_rule_on_both_sources) {
        _cleanup_(config_freep) Config *c = load("[alert rt-thread-latency]\nthreshold = 0.05\nperiods = 2\n");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        AlertInfo info;

        /* BPF: the p99 counts, and a mean under the threshold does not save it. */
        ASSERT_EQ(feed_latency(a, true, 0.2, 0.001), 0);
        ASSERT_EQ(feed_latency(a, true, 0.2, 0.001), 1);
        ASSERT_STREQ(e.last_name, "rt-thread-latency");
        ASSERT_EQ(alerts_get_active(a, 0, &info), 0);
        ASSERT_EQ(info.value, 0.2);
        ASSERT_EQ(info.labels[3].name, METRIC_LABEL_SOURCE);
        ASSERT_STREQ(info.labels[3].value, "bpf");
        /* A mean above the threshold does not raise while the p99 is under it; the alert clears. */
        ASSERT_EQ(feed_latency(a, true, 0.01, 0.2), 0);
        ASSERT_EQ(feed_latency(a, true, 0.01, 0.2), 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_BACK);
        ASSERT_EQ(alerts_n_active(a), 0);

        /* Without BPF there is no p99: the rule watches the schedstat mean instead. */
        ASSERT_EQ(feed_latency(a, false, 0, 0.09), 0);
        ASSERT_EQ(feed_latency(a, false, 0, 0.09), 1);
        ASSERT_EQ(alerts_get_active(a, 0, &info), 0);
        ASSERT_EQ(info.value, 0.09);
        ASSERT_EQ(feed_latency(a, false, 0, 0.01), 0);
        ASSERT_EQ(feed_latency(a, false, 0, 0.01), 1);
        ASSERT_EQ(alerts_n_active(a), 0);

        /* fallback = (nothing) leaves the rule with the p99 alone. */
        _cleanup_(config_freep) Config *d = load("[alert rt-thread-latency]\nfallback =\nperiods = 1\n");
        Events g = {};
        _cleanup_(alerts_freep) Alerts *b = engine(d, &g);
        ASSERT_EQ(feed_latency(b, false, 0, 1.0), 0);
        ASSERT_EQ(feed_latency(b, true, 1.0, 0), 1);
}

/* Utilization per node, tenants waiting on virtio per node: only a node with waiters alerts. */
static int feed_pool(Alerts *a, double util0, double wait0, double util1, double wait1) {
        MetricSnapshot s = {};
        int r;

        add(&s, "sriovd_vf_node_utilization_ratio", util0, 1, L(METRIC_LABEL_NODE, "0"));
        add(&s, "sriovd_vf_node_utilization_ratio", util1, 1, L(METRIC_LABEL_NODE, "1"));
        add(&s, "sriovd_tenants_waiting_virtio", wait0, 1, L(METRIC_LABEL_NODE, "0"));
        add(&s, "sriovd_tenants_waiting_virtio", wait1, 1, L(METRIC_LABEL_NODE, "1"));
        metric_snapshot_sort(&s);
        r = alerts_feed(a, &s);
        metric_snapshot_done(&s);
        return r;
}

TEST(pool_rule_only_while_tenants_wait) {
        _cleanup_(config_freep) Config *c = load("");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        AlertInfo info;

        for (int i = 0; i < 5; i++)
                ASSERT_EQ(feed_pool(a, 0.5, 0, 0.5, 0), 0);
        ASSERT_EQ(feed_pool(a, 0.5, 2, 0.5, 0), 0);
        ASSERT_EQ(feed_pool(a, 0.5, 2, 0.5, 0), 0);
        ASSERT_EQ(feed_pool(a, 0.5, 2, 0.5, 0), 1);
        ASSERT_EQ(alerts_get_active(a, 0, &info), 0);
        ASSERT_STREQ(info.labels[0].value, "0");
        ASSERT_EQ(alerts_n_active(a), 1);
        /* Nobody waiting any more is the condition gone: it clears after the periods. */
        ASSERT_EQ(feed_pool(a, 0.5, 0, 0.5, 0), 0);
        ASSERT_EQ(feed_pool(a, 0.5, 0, 0.5, 0), 0);
        ASSERT_EQ(feed_pool(a, 0.5, 0, 0.5, 0), 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_BACK);
        ASSERT_EQ(alerts_n_active(a), 0);
}

TEST(reload_keeps_state_of_unchanged_rules) {
        _cleanup_(config_freep) Config *c = load(NO_BUILTINS "[alert keep]\nmetric = a\nthreshold = 5\n"
                                                "[alert change]\nmetric = b\nthreshold = 5\n"
                                                "[alert drop]\nmetric = c\nthreshold = 5\n");
        _cleanup_(config_freep) Config *d = load(NO_BUILTINS "[alert keep]\nmetric = a\nthreshold = 5\n"
                                                "[alert change]\nmetric = b\nthreshold = 6\n");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);

        MetricSnapshot s = {};
        add(&s, "a", 10, 1, L(METRIC_LABEL_CPU, "1"));
        add(&s, "b", 10, 1, L(METRIC_LABEL_CPU, "1"));
        add(&s, "c", 10, 1, L(METRIC_LABEL_CPU, "1"));
        metric_snapshot_sort(&s);
        e = (Events) {};
        for (int i = 0; i < 3; i++)
                alerts_feed(a, &s);
        ASSERT_EQ(alerts_n_active(a), 3);
        ASSERT_EQ(e.raised, 3);
        metric_snapshot_done(&s);

        /* Two periods back towards clearing "keep" before the reload, one after: it clears. */
        add(&s, "a", 1, 1, L(METRIC_LABEL_CPU, "1"));
        add(&s, "b", 10, 1, L(METRIC_LABEL_CPU, "1"));
        metric_snapshot_sort(&s);
        alerts_feed(a, &s);
        alerts_feed(a, &s);
        ASSERT_EQ(alerts_n_active(a), 2);   /* "drop" had no sample: gone */
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_GONE);

        e = (Events) {};
        ASSERT_EQ(alerts_set_rules(a, d->alerts, d->n_alerts), 0);
        ASSERT_EQ(e.cleared, 1);
        ASSERT_STREQ(e.last_name, "change");
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_RULE_CHANGED);
        ASSERT_EQ(alerts_n_active(a), 1);
        ASSERT_EQ(alerts_feed(a, &s), 1);   /* "keep": the third period back */
        ASSERT_STREQ(e.last_name, "keep");
        ASSERT_EQ(alerts_n_active(a), 0);
        metric_snapshot_done(&s);

        /* Switching a rule off clears its alerts as such. */
        _cleanup_(config_freep) Config *off = load(NO_BUILTINS "[alert keep]\nmetric = a\nthreshold = 5\nenabled = no\n");
        for (int i = 0; i < 3; i++)
                feed_cpu(a, "b", "1", 10);
        ASSERT_EQ(alerts_n_active(a), 1);
        e = (Events) {};
        ASSERT_EQ(alerts_set_rules(a, off->alerts, off->n_alerts), 0);
        ASSERT_EQ(e.cleared, 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_RULE_REMOVED);
}

TEST(vanished_subject) {
        _cleanup_(config_freep) Config *c = load(NO_BUILTINS "[alert hot]\nmetric = m\nthreshold = 5\n");
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        MetricSnapshot both = {}, one = {}, nan = {};

        add(&both, "m", 9, 1, L(METRIC_LABEL_CPU, "4"));
        add(&both, "m", 9, 1, L(METRIC_LABEL_CPU, "5"));
        metric_snapshot_sort(&both);
        add(&one, "m", 9, 1, L(METRIC_LABEL_CPU, "4"));
        add(&nan, "m", 9, 1, L(METRIC_LABEL_CPU, "4"));
        add(&nan, "m", NAN, 1, L(METRIC_LABEL_CPU, "5"));
        metric_snapshot_sort(&nan);

        for (int i = 0; i < 3; i++)
                alerts_feed(a, &both);
        ASSERT_EQ(alerts_n_active(a), 2);
        /* A sample with no value this period is there: the alert stays. */
        ASSERT_EQ(alerts_feed(a, &nan), 0);
        ASSERT_EQ(alerts_n_active(a), 2);
        ASSERT_EQ(alerts_feed(a, &one), 1);
        ASSERT_EQ(e.cleared, 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_GONE);
        ASSERT_EQ(alerts_n_active(a), 1);
        /* Back again, it starts from nothing: N periods to raise. */
        ASSERT_EQ(alerts_feed(a, &both), 0);
        ASSERT_EQ(alerts_feed(a, &both), 0);
        ASSERT_EQ(alerts_feed(a, &both), 1);
        ASSERT_EQ(alerts_n_active(a), 2);
        metric_snapshot_done(&both);
        metric_snapshot_done(&one);
        metric_snapshot_done(&nan);
}

TEST(config_errors) {
        char *e;

        e = load_errors("[alert x]\nthreshold = 1\n\n[alert y]\nmetric = m\n");
        ASSERT_CONTAINS(e, "test.conf:1: [alert x] has no metric key");
        ASSERT_CONTAINS(e, "test.conf:4: [alert y] has no threshold key");
        free(e);
        e = load_errors("[alert x]\nmetric = m\nthreshold = 5\nclear = 6\n");
        ASSERT_CONTAINS(e, "test.conf:4: [alert x] clear = 6 is on the wrong side of threshold = 5");
        free(e);
        e = load_errors("[alert x]\nmetric = m\nthreshold = inf\nperiods = 0\ndirection = abov\n");
        ASSERT_CONTAINS(e, "test.conf:3: threshold = \"inf\" is not a number");
        ASSERT_CONTAINS(e, "test.conf:4: periods = 0 is out of range; expected an integer from 1 to 10000");
        ASSERT_CONTAINS(e, "test.conf:5: direction = \"abov\" is not valid; expected above or below; did you mean \"above\"?");
        free(e);
        e = load_errors("[alert X!]\nmetric = m\n[alert ok]\nmetric = 9m\nthreshold = 1\nflavour = x\n[alert ok]\n");
        ASSERT_CONTAINS(e, "test.conf:1: invalid alert name \"X!\"");
        ASSERT_CONTAINS(e, "test.conf:4: metric = \"9m\" is not a valid metric name");
        ASSERT_CONTAINS(e, "test.conf:6: unknown key \"flavour\" in [alert ok]");
        ASSERT_CONTAINS(e, "test.conf:7: duplicate section [alert ok], first at line 3");
        free(e);
        /* The alerts' own families come after the rules are checked: a rule on them never fires. */
        e = load_errors("[alert x]\nmetric = sriovd_alert_active\nthreshold = 0\n[alert y]\nmetric = m\nthreshold = 0\n"
                        "while = sriovd_alerts_raised_total\n");
        ASSERT_CONTAINS(e, "test.conf:2: metric = sriovd_alert_active is made from the alert rules' own outcomes");
        ASSERT_CONTAINS(e, "test.conf:7: while = sriovd_alerts_raised_total is made from the alert rules' own outcomes");
        free(e);
        e = load_errors("[alert]\n");
        ASSERT_CONTAINS(e, "test.conf:1: section [alert] needs an argument; expected [alert NAME]");
        free(e);
}

static void on_manager_alert(Manager *m, const AlertInfo *a, bool raised, AlertClearReason reason, void *userdata) {
        on_event(a, raised, reason, userdata);
}

TEST(manager_feed_and_reload) {
        char root[] = "/tmp/test-alerts-XXXXXX", path[64];
        _cleanup_(manager_freep) Manager *m = NULL;
        char **reasons = NULL;
        Events e = {};
        AlertInfo info;

        ASSERT(mkdtemp(root));
        snprintf(path, sizeof(path), "%s/sriovd.conf", root);
        test_write_file(path, NO_BUILTINS "[alert hot]\nmetric = m\nthreshold = 5\n");
        ASSERT_EQ(manager_new(root, path, &m), 0);
        /* Before a config: nothing to feed, and no crash. */
        ASSERT(!manager_alerts(m));
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT(manager_alerts(m));
        ASSERT_EQ(alerts_n_rules(manager_alerts(m)), 6);
        manager_set_alert_fn(m, on_manager_alert, &e);

        /* A new snapshot each period, as the sampler makes them. */
        MetricSnapshot s = {};
        for (int i = 0; i < 3; i++) {
                metric_snapshot_done(&s);
                add(&s, "m", 8, 1, L(METRIC_LABEL_CPU, "2"));
                manager_metrics_sampled(m, &s);
        }
        ASSERT_EQ(alerts_n_active(manager_alerts(m)), 1);
        /* The period that raised it has it, as the file and GetMetrics are written from it. */
        ASSERT_EQ(count_family(&s, ALERT_FAMILY_ACTIVE), 1);
        ASSERT_EQ(alerts_get_active(manager_alerts(m), 0, &info), 0);
        ASSERT_EQ(info.value, 8);

        /* A reload with the same rule keeps it; a broken config keeps the rules in force. */
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(alerts_n_active(manager_alerts(m)), 1);
        test_write_file(path, "[alert hot]\nmetric = m\n");
        ASSERT(manager_load_config(m) < 0);
        ASSERT_EQ(alerts_n_active(manager_alerts(m)), 1);
        test_write_file(path, NO_BUILTINS "[alert hot]\nmetric = m\nthreshold = 50\n");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(alerts_n_active(manager_alerts(m)), 0);
        ASSERT_EQ(e.raised, 1);
        ASSERT_EQ(e.cleared, 1);
        ASSERT_EQ(e.last_reason, ALERT_CLEAR_RULE_CHANGED);

        /* Not ready, not degraded: no reasons. */
        ASSERT_EQ(manager_state_reasons(m, &reasons), 0);
        ASSERT(!reasons[0]);
        free(reasons);
        metric_snapshot_done(&s);
        sh("rm -rf %s", root);
}

/* A VF's drops and an IRQ's rate on one CPU (the widest subject the sampler makes), as one period has them. */
static void period(MetricSnapshot *s, double drops, double irq) {
        *s = (MetricSnapshot) { .timestamp_usec = 2000 };
        add(s, "sriovd_vf_drop_rate", drops, 4, L(METRIC_LABEL_PF, "0000:41:00.0"), L(METRIC_LABEL_VF, "0000:41:00.2"),
            L(METRIC_LABEL_TENANT, "t-lc"), L(METRIC_LABEL_CLASS, "latency-critical"));
        add(s, "sriovd_vf_drop_rate", 0, 4, L(METRIC_LABEL_PF, "0000:41:00.0"), L(METRIC_LABEL_VF, "0000:41:00.3"),
            L(METRIC_LABEL_TENANT, "t-tp"), L(METRIC_LABEL_CLASS, "throughput"));
        add(s, "sriovd_irq_rate", irq, 6, L(METRIC_LABEL_PF, "0000:41:00.0"), L(METRIC_LABEL_VF, "0000:41:00.2"),
            L(METRIC_LABEL_TENANT, "t-lc"), L(METRIC_LABEL_CLASS, "latency-critical"), L(METRIC_LABEL_IRQ, "77"),
            L(METRIC_LABEL_CPU, "3"));
        add(s, "sriovd_cpu_irq_time_ratio", 0.5, 1, L(METRIC_LABEL_CPU, "3"));
        metric_snapshot_sort(s);
}

static char *page_of(const MetricSnapshot *s) {
        char *page = NULL;
        size_t size;

        ASSERT_EQ(sampler_prom_page(s, &page, &size), 0);
        ASSERT_EQ(strlen(page), size);
        return page;
}

#define EXPORT_RULES NO_BUILTINS \
        "[alert drops]\nmetric = sriovd_vf_drop_rate\nthreshold = 0\nperiods = 2\n" \
        "[alert irq-storm]\nmetric = sriovd_irq_rate\nthreshold = 1000\nclear = 100\nperiods = 1\n"

#define DROPS_ACTIVE "sriovd_alert_active{alert=\"drops\",pf=\"0000:41:00.0\",vf=\"0000:41:00.2\",tenant=\"t-lc\"," \
                     "class=\"latency-critical\"} 1\n"
#define STORM_ACTIVE "sriovd_alert_active{alert=\"irq-storm\",pf=\"0000:41:00.0\",vf=\"0000:41:00.2\",tenant=\"t-lc\"," \
                     "class=\"latency-critical\",irq=\"77\",cpu=\"3\"} 1\n"

/*
 * The alerts as metrics: a series per active alert, labelled alert and the subject's labels,
 * from the period that raised it (held for the rule's periods) to the one that cleared it
 * (hysteresis); a raise counter per enabled rule; the period stays sorted, and the page is one
 * the Prometheus format allows (HELP and TYPE once per family).
 */
TEST(exported_as_metrics) {
        _cleanup_(config_freep) Config *c = load(EXPORT_RULES);
        Events e = {};
        _cleanup_(alerts_freep) Alerts *a = engine(c, &e);
        MetricSnapshot s;
        char *page;

        /* Period 1: drops over the threshold once (2 needed), no storm: nothing active, both counters 0. */
        period(&s, 5, 10);
        ASSERT_EQ(alerts_feed(a, &s), 0);
        ASSERT_EQ(alerts_export(a, &s), 0);
        assert_sorted(&s);
        ASSERT_EQ(count_family(&s, ALERT_FAMILY_ACTIVE), 0);
        ASSERT_EQ(count_family(&s, ALERT_FAMILY_RAISED), 2);   /* the disabled built-ins have none */
        page = page_of(&s);
        ASSERT(!strstr(page, "sriovd_alert_active"));
        ASSERT(strstr(page, "# TYPE sriovd_alerts_raised_total counter\n"
                            "sriovd_alerts_raised_total{alert=\"drops\"} 0\n"
                            "sriovd_alerts_raised_total{alert=\"irq-storm\"} 0\n"));
        free(page);
        metric_snapshot_done(&s);

        /* Period 2: drops held for 2 periods, and a storm on the widest subject: both active. */
        period(&s, 5, 5000);
        ASSERT_EQ(alerts_feed(a, &s), 2);
        ASSERT_EQ(alerts_export(a, &s), 0);
        assert_sorted(&s);
        ASSERT_EQ(count_family(&s, ALERT_FAMILY_ACTIVE), 2);
        page = page_of(&s);
        ASSERT(strstr(page, "# HELP sriovd_alert_active "));
        ASSERT(strstr(page, "# TYPE sriovd_alert_active gauge\n" DROPS_ACTIVE STORM_ACTIVE));
        ASSERT(strstr(page, "sriovd_alerts_raised_total{alert=\"drops\"} 1\n"));
        ASSERT(strstr(page, "sriovd_alerts_raised_total{alert=\"irq-storm\"} 1\n"));
        /* The sampler's own families are all still there, one declaration each. */
        ASSERT(strstr(page, "sriovd_cpu_irq_time_ratio{cpu=\"3\"} 0.5\n"));
        ASSERT_EQ(count_family(&s, "sriovd_vf_drop_rate"), 2);
        ASSERT_EQ(count_family(&s, "sriovd_irq_rate"), 1);
        free(page);
        metric_snapshot_done(&s);

        /* Period 3: the storm at 500, between clear (100) and threshold: held; drops back at 0 once
         * of the 2 periods it takes to clear: held too. */
        period(&s, 0, 500);
        ASSERT_EQ(alerts_feed(a, &s), 0);
        ASSERT_EQ(alerts_export(a, &s), 0);
        page = page_of(&s);
        ASSERT(strstr(page, DROPS_ACTIVE STORM_ACTIVE));
        free(page);
        metric_snapshot_done(&s);

        /* Period 4: the storm back under clear (cleared in 1 period), drops' second period at 0:
         * both cleared, their series gone; the counters stay. */
        period(&s, 0, 50);
        ASSERT_EQ(alerts_feed(a, &s), 2);
        ASSERT_EQ(e.cleared, 2);
        ASSERT_EQ(alerts_export(a, &s), 0);
        assert_sorted(&s);
        ASSERT_EQ(count_family(&s, ALERT_FAMILY_ACTIVE), 0);
        page = page_of(&s);
        ASSERT(!strstr(page, "sriovd_alert_active"));
        ASSERT(strstr(page, "sriovd_alerts_raised_total{alert=\"drops\"} 1\n"
                            "sriovd_alerts_raised_total{alert=\"irq-storm\"} 1\n"));
        free(page);
        metric_snapshot_done(&s);

        /* A reload that changes a rule clears its alert, but its name's count goes on. */
        period(&s, 5, 5000);
        ASSERT_EQ(alerts_feed(a, &s), 1);
        metric_snapshot_done(&s);
        _cleanup_(config_freep) Config *d = load(NO_BUILTINS
                "[alert drops]\nmetric = sriovd_vf_drop_rate\nthreshold = 0\nperiods = 2\n"
                "[alert irq-storm]\nmetric = sriovd_irq_rate\nthreshold = 2000\nclear = 100\nperiods = 1\n");
        ASSERT_EQ(alerts_set_rules(a, d->alerts, d->n_alerts), 0);
        period(&s, 0, 50);
        ASSERT_EQ(alerts_feed(a, &s), 0);
        ASSERT_EQ(alerts_export(a, &s), 0);
        page = page_of(&s);
        ASSERT(!strstr(page, "sriovd_alert_active"));
        ASSERT(strstr(page, "sriovd_alerts_raised_total{alert=\"irq-storm\"} 2\n"));
        free(page);
        metric_snapshot_done(&s);

        /* The pure parts: no room for the alert's label beside a subject that has every one, no name. */
        s = (MetricSnapshot) {};
        MetricLabel full[METRIC_LABELS_MAX] = {};
        ASSERT_EQ(alert_metrics_add_active(&s, "x", full, METRIC_LABELS_MAX), -E2BIG);
        ASSERT_EQ(alert_metrics_add_active(&s, "", full, 0), -EINVAL);
        ASSERT_EQ(alert_metrics_add_raised(&s, NULL, 1), -EINVAL);
        ASSERT_EQ(alert_metrics_add_active(&s, "x", NULL, 0), 0);
        ASSERT_EQ(s.n_samples, 1);
        ASSERT_EQ(s.samples[0].n_labels, 1);
        ASSERT_STREQ(metric_sample_label(&s.samples[0], METRIC_LABEL_ALERT), "x");
        metric_snapshot_done(&s);
}

/* metric_snapshot_append(): families whole after s's, which stay in place; never a family split. */
TEST(append_families) {
        MetricSnapshot s = {}, b = {}, c = {};

        add(&s, "b", 1, 1, L(METRIC_LABEL_CPU, "1"));
        add(&s, "d", 1, 0);
        add(&b, "a", 2, 0);
        add(&b, "c", 2, 1, L(METRIC_LABEL_CPU, "0"));
        add(&b, "c", 2, 1, L(METRIC_LABEL_CPU, "1"));
        ASSERT_EQ(metric_snapshot_append(&s, &b), 0);
        ASSERT_EQ(s.n_samples, 5);
        ASSERT_STREQ(s.samples[0].name, "b");
        ASSERT_STREQ(s.samples[1].name, "d");
        ASSERT_STREQ(s.samples[2].name, "a");
        ASSERT_STREQ(s.samples[4].name, "c");
        ASSERT_STREQ(s.samples[4].labels[0].value, "1");
        /* A family s has already: refused, s as it was. */
        add(&c, "e", 3, 0);
        add(&c, "d", 3, 0);
        ASSERT_EQ(metric_snapshot_append(&s, &c), -EEXIST);
        ASSERT_EQ(s.n_samples, 5);
        ASSERT_EQ(metric_snapshot_append(&s, &(MetricSnapshot) {}), 0);
        ASSERT_EQ(s.n_samples, 5);
        metric_snapshot_done(&s);
        metric_snapshot_done(&b);
        metric_snapshot_done(&c);
}

/* The page with active alerts, as the daemon writes it, through Prometheus' own parser and linter. */
static int promtool_check(void) {
        char dir[] = "/tmp/test-alerts-prom-XXXXXX", path[256];
        _cleanup_(config_freep) Config *c = NULL;
        _cleanup_(alerts_freep) Alerts *a = NULL;
        _cleanup_free_ char *page = NULL;
        Events e = {};
        MetricSnapshot s;
        int r;

        if (system("command -v promtool >/dev/null 2>&1") != 0) {
                printf("SKIP: promtool is not installed (Debian package prometheus): nothing to check the page with\n");
                return EXIT_TEST_SKIP;
        }
        c = load(EXPORT_RULES);
        a = engine(c, &e);
        for (int i = 0; i < 2; i++) {
                period(&s, 5, 5000);
                alerts_feed(a, &s);
                if (i == 0)
                        metric_snapshot_done(&s);
        }
        ASSERT_EQ(alerts_export(a, &s), 0);
        ASSERT_EQ(count_family(&s, ALERT_FAMILY_ACTIVE), 2);
        page = page_of(&s);
        metric_snapshot_done(&s);

        ASSERT(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/sriovd.prom", dir);
        ASSERT_EQ(metrics_file_write(path, page, strlen(page)), 0);
        {
                char cmd[512];

                snprintf(cmd, sizeof(cmd), "promtool check metrics < %s", path);
                r = system(cmd);
        }
        sh("rm -rf %s", dir);
        ASSERT(WIFEXITED(r));
        ASSERT_EQ(WEXITSTATUS(r), 0);
        printf("promtool took the page with 2 active alerts (%zu bytes)\n", strlen(page));
        return 0;
}

int main(int argc, char **argv) {
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);
        if (argc > 1 && streq(argv[1], "promtool"))
                return promtool_check();
        RUN(raise_after_exactly_n_periods);
        RUN(clear_with_hysteresis);
        RUN(label_filters);
        RUN(builtins_and_switching_one_off);
        RUN(softnet_rule);
        RUN(latency_rule_on_both_sources);
        RUN(pool_rule_only_while_tenants_wait);
        RUN(reload_keeps_state_of_unchanged_rules);
        RUN(vanished_subject);
        RUN(config_errors);
        RUN(manager_feed_and_reload);
        RUN(exported_as_metrics);
        RUN(append_families);
        return 0;
}
