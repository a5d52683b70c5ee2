/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sampler.c — the sampler on a fixture host: rates from known /proc deltas, labels, resets, the page */

#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sriovd/core/latency-hist.h"
#include "manager/manager.h"
#include "monitor/alerts.h"
#include "monitor/metrics-file.h"
#include "monitor/sampler.h"
#include "test-fixture.h"

static char root[512];

/* The value of the sample name{labels...} (pairs of MetricLabelName, value, ending with -1); aborts when absent. */
static double value_of(const MetricSnapshot *s, const char *name, ...) {
        for (size_t i = 0; i < s->n_samples; i++) {
                const MetricSample *m = &s->samples[i];
                bool match = streq(m->name, name);
                unsigned n = 0;
                va_list ap;
                int l;

                va_start(ap, name);
                while (match && (l = va_arg(ap, int)) >= 0) {
                        const char *v = va_arg(ap, const char *), *have = metric_sample_label(m, (MetricLabelName) l);
                        match = have && streq(have, v);
                        n++;
                }
                va_end(ap);
                if (match && n == m->n_labels)
                        return m->value;
        }
        fprintf(stderr, "no sample %s with those labels\n", name);
        abort();
}

static bool has_sample(const MetricSnapshot *s, const char *name, MetricLabelName l, const char *v) {
        for (size_t i = 0; i < s->n_samples; i++)
                if (streq(s->samples[i].name, name) && streq_ptr(metric_sample_label(&s->samples[i], l), v))
                        return true;
        return false;
}

/* /proc/interrupts with CPUs 0-3 and the rows given as "IRQ c0 c1 c2 c3" lines, LOC last. */
static void write_interrupts(const char *rows, unsigned loc_cpu2) {
        char path[600], text[4096];
        int k;

        k = snprintf(text, sizeof(text), "           CPU0       CPU1       CPU2       CPU3\n");
        for (const char *p = rows; *p;) {
                unsigned irq, c[4];
                int used;

                ASSERT(sscanf(p, "%u %u %u %u %u%n", &irq, &c[0], &c[1], &c[2], &c[3], &used) == 5);
                k += snprintf(text + k, sizeof(text) - (size_t) k, "%4u: %10u %10u %10u %10u  PCI-MSIX-x 0-edge  q\n",
                              irq, c[0], c[1], c[2], c[3]);
                p += used;
                while (*p == ' ' || *p == ';')
                        p++;
        }
        snprintf(text + k, sizeof(text) - (size_t) k, " LOC: %10u %10u %10u %10u  Local timer interrupts\n"
                 " ERR:          0\n", 5u, 5u, loc_cpu2, 5u);
        snprintf(path, sizeof(path), "%s/proc/interrupts", root);
        test_write_file(path, text);
}

static void write_softirqs_and_stat(unsigned net_rx_cpu2, unsigned softirq_ticks_cpu2) {
        char path[600], text[2048];

        snprintf(text, sizeof(text),
                 "                    CPU0       CPU1       CPU2       CPU3\n"
                 "          HI:          0          0          0          0\n"
                 "      NET_TX:          1          1          4          1\n"
                 "      NET_RX:          1          1 %10u          1\n", net_rx_cpu2);
        snprintf(path, sizeof(path), "%s/proc/softirqs", root);
        test_write_file(path, text);
        snprintf(text, sizeof(text),
                 "cpu  0 0 0 0 0 0 0 0 0 0\n"
                 "cpu0 10 0 10 100 0 0 0 0 0 0\n"
                 "cpu1 10 0 10 100 0 0 0 0 0 0\n"
                 "cpu2 10 0 10 100 0 7 %u 0 0 0\n"
                 "cpu3 10 0 10 100 0 0 0 0 0 0\n"
                 "intr 0\nctxt 0\n", softirq_ticks_cpu2);
        snprintf(path, sizeof(path), "%s/proc/stat", root);
        test_write_file(path, text);
}

/* /proc/net/softnet_stat as 5.10 and later print it, CPUs 0-3; CPU 2 drops and is squeezed. */
static void write_softnet(unsigned processed_cpu2, unsigned dropped_cpu2, unsigned squeezed_cpu2) {
        char path[600], text[2048];
        int k = 0;

        for (unsigned c = 0; c < 4; c++)
                k += snprintf(text + k, sizeof(text) - (size_t) k,
                              "%08x %08x %08x 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000 %08x\n",
                              c == 2 ? processed_cpu2 : 100u, c == 2 ? dropped_cpu2 : 0u, c == 2 ? squeezed_cpu2 : 1u, c);
        sh("mkdir -p %s/proc/net", root);
        snprintf(path, sizeof(path), "%s/proc/net/softnet_stat", root);
        test_write_file(path, text);
}

/* The thread's task stat with utime and stime (fields 14, 15), a kernel thread (PF_KTHREAD). */
static void write_thread(int pid, const char *comm, unsigned utime, unsigned stime) {
        char path[600], text[1024];
        int k;

        sh("mkdir -p %s/proc/%d/task/%d", root, pid, pid);
        k = snprintf(text, sizeof(text), "%d (%s) S", pid, comm);
        for (unsigned f = 4; f <= 52; f++)
                k += snprintf(text + k, sizeof(text) - (size_t) k, " %u",
                              f == 9 ? 0x200000u : f == 14 ? utime : f == 15 ? stime : f == 22 ? 10u : 0u);
        snprintf(text + k, sizeof(text) - (size_t) k, "\n");
        snprintf(path, sizeof(path), "%s/proc/%d/task/%d/stat", root, pid, pid);
        test_write_file(path, text);
        snprintf(path, sizeof(path), "%s/proc/%d/stat", root, pid);
        test_write_file(path, text);
}

static const char *run_export(const char *dir, const char *page, size_t size);
static void test_latency(RootFs *r, const char *dir);
static void test_traffic(Inventory *inv, const Config *cfg, RootFs *r, const TenantInfo *t);

