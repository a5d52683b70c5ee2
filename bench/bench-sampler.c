/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-sampler.c — one sampling period on the large host, against a bare read-and-parse of the same /proc files */

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sriovd/core/counters.h"
#include "sriovd/core/inventory.h"
#include "sriovd/core/metrics.h"
#include "sriovd/kernel/proc-counters.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/kernel/sriov.h"
#include "base/log.h"
#include "manager/manager.h"
#include "bench-util.h"

#define PERIOD_SEC 5

static void help(void) {
        printf("Usage: bench-sampler [OPTIONS] MKHOST\n\n"
               "CPU time of one sampling period (monitor_interval_sec) on the 'large' fixture host\n"
               "(%u PFs x %u VFs, %u IRQs per VF, irq/N- threads), the Prometheus file included, against a\n"
               "bare loop that reads the same /proc files and parses them with the same parsers: the three\n"
               "tables, and the stat files of the threads the sampler reads (those on the RT CPUs), through\n"
               "fds held open as the sampler holds them; and the same loop opening each thread's file by path.\n\n"
               "  -n, --iterations N  measured iterations (default 20, or $SRIOVD_BENCH_ITERATIONS)\n"
               "  -w, --warmup N      unmeasured warm-up iterations (default 1)\n"
               "  --python PATH       interpreter for MKHOST (default python3)\n"
               "  --root DIR          use this existing tree (it gets /proc/softirqs, /proc/stat, task/ files)\n",
               BENCH_HOST_PFS, BENCH_HOST_VFS, BENCH_HOST_VF_IRQS);
}

/* The large tree has /proc/interrupts and the threads' stat; a kernel also has these. */
static int complete_tree(const char *root, unsigned n_cpus) {
        char path[PATH_MAX + 32], cmd[PATH_MAX + 256];
        static const char *const softirqs[] = { "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL",
                                                "TASKLET", "SCHED", "HRTIMER", "RCU" };
        FILE *f;

        snprintf(path, sizeof(path), "%s/proc/softirqs", root);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "                ");
        for (unsigned c = 0; c < n_cpus; c++)
                fprintf(f, "CPU%-8u", c);
        fprintf(f, "\n");
        for (size_t i = 0; i < ELEMENTSOF(softirqs); i++) {
                fprintf(f, "%12s:", softirqs[i]);
                for (unsigned c = 0; c < n_cpus; c++)
                        fprintf(f, " %10u", 123456u + c * 7);
                fprintf(f, "\n");
        }
        fclose(f);
        snprintf(path, sizeof(path), "%s/proc/stat", root);
        f = fopen(path, "we");
        if (!f)
                return -errno;
        fprintf(f, "cpu  1 2 3 4 5 6 7 8 0 0\n");
        for (unsigned c = 0; c < n_cpus; c++)
                fprintf(f, "cpu%u 123456 12 34567 9876543 123 456 789 0 0 0\n", c);
        fprintf(f, "intr 0\nctxt 1\nbtime 1\nprocesses 1\nprocs_running 1\nprocs_blocked 0\nsoftirq 0\n");
        fclose(f);
        /* Kernel threads are their own only task: /proc/PID/task/PID/stat is /proc/PID/stat. */
        snprintf(cmd, sizeof(cmd), "cd '%s/proc' && for p in [0-9]*; do mkdir -p $p/task/$p && cp $p/stat $p/task/$p/stat; done",
                 root);
        return system(cmd) == 0 ? 0 : -EIO;
}

/*
 * The floor: read and parse the files the sampler reads, with nothing attributed, kept or
 * exported. The tables are opened, read to EOF and closed; the threads' stat files are read the
 * way the sampler reads them, through fds held open (fds[i] >= 0), or by path (fds NULL).
 */
