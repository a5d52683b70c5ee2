/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sampler.c — the kernel's counters, read each period and turned into rates per NIC, tenant and CPU */

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sriovd/core/plan.h"
#include "sriovd/kernel/proc-counters.h"
#include "sampler-internal.h"

/* The most thread stat files held open at once, whatever the fd limit. */
#define SAMPLER_THREAD_FDS_MAX 4096

int sampler_new(RootFs *root, Sampler **ret) {
        Sampler *s = calloc(1, sizeof(Sampler));
        long hz = sysconf(_SC_CLK_TCK);
        struct rlimit rl;

        if (!s)
                return -ENOMEM;
        s->root = root;
        s->ticks_per_sec = hz > 0 ? (unsigned long) hz : 100;
        /*
         * Take at most half of the soft fd limit, which systemd sets to 1024 by default. The bus,
         * udev, netlink and libvirt need fds of their own. A host with more threads to watch
         * reads the rest by path.
         */
        s->fd_budget = getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur != RLIM_INFINITY
                ? MIN((size_t) rl.rlim_cur / 2, (size_t) SAMPLER_THREAD_FDS_MAX) : SAMPLER_THREAD_FDS_MAX;
        *ret = s;
        return 0;
}

Sampler *sampler_free(Sampler *s) {
        if (!s)
                return NULL;
        counter_table_done(&s->interrupts);
        counter_table_done(&s->softirqs);
        counter_table_done(&s->cpu_times);
        counter_table_done(&s->softnet);
        thread_slots_free(s->threads, s->n_threads, &s->n_fds);
        traffic_baseline_done(&s->traffic);
        latency_baseline_done(&s->latency);
        free(s->spare);
        free(s->order_irqs);
        free(s->order);
        free(s);
        return NULL;
}

static void label_node(Labels *ls, int node) {
        if (node >= 0)
                label_u(ls, METRIC_LABEL_NODE, (unsigned) node);
        else
                label(ls, METRIC_LABEL_NODE, "unknown");
}

/* The rate of row i on cpu, or NaN without one this period. Row i indexes both cur and the rates. */
static double rate_of(const CounterRates *rates, size_t i, unsigned cpu) {
        CounterTable view;
        ssize_t k;

        if (!rates || i >= rates->n_rows || rates->reset[i])
                return NAN;
        view = (CounterTable) { .cpus = rates->cpus, .n_cpus = rates->n_cpus };
        k = counter_table_find_cpu(&view, cpu);
        return k < 0 ? NAN : counter_rates_value(rates, i, (size_t) k);
}

/*
 * A named row of a per-CPU table: its counter per CPU, and its rate. The rate is divided by per,
 * which can make it a ratio of time.
 */
typedef struct CpuRow {
        const char *row, *counter, *rate;
} CpuRow;

static int sample_cpu_rows(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates,
                           const CpuRow *rows, size_t n_rows, double per) {
        int r;

        for (size_t k = 0; k < n_rows; k++) {
                CounterRow key = { .irq = COUNTER_NAMED };
                ssize_t i;

                strscpy(key.name, sizeof(key.name), rows[k].row);
                i = counter_table_find(cur, &key);
                if (i < 0)
                        continue;
                for (size_t j = 0; j < cur->n_cpus; j++) {
                        Labels ls = {};

                        label_u(&ls, METRIC_LABEL_CPU, cur->cpus[j]);
                        r = sampler_add(snap, rows[k].counter, METRIC_COUNTER, (double) counter_table_value(cur, (size_t) i, j), &ls);
                        if (r >= 0)
                                r = sampler_add(snap, rows[k].rate, METRIC_GAUGE, rate_of(rates, (size_t) i, cur->cpus[j]) / per, &ls);
                        if (r < 0)
                                return r;
                }
        }
        return 0;
}