/* A whole file, NUL-terminated; aborts when it cannot be read. */
static char *read_all(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char *buf = NULL;
        size_t n = 0, size = 0;

        ASSERT(f);
        do {
                if (n + 4096 + 1 > size) {
                        size = MAX(size * 2, (size_t) 65536);
                        buf = realloc(buf, size);
                        ASSERT(buf);
                }
                n += fread(buf + n, 1, size - n - 1, f);
        } while (!feof(f) && !ferror(f));
        buf[n] = 0;
        return buf;
}

/*
 * The daemon's period on the fixture: the alert its rules raise on a sample is in the file
 * written from that very sample (and in the snapshot GetMetrics returns), not a period later.
 * The rule holds on any host from the first period (periods = 1).
 */
static void test_manager_period_has_its_alerts(const char *dir) {
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_free_ char *page = NULL;
        const MetricSnapshot *snap;
        char conf[600], prom[600], text[1400];
        size_t active = 0;

        snprintf(conf, sizeof(conf), "%s/alerts.conf", dir);
        snprintf(prom, sizeof(prom), "%s/alerts.prom", dir);
        snprintf(text, sizeof(text),
                 "[daemon]\nstate_dir = %s\nmonitor_interval_sec = 5\nmetrics_file = %s\n\n"
                 "[alert always]\nmetric = sriovd_vf_target_utilization_ratio\nthreshold = 0.5\nperiods = 1\n",
                 dir, prom);
        test_write_file(conf, text);
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_sample_now(m), 0);
        ASSERT_EQ(alerts_n_active(manager_alerts(m)), 1);
        page = read_all(prom);
        ASSERT_CONTAINS(page, "# TYPE sriovd_alert_active gauge\nsriovd_alert_active{alert=\"always\"} 1\n");
        ASSERT_CONTAINS(page, "sriovd_alerts_raised_total{alert=\"always\"} 1\n");
        ASSERT_CONTAINS(page, "sriovd_alerts_raised_total{alert=\"rt-cpu-interference\"} 0\n");
        snap = manager_metrics(m);
        ASSERT(snap);
        for (size_t i = 0; i < snap->n_samples; i++)
                active += streq(snap->samples[i].name, "sriovd_alert_active");
        ASSERT_EQ(active, 1);
}

