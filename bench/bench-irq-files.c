/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-irq-files.c — a drift check's affinity reads on this machine's own /proc (read only):
 * through the files irq-files.c holds open against opening each by path, and the kernel memory
 * a held file costs. A fixture tree's files are read by path (they can be replaced), so only the
 * real /proc shows this.
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/irq.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/refresh.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/shared/cpuset.h"
#include "bench-util.h"

/* What the large host has: the files one drift check reads there. */
#define LARGE_HOST_IRQS 4168

static void help(void) {
        printf("Usage: bench-irq-files [-n N]\n\n"
               "CPU time of %u reads of this machine's /proc/irq/N/smp_affinity_list files (its own\n"
               "IRQs, round after round: what one drift check reads on the large host) through\n"
               "irq_files_read_affinity(), which holds them open, against rootfs_read_attr() by path;\n"
               "and the kernel's Slab growth for %u held files (/proc/meminfo).\n\n"
               "  -n, --iterations N  measured iterations (default 20, or $SRIOVD_BENCH_ITERATIONS)\n",
               LARGE_HOST_IRQS, LARGE_HOST_IRQS);
}

static long slab_kib(void) {
        char line[256];
        long v = -1;
        FILE *f = fopen("/proc/meminfo", "re");

        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "Slab: %ld kB", &v) == 1)
                        break;
        fclose(f);
        return v;
}

static double cpu_now(void) {
        double u, s;
        bench_cpu_ms(&u, &s);
        return u + s;
}

int main(int argc, char **argv) {
        _cleanup_(rootfs_freep) RootFs *root = NULL;
        _cleanup_(irq_files_freep) IrqFiles *files = NULL;
        _cleanup_free_ unsigned *all = NULL, *irqs = NULL;
        _cleanup_free_ double *held = NULL, *path = NULL;
        _cleanup_free_ int *fds = NULL;
        BenchOptions o = {};
        char buf[CPUSET_LIST_MAX];
        size_t n_all, n = 0;
        struct rlimit rl;
        long before, after;

        o.iterations = bench_default_iterations(20);
        o.warmup = 1;
        for (int i = 1; i < argc; i++) {
                if (streq(argv[i], "-h") || streq(argv[i], "--help")) {
                        help();
                        return 0;
                }
                if ((streq(argv[i], "-n") || streq(argv[i], "--iterations")) && i + 1 < argc &&
                    (o.iterations = (unsigned) atoi(argv[++i])) >= 1 && o.iterations <= 100000)
                        continue;
                fprintf(stderr, "bench-irq-files: unexpected '%s'; see --help\n", argv[i]);
                return 2;
        }
        if (rootfs_new("/", NULL, &root) < 0 || irq_list(root, &all, &n_all) < 0) {
                fprintf(stderr, "bench-irq-files: /proc/irq unreadable: skipping\n");
                return 77;
        }
        irqs = malloc(MAX(n_all, (size_t) 1) * sizeof(*irqs));
        if (!irqs)
                return 1;
        for (size_t i = 0; i < n_all; i++)
                if (rootfs_read_attr(root, buf, sizeof(buf), "/proc/irq/%u/smp_affinity_list", all[i]) >= 0)
                        irqs[n++] = all[i];
        if (n == 0) {
                fprintf(stderr, "bench-irq-files: no readable smp_affinity_list here: skipping\n");
                return 77;
        }
        if (irq_files_new(n, &files) < 0)
                return 1;
        held = calloc(o.iterations, sizeof(*held));
        path = calloc(o.iterations, sizeof(*path));
        if (!held || !path)
                return 1;

        /* Interleaved, after a warm-up that opens the held files. */
        for (unsigned it = 0; it < o.iterations + o.warmup; it++) {
                double t0 = cpu_now(), t1, t2;

                for (unsigned k = 0; k < LARGE_HOST_IRQS; k++)
                        if (irq_files_read_affinity(files, root, irqs[k % n], buf, sizeof(buf)) < 0)
                                return 1;
                t1 = cpu_now();
                for (unsigned k = 0; k < LARGE_HOST_IRQS; k++)
                        if (rootfs_read_attr(root, buf, sizeof(buf), "/proc/irq/%u/smp_affinity_list", irqs[k % n]) < 0)
                                return 1;
                t2 = cpu_now();
                if (it >= o.warmup) {
                        held[it - o.warmup] = t1 - t0;
                        path[it - o.warmup] = t2 - t1;
                }
        }
        Stats h = bench_stats(held, o.iterations), p = bench_stats(path, o.iterations);

        printf("bench-irq-files: %u affinity reads (this machine's %zu IRQs, round after round), CPU medians of %u\n",
               LARGE_HOST_IRQS, n, o.iterations);
        printf("  held files (pread)            %8.2f ms (min %.2f, max %.2f) = %.2f us a read\n",
               h.median, h.min, h.max, h.median * 1000 / LARGE_HOST_IRQS);
        printf("  by path (open, read, close)   %8.2f ms (min %.2f, max %.2f) = %.2f us a read\n",
               p.median, p.min, p.max, p.median * 1000 / LARGE_HOST_IRQS);
        printf("  ratio held / by path: %.2f; %zu files held\n", h.median / p.median, irq_files_held(files));

        /* The other half of a live drift check: each IRQ thread's scheduling, from the scheduler. */
        double t0 = cpu_now();
        for (unsigned it = 0; it < o.iterations; it++)
                for (unsigned k = 0; k < LARGE_HOST_IRQS; k++) {
                        int policy, priority;
                        if (sched_thread_get(getpid(), &policy, &priority) < 0)
                                return 1;
                }
        printf("  and %u threads' scheduling (sched_thread_get) %.2f ms, mean of %u\n", LARGE_HOST_IRQS,
               (cpu_now() - t0) / o.iterations, o.iterations);

        /* The kernel's side: as many held files as the large host has IRQs, each read once. */
        if (getrlimit(RLIMIT_NOFILE, &rl) >= 0 && rl.rlim_cur < LARGE_HOST_IRQS + 64) {
                rl.rlim_cur = MIN(rl.rlim_max, (rlim_t) LARGE_HOST_IRQS + 64);
                (void) setrlimit(RLIMIT_NOFILE, &rl);
        }
        fds = malloc(LARGE_HOST_IRQS * sizeof(*fds));
        if (!fds)
                return 1;
        before = slab_kib();
        size_t opened = 0;
        for (; opened < LARGE_HOST_IRQS; opened++) {
                fds[opened] = rootfs_open_file(root, "/proc/irq/%u/smp_affinity_list", irqs[opened % n]);
                if (fds[opened] < 0 || rootfs_reread(fds[opened], buf, sizeof(buf)) < 0)
                        break;
        }
        usleep(200 * 1000);
        after = slab_kib();
        if (opened > 0 && before >= 0 && after >= 0)
                printf("  kernel Slab for %zu held files: +%ld KiB = %.2f KiB a file (the page procfs fills at the first read)\n",
                       opened, after - before, (double) (after - before) / (double) opened);
        for (size_t i = 0; i < opened; i++)
                close(fds[i]);
        return 0;
}