static int sample_softirqs(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates) {
        static const CpuRow rows[] = {
                { "NET_RX", "sriovd_cpu_net_rx_softirqs_total", "sriovd_cpu_net_rx_softirq_rate" },
                { "NET_TX", "sriovd_cpu_net_tx_softirqs_total", "sriovd_cpu_net_tx_softirq_rate" },
        };
        return sample_cpu_rows(snap, cur, rates, rows, ELEMENTSOF(rows), 1.0);
}

/* The irq and softirq time in /proc/stat, as the share of each CPU spent there. 1.0 is the whole CPU. */
static int sample_cpu_times(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates,
                            unsigned long ticks_per_sec) {
        static const CpuRow rows[] = {
                { "irq", "sriovd_cpu_irq_ticks_total", "sriovd_cpu_irq_time_ratio" },
                { "softirq", "sriovd_cpu_softirq_ticks_total", "sriovd_cpu_softirq_time_ratio" },
        };
        return sample_cpu_rows(snap, cur, rates, rows, ELEMENTSOF(rows), (double) ticks_per_sec);
}

/*
 * The softnet counters of each CPU. An RT CPU also gets its drops and time squeezes per second
 * in one family, which the built-in rule rt-softnet-overload watches. Either means that NET_RX
 * on that CPU could not keep up: the backlog overflowed, or the budget ran out with work left.
 */