int main(int argc, char **argv) {
        char dir[] = "/tmp/sriovd-sampler-XXXXXX", classes[600], rows[512], irqbuf[4][16];
        _cleanup_(metric_snapshot_done) MetricSnapshot snap = {};
        _cleanup_(sampler_freep) Sampler *s = NULL;
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ char *page = NULL;
        Inventory *inv = NULL;
        Config *cfg;
        const Pf *pf;
        const Irq *qa;
        TenantInfo t = { .tenant = "trader", .class_name = "latency-critical", .kind = "vf" };
        unsigned a, b, c, d, e;
        size_t size;
        long hz = sysconf(_SC_CLK_TCK);
        const char *why;

        ASSERT(argc >= 2);
        ASSERT(mkdtemp(dir));
        sh("cp -a %s/fixture-two-socket %s/root", argv[1], dir);
        snprintf(root, sizeof(root), "%s/root", dir);
        snprintf(classes, sizeof(classes), "%s/conf/tenant-classes.d", getenv("SRIOVD_SOURCE_DIR"));
        cfg = test_config("[daemon]\nmonitor_interval_sec = 5\n\n[cpus]\nrt = 2-3\n", classes);
        ASSERT_EQ(rootfs_new(root, NULL, &r), 0);
        ASSERT_EQ(inventory_read(r, NULL, &inv), 0);

        /* The tenant holds the first VF of the first PF; the second VF is nobody's. */
        pf = &inv->pfs[0];
        ASSERT(pf->n_vfs >= 2 && pf->n_irqs >= 2 && pf->vfs[0].n_irqs >= 1 && pf->vfs[1].n_irqs >= 2);
        strscpy(t.vf, sizeof(t.vf), pf->vfs[0].addr);
        strscpy(t.pf, sizeof(t.pf), pf->addr);
        a = pf->vfs[0].irqs[0];   /* the tenant's: RT class, not interference */
        b = pf->irqs[0];          /* the PF's, whose counter goes down */
        e = pf->irqs[1];          /* the PF's, steady: interference on CPU 2 */
        c = pf->vfs[1].irqs[0];   /* disappears */
        d = pf->vfs[1].irqs[1];   /* appears */
        snprintf(irqbuf[0], 16, "%u", a);
        snprintf(irqbuf[1], 16, "%u", b);
        snprintf(irqbuf[2], 16, "%u", e);
        snprintf(irqbuf[3], 16, "%u", d);
        qa = inventory_find_irq(inv, a);
        ASSERT(qa);

        /* Two more IRQ threads, of IRQs no RT tenant owns: e's delivered to RT CPU 3 is read (the
         * threads on the RT CPUs are watched), b's on housekeeping CPU 0 is not. */
        Irq *qe = (Irq *) inventory_find_irq(inv, e), *qb = (Irq *) inventory_find_irq(inv, b);
        ASSERT(qe && qb);
        qe->thread = 4242;
        qe->has_effective = true;
        cpuset_clear(&qe->effective);
        cpuset_add(&qe->effective, 3);
        qb->thread = 4243;
        qb->has_effective = true;
        cpuset_clear(&qb->effective);
        cpuset_add(&qb->effective, 0);
        write_thread(4242, "irq/e", 10, 10);
        write_thread(4243, "irq/b", 10, 10);

        ASSERT_EQ(sampler_new(r, &s), 0);
        SamplerInput in = { .inv = inv, .cfg = cfg, .tenants = &t, .n_tenants = 1 };

        /* First sample: counters as read, no rates. */
        snprintf(rows, sizeof(rows), "%u 0 0 100 0; %u 0 0 0 1000; %u 0 0 10 0; %u 7 0 50 0", a, b, e, c);
        write_interrupts(rows, 10);
        write_softirqs_and_stat(1000, 100);
        write_softnet(0x1000, 3, 7);
        if (qa->thread > 0)
                write_thread(qa->thread, "irq/x", 10, 10);
        ASSERT_EQ(sampler_sample(s, &in, 1000000, 1700000000000000, &snap), 0);
        ASSERT_EQ(snap.period_usec, 0u);
        ASSERT_EQ(snap.timestamp_usec, 1700000000000000u);
        ASSERT(value_of(&snap, "sriovd_irq_interrupts_total", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, t.vf,
                        METRIC_LABEL_TENANT, "trader", METRIC_LABEL_CLASS, "latency-critical",
                        METRIC_LABEL_IRQ, irqbuf[0], METRIC_LABEL_CPU, "2", -1) == 100);
        ASSERT(isnan(value_of(&snap, "sriovd_irq_rate", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, t.vf,
                              METRIC_LABEL_TENANT, "trader", METRIC_LABEL_CLASS, "latency-critical",
                              METRIC_LABEL_IRQ, irqbuf[0], METRIC_LABEL_CPU, "2", -1)));
        ASSERT(isnan(value_of(&snap, "sriovd_rt_cpu_interference_rate", METRIC_LABEL_CPU, "2", -1)));
        ASSERT(value_of(&snap, "sriovd_softnet_processed_total", METRIC_LABEL_CPU, "2", -1) == 0x1000);
        ASSERT(value_of(&snap, "sriovd_softnet_dropped_total", METRIC_LABEL_CPU, "2", -1) == 3);
        ASSERT(isnan(value_of(&snap, "sriovd_softnet_dropped_rate", METRIC_LABEL_CPU, "2", -1)));
        ASSERT(isnan(value_of(&snap, "sriovd_rt_cpu_softnet_overload_rate", METRIC_LABEL_CPU, "2", -1)));
        /* Zero counts make no series: the PF's IRQ b never landed on CPU 2; c did on CPU 0. */
        for (size_t i = 0; i < snap.n_samples; i++)
                ASSERT(!streq_ptr(metric_sample_label(&snap.samples[i], METRIC_LABEL_IRQ), irqbuf[1]) ||
                       streq(metric_sample_label(&snap.samples[i], METRIC_LABEL_CPU), "3"));
        ASSERT(value_of(&snap, "sriovd_irq_interrupts_total", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF,
                        pf->vfs[1].addr, METRIC_LABEL_IRQ, (snprintf(rows, sizeof(rows), "%u", c), rows),
                        METRIC_LABEL_CPU, "0", -1) == 7);

        /* Two seconds later. */
        snprintf(rows, sizeof(rows), "%u 0 0 300 0; %u 0 0 0 500; %u 0 0 50 0; %u 0 0 20 0", a, b, e, d);
        write_interrupts(rows, 30);
        write_softirqs_and_stat(3000, 100 + 2 * (unsigned) hz);
        write_softnet(0x1000 + 4000, 3 + 10, 7 + 2);
        if (qa->thread > 0)
                write_thread(qa->thread, "irq/x", 10 + (unsigned) hz / 2, 10);
        /* Rewritten in place, as the kernel's file is: the fd the sampler kept reads the new times. */
        write_thread(4242, "irq/e", 10 + (unsigned) hz, 10);
        write_thread(4243, "irq/b", 10 + (unsigned) hz, 10);
        ASSERT_EQ(sampler_sample(s, &in, 3000000, 1700000002000000, &snap), 0);
        ASSERT_EQ(snap.period_usec, 2000000u);
        ASSERT(fabs(value_of(&snap, "sriovd_irq_thread_cpu_ratio", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_IRQ, irqbuf[2],
                             METRIC_LABEL_THREAD, "4242", -1) - 0.5) < 1e-9);
        ASSERT(!has_sample(&snap, "sriovd_irq_thread_cpu_ratio", METRIC_LABEL_THREAD, "4243"));
        /* (300 - 100) / 2 s */
        ASSERT(value_of(&snap, "sriovd_irq_rate", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, t.vf,
                        METRIC_LABEL_TENANT, "trader", METRIC_LABEL_CLASS, "latency-critical",
                        METRIC_LABEL_IRQ, irqbuf[0], METRIC_LABEL_CPU, "2", -1) == 100.0);
        /* The PF's IRQ: no VF, no tenant labels; its counter went down: the counter as read, no rate. */
        ASSERT(value_of(&snap, "sriovd_irq_interrupts_total", METRIC_LABEL_PF, pf->addr,
                        METRIC_LABEL_IRQ, irqbuf[1], METRIC_LABEL_CPU, "3", -1) == 500);
        ASSERT(isnan(value_of(&snap, "sriovd_irq_rate", METRIC_LABEL_PF, pf->addr,
                              METRIC_LABEL_IRQ, irqbuf[1], METRIC_LABEL_CPU, "3", -1)));
        /* The IRQ that disappeared has no series; the one that appeared has its count, no rate yet. */
        ASSERT(!has_sample(&snap, "sriovd_irq_rate", METRIC_LABEL_VF, pf->vfs[1].addr) ||
               isnan(value_of(&snap, "sriovd_irq_rate", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, pf->vfs[1].addr,
                              METRIC_LABEL_IRQ, irqbuf[3], METRIC_LABEL_CPU, "2", -1)));
        for (size_t i = 0; i < snap.n_samples; i++) {
                const char *irq = metric_sample_label(&snap.samples[i], METRIC_LABEL_IRQ);
                char cbuf[16];
                snprintf(cbuf, sizeof(cbuf), "%u", c);
                ASSERT(!irq || !streq(irq, cbuf));
        }
        ASSERT(value_of(&snap, "sriovd_irq_interrupts_total", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF,
                        pf->vfs[1].addr, METRIC_LABEL_IRQ, irqbuf[3], METRIC_LABEL_CPU, "2", -1) == 20);
        /* Interference on CPU 2: only e, (50 - 10) / 2; a is an RT tenant's, d is new. */
        ASSERT(value_of(&snap, "sriovd_rt_cpu_interference_rate", METRIC_LABEL_CPU, "2", -1) == 20.0);
        ASSERT(value_of(&snap, "sriovd_rt_cpu_interference_rate", METRIC_LABEL_CPU, "3", -1) == 0.0);
        ASSERT(!has_sample(&snap, "sriovd_rt_cpu_interference_rate", METRIC_LABEL_CPU, "0"));
        ASSERT(value_of(&snap, "sriovd_rt_cpu_arch_interrupt_rate", METRIC_LABEL_CPU, "2", METRIC_LABEL_IRQ, "LOC", -1) == 10.0);
        /* Softirqs and CPU time. */
        ASSERT(value_of(&snap, "sriovd_cpu_net_rx_softirq_rate", METRIC_LABEL_CPU, "2", -1) == 1000.0);
        ASSERT(value_of(&snap, "sriovd_cpu_net_rx_softirqs_total", METRIC_LABEL_CPU, "2", -1) == 3000);
        ASSERT(value_of(&snap, "sriovd_cpu_net_tx_softirq_rate", METRIC_LABEL_CPU, "2", -1) == 0.0);
        ASSERT(fabs(value_of(&snap, "sriovd_cpu_softirq_time_ratio", METRIC_LABEL_CPU, "2", -1) - 1.0) < 1e-9);
        ASSERT(value_of(&snap, "sriovd_cpu_irq_time_ratio", METRIC_LABEL_CPU, "2", -1) == 0.0);
        /* softnet_stat: 4000 packets, 10 drops and 2 squeezes in 2 s on CPU 2; the RT CPUs add drops and squeezes. */
        ASSERT(value_of(&snap, "sriovd_softnet_processed_rate", METRIC_LABEL_CPU, "2", -1) == 2000.0);
        ASSERT(value_of(&snap, "sriovd_softnet_dropped_rate", METRIC_LABEL_CPU, "2", -1) == 5.0);
        ASSERT(value_of(&snap, "sriovd_softnet_time_squeeze_rate", METRIC_LABEL_CPU, "2", -1) == 1.0);
        ASSERT(value_of(&snap, "sriovd_softnet_time_squeeze_total", METRIC_LABEL_CPU, "0", -1) == 1);
        ASSERT(value_of(&snap, "sriovd_softnet_dropped_rate", METRIC_LABEL_CPU, "0", -1) == 0.0);
        ASSERT(value_of(&snap, "sriovd_rt_cpu_softnet_overload_rate", METRIC_LABEL_CPU, "2", -1) == 6.0);
        ASSERT(value_of(&snap, "sriovd_rt_cpu_softnet_overload_rate", METRIC_LABEL_CPU, "3", -1) == 0.0);
        ASSERT(!has_sample(&snap, "sriovd_rt_cpu_softnet_overload_rate", METRIC_LABEL_CPU, "0"));
        if (qa->thread > 0) {
                char pid[16];
                snprintf(pid, sizeof(pid), "%d", (int) qa->thread);
                ASSERT(fabs(value_of(&snap, "sriovd_irq_thread_cpu_ratio", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF,
                                     t.vf, METRIC_LABEL_TENANT, "trader", METRIC_LABEL_CLASS, "latency-critical",
                                     METRIC_LABEL_IRQ, irqbuf[0], METRIC_LABEL_THREAD, pid, -1) - 0.25) < 1e-9);
        }
        /* The pool: one of the PF's VFs held. */
        ASSERT(value_of(&snap, "sriovd_vf_pool_allocated", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_NODE,
                        pf->numa_node >= 0 ? (char[]) { (char) ('0' + pf->numa_node), 0 } : "unknown", -1) == 1);
        ASSERT(value_of(&snap, "sriovd_vf_target_utilization_ratio", -1) == 0.85);

        /* A third sample: b counts on from its reset; the rate is back. */
        snprintf(rows, sizeof(rows), "%u 0 0 300 0; %u 0 0 0 900; %u 0 0 50 0; %u 0 0 20 0", a, b, e, d);
        write_interrupts(rows, 30);
        ASSERT_EQ(sampler_sample(s, &in, 7000000, 1700000006000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_irq_rate", METRIC_LABEL_PF, pf->addr,
                        METRIC_LABEL_IRQ, irqbuf[1], METRIC_LABEL_CPU, "3", -1) == 100.0);
        ASSERT(value_of(&snap, "sriovd_irq_rate", METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, pf->vfs[1].addr,
                        METRIC_LABEL_IRQ, irqbuf[3], METRIC_LABEL_CPU, "2", -1) == 0.0);

        test_traffic(inv, cfg, r, &t);
        test_latency(r, dir);
        test_manager_period_has_its_alerts(dir);

        /* A /proc/interrupts that does not parse fails the sample and keeps the baseline. */
        {
                char path[600];
                snprintf(path, sizeof(path), "%s/proc/interrupts", root);
                test_write_file(path, "garbage\n");
                ASSERT(sampler_sample(s, &in, 8000000, 1700000007000000, &snap) < 0);
                ASSERT_EQ(snap.period_usec, 4000000u);   /* the last good one is left as it was */
        }

        /* The page: HELP and TYPE, counters as counters, NaN gauges left out. */
        ASSERT_EQ(sampler_prom_page(&snap, &page, &size), 0);
        ASSERT_CONTAINS(page, "# TYPE sriovd_irq_interrupts_total counter\n");
        ASSERT_CONTAINS(page, "# TYPE sriovd_irq_rate gauge\n");
        ASSERT_CONTAINS(page, "# HELP sriovd_rt_cpu_interference_rate ");
        ASSERT(!strstr(page, "NaN"));
        for (size_t i = 0; i < snap.n_samples; i++)
                ASSERT(sampler_family_help(snap.samples[i].name));

        why = argc > 2 && streq(argv[2], "export") ? run_export(dir, page, size) : NULL;
        sh("rm -rf %s", dir);
        inventory_free(inv);
        config_free(cfg);
        if (why) {
                printf("SKIP: %s\n", why);
                return EXIT_TEST_SKIP;
        }
        return 0;
}

