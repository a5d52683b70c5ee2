/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler-export.c — every metric family sriovd exports, its HELP text, and the snapshot as a Prometheus page */

#include <errno.h>
#include <math.h>
#include <string.h>

#include "sriovd/core/prom.h"
#include "sriovd/shared/util.h"
#include "sampler.h"

/* sriovd-metrics(7) documents the same families; the docs test checks that both agree. */
static const struct {
        const char *name, *help;
} families[] = {
        { "sriovd_irq_interrupts_total", "Interrupts of a NIC IRQ on one CPU, as /proc/interrupts counts them" },
        { "sriovd_irq_rate", "Interrupts per second of a NIC IRQ on one CPU over the last period" },
        { "sriovd_irq_thread_cpu_ratio",
          "Share of one CPU the IRQ's irq/N- thread used over the last period (threads on the RT CPUs, and RT tenants')" },
        { "sriovd_napi_thread_cpu_ratio", "Share of one CPU the napi/ thread of the NAPI a NIC IRQ schedules used over the last period" },
        { "sriovd_ksoftirqd_cpu_ratio", "Share of one CPU the RT CPU's ksoftirqd used over the last period" },
        { "sriovd_rt_cpu_interference_rate",
          "Interrupts per second on an RT CPU from device IRQs no RT tenant owns" },
        { "sriovd_rt_cpu_arch_interrupt_rate",
          "Interrupts per second on an RT CPU of a named /proc/interrupts row (timer, IPIs; irq is the row)" },
        { "sriovd_cpu_net_rx_softirqs_total", "NET_RX softirqs run on the CPU (/proc/softirqs)" },
        { "sriovd_cpu_net_rx_softirq_rate", "NET_RX softirqs per second on the CPU over the last period" },
        { "sriovd_cpu_net_tx_softirqs_total", "NET_TX softirqs run on the CPU (/proc/softirqs)" },
        { "sriovd_cpu_net_tx_softirq_rate", "NET_TX softirqs per second on the CPU over the last period" },
        { "sriovd_cpu_irq_ticks_total", "Clock ticks (USER_HZ) the CPU spent in hard IRQs (/proc/stat)" },
        { "sriovd_cpu_irq_time_ratio", "Share of the CPU spent in hard IRQs over the last period" },
        { "sriovd_cpu_softirq_ticks_total", "Clock ticks (USER_HZ) the CPU spent in softirqs (/proc/stat)" },
        { "sriovd_cpu_softirq_time_ratio", "Share of the CPU spent in softirqs over the last period" },
        { "sriovd_softnet_processed_total", "Packets NET_RX processed on the online CPU (/proc/net/softnet_stat)" },
        { "sriovd_softnet_processed_rate", "Packets per second NET_RX processed on the CPU over the last period" },
        { "sriovd_softnet_dropped_total", "Packets dropped because the CPU's backlog was full (/proc/net/softnet_stat)" },
        { "sriovd_softnet_dropped_rate", "Packets per second dropped from the CPU's full backlog over the last period" },
        { "sriovd_softnet_time_squeeze_total",
          "Times NET_RX on the CPU stopped with work left, its budget or time spent (/proc/net/softnet_stat)" },
        { "sriovd_softnet_time_squeeze_rate", "Time squeezes per second on the CPU over the last period" },
        { "sriovd_rt_cpu_softnet_overload_rate",
          "Backlog drops plus time squeezes per second on an RT CPU over the last period" },
        { "sriovd_vf_rx_packets_total", "Packets the VF received (the PF's IFLA_VF_STATS, or its host netdev's: sriovd_vf_stats_from_netdev)" },
        { "sriovd_vf_tx_packets_total", "Packets the VF sent" },
        { "sriovd_vf_rx_bytes_total", "Bytes the VF received" },
        { "sriovd_vf_tx_bytes_total", "Bytes the VF sent" },
        { "sriovd_vf_rx_dropped_total", "Received packets of the VF dropped" },
        { "sriovd_vf_tx_dropped_total", "Packets the VF was to send and dropped" },
        { "sriovd_vf_rx_packet_rate", "Packets per second the VF received over the last period" },
        { "sriovd_vf_tx_packet_rate", "Packets per second the VF sent over the last period" },
        { "sriovd_vf_rx_byte_rate", "Bytes per second the VF received over the last period" },
        { "sriovd_vf_tx_byte_rate", "Bytes per second the VF sent over the last period" },
        { "sriovd_vf_drop_rate", "Packets per second the VF dropped (rx + tx) over the last period" },
        { "sriovd_vf_stats_from_netdev",
          "1: the VF's figures are its host netdev's IFLA_STATS64 (the PF reports zeros, e.g. igb); 0: the PF's IFLA_VF_STATS" },
        { "sriovd_netdev_rx_packets_total", "Packets the host netdev of a PF or VF received (IFLA_STATS64)" },
        { "sriovd_netdev_tx_packets_total", "Packets the host netdev of a PF or VF sent (IFLA_STATS64)" },
        { "sriovd_netdev_rx_bytes_total", "Bytes the host netdev of a PF or VF received (IFLA_STATS64)" },
        { "sriovd_netdev_tx_bytes_total", "Bytes the host netdev of a PF or VF sent (IFLA_STATS64)" },
        { "sriovd_netdev_rx_dropped_total", "Received packets the host netdev dropped (IFLA_STATS64)" },
        { "sriovd_netdev_tx_dropped_total", "Packets to send the host netdev dropped (IFLA_STATS64)" },
        { "sriovd_netdev_rx_packet_rate", "Packets per second the host netdev received over the last period" },
        { "sriovd_netdev_tx_packet_rate", "Packets per second the host netdev sent over the last period" },
        { "sriovd_netdev_rx_byte_rate", "Bytes per second the host netdev received over the last period" },
        { "sriovd_netdev_tx_byte_rate", "Bytes per second the host netdev sent over the last period" },
        { "sriovd_netdev_drop_rate", "Packets per second the host netdev dropped (rx + tx) over the last period" },
        { "sriovd_vf_pool_vfs", "VFs the PF has" },
        { "sriovd_vf_pool_allocated", "VFs of the PF tenants hold" },
        { "sriovd_vf_pool_utilization_ratio", "Share of the PF's VFs tenants hold" },
        { "sriovd_vf_node_vfs", "VFs of the PFs on the NUMA node" },
        { "sriovd_vf_node_allocated", "VFs on the NUMA node tenants hold" },
        { "sriovd_vf_node_utilization_ratio", "Share of the NUMA node's VFs tenants hold" },
        { "sriovd_vf_target_utilization_ratio", "vf_target_utilization: the share of VFs the allocator aims to use" },
        { "sriovd_tenants_waiting_virtio", "sriov-preferred tenants on virtio-net, each of which would take a VF" },
        { "sriovd_rt_cpus", "RT CPUs of the pool on the NUMA node" },
        { "sriovd_rt_cpus_booked", "RT CPUs of the NUMA node booked by at least one guest" },
        { "sriovd_rt_guests", "Guests holding RT CPUs of the NUMA node" },
        { "sriovd_rt_guests_waiting", "Guests placed without RT CPUs, waiting for one on the NUMA node" },
        { "sriovd_thread_latency_seconds",
          "Wakeup-to-run latency of an RT tenant's threads of one kind since they were tracked (BPF only)" },
        { "sriovd_thread_latency_p99_seconds",
          "99th percentile of the wakeup-to-run latency over the last period (BPF only; source is the source)" },
        { "sriovd_thread_latency_p999_seconds",
          "99.9th percentile of the wakeup-to-run latency over the last period (BPF only; source is the source)" },
        { "sriovd_thread_latency_mean_seconds",
          "Mean wait to run per wakeup (bpf) or per timeslice (schedstat run delay) over the last period; "
          "a mean, not a percentile; source is the source" },
        { "sriovd_bpf_available", "1 when the BPF programs of the feature are loaded, 0 when sriovd falls back; feature is the set" },
        { "sriovd_host_check_failed",
          "1 when the last RT host check failed (at start, reload or CheckHost), else 0; check is the check, severity its severity" },
        { "sriovd_alert_active",
          "1 for each active alert: the daemon's own, held for its periods, cleared with hysteresis (ActiveAlerts); alert is the rule" },
        { "sriovd_alerts_raised_total", "Times the alert rule raised an alert since the daemon started" },
};