static int sample_softnet(MetricSnapshot *snap, const CounterTable *cur, const CounterRates *rates, const CpuSet *rt) {
        static const CpuRow rows[] = {
                { "processed", "sriovd_softnet_processed_total", "sriovd_softnet_processed_rate" },
                { "dropped", "sriovd_softnet_dropped_total", "sriovd_softnet_dropped_rate" },
                { "time_squeeze", "sriovd_softnet_time_squeeze_total", "sriovd_softnet_time_squeeze_rate" },
        };
        ssize_t dropped, squeezed;
        int r;

        r = sample_cpu_rows(snap, cur, rates, rows, ELEMENTSOF(rows), 1.0);
        if (r < 0)
                return r;
        dropped = counter_table_find(cur, &(CounterRow) { .irq = COUNTER_NAMED, .name = "dropped" });
        squeezed = counter_table_find(cur, &(CounterRow) { .irq = COUNTER_NAMED, .name = "time_squeeze" });
        for (size_t j = 0; j < cur->n_cpus; j++) {
                Labels ls = {};
                double v;

                if (!cpuset_has(rt, cur->cpus[j]))
                        continue;
                /* A row the file lacks counts nothing, but a row without a rate leaves the period without a value. */
                v = (dropped >= 0 ? rate_of(rates, (size_t) dropped, cur->cpus[j]) : 0) +
                    (squeezed >= 0 ? rate_of(rates, (size_t) squeezed, cur->cpus[j]) : 0);
                label_u(&ls, METRIC_LABEL_CPU, cur->cpus[j]);
                r = sampler_add(snap, "sriovd_rt_cpu_softnet_overload_rate", METRIC_GAUGE, v, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* For each PF and each NUMA node: the VFs, those that tenants hold, their share, and the target share. */
static int sample_pools(MetricSnapshot *snap, const SamplerInput *in) {
        unsigned node_vfs[ALLOC_NODES_MAX + 1] = {}, node_alloc[ALLOC_NODES_MAX + 1] = {};
        bool node_seen[ALLOC_NODES_MAX + 1] = {};
        Labels none = {};
        int r;

        for (size_t i = 0; in->inv && i < in->inv->n_pfs; i++) {
                const Pf *pf = &in->inv->pfs[i];
                size_t slot = pf->numa_node >= 0 && pf->numa_node < ALLOC_NODES_MAX ? (size_t) pf->numa_node : ALLOC_NODES_MAX;
                unsigned allocated = 0;
                Labels ls = {};

                for (size_t k = 0; k < in->n_tenants; k++)
                        if (in->tenants[k].vf[0] && streq(in->tenants[k].pf, pf->addr))
                                allocated++;
                label(&ls, METRIC_LABEL_PF, pf->addr);
                label_node(&ls, pf->numa_node);
                r = sampler_add(snap, "sriovd_vf_pool_vfs", METRIC_GAUGE, (double) pf->n_vfs, &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_vf_pool_allocated", METRIC_GAUGE, allocated, &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_vf_pool_utilization_ratio", METRIC_GAUGE,
                                pf->n_vfs ? (double) allocated / (double) pf->n_vfs : 0, &ls);
                if (r < 0)
                        return r;
                node_vfs[slot] += (unsigned) pf->n_vfs;
                node_alloc[slot] += allocated;
                node_seen[slot] = true;
        }
        for (size_t slot = 0; slot <= ALLOC_NODES_MAX; slot++) {
                Labels ls = {};

                if (!node_seen[slot])
                        continue;
                label_node(&ls, slot < ALLOC_NODES_MAX ? (int) slot : -1);
                r = sampler_add(snap, "sriovd_vf_node_vfs", METRIC_GAUGE, node_vfs[slot], &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_vf_node_allocated", METRIC_GAUGE, node_alloc[slot], &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_vf_node_utilization_ratio", METRIC_GAUGE,
                                node_vfs[slot] ? (double) node_alloc[slot] / node_vfs[slot] : 0, &ls);
                if (r < 0)
                        return r;
        }
        if (in->cfg) {
                unsigned waiting = 0;

                r = sampler_add(snap, "sriovd_vf_target_utilization_ratio", METRIC_GAUGE,
                        in->cfg->vf_target_utilization / 100.0, &none);
                if (r < 0)
                        return r;
                /*
                 * Each sriov-preferred tenant on virtio-net would take a VF. The built-in alert on
                 * an underused pool counts a period towards raising only while this is above 0.
                 */
                for (size_t k = 0; k < in->n_tenants; k++) {
                        const TenantClass *c = config_find_class(in->cfg, in->tenants[k].class_name);
                        waiting += c && c->vnic == VNIC_SRIOV_PREFERRED && streq(in->tenants[k].kind, "virtio");
                }
                r = sampler_add(snap, "sriovd_tenants_waiting_virtio", METRIC_GAUGE, waiting, &none);
                if (r < 0)
                        return r;
        }

        for (size_t i = 0; i < in->n_rt_nodes; i++) {
                const AllocRtNode *n = &in->rt_nodes[i];
                Labels ls = {};

                label_node(&ls, n->numa_node);
                r = sampler_add(snap, "sriovd_rt_cpus", METRIC_GAUGE, n->cpus, &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_rt_cpus_booked", METRIC_GAUGE, n->booked, &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_rt_guests", METRIC_GAUGE, n->guests, &ls);
                if (r >= 0)
                        r = sampler_add(snap, "sriovd_rt_guests_waiting", METRIC_GAUGE, n->waiting, &ls);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Read a table. Where the kernel has no such file, the table is empty, and it gives no samples. */
static int read_optional(int (*reader)(RootFs *, CounterTable *), RootFs *root, CounterTable *ret) {
        int r = reader(root, ret);
        if (r == -ENOENT) {
                *ret = (CounterTable) {};
                return 0;
        }
        return r;
}

int sampler_sample(Sampler *s, const SamplerInput *in, uint64_t mono_usec, uint64_t real_usec,
                   MetricSnapshot *ret) {
        _cleanup_(counter_table_done) CounterTable irqs = {}, soft = {}, times = {}, softnet = {};
        _cleanup_(counter_rates_done) CounterRates irq_rates = {}, soft_rates = {}, time_rates = {}, softnet_rates = {};
        _cleanup_(metric_snapshot_done) MetricSnapshot snap = {};
        _cleanup_(traffic_baseline_done) TrafficBaseline traffic = {};
        _cleanup_(latency_baseline_done) LatencyBaseline latency = {};
        _cleanup_free_ IrqOwner *owners = NULL;
        _cleanup_(irq_table_done) IrqTable table = {};
        bool have_rates;
        uint64_t elapsed;
        size_t n_owners = 0;
        HostCpus cpus = {};
        int r;

        r = proc_interrupts_read(s->root, &irqs);
        if (r < 0)
                return r;
        snap.samples = TAKE_PTR(s->spare);
        snap.allocated = s->spare_allocated;
        s->spare_allocated = 0;
        r = read_optional(proc_softirqs_read, s->root, &soft);
        if (r < 0)
                return r;
        r = read_optional(proc_cpu_times_read, s->root, &times);
        if (r < 0)
                return r;
        /* Before 5.10, a CPU that came or went between the file and the online list gives no
         * softnet samples this period, since the lines cannot be placed. */
        r = read_optional(proc_softnet_read, s->root, &softnet);
        if (r < 0 && r != -ESTALE)
                return r;

        elapsed = s->have_prev && mono_usec > s->prev_usec ? mono_usec - s->prev_usec : 0;
        have_rates = elapsed > 0;
        if (have_rates) {
                r = counter_table_rates(&s->interrupts, &irqs, elapsed, &irq_rates);
                if (r >= 0)
                        r = counter_table_rates(&s->softirqs, &soft, elapsed, &soft_rates);
                if (r >= 0)
                        r = counter_table_rates(&s->cpu_times, &times, elapsed, &time_rates);
                if (r >= 0)
                        r = counter_table_rates(&s->softnet, &softnet, elapsed, &softnet_rates);
                if (r < 0)
                        return r;
        }

        if (in->inv && in->cfg)
                host_cpus(in->inv, in->cfg, &cpus);
        r = irq_owners_collect(in, &cpus.rt, &owners, &n_owners);
        if (r < 0)
                return r;
        r = irq_table_init(&table, &irqs, have_rates ? &irq_rates : NULL, owners, n_owners);
        if (r < 0)
                return r;

        snap.timestamp_usec = real_usec;
        snap.period_usec = elapsed;
        r = sampler_irqs(s, &snap, &table);
        if (r >= 0)
                r = sampler_rt(&snap, &table, &cpus.rt);
        if (r >= 0)
                r = sample_softirqs(&snap, &soft, have_rates ? &soft_rates : NULL);
        if (r >= 0)
                r = sample_cpu_times(&snap, &times, have_rates ? &time_rates : NULL, s->ticks_per_sec);
        if (r >= 0)
                r = sample_softnet(&snap, &softnet, have_rates ? &softnet_rates : NULL, &cpus.rt);
        if (r >= 0)
                r = sampler_threads(s, &snap, in->inv, owners, n_owners, &cpus.rt, elapsed);
        if (r >= 0)
                r = sample_pools(&snap, in);
        if (r >= 0)
                r = sampler_traffic(&s->traffic, in, elapsed, &snap, &traffic);
        if (r >= 0)
                r = sampler_latency(&s->latency, s->root, in, &snap, &latency);
        if (r >= 0)
                r = sampler_bpf_available(&snap, in);
        if (r < 0)
                return r;
        metric_snapshot_sort(&snap);

        /* This period's counters become the next period's baseline, but only once everything worked. */

        counter_table_done(&s->interrupts);
        counter_table_done(&s->softirqs);
        counter_table_done(&s->cpu_times);
        counter_table_done(&s->softnet);
        s->interrupts = irqs;
        s->softirqs = soft;
        s->cpu_times = times;
        s->softnet = softnet;
        irqs = soft = times = softnet = (CounterTable) {};
        traffic_baseline_done(&s->traffic);
        s->traffic = traffic;
        traffic = (TrafficBaseline) {};
        latency_baseline_done(&s->latency);
        s->latency = latency;
        latency = (LatencyBaseline) {};
        s->prev_usec = mono_usec;
        s->have_prev = true;

        free(s->spare);
        s->spare = TAKE_PTR(ret->samples);
        s->spare_allocated = ret->allocated;
        metric_snapshot_done(ret);
        *ret = snap;
        snap = (MetricSnapshot) {};
        return 0;
}