/*
 * The page as node_exporter's textfile collector reads it: promtool's lint, then a real
 * prometheus-node-exporter on loopback (a free port, the collector pointed at dir/textfile),
 * scraped; every sriovd family must come back. NULL when it ran, else why not.
 */
static const char *run_export(const char *dir, const char *page, size_t size) {
        char path[600], cmd[2048];
        pid_t pid;
        int port = 0, status;

        if (system("command -v promtool >/dev/null") != 0)
                return "promtool not installed (Debian package prometheus)";
        if (system("command -v prometheus-node-exporter >/dev/null") != 0)
                return "prometheus-node-exporter not installed";
        if (system("command -v curl >/dev/null") != 0)
                return "curl not installed";

        sh("mkdir -p %s/textfile", dir);
        snprintf(path, sizeof(path), "%s/textfile/sriovd.prom", dir);
        ASSERT_EQ(metrics_file_write(path, page, size), 0);
        sh("promtool check metrics < %s", path);
        /* The latency page of test_latency(): a histogram family, its gauges and sriovd_bpf_available. */
        sh("promtool check metrics < %s/latency.prom", dir);

        /* A free port: bind 0, read it back, let it go; node_exporter takes it right after. */
        {
                FILE *f = popen("python3 -c 'import socket; s=socket.socket(); s.bind((\"127.0.0.1\", 0)); "
                                "print(s.getsockname()[1])'", "r");
                ASSERT(f && fscanf(f, "%d", &port) == 1);
                pclose(f);
        }
        pid = fork();
        ASSERT(pid >= 0);
        if (pid == 0) {
                char listen[64], textdir[600];
                snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
                snprintf(textdir, sizeof(textdir), "--collector.textfile.directory=%s/textfile", dir);
                execlp("prometheus-node-exporter", "prometheus-node-exporter", "--collector.disable-defaults",
                       "--collector.textfile", textdir, listen, (char *) NULL);
                _exit(127);
        }
        snprintf(cmd, sizeof(cmd),
                 "for i in $(seq 50); do curl -sf http://127.0.0.1:%d/metrics > %s/scraped && exit 0; sleep 0.1; done; exit 1",
                 port, dir);
        status = system(cmd);
        kill(pid, SIGTERM);
        waitpid(pid, NULL, 0);
        ASSERT_EQ(status, 0);
        /* node_exporter found no error in the file, and serves sriovd's samples as they were. */
        sh("grep -q '^node_textfile_scrape_error 0' %s/scraped", dir);
        sh("grep -q '^# TYPE sriovd_irq_interrupts_total counter' %s/scraped", dir);
        sh("grep -q '^sriovd_rt_cpu_interference_rate{cpu=\"2\"} 0' %s/scraped", dir);
        sh("grep -q '^sriovd_cpu_net_rx_softirqs_total{cpu=\"2\"} 3000' %s/scraped", dir);
        printf("promtool and node_exporter on 127.0.0.1:%d took the page (%zu bytes)\n", port, size);
        return NULL;
}

