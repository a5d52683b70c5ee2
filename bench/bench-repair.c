/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-repair.c — what sriovd spends repairing one IRQ that a drift event named, on the large
 * host, without a cycle and with one, against the drift check that finds the same by polling, and
 * against the bare write
 */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "manager/manager.h"
#include "bench-util.h"

static void help(void) {
        printf("Usage: bench-repair [OPTIONS] MKHOST\n\n"
               "On the large host (8 PFs x 64 VFs, 4,224 IRQs), once sriovd has placed it: one IRQ's\n"
               "affinity is written behind its back, then put back by a drift event's repair without a\n"
               "cycle (manager_repair_fast()), by the cycle a drift event runs otherwise (manager_repair(),\n"
               "which reads that IRQ alone), by the drift check that polls (manager_drift_check()), and by\n"
               "a bare write of the planned value. Wall and CPU time of each, medians and worst of N rounds.\n\n"
               "  -n, --iterations N  measured rounds (default 20, or $SRIOVD_BENCH_ITERATIONS)\n"
               "  -w, --warmup N      unmeasured rounds first (default 2)\n"
               "      --python PATH   the Python that runs MKHOST (default python3)\n"
               "      --root DIR      a copy of this tree instead of a generated one\n");
}

static int write_text(const char *path, const char *text) {
        _cleanup_fclose_ FILE *f = fopen(path, "we");

        if (!f || fputs(text, f) < 0 || fflush(f) != 0)
                return -errno;
        return 0;
}

static int read_text(const char *path, char *buf, size_t size) {
        _cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0 || (n = read(fd, buf, size - 1)) < 0)
                return -errno;
        buf[n] = 0;
        return 0;
}

typedef enum Way { WAY_FAST, WAY_REPAIR, WAY_DRIFT_CHECK, WAY_BARE_WRITE, _WAY_MAX } Way;
static const char *const way_label[_WAY_MAX] = {
        [WAY_FAST] = "repair without a cycle",
        [WAY_REPAIR] = "repair cycle on an event",
        [WAY_DRIFT_CHECK] = "drift check (polling)",
        [WAY_BARE_WRITE] = "floor: bare write",
};

/* One round: the file moved, then put back the one way, timed. */
static int round_once(Manager *m, Way w, unsigned irq, const char *path, const char *want, double *ret_wall,
                      double *ret_cpu) {
        double u0, s0, u1, s1, t0;
        char now[64];
        CycleResult res = {};
        int r;

        r = write_text(path, "0\n");
        if (r < 0)
                return r;
        bench_cpu_ms(&u0, &s0);
        t0 = bench_now_ms();
        switch (w) {
        case WAY_FAST:
                r = manager_repair_fast(m, &irq, 1, NULL, 0, &res);
                /* 0 would mean that it left the IRQ to a cycle, which is not what is measured. */
                if (r == 0)
                        r = -EPROTO;
                break;
        case WAY_REPAIR:
                r = manager_repair(m, &irq, 1, NULL, 0, &res);
                break;
        case WAY_DRIFT_CHECK:
                r = manager_drift_check(m, &res);
                break;
        default:
                r = write_text(path, want);
                res.n_done = 1;
        }
        *ret_wall = bench_now_ms() - t0;
        bench_cpu_ms(&u1, &s1);
        *ret_cpu = (u1 - u0) + (s1 - s0);
        if (r < 0)
                return r;
        /* Each way must have put the planned value back, with one write. */
        r = read_text(path, now, sizeof(now));
        if (r < 0)
                return r;
        if (res.n_done != 1 || strcmp(now, want) != 0) {
                fprintf(stderr, "bench-repair: %s left %s as \"%s\" (%u done), want \"%s\"\n", way_label[w], path, now,
                        res.n_done, want);
                return -EPROTO;
        }
        return 0;
}

