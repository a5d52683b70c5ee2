/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-state.c — tenants at scale: start-up (restore) and one acknowledged change, 0 vs N tenants */

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "manager/manager.h"
#include "state/state.h"
#include "bench-util.h"

/*
 * The manager on the two-socket fixture (16 VFs), its state directory on this machine's disk so
 * that every save pays the real fsync. For N = 0 and N = $SRIOVD_BENCH_TENANTS (10,000):
 *  - start: manager_new + config + the first cycle, which restores every saved tenant (what
 *    stands between a start and READY=1 besides the bus);
 *  - change: one Allocate of a new virtio tenant or its Release, each acknowledged only once
 *    durable, 10,500 of them (past the point where the journal asks for the file to be rewritten,
 *    which the daemon does after the reply: timed apart, as manager_save_state()).
 * Then a start that replays those changes from the journal and writes the file whole again.
 * Baselines in the same run: the same figures at N = 0, and two floors on the same disk: one
 * small record appended with fdatasync(), and the whole N-tenant file rewritten (temp file,
 * fsync, rename, directory fsync) as state_save() does. Targets: start <= 500 ms and
 * change p99 <= 5 ms at 10,000 tenants. Never fails on timing.
 */

#define CHANGES 10500   /* past the journal's rewrite threshold at 10,000 tenants (10,000 lines) */

static char tmp[256], root[300], conf[300], state_dir[300];

static void seed(size_t n) {
        State s = { .n = n, .generation = 1 };
        char cmd[700];
        int fd;

        snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", state_dir, state_dir);
        if (system(cmd) != 0)
                abort();
        s.tenants = calloc(n ?: 1, sizeof(StateTenant));
        if (!s.tenants)
                abort();
        for (size_t i = 0; i < n; i++) {
                StateTenant *t = &s.tenants[i];
                *t = (StateTenant) { .kind = STATE_KIND_VIRTIO, .vlan = -1, .numa_node = -1, .seq = i + 1 };
                snprintf(t->tenant, sizeof(t->tenant), "vm-%06zu", i);
                strscpy(t->class_name, sizeof(t->class_name), "best-effort");
                mac_derive(t->tenant, t->mac);
                snprintf(t->domain, sizeof(t->domain), "guest-%06zu", i);
        }
        fd = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || (n > 0 && state_save(fd, STATE_FILE_NAME, &s, NULL) < 0))
                abort();
        close(fd);
        state_done(&s);
}

static double start(Manager **ret) {
        double t0 = bench_now_ms();
        CycleResult res;

        if (manager_new(root, conf, ret) < 0 || manager_load_config(*ret) < 0 ||
            manager_cycle(*ret, CYCLE_APPLY, &res) < 0)
                abort();
        return bench_now_ms() - t0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;
        return (x > y) - (x < y);
}

static void percentiles(double *v, size_t n, double *p50, double *p99) {
        qsort(v, n, sizeof(double), cmp_double);
        *p50 = v[n / 2];
        *p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
}

typedef struct Figures {
        double start_ms, change_p50, change_p99, change_max, restart_ms;
        unsigned rewrites;
        double rewrite_max_ms;
} Figures;

static Figures run(size_t n) {
        double starts[3], changes[CHANGES];
        Figures f = {};
        Manager *m = NULL;

        for (unsigned i = 0; i < ELEMENTSOF(starts); i++) {
                seed(n);
                starts[i] = start(&m);
                if (manager_n_tenants(m) != n) {
                        fprintf(stderr, "bench-state: %zu tenants restored of %zu\n", manager_n_tenants(m), n);
                        abort();
                }
                if (i + 1 < ELEMENTSOF(starts))
                        m = manager_free(m);
        }
        f.start_ms = bench_stats(starts, ELEMENTSOF(starts)).median;
        for (unsigned i = 0; i < CHANGES; i++) {
                char id[32];
                double t0;

                snprintf(id, sizeof(id), "bench-%u", i / 2);
                t0 = bench_now_ms();
                if (i % 2 == 0 ? manager_allocate(m, id, "best-effort", "", &(TenantOptions) { .numa_node = -1, .vlan = -1 },
                                                  NULL, NULL, 0) < 0
                               : manager_release(m, id) < 0)
                        abort();
                changes[i] = bench_now_ms() - t0;
                /* What the daemon's deferred source does after the reply, timed on its own. */
                t0 = bench_now_ms();
                if (manager_save_state(m) < 0)
                        abort();
                double w = bench_now_ms() - t0;
                if (w > 1.0) {
                        f.rewrites++;
                        f.rewrite_max_ms = MAX(f.rewrite_max_ms, w);
                }
        }
        percentiles(changes, CHANGES, &f.change_p50, &f.change_p99);
        f.change_max = changes[CHANGES - 1];
        manager_free(m);
        /* And it all came back: the last change is what a restart finds, from the file and its journal. */
        f.restart_ms = start(&m);
        if (manager_n_tenants(m) != n)
                abort();
        manager_free(m);
        return f;
}