const char *sampler_family_help(const char *name) {
        size_t len;

        for (size_t i = 0; i < ELEMENTSOF(families); i++)
                if (streq(families[i].name, name))
                        return families[i].help;
        /* A histogram's line, NAME_bucket, NAME_sum or NAME_count, has its family's help. */
        len = metric_histogram_family_len(name);
        for (size_t i = 0; len > 0 && i < ELEMENTSOF(families); i++)
                if (strlen(families[i].name) == len && strncmp(families[i].name, name, len) == 0)
                        return families[i].help;
        return NULL;
}

static void prom_labels(const MetricSample *m, unsigned n, PromLabel *ret) {
        for (unsigned k = 0; k < n; k++)
                ret[k] = (PromLabel) { metric_label_name_to_string(m->labels[k].name), m->labels[k].value };
}

/* Whether the sample is a line of the series whose _count is c, that is, it has c's labels and perhaps le. */
static bool same_series(const MetricSample *m, const MetricSample *c) {
        unsigned n = m->n_labels;

        if (n > 0 && m->labels[n - 1].name == METRIC_LABEL_LE)
                n--;
        if (n != c->n_labels)
                return false;
        for (unsigned k = 0; k < n; k++)
                if (m->labels[k].name != c->labels[k].name || !streq(m->labels[k].value, c->labels[k].value))
                        return false;
        return true;
}