int main(int argc, char **argv) {
        char tmp[PATH_MAX] = "", root[PATH_MAX + 8], config[PATH_MAX], path[2 * PATH_MAX], want[64];
        _cleanup_(manager_freep) Manager *m = NULL;
        _cleanup_free_ double *wall = NULL, *cpu = NULL;
        BenchOptions o = {};
        double gen_ms = 0;
        int r, ret = EXIT_FAILURE;

        r = bench_parse_argv(argc, argv, "bench-repair", 2, help, &o);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);

        r = bench_mkdtemp(tmp, sizeof(tmp));
        if (r < 0) {
                fprintf(stderr, "bench-repair: cannot make a temporary directory: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        snprintf(root, sizeof(root), "%s/root", tmp);
        if (o.root) {
                char *const cp[] = { (char *) "cp", (char *) "-a", (char *) "--", (char *) o.root, root, NULL };
                r = bench_spawn(cp);
        } else
                r = bench_mkhost_large(o.python, o.mkhost, root, &gen_ms);
        if (r >= 0)
                r = bench_write_config(tmp, config, sizeof(config));
        if (r < 0) {
                fprintf(stderr, "bench-repair: cannot make the large host under %s: %s\n", tmp, strerror(-r));
                goto finish;
        }

        CycleResult res;
        r = manager_new(root, config, &m);
        if (r >= 0)
                r = manager_load_config(m);
        if (r >= 0)
                r = manager_cycle(m, CYCLE_APPLY, &res);
        if (r < 0 || res.n_done == 0) {
                fprintf(stderr, "bench-repair: sriovd did not place %s: %s\n", root, strerror(r < 0 ? -r : EPROTO));
                goto finish;
        }
        /* The IRQ: the first pinned vector of the last VF, read back as placed. */
        const Plan *plan = manager_plan(m);
        unsigned irq = 0;
        for (size_t i = 0; i < plan->n_actions; i++)
                if (plan->actions[i].kind == ACTION_SET_IRQ_AFFINITY)
                        irq = plan->actions[i].irq;
        snprintf(path, sizeof(path), "%s/proc/irq/%u/smp_affinity_list", root, irq);
        if (irq == 0 || read_text(path, want, sizeof(want)) < 0 || streq(want, "0\n")) {
                fprintf(stderr, "bench-repair: no pinned IRQ to move on %s\n", root);
                goto finish;
        }

        wall = calloc((size_t) _WAY_MAX * o.iterations, sizeof(double));
        cpu = calloc((size_t) _WAY_MAX * o.iterations, sizeof(double));
        if (!wall || !cpu)
                goto finish;
        /* Rounds interleave the ways, so that a slow spell of the machine hits each alike. */
        for (unsigned it = 0; it < o.warmup + o.iterations; it++)
                for (Way w = 0; w < _WAY_MAX; w++) {
                        double tw, tc;

                        r = round_once(m, w, irq, path, want, &tw, &tc);
                        if (r < 0) {
                                fprintf(stderr, "bench-repair: %s failed: %s\n", way_label[w], strerror(-r));
                                goto finish;
                        }
                        if (it >= o.warmup) {
                                wall[w * o.iterations + it - o.warmup] = tw;
                                cpu[w * o.iterations + it - o.warmup] = tc;
                        }
                }

        printf("bench-repair: IRQ %u of the large host (%s), %u rounds after %u warm-up\n", irq,
               o.root ? "a copy of --root" : "generated by mkhost.py", o.iterations, o.warmup);
        Stats floor = bench_stats(&wall[WAY_BARE_WRITE * o.iterations], o.iterations);
        for (Way w = 0; w < _WAY_MAX; w++) {
                Stats sw = bench_stats(&wall[w * o.iterations], o.iterations);
                Stats sc = bench_stats(&cpu[w * o.iterations], o.iterations);

                printf("  %-26s wall %8.3f ms (max %8.3f), CPU %8.3f ms; %7.1fx the bare write\n", way_label[w],
                       sw.median, sw.max, sc.median, floor.median > 0 ? sw.median / floor.median : 0);
        }
        ret = EXIT_SUCCESS;
finish:
        m = manager_free(m);
        if (tmp[0])
                (void) bench_tree_remove(tmp);
        return ret;
}
