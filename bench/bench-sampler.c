/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-sampler.c — one sampling period on the large host, against a bare read-and-parse of the same /proc files */

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-util.h"
#include "sriovd/counters.h"
#include "sriovd/inventory.h"
#include "sriovd/kernel.h"
#include "sriovd/log.h"
#include "sriovd/manager.h"
#include "sriovd/metrics.h"
#include "sriovd/proc-counters.h"
#include "sriovd/rootfs.h"

#define PERIOD_SEC 5

static void help(void) {
        printf("Usage: bench-sampler [OPTIONS] MKHOST\n\n"
               "CPU time of one sampling period (monitor_interval_sec) on the 'large' fixture host\n"
               "(%u PFs x %u VFs, %u IRQs per VF, irq/N- threads), the Prometheus file included, against a\n"
               "bare loop that reads the same /proc files and parses them with the same parsers.\n\n"
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

/* The floor: open, read to EOF, close, and parse, with nothing attributed, kept or exported. */
static int floor_once(RootFs *root, const pid_t *threads, size_t n_threads, size_t *ret_samples) {
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
                if (proc_thread_times_read(root, threads[i], threads[i], &tt) >= 0)
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

int main(int argc, char **argv) {
        char tmp[PATH_MAX] = "", root[PATH_MAX], conf[PATH_MAX], text[PATH_MAX + 128];
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_(rootfs_freep) RootFs *rfs = NULL;
        _cleanup_free_ pid_t *threads = NULL;
        _cleanup_free_ double *floor_ms = NULL, *sample_ms = NULL, *floor_wall = NULL, *sample_wall = NULL;
        const Inventory *inv;
        const MetricSnapshot *snap;
        BenchOptions o = {};
        CycleResult res;
        size_t n_threads = 0, floor_samples = 0;
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
        threads = calloc(inv->n_irqs + 1, sizeof(*threads));
        if (!threads)
                goto finish;
        for (size_t i = 0; i < inv->n_irqs; i++)
                if (inv->irqs[i].thread > 0)
                        threads[n_threads++] = inv->irqs[i].thread;
        r = rootfs_new(root, &rfs);
        if (r < 0)
                goto finish;

        floor_ms = calloc(o.iterations, sizeof(double));
        sample_ms = calloc(o.iterations, sizeof(double));
        floor_wall = calloc(o.iterations, sizeof(double));
        sample_wall = calloc(o.iterations, sizeof(double));
        if (!floor_ms || !sample_ms || !floor_wall || !sample_wall)
                goto finish;

        for (unsigned i = 0; i < o.warmup + o.iterations; i++) {
                double c0, w0, cf = 0, wf = 0, cs = 0, ws = 0;

                /* Interleaved, the order swapped every iteration, so neither gets the warmer cache. */
                for (unsigned k = 0; k < 2; k++) {
                        bool sampler = (k + i) % 2 == 0;

                        c0 = cpu_now();
                        w0 = bench_now_ms();
                        r = sampler ? manager_sample_now(m) : floor_once(rfs, threads, n_threads, &floor_samples);
                        if (r < 0) {
                                fprintf(stderr, "bench-sampler: %s failed: %s\n", sampler ? "the sampler" : "the floor",
                                        strerror(-r));
                                goto finish;
                        }
                        if (sampler) {
                                cs = cpu_now() - c0;
                                ws = bench_now_ms() - w0;
                        } else {
                                cf = cpu_now() - c0;
                                wf = bench_now_ms() - w0;
                        }
                }
                if (i >= o.warmup) {
                        sample_ms[i - o.warmup] = cs;
                        sample_wall[i - o.warmup] = ws;
                        floor_ms[i - o.warmup] = cf;
                        floor_wall[i - o.warmup] = wf;
                }
        }
        qsort(sample_ms, o.iterations, sizeof(double), cmp_double);
        qsort(floor_ms, o.iterations, sizeof(double), cmp_double);
        qsort(sample_wall, o.iterations, sizeof(double), cmp_double);
        qsort(floor_wall, o.iterations, sizeof(double), cmp_double);

        snap = manager_metrics(m);
        printf("bench-sampler: large host: %zu PFs, %zu IRQs (%zu threads), %u CPUs%s%.0f ms to generate\n",
               inv->n_pfs, inv->n_irqs, n_threads, cpuset_count(&inv->topo.online),
               o.root ? " (given tree), " : ", ", gen_ms);
        printf("  snapshot: %zu samples; floor parsed %zu counters\n", snap ? snap->n_samples : 0, floor_samples);
        printf("  %-36s CPU median %7.2f ms (min %.2f, max %.2f), wall median %7.2f ms\n", "sampler period (+ file):",
               sample_ms[o.iterations / 2], sample_ms[0], sample_ms[o.iterations - 1], sample_wall[o.iterations / 2]);
        printf("  %-36s CPU median %7.2f ms (min %.2f, max %.2f), wall median %7.2f ms\n", "floor: bare read + parse:",
               floor_ms[o.iterations / 2], floor_ms[0], floor_ms[o.iterations - 1], floor_wall[o.iterations / 2]);
        printf("  ratio sampler / floor (CPU medians): %.2f\n",
               floor_ms[o.iterations / 2] > 0 ? sample_ms[o.iterations / 2] / floor_ms[o.iterations / 2] : 0);
        printf("  at monitor_interval_sec = %d: %.4f%% of one CPU (target <= 0.2%%); the floor alone %.4f%%\n",
               PERIOD_SEC, sample_ms[o.iterations / 2] / (PERIOD_SEC * 1000.0) * 100,
               floor_ms[o.iterations / 2] / (PERIOD_SEC * 1000.0) * 100);
        ret = EXIT_SUCCESS;

finish:
        if (tmp[0] && bench_tree_remove(tmp) < 0)
                fprintf(stderr, "bench-sampler: failed to remove %s\n", tmp);
        return ret;
}