static VfCounters counters(uint64_t rx, uint64_t tx, uint64_t rx_drop, uint64_t tx_drop, uint32_t have) {
        return (VfCounters) { .rx_packets = rx, .tx_packets = tx, .rx_bytes = rx * 100, .tx_bytes = tx * 100,
                              .rx_dropped = rx_drop, .tx_dropped = tx_drop, .have = have };
}

/*
 * VF and netdev traffic from known counter deltas, as the daemon's rtnetlink reads give them:
 * VF 0 (the tenant's) counted by its PF; VF 1 with the PF's zeros and traffic on its host
 * netdev (igb), taken from there; a VF reset; VF 1's source changing; the PF's own netdev.
 */
static void test_traffic(Inventory *inv, const Config *cfg, RootFs *r, const TenantInfo *t) {
        _cleanup_(metric_snapshot_done) MetricSnapshot snap = {};
        _cleanup_(sampler_freep) Sampler *s = NULL;
        _cleanup_free_ char *page = NULL;
        Pf *pf = &inv->pfs[0];
        const char *vf0 = pf->vfs[0].addr, *vf1 = pf->vfs[1].addr;
        const uint32_t all = 0xff, s64 = 0xff & ~VF_COUNTER_BROADCAST;
        VfStats vfs[2] = { { .vf = pf->vfs[0].index }, { .vf = pf->vfs[1].index } };
        NetdevStats pfs = { .ifindex = 10, .vfs = vfs, .n_vfs = 2 };
        NetdevStats dump[3] = { { .ifindex = 10 }, { .ifindex = 20 }, { .ifindex = 21 } };
        SamplerInput in = { .inv = inv, .cfg = cfg, .tenants = t, .n_tenants = 1,
                            .pf_stats = &pfs, .n_pf_stats = 1, .netdevs = dump, .n_netdevs = 3 };
        int saved[3] = { pf->ifindex, pf->vfs[0].ifindex, pf->vfs[1].ifindex };
        char rows[64];
        size_t size;

#define VF0(name) METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, vf0, METRIC_LABEL_TENANT, "trader", \
                  METRIC_LABEL_CLASS, "latency-critical", -1
#define VF1(name) METRIC_LABEL_PF, pf->addr, METRIC_LABEL_VF, vf1, -1
        ASSERT(vfs[0].vf < vfs[1].vf);
        pf->ifindex = 10;
        pf->vfs[0].ifindex = 20;   /* bound on the host too: its netdev has its own series */
        pf->vfs[1].ifindex = 21;
        snprintf(rows, sizeof(rows), "%u 0 0 1 0", pf->irqs[0]);
        write_interrupts(rows, 1);
        ASSERT_EQ(sampler_new(r, &s), 0);

        /* First period: the counters as read, no rates; VF 1's from its netdev. */
        vfs[0].counters = counters(1000, 500, 10, 20, all);
        vfs[1].counters = counters(0, 0, 0, 0, all);
        dump[0].netdev = counters(5000, 4000, 0, 0, s64);
        dump[1].netdev = counters(7, 7, 0, 0, s64);
        dump[2].netdev = counters(300, 100, 1, 0, s64);
        ASSERT_EQ(sampler_sample(s, &in, 1000000, 1700000000000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_vf_rx_packets_total", VF0()) == 1000);
        ASSERT(value_of(&snap, "sriovd_vf_tx_bytes_total", VF0()) == 50000);
        ASSERT(isnan(value_of(&snap, "sriovd_vf_rx_packet_rate", VF0())));
        ASSERT(isnan(value_of(&snap, "sriovd_vf_drop_rate", VF0())));
        ASSERT(value_of(&snap, "sriovd_vf_stats_from_netdev", VF0()) == 0);
        ASSERT(value_of(&snap, "sriovd_vf_stats_from_netdev", VF1()) == 1);
        ASSERT(value_of(&snap, "sriovd_vf_rx_packets_total", VF1()) == 300);
        ASSERT(value_of(&snap, "sriovd_netdev_rx_packets_total", METRIC_LABEL_PF, pf->addr, -1) == 5000);
        ASSERT(value_of(&snap, "sriovd_netdev_tx_packets_total", VF0()) == 7);

        /* Two seconds later: (1200 - 1000) / 2 s, drops (14 - 10 + 22 - 20) / 2 s. */
        vfs[0].counters = counters(1200, 700, 14, 22, all);
        dump[0].netdev = counters(5100, 4000, 0, 0, s64);
        dump[2].netdev = counters(300, 150, 1, 0, s64);
        ASSERT_EQ(sampler_sample(s, &in, 3000000, 1700000002000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_vf_rx_packet_rate", VF0()) == 100.0);
        ASSERT(value_of(&snap, "sriovd_vf_tx_packet_rate", VF0()) == 100.0);
        ASSERT(value_of(&snap, "sriovd_vf_rx_byte_rate", VF0()) == 10000.0);
        ASSERT(value_of(&snap, "sriovd_vf_drop_rate", VF0()) == 3.0);
        ASSERT(value_of(&snap, "sriovd_vf_tx_packet_rate", VF1()) == 25.0);
        ASSERT(value_of(&snap, "sriovd_vf_drop_rate", VF1()) == 0.0);
        ASSERT(value_of(&snap, "sriovd_netdev_tx_packet_rate", VF1()) == 25.0);
        ASSERT(value_of(&snap, "sriovd_netdev_rx_packet_rate", METRIC_LABEL_PF, pf->addr, -1) == 50.0);
        ASSERT(value_of(&snap, "sriovd_netdev_rx_packet_rate", VF0()) == 0.0);

        /* VF 0 reset (its counters went down): no rate this period. VF 1's PF counts now: the
         * source changed, no rate either; the netdev's own series is unaffected. */
        vfs[0].counters = counters(5, 5, 0, 0, all);
        vfs[1].counters = counters(10, 10, 0, 0, all);
        dump[2].netdev = counters(300, 170, 1, 0, s64);
        ASSERT_EQ(sampler_sample(s, &in, 5000000, 1700000004000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_vf_rx_packets_total", VF0()) == 5);
        ASSERT(isnan(value_of(&snap, "sriovd_vf_rx_packet_rate", VF0())));
        ASSERT(isnan(value_of(&snap, "sriovd_vf_drop_rate", VF0())));
        ASSERT(value_of(&snap, "sriovd_vf_stats_from_netdev", VF1()) == 0);
        ASSERT(isnan(value_of(&snap, "sriovd_vf_tx_packet_rate", VF1())));
        ASSERT(value_of(&snap, "sriovd_netdev_tx_packet_rate", VF1()) == 10.0);

        /* And back: both VFs have rates again. */
        vfs[0].counters = counters(25, 5, 0, 0, all);
        vfs[1].counters = counters(10, 30, 0, 0, all);
        ASSERT_EQ(sampler_sample(s, &in, 7000000, 1700000006000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_vf_rx_packet_rate", VF0()) == 10.0);
        ASSERT(value_of(&snap, "sriovd_vf_tx_packet_rate", VF1()) == 10.0);

        /* A kernel without the drop counters (before 4.20): no drop rate, not a zero. */
        vfs[0].counters = counters(45, 5, 0, 0, all & ~(VF_COUNTER_RX_DROPPED | VF_COUNTER_TX_DROPPED));
        ASSERT_EQ(sampler_sample(s, &in, 9000000, 1700000008000000, &snap), 0);
        ASSERT(isnan(value_of(&snap, "sriovd_vf_drop_rate", VF0())));
        ASSERT(isnan(value_of(&snap, "sriovd_vf_rx_dropped_total", VF0())));
        ASSERT(value_of(&snap, "sriovd_vf_rx_packet_rate", VF0()) == 10.0);

        /* Nothing read (a fixture root, netlink down): no traffic series at all. */
        in.pf_stats = NULL, in.n_pf_stats = 0, in.netdevs = NULL, in.n_netdevs = 0;
        ASSERT_EQ(sampler_sample(s, &in, 11000000, 1700000010000000, &snap), 0);
        ASSERT(!has_sample(&snap, "sriovd_vf_rx_packets_total", METRIC_LABEL_VF, vf0));
        ASSERT(!has_sample(&snap, "sriovd_netdev_rx_packets_total", METRIC_LABEL_PF, pf->addr));
        in.pf_stats = &pfs, in.n_pf_stats = 1, in.netdevs = dump, in.n_netdevs = 3;
        ASSERT_EQ(sampler_sample(s, &in, 13000000, 1700000012000000, &snap), 0);
        /* After a period without, the counters are a new first sample. */
        ASSERT(isnan(value_of(&snap, "sriovd_vf_rx_packet_rate", VF0())));

        ASSERT_EQ(sampler_prom_page(&snap, &page, &size), 0);
        ASSERT_CONTAINS(page, "# TYPE sriovd_vf_rx_packets_total counter\n");
        ASSERT_CONTAINS(page, "# TYPE sriovd_vf_drop_rate gauge\n");
        ASSERT(!strstr(page, "NaN"));
        for (size_t i = 0; i < snap.n_samples; i++)
                ASSERT(sampler_family_help(snap.samples[i].name));
#undef VF0
#undef VF1
        pf->ifindex = saved[0];
        pf->vfs[0].ifindex = saved[1];
        pf->vfs[1].ifindex = saved[2];
}

/* A thread's histogram: n samples of each latency in ns of lat, which ends with 0. */
static LatencyThread lthread(pid_t tid, const char *kind, const char *tenant, const char *cls, const unsigned *n,
                             const uint64_t *lat) {
        LatencyThread t = { .tid = tid, .kind = kind, .have_hist = true };

        strscpy(t.tenant, sizeof(t.tenant), tenant);
        strscpy(t.class_name, sizeof(t.class_name), cls);
        for (size_t i = 0; lat[i]; i++) {
                t.hist.slots[latency_slot(lat[i])] += n[i];
                t.hist.count += n[i];
                t.hist.sum_ns += n[i] * lat[i];
        }
        return t;
}

static void write_schedstat(pid_t tid, uint64_t run, uint64_t wait, uint64_t slices) {
        char path[600], text[128];

        sh("mkdir -p %s/proc/%d", root, (int) tid);
        snprintf(text, sizeof(text), "%" PRIu64 " %" PRIu64 " %" PRIu64 "\n", run, wait, slices);
        snprintf(path, sizeof(path), "%s/proc/%d/schedstat", root, (int) tid);
        test_write_file(path, text);
}

#define VCPU_LABELS METRIC_LABEL_TENANT, "rt-1", METRIC_LABEL_CLASS, "rt-vcpu", METRIC_LABEL_KIND, "vcpu"

/*
 * The latency families from fake BPF histograms, period by period: the cumulative histogram per
 * tenant, class and kind at the octave edges, the period's p99, p99.9 and mean; a thread tracked
 * anew; then the schedstat fallback from fixture files, with its mean only.
 */
static void test_latency(RootFs *r, const char *dir) {
        _cleanup_(metric_snapshot_done) MetricSnapshot snap = {};
        _cleanup_(sampler_freep) Sampler *s = NULL;
        _cleanup_free_ char *page = NULL;
        LatencyThread th[4];
        char path[600];
        size_t size;

        ASSERT_EQ(sampler_new(r, &s), 0);
        /* Period 1: vCPU 100 woke 99 times at 2 us and once at 50 ms; ksoftirqd 300 once at 1.5 us. */
        th[0] = lthread(100, "vcpu", "rt-1", "rt-vcpu", (unsigned[]) { 99, 1 }, (uint64_t[]) { 2000, 50000000, 0 });
        th[1] = lthread(300, "ksoftirqd", "", "", (unsigned[]) { 1 }, (uint64_t[]) { 1500, 0 });
        SamplerInput in = { .latency_source = LATENCY_SOURCE_BPF, .latency = th, .n_latency = 2, .have_bpf = true,
                            .bpf_available = { [BPF_FEATURE_LATENCY] = true } };
        ASSERT_EQ(sampler_sample(s, &in, 1000000, 1700000000000000, &snap), 0);
        /* 2 us is in octave 1 (2.048 us is its end, 2^11 ns); 50 ms lies past 2^25 ns = 0.033554432 s. */
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_bucket", VCPU_LABELS, METRIC_LABEL_LE, "0.000001024", -1) == 0);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_bucket", VCPU_LABELS, METRIC_LABEL_LE, "0.000002048", -1) == 99);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_bucket", VCPU_LABELS, METRIC_LABEL_LE, "0.033554432", -1) == 99);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_bucket", VCPU_LABELS, METRIC_LABEL_LE, "0.067108864", -1) == 100);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_bucket", VCPU_LABELS, METRIC_LABEL_LE, "+Inf", -1) == 100);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_count", VCPU_LABELS, -1) == 100);
        ASSERT(fabs(value_of(&snap, "sriovd_thread_latency_seconds_sum", VCPU_LABELS, -1) - 0.050198) < 1e-12);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_count", METRIC_LABEL_KIND, "ksoftirqd", -1) == 1);
        /* The 99th of 100 samples is the last at 2 us: within its slot, 1.792..2.048 us. */
        {
                double p99 = value_of(&snap, "sriovd_thread_latency_p99_seconds", VCPU_LABELS, METRIC_LABEL_SOURCE, "bpf", -1);
                double p999 = value_of(&snap, "sriovd_thread_latency_p999_seconds", VCPU_LABELS, METRIC_LABEL_SOURCE, "bpf", -1);
                ASSERT(p99 >= 1.792e-6 && p99 <= 2.048e-6);
                /* The 99.9th is the 50 ms sample, within 25%. */
                ASSERT(p999 >= 0.04 && p999 <= 0.0625);
        }
        ASSERT(fabs(value_of(&snap, "sriovd_thread_latency_mean_seconds", VCPU_LABELS, METRIC_LABEL_SOURCE, "bpf", -1) -
                    0.00050198) < 1e-12);
        ASSERT(value_of(&snap, "sriovd_bpf_available", METRIC_LABEL_FEATURE, "latency", -1) == 1);
        ASSERT(value_of(&snap, "sriovd_bpf_available", METRIC_LABEL_FEATURE, "drift", -1) == 0);

        /* Period 2: vCPU 100 only 10 more at 2 us; vCPU 101 is new with 5 at 100 ms; ksoftirqd did not run. */
        th[0] = lthread(100, "vcpu", "rt-1", "rt-vcpu", (unsigned[]) { 109, 1 }, (uint64_t[]) { 2000, 50000000, 0 });
        th[2] = lthread(101, "vcpu", "rt-1", "rt-vcpu", (unsigned[]) { 5 }, (uint64_t[]) { 100000000, 0 });
        th[3] = th[1];
        in.latency = th;
        in.n_latency = 4;
        th[1] = th[0];   /* the same thread listed twice counts once */
        ASSERT_EQ(sampler_sample(s, &in, 6000000, 1700000005000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_count", VCPU_LABELS, -1) == 115);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_bucket", VCPU_LABELS, METRIC_LABEL_LE, "0.000002048", -1) == 109);
        /* This period's 15 samples: 10 at 2 us and 5 at 100 ms, so the p99 is in 100 ms's slot. */
        {
                double p99 = value_of(&snap, "sriovd_thread_latency_p99_seconds", VCPU_LABELS, METRIC_LABEL_SOURCE, "bpf", -1);
                ASSERT(p99 >= 0.09 && p99 <= 0.125);
        }
        /* The ksoftirqd had no wakeup: no percentile this period, and its counts stay. */
        ASSERT(isnan(value_of(&snap, "sriovd_thread_latency_p99_seconds", METRIC_LABEL_KIND, "ksoftirqd",
                              METRIC_LABEL_SOURCE, "bpf", -1)));
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_count", METRIC_LABEL_KIND, "ksoftirqd", -1) == 1);

        /* Period 3: vCPU 101 was tracked anew and counts from zero again: its 2 samples are new. */
        th[2] = lthread(101, "vcpu", "rt-1", "rt-vcpu", (unsigned[]) { 2 }, (uint64_t[]) { 3000, 0 });
        ASSERT_EQ(sampler_sample(s, &in, 11000000, 1700000010000000, &snap), 0);
        ASSERT(value_of(&snap, "sriovd_thread_latency_seconds_count", VCPU_LABELS, -1) == 117);

        /* The page: one histogram family, each series whole, buckets in order of le with +Inf last. */
        ASSERT_EQ(sampler_prom_page(&snap, &page, &size), 0);
        ASSERT_CONTAINS(page, "# TYPE sriovd_thread_latency_seconds histogram\n");
        ASSERT(strstr(page, "# TYPE sriovd_thread_latency_seconds ") == strrchr(strstr(page, "# TYPE sriovd_thread_latency_seconds "), '#'));
        ASSERT_CONTAINS(page, "sriovd_thread_latency_seconds_bucket{kind=\"ksoftirqd\",le=\"+Inf\"} 1\n"
                              "sriovd_thread_latency_seconds_sum{kind=\"ksoftirqd\"} 1.5e-06\n"
                              "sriovd_thread_latency_seconds_count{kind=\"ksoftirqd\"} 1\n");
        ASSERT_CONTAINS(page, "sriovd_thread_latency_seconds_bucket{tenant=\"rt-1\",class=\"rt-vcpu\",kind=\"vcpu\",le=\"0.000001024\"} 0\n"
                              "sriovd_thread_latency_seconds_bucket{tenant=\"rt-1\",class=\"rt-vcpu\",kind=\"vcpu\",le=\"0.000002048\"} 109\n");
        ASSERT_CONTAINS(page, "sriovd_thread_latency_seconds_bucket{tenant=\"rt-1\",class=\"rt-vcpu\",kind=\"vcpu\",le=\"8.589934592\"} 117\n"
                              "sriovd_thread_latency_seconds_bucket{tenant=\"rt-1\",class=\"rt-vcpu\",kind=\"vcpu\",le=\"+Inf\"} 117\n"
                              "sriovd_thread_latency_seconds_sum{tenant=\"rt-1\",class=\"rt-vcpu\",kind=\"vcpu\"} ");
        ASSERT_CONTAINS(page, "sriovd_bpf_available{feature=\"latency\"} 1\n");
        snprintf(path, sizeof(path), "%s/latency.prom", dir);
        ASSERT_EQ(metrics_file_write(path, page, size), 0);

        /* The fallback: /proc/TID/schedstat under the root. The first period is the baseline. */
        _cleanup_(sampler_freep) Sampler *f = NULL;
        ASSERT_EQ(sampler_new(r, &f), 0);
        th[0] = (LatencyThread) { .tid = 4300, .kind = "irq", .tenant = "rt-1", .class_name = "rt-vcpu" };
        th[1] = (LatencyThread) { .tid = 4301, .kind = "irq", .tenant = "rt-1", .class_name = "rt-vcpu" };
        th[2] = (LatencyThread) { .tid = 4302, .kind = "irq", .tenant = "rt-1", .class_name = "rt-vcpu" };   /* no file */
        in = (SamplerInput) { .latency_source = LATENCY_SOURCE_SCHEDSTAT, .latency = th, .n_latency = 3, .have_bpf = true };
        write_schedstat(4300, 1000, 5000000, 10);
        write_schedstat(4301, 1000, 0, 0);
        ASSERT_EQ(sampler_sample(f, &in, 1000000, 1700000000000000, &snap), 0);
        ASSERT(isnan(value_of(&snap, "sriovd_thread_latency_mean_seconds", METRIC_LABEL_TENANT, "rt-1", METRIC_LABEL_CLASS,
                              "rt-vcpu", METRIC_LABEL_KIND, "irq", METRIC_LABEL_SOURCE, "schedstat", -1)));
        ASSERT(value_of(&snap, "sriovd_bpf_available", METRIC_LABEL_FEATURE, "latency", -1) == 0);
        /* 3 ms over 3 timeslices and 1 ms over 1: a mean wait of 1 ms per timeslice. */
        write_schedstat(4300, 2000, 8000000, 13);
        write_schedstat(4301, 2000, 1000000, 1);
        ASSERT_EQ(sampler_sample(f, &in, 6000000, 1700000005000000, &snap), 0);
        ASSERT(fabs(value_of(&snap, "sriovd_thread_latency_mean_seconds", METRIC_LABEL_TENANT, "rt-1", METRIC_LABEL_CLASS,
                             "rt-vcpu", METRIC_LABEL_KIND, "irq", METRIC_LABEL_SOURCE, "schedstat", -1) - 0.001) < 1e-12);
        /* No percentile and no histogram come from schedstat. */
        ASSERT(!has_sample(&snap, "sriovd_thread_latency_p99_seconds", METRIC_LABEL_KIND, "irq"));
        ASSERT(!has_sample(&snap, "sriovd_thread_latency_seconds_count", METRIC_LABEL_KIND, "irq"));
        /* A TID reused by another thread has counters that went down: no figure, then a new baseline. */
        write_schedstat(4300, 10, 10, 1);
        write_schedstat(4301, 2000, 1000000, 1);
        ASSERT_EQ(sampler_sample(f, &in, 11000000, 1700000010000000, &snap), 0);
        ASSERT(isnan(value_of(&snap, "sriovd_thread_latency_mean_seconds", METRIC_LABEL_TENANT, "rt-1", METRIC_LABEL_CLASS,
                              "rt-vcpu", METRIC_LABEL_KIND, "irq", METRIC_LABEL_SOURCE, "schedstat", -1)));
}