/* The floors on the same disk: a small appended record, and the whole file rewritten. */
static void floors(size_t n, double *ret_append_p99, double *ret_rewrite_ms) {
        double appends[CHANGES], rewrites[5];
        char path[400], rec[200];
        State s = {};
        int dir, fd;

        memset(rec, 'x', sizeof(rec) - 1);
        rec[sizeof(rec) - 1] = '\n';
        snprintf(path, sizeof(path), "%s/floor", state_dir);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0)
                abort();
        for (unsigned i = 0; i < CHANGES; i++) {
                double t0 = bench_now_ms();
                if (write(fd, rec, sizeof(rec)) != (ssize_t) sizeof(rec) || fdatasync(fd) < 0)
                        abort();
                appends[i] = bench_now_ms() - t0;
        }
        close(fd);
        double p50;
        percentiles(appends, CHANGES, &p50, ret_append_p99);

        seed(n);
        dir = open(state_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0 || state_load(dir, STATE_FILE_NAME, &s, NULL, NULL) < 0)
                abort();
        for (unsigned i = 0; i < ELEMENTSOF(rewrites); i++) {
                double t0 = bench_now_ms();
                if (state_save(dir, STATE_FILE_NAME, &s, NULL) < 0)
                        abort();
                rewrites[i] = bench_now_ms() - t0;
        }
        *ret_rewrite_ms = bench_stats(rewrites, ELEMENTSOF(rewrites)).median;
        state_done(&s);
        close(dir);
}

int main(int argc, char **argv) {
        const char *n_env = getenv("SRIOVD_BENCH_TENANTS");
        size_t n = n_env ? strtoul(n_env, NULL, 10) : 10000;
        Figures zero, big;
        double append_p99, rewrite_ms;
        char cmd[1200];
        FILE *f;

        if (argc != 3) {
                fprintf(stderr, "usage: bench-state FIXTURE_DIR CLASSES_DIR\n");
                return 2;
        }
        log_setup(LOG_TARGET_AUTO, LOG_ERR);
        /* On disk, not tmpfs: the fsync must cost what it costs on a host. */
        snprintf(tmp, sizeof(tmp), "%s/sriovd-bench-state-XXXXXX", getenv("SRIOVD_BENCH_DIR") ?: "/var/tmp");
        if (!mkdtemp(tmp))
                return 1;
        snprintf(root, sizeof(root), "%s/root", tmp);
        snprintf(conf, sizeof(conf), "%s/sriovd.conf", tmp);
        snprintf(state_dir, sizeof(state_dir), "%s/state", tmp);
        snprintf(cmd, sizeof(cmd), "cp -a %s %s && cp -r %s %s/tenant-classes.d", argv[1], root, argv[2], tmp);
        if (system(cmd) != 0)
                return 1;
        f = fopen(conf, "we");
        if (!f)
                return 1;
        fprintf(f, "[daemon]\nstate_dir = %s\n[cpus]\nkeep_irqs_off_rt = no\n", state_dir);
        fclose(f);

        zero = run(0);
        big = run(n);
        floors(n, &append_p99, &rewrite_ms);

        printf("tenants at scale (two-socket fixture, state on %s)\n", tmp);
        printf("  start (restore + first cycle): %8.1f ms at 0, %8.1f ms at %zu tenants (%.1fx)  target <= 500 ms\n",
               zero.start_ms, big.start_ms, n, big.start_ms / zero.start_ms);
        printf("  start after %d journaled changes: %5.1f ms at 0, %8.1f ms at %zu tenants\n", CHANGES,
               zero.restart_ms, big.restart_ms, n);
        printf("  change p50:                    %8.2f ms at 0, %8.2f ms at %zu tenants\n", zero.change_p50,
               big.change_p50, n);
        printf("  change p99:                    %8.2f ms at 0, %8.2f ms at %zu tenants (%.1fx)  target <= 5 ms\n",
               zero.change_p99, big.change_p99, n, big.change_p99 / zero.change_p99);
        printf("  change max:                    %8.2f ms at 0, %8.2f ms at %zu tenants\n", zero.change_max,
               big.change_max, n);
        printf("  rewrites after the reply:      %u at 0, %u at %zu tenants, the longest %.1f ms (not in any reply)\n",
               zero.rewrites, big.rewrites, n, big.rewrite_max_ms);
        printf("  floors: appended record + fdatasync p99 %.2f ms (change p99 at %zu = %.1fx); "
               "whole %zu-tenant file rewritten %.1f ms\n",
               append_p99, n, big.change_p99 / append_p99, n, rewrite_ms);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
        return system(cmd) == 0 ? 0 : 1;
}