/*
 * Write one histogram family, whose lines are samples [i, end): the buckets, then the counts,
 * then the sums, as they sort. The page gives each series whole: its buckets in order of le,
 * its sum and its count. Both orders are valid, but the second is how clients write it.
 */
static void write_histogram(PromWriter *w, const MetricSnapshot *snap, size_t i, size_t end, size_t base_len) {
        size_t b = i, c = i, sum;

        while (c < end && !streq(snap->samples[c].name + base_len, "_count"))
                c++;
        sum = c;
        while (sum < end && !streq(snap->samples[sum].name + base_len, "_sum"))
                sum++;
        for (size_t k = c; k < end && streq(snap->samples[k].name + base_len, "_count"); k++) {
                const MetricSample *count = &snap->samples[k];
                PromLabel labels[METRIC_LABELS_MAX];

                /* The three lists are sorted by the same labels, so each advances once. */
                for (; b < c && metric_sample_labels_cmp(&snap->samples[b], count) < 0 &&
                       !same_series(&snap->samples[b], count); b++)
                        ;
                for (; b < c && same_series(&snap->samples[b], count); b++) {
                        prom_labels(&snap->samples[b], snap->samples[b].n_labels, labels);
                        (void) prom_histogram_sample(w, PROM_HISTOGRAM_BUCKET, labels, snap->samples[b].n_labels,
                                                     snap->samples[b].value);
                }
                for (; sum < end && metric_sample_labels_cmp(&snap->samples[sum], count) < 0; sum++)
                        ;
                prom_labels(count, count->n_labels, labels);
                if (sum < end && same_series(&snap->samples[sum], count))
                        (void) prom_histogram_sample(w, PROM_HISTOGRAM_SUM, labels, count->n_labels,
                                                     snap->samples[sum].value);
                (void) prom_histogram_sample(w, PROM_HISTOGRAM_COUNT, labels, count->n_labels, count->value);
        }
}

int sampler_prom_page(const MetricSnapshot *snap, char **ret, size_t *ret_size) {
        _cleanup_(prom_writer_done) PromWriter w = {};
        const char *family = NULL;

        for (size_t i = 0; i < snap->n_samples; i++) {
                const MetricSample *m = &snap->samples[i];
                PromLabel labels[METRIC_LABELS_MAX];

                if (m->kind == METRIC_HISTOGRAM) {
                        size_t len = metric_histogram_family_len(m->name), end = i;
                        char base[128];

                        if (len == 0 || len >= sizeof(base))
                                continue;
                        memcpy(base, m->name, len);
                        base[len] = 0;
                        /* Its lines are NAME_bucket, NAME_count and NAME_sum, which sort together. */
                        while (end < snap->n_samples && snap->samples[end].kind == METRIC_HISTOGRAM &&
                               metric_histogram_family_len(snap->samples[end].name) == len &&
                               strncmp(snap->samples[end].name, base, len) == 0)
                                end++;
                        (void) prom_family(&w, base, PROM_HISTOGRAM, sampler_family_help(base) ?: base);
                        write_histogram(&w, snap, i, end, len);
                        family = NULL;
                        i = end - 1;
                        continue;
                }

                /* The samples are sorted by name, so each family's samples come together. */
                if (!family || !streq(family, m->name)) {
                        const char *help = sampler_family_help(m->name);

                        family = m->name;
                        (void) prom_family(&w, m->name, m->kind == METRIC_COUNTER ? PROM_COUNTER : PROM_GAUGE,
                                           help ?: m->name);
                }
                /* A sample without a value is left out, because every query would have to skip a NaN. */

                if (isnan(m->value))
                        continue;
                prom_labels(m, m->n_labels, labels);
                if (m->kind == METRIC_COUNTER)
                        (void) prom_sample_u64(&w, labels, m->n_labels, (uint64_t) m->value);
                else
                        (void) prom_sample(&w, labels, m->n_labels, m->value);
        }
        return prom_writer_finish(&w, ret, ret_size);
}