static int floor_once(RootFs *root, const pid_t *threads, const int *fds, size_t n_threads, size_t *ret_samples) {
        CounterTable t = {};
        size_t n = 0;
        int r;

        r = proc_interrupts_read(root, &t);
        if (r < 0)
                return r;
        n += t.n_rows * t.n_cpus;
        counter_table_done(&t);
        r = proc_softirqs_read(root, &t);
        if (r < 0)
                return r;
        n += t.n_rows * t.n_cpus;
        counter_table_done(&t);
        r = proc_cpu_times_read(root, &t);
        if (r < 0)
                return r;
        n += t.n_rows * t.n_cpus;
        counter_table_done(&t);
        for (size_t i = 0; i < n_threads; i++) {
                ThreadTimes tt;
                if ((fds ? proc_thread_times_reread(fds[i], threads[i], threads[i], &tt)
                         : proc_thread_times_read(root, threads[i], threads[i], &tt)) >= 0)
                        n++;
        }
        *ret_samples = n;
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static double cpu_now(void) {
        double u, s;
        bench_cpu_ms(&u, &s);
        return u + s;
}

/* The threads whose times the sampler read in its last period: those its snapshot has a series of. */
static size_t snapshot_threads(const MetricSnapshot *snap, pid_t *ret) {
        size_t n = 0;

        for (size_t i = 0; snap && i < snap->n_samples; i++) {
                const char *t = metric_sample_label(&snap->samples[i], METRIC_LABEL_THREAD);
                if (t && (streq(snap->samples[i].name, "sriovd_irq_thread_cpu_ratio") ||
                          streq(snap->samples[i].name, "sriovd_ksoftirqd_cpu_ratio")))
                        ret[n++] = (pid_t) atoi(t);
        }
        return n;
}

enum { W_SAMPLER, W_FLOOR, W_FLOOR_PATH, _W_MAX };

int main(int argc, char **argv) {
        static const char *const names[_W_MAX] = {
                [W_SAMPLER] = "sampler period (+ file):",
                [W_FLOOR] = "floor: read + parse (held fds):",
                [W_FLOOR_PATH] = "floor, threads by path:",
        };
        char tmp[PATH_MAX] = "", root[PATH_MAX], conf[PATH_MAX], text[PATH_MAX + 128];
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(rootfs_freep) RootFs *rfs = NULL;
        _cleanup_free_ pid_t *threads = NULL;
        _cleanup_free_ int *fds = NULL;
        double *cpu_ms[_W_MAX] = {}, *wall_ms[_W_MAX] = {};
        const Inventory *inv;
        const MetricSnapshot *snap;
        BenchOptions o = {};
        CycleResult res;
        size_t n_threads = 0, n_irq_threads = 0, floor_samples = 0;
        double gen_ms = 0;
        int r, ret = EXIT_FAILURE;
        FILE *f;

        r = bench_parse_argv(argc, argv, "bench-sampler", 1, help, &o);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);

        r = bench_mkdtemp(tmp, sizeof(tmp));
        if (r < 0) {
                fprintf(stderr, "bench-sampler: cannot make a temporary directory: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        if (o.root)
                snprintf(root, sizeof(root), "%s", o.root);
        else {
                snprintf(root, sizeof(root), "%s/root", tmp);
                r = bench_mkhost_large(o.python, o.mkhost, root, &gen_ms);
                if (r < 0) {
                        fprintf(stderr, "bench-sampler: %s %s large failed: %s\n", o.python, o.mkhost, strerror(-r));
                        goto finish;
                }
        }

        /* The metrics file on the same tmpfs as the tree: its write is part of a period. */
        snprintf(conf, sizeof(conf), "%s/sriovd.conf", tmp);
        snprintf(text, sizeof(text), "[daemon]\nmonitor_interval_sec = %d\nmetrics_file = %s/sriovd.prom\n", PERIOD_SEC, tmp);
        f = fopen(conf, "we");
        if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
                fprintf(stderr, "bench-sampler: cannot write %s\n", conf);
                goto finish;
        }
        r = manager_new(root, conf, &m);
        if (r >= 0)
                r = manager_load_config(m);
        if (r >= 0)
                r = manager_cycle(m, CYCLE_DRY_RUN, &res);
        if (r < 0) {
                fprintf(stderr, "bench-sampler: the daemon cannot read %s: %s\n", root, strerror(-r));
                goto finish;
        }
        inv = manager_inventory(m);
        r = complete_tree(root, (unsigned) cpuset_count(&inv->topo.online));
        if (r < 0) {
                fprintf(stderr, "bench-sampler: cannot add /proc files to %s: %s\n", root, strerror(-r));
                goto finish;
        }
        for (size_t i = 0; i < inv->n_irqs; i++)
                n_irq_threads += inv->irqs[i].thread > 0;

        /* A first period, untimed: the baseline, and which threads the sampler reads (those on
         * the RT CPUs), so that the floor reads the same files. */
        r = manager_sample_now(m);
        if (r < 0) {
                fprintf(stderr, "bench-sampler: the sampler failed: %s\n", strerror(-r));
                goto finish;
        }
        snap = manager_metrics(m);
        threads = calloc(MAX(snap ? snap->n_samples : 0, (size_t) 1), sizeof(*threads));
        if (!threads)
                goto finish;
        n_threads = snapshot_threads(snap, threads);
        r = rootfs_new(root, NULL, &rfs);
        if (r < 0)
                goto finish;
        fds = calloc(MAX(n_threads, (size_t) 1), sizeof(*fds));
        if (!fds)
                goto finish;
        for (size_t i = 0; i < n_threads; i++) {
                fds[i] = proc_thread_times_open(rfs, threads[i], threads[i]);
                if (fds[i] < 0) {
                        fprintf(stderr, "bench-sampler: cannot open thread %d's stat: %s\n", (int) threads[i],
                                strerror(-fds[i]));
                        goto finish;
                }
        }

        for (unsigned w = 0; w < _W_MAX; w++) {
                cpu_ms[w] = calloc(o.iterations, sizeof(double));
                wall_ms[w] = calloc(o.iterations, sizeof(double));
                if (!cpu_ms[w] || !wall_ms[w])
                        goto finish;
        }

        for (unsigned i = 0; i < o.warmup + o.iterations; i++) {
                /* Interleaved, the order rotated every iteration, so none always gets the warmer cache. */
                for (unsigned k = 0; k < _W_MAX; k++) {
                        unsigned w = (k + i) % _W_MAX;
                        double c0 = cpu_now(), w0 = bench_now_ms();

                        r = w == W_SAMPLER ? manager_sample_now(m)
                                : floor_once(rfs, threads, w == W_FLOOR ? fds : NULL, n_threads, &floor_samples);
                        if (r < 0) {
                                fprintf(stderr, "bench-sampler: %s failed: %s\n", names[w], strerror(-r));
                                goto finish;
                        }
                        if (i >= o.warmup) {
                                cpu_ms[w][i - o.warmup] = cpu_now() - c0;
                                wall_ms[w][i - o.warmup] = bench_now_ms() - w0;
                        }
                }
        }
        for (unsigned w = 0; w < _W_MAX; w++) {
                qsort(cpu_ms[w], o.iterations, sizeof(double), cmp_double);
                qsort(wall_ms[w], o.iterations, sizeof(double), cmp_double);
        }

        snap = manager_metrics(m);
        printf("bench-sampler: large host: %zu PFs, %zu IRQs (%zu threads, %zu of them read: on the RT CPUs, and ksoftirqd), "
               "%u CPUs%s%.0f ms to generate\n",
               inv->n_pfs, inv->n_irqs, n_irq_threads, n_threads, cpuset_count(&inv->topo.online),
               o.root ? " (given tree), " : ", ", gen_ms);
        printf("  snapshot: %zu samples; floor parsed %zu counters\n", snap ? snap->n_samples : 0, floor_samples);
        for (unsigned w = 0; w < _W_MAX; w++)
                printf("  %-36s CPU median %7.2f ms (min %.2f, max %.2f), wall median %7.2f ms\n", names[w],
                       cpu_ms[w][o.iterations / 2], cpu_ms[w][0], cpu_ms[w][o.iterations - 1], wall_ms[w][o.iterations / 2]);
        printf("  ratio sampler / floor (CPU medians): %.2f\n",
               cpu_ms[W_FLOOR][o.iterations / 2] > 0 ? cpu_ms[W_SAMPLER][o.iterations / 2] / cpu_ms[W_FLOOR][o.iterations / 2] : 0);
        printf("  at monitor_interval_sec = %d: %.4f%% of one CPU (target <= 0.2%%); the floor alone %.4f%%\n",
               PERIOD_SEC, cpu_ms[W_SAMPLER][o.iterations / 2] / (PERIOD_SEC * 1000.0) * 100,
               cpu_ms[W_FLOOR][o.iterations / 2] / (PERIOD_SEC * 1000.0) * 100);
        ret = EXIT_SUCCESS;

finish:
        for (size_t i = 0; fds && i < n_threads; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        for (unsigned w = 0; w < _W_MAX; w++) {
                free(cpu_ms[w]);
                free(wall_ms[w]);
        }
        if (tmp[0] && bench_tree_remove(tmp) < 0)
                fprintf(stderr, "bench-sampler: failed to remove %s\n", tmp);
        return ret;
}
