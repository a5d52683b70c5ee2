/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-irq.c — IRQ affinity apply and the no-change drift check on a large host, against bare write/read floors */

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sriovd/shared/cpuset.h"
#include "base/log.h"
#include "manager/manager.h"
#include "bench-util.h"

/* The daemon's default period between drift checks, to put the check's CPU time in proportion. */
#define DRIFT_CHECK_SEC 5

typedef BenchOptions Options;

/* One IRQ the plan pins. */
typedef struct Target {
        char path[48];          /* "proc/irq/N/smp_affinity_list", relative to the root */
        char *before;           /* the file as the tree was made: what a reset writes back */
        char *after;            /* the value the plan writes, exactly as sriovd formats it */
        size_t before_len, after_len;
} Target;

typedef enum TreeState {
        TREE_UNKNOWN,
        TREE_RESET,             /* every target as generated ("0-63") */
        TREE_APPLIED,           /* every target pinned */
} TreeState;

/* The measured workloads; each iteration runs all of them in a rotating order. */
typedef enum Kind {
        KIND_COLD_APPLY,
        KIND_WRITE_FLOOR,
        KIND_DRY_RUN,
        KIND_SECOND_APPLY,
        KIND_DRIFT_CHECK,
        KIND_READ_FLOOR,
        _KIND_MAX,
} Kind;

static const char *const kind_label[_KIND_MAX] = {
        [KIND_COLD_APPLY] = "cold apply (cycle)",
        [KIND_WRITE_FLOOR] = "floor: bare writes",
        [KIND_DRY_RUN] = "dry run (observe+plan)",
        [KIND_SECOND_APPLY] = "second apply (no change)",
        [KIND_DRIFT_CHECK] = "drift check (refresh)",
        [KIND_READ_FLOOR] = "floor: bare reads",
};

/* The tree each workload starts from (set up untimed) and the one it leaves. */
static const TreeState kind_needs[_KIND_MAX] = {
        [KIND_COLD_APPLY] = TREE_RESET,
        [KIND_WRITE_FLOOR] = TREE_RESET,
        [KIND_DRY_RUN] = TREE_RESET,
        [KIND_SECOND_APPLY] = TREE_APPLIED,
        [KIND_DRIFT_CHECK] = TREE_APPLIED,
        [KIND_READ_FLOOR] = TREE_APPLIED,
};
static const TreeState kind_leaves[_KIND_MAX] = {
        [KIND_COLD_APPLY] = TREE_APPLIED,
        [KIND_WRITE_FLOOR] = TREE_APPLIED,
        [KIND_DRY_RUN] = TREE_RESET,
        [KIND_SECOND_APPLY] = TREE_APPLIED,
        [KIND_DRIFT_CHECK] = TREE_APPLIED,
        [KIND_READ_FLOOR] = TREE_APPLIED,
};
/* What each workload is measured against; _KIND_MAX for the floors themselves. */
static const Kind kind_floor[_KIND_MAX] = {
        [KIND_COLD_APPLY] = KIND_WRITE_FLOOR,
        [KIND_WRITE_FLOOR] = _KIND_MAX,
        [KIND_DRY_RUN] = KIND_WRITE_FLOOR,
        [KIND_SECOND_APPLY] = KIND_READ_FLOOR,
        [KIND_DRIFT_CHECK] = KIND_READ_FLOOR,
        [KIND_READ_FLOOR] = _KIND_MAX,
};

typedef struct Bench {
        const char *root;
        const char *config_path;
        int root_fd;
        Target *targets;
        size_t n_targets;
        size_t n_skippable;     /* coalescing/offload actions: planned, skipped on a fixture */
        /* Has applied once, so every later cycle is what the drift timer runs. */
        Manager *steady;
        TreeState state;
} Bench;

/* ---- the tree: reset, floors ---- */

static int read_file(int root_fd, const char *path, char **ret, size_t *ret_len) {
        _cleanup_close_ int fd = openat(root_fd, path, O_RDONLY | O_CLOEXEC);
        char buf[CPUSET_LIST_MAX];
        size_t n = 0;
        ssize_t k;

        if (fd < 0)
                return negative_errno();
        while ((k = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0)
                n += (size_t) k;
        if (k < 0)
                return negative_errno();
        buf[n] = 0;
        *ret = strdup(buf);
        if (!*ret)
                return -ENOMEM;
        *ret_len = n;
        return 0;
}

/* The write floor, and (untimed) the reset: open(O_TRUNC), one write(), close per IRQ. */
static int targets_write(const Bench *b, bool after) {
        for (size_t i = 0; i < b->n_targets; i++) {
                const Target *t = &b->targets[i];
                const char *v = after ? t->after : t->before;
                size_t len = after ? t->after_len : t->before_len;
                int fd = openat(b->root_fd, t->path, O_WRONLY | O_TRUNC | O_CLOEXEC);
                ssize_t k;

                if (fd < 0)
                        return negative_errno();
                k = write(fd, v, len);
                close(fd);
                if (k != (ssize_t) len)
                        return k < 0 ? negative_errno() : -EIO;
        }
        return 0;
}

/* The read floor: open, read to EOF, close per IRQ, no parsing. */
static int targets_read(const Bench *b) {
        uint64_t bytes = 0;

        for (size_t i = 0; i < b->n_targets; i++) {
                int fd = openat(b->root_fd, b->targets[i].path, O_RDONLY | O_CLOEXEC);
                char buf[4096];
                ssize_t k;

                if (fd < 0)
                        return negative_errno();
                while ((k = read(fd, buf, sizeof(buf))) > 0)
                        bytes += (uint64_t) k;
                close(fd);
        }
        return bytes > 0 ? 0 : -ENODATA;
}

static int tree_set(Bench *b, TreeState state) {
        int r;

        if (b->state == state)
                return 0;
        b->state = TREE_UNKNOWN;
        r = targets_write(b, state == TREE_APPLIED);
        if (r < 0)
                return r;
        b->state = state;
        return 0;
}

/* ---- the daemon ---- */

static int manager_open(const Bench *b, Manager **ret) {
        _cleanup_(manager_freep) Manager *m = NULL;
        int r;

        r = manager_new(b->root, b->config_path, &m);
        if (r < 0)
                return r;
        r = manager_load_config(m);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(m);
        return 0;
}

static int check_cycle(const Bench *b, Kind k, const CycleResult *res) {
        unsigned n = (unsigned) b->n_targets, skip = (unsigned) b->n_skippable;
        bool ok;

        switch (k) {
        case KIND_COLD_APPLY:
                ok = res->n_actions == n + skip && res->n_done == n && res->n_skipped == skip && res->n_failed == 0 &&
                     res->n_drift == 0;
                break;
        case KIND_DRY_RUN:
                ok = res->n_actions == n + skip && res->n_done == 0;
                break;
        case KIND_SECOND_APPLY:
        case KIND_DRIFT_CHECK:
                ok = res->n_actions == skip && res->n_done == 0 && res->n_failed == 0 && res->n_drift == 0;
                break;
        default:
                return 0;
        }
        if (ok)
                return 0;
        fprintf(stderr, "bench-irq: %s: %u actions, %u done, %u failed, %u drift (expected %u %s)\n",
                kind_label[k], res->n_actions, res->n_done, res->n_failed, res->n_drift,
                k == KIND_SECOND_APPLY || k == KIND_DRIFT_CHECK ? 0 : n, k == KIND_COLD_APPLY ? "done" : "actions");
        return -EPROTO;
}

/* ---- one run ---- */

typedef struct Sample {
        double wall, user, sys;         /* ms */
} Sample;

/* Set the tree up for k and, for the cold workloads, a fresh Manager: none of it timed. */
static int prepare(Bench *b, Kind k, Manager **ret_fresh) {
        int r;

        r = tree_set(b, kind_needs[k]);
        if (r < 0)
                return r;
        *ret_fresh = NULL;
        if (k == KIND_COLD_APPLY || k == KIND_DRY_RUN)
                return manager_open(b, ret_fresh);
        return 0;
}

static int execute(Bench *b, Kind k, Manager *fresh, CycleResult *res) {
        switch (k) {
        case KIND_COLD_APPLY:
                return manager_cycle(fresh, CYCLE_APPLY, res);
        case KIND_DRY_RUN:
                return manager_cycle(fresh, CYCLE_DRY_RUN, res);
        case KIND_SECOND_APPLY:
                return manager_cycle(b->steady, CYCLE_APPLY, res);
        case KIND_DRIFT_CHECK:
                return manager_drift_check(b->steady, res);
        case KIND_WRITE_FLOOR:
                return targets_write(b, true);
        case KIND_READ_FLOOR:
                return targets_read(b);
        default:
                return -EINVAL;
        }
}

static int run_one(Bench *b, Kind k, Sample *ret) {
        _cleanup_(manager_freep) Manager *fresh = NULL;
        CycleResult res = {};
        double t0, u0, s0, u1, s1;
        int r;

        r = prepare(b, k, &fresh);
        if (r < 0)
                return r;

        b->state = TREE_UNKNOWN;
        bench_cpu_ms(&u0, &s0);
        t0 = bench_now_ms();
        r = execute(b, k, fresh, &res);
        ret->wall = bench_now_ms() - t0;
        bench_cpu_ms(&u1, &s1);
        ret->user = u1 - u0;
        ret->sys = s1 - s0;
        if (r < 0)
                return r;
        b->state = kind_leaves[k];
        return check_cycle(b, k, &res);
}

/* ---- setting up ---- */

typedef struct TreeInfo {
        size_t n_pfs, n_vfs, n_irqs;
        size_t n_other_actions;
        CpuSet cpus;            /* union of the targets */
} TreeInfo;

/* The plan of a dry run on the tree as made: the targets, their values before and after. */
static int collect_targets(Bench *b, Manager *m, TreeInfo *info) {
        const Inventory *inv;
        const Plan *plan;
        CycleResult res;
        int r;

        r = manager_cycle(m, CYCLE_DRY_RUN, &res);
        if (r < 0)
                return r;
        inv = manager_inventory(m);
        plan = manager_plan(m);

        *info = (TreeInfo) { .n_pfs = inv->n_pfs, .n_irqs = inv->n_irqs };
        for (size_t i = 0; i < inv->n_pfs; i++)
                info->n_vfs += inv->pfs[i].n_vfs;

        b->targets = calloc(plan->n_actions ?: 1, sizeof(*b->targets));
        if (!b->targets)
                return -ENOMEM;
        for (size_t i = 0; i < plan->n_actions; i++) {
                const Action *a = &plan->actions[i];
                char buf[CPUSET_LIST_MAX];
                Target *t;

                /* Coalescing of the fixture's netdevs is skipped on apply (not this host's): no cost. */
                if (a->kind == ACTION_SET_COALESCE || a->kind == ACTION_SET_OFFLOADS) {
                        b->n_skippable++;
                        continue;
                }
                if (a->kind != ACTION_SET_IRQ_AFFINITY) {
                        info->n_other_actions++;
                        continue;
                }
                t = &b->targets[b->n_targets++];
                snprintf(t->path, sizeof(t->path), "proc/irq/%u/smp_affinity_list", a->irq);
                t->after = strdup(cpuset_format_list(&a->cpus_after, buf, sizeof(buf)));
                if (!t->after)
                        return -ENOMEM;
                t->after_len = strlen(t->after);
                r = read_file(b->root_fd, t->path, &t->before, &t->before_len);
                if (r < 0)
                        return r;
                cpuset_or(&info->cpus, &info->cpus, &a->cpus_after);
        }
        return 0;
}

/*
 * Before measuring: the daemon pins every target, the files then hold exactly
 * the floor's strings, and a tree the floor wrote is one the daemon finds in place.
 */
static int check_setup(Bench *b) {
        CycleResult res;
        int r;

        r = tree_set(b, TREE_RESET);
        if (r < 0)
                return r;
        r = manager_cycle(b->steady, CYCLE_APPLY, &res);
        if (r < 0)
                return r;
        r = check_cycle(b, KIND_COLD_APPLY, &res);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b->n_targets; i++) {
                _cleanup_free_ char *now = NULL;
                size_t len;

                r = read_file(b->root_fd, b->targets[i].path, &now, &len);
                if (r < 0)
                        return r;
                if (!streq(now, b->targets[i].after)) {
                        fprintf(stderr, "bench-irq: %s holds \"%s\" after apply, the floor would write \"%s\"\n",
                                b->targets[i].path, now, b->targets[i].after);
                        return -EPROTO;
                }
        }

        b->state = TREE_APPLIED;
        r = tree_set(b, TREE_RESET);
        if (r >= 0)
                r = tree_set(b, TREE_APPLIED);
        if (r < 0)
                return r;
        r = manager_cycle(b->steady, CYCLE_APPLY, &res);
        if (r < 0)
                return r;
        r = check_cycle(b, KIND_SECOND_APPLY, &res);
        if (r < 0)
                return r;
        /* The refresh finds what the full read finds: an affinity moved behind its back is put back. */
        r = manager_drift_check(b->steady, &res);
        if (r < 0)
                return r;
        r = check_cycle(b, KIND_DRIFT_CHECK, &res);
        if (r < 0)
                return r;
        unsigned refreshes = manager_refreshes(b->steady);
        _cleanup_close_ int fd = openat(b->root_fd, b->targets[0].path, O_WRONLY | O_TRUNC | O_CLOEXEC);
        if (fd < 0 || write(fd, b->targets[0].before, strlen(b->targets[0].before)) < 0)
                return -errno;
        r = manager_drift_check(b->steady, &res);
        if (r < 0)
                return r;
        if (res.n_done != 1 || manager_refreshes(b->steady) == refreshes) {
                fprintf(stderr, "bench-irq: the drift check's refresh did not put back %s (%u done)\n",
                        b->targets[0].path, res.n_done);
                return -EPROTO;
        }
        return 0;
}

/* ---- measuring ---- */

typedef struct Samples {
        double *wall[_KIND_MAX], *cpu[_KIND_MAX], *user[_KIND_MAX], *sys[_KIND_MAX];
} Samples;

typedef struct Result {
        Stats wall, cpu, user, sys;
} Result;

static void samples_free(Samples *s) {
        for (Kind k = 0; k < _KIND_MAX; k++) {
                free(s->wall[k]);
                free(s->cpu[k]);
                free(s->user[k]);
                free(s->sys[k]);
        }
}

static int measure_times(Bench *b, const Options *o, Result ret[_KIND_MAX]) {
        _cleanup_(samples_free) Samples s = {};
        Sample x;
        int r;

        for (Kind k = 0; k < _KIND_MAX; k++) {
                s.wall[k] = calloc(o->iterations, sizeof(double));
                s.cpu[k] = calloc(o->iterations, sizeof(double));
                s.user[k] = calloc(o->iterations, sizeof(double));
                s.sys[k] = calloc(o->iterations, sizeof(double));
                if (!s.wall[k] || !s.cpu[k] || !s.user[k] || !s.sys[k])
                        return -ENOMEM;
        }

        for (unsigned i = 0; i < o->warmup; i++)
                for (Kind k = 0; k < _KIND_MAX; k++) {
                        r = run_one(b, k, &x);
                        if (r < 0)
                                return r;
                }

        for (unsigned i = 0; i < o->iterations; i++)
                for (unsigned j = 0; j < _KIND_MAX; j++) {
                        Kind k = (Kind) ((i + j) % _KIND_MAX);

                        r = run_one(b, k, &x);
                        if (r < 0) {
                                fprintf(stderr, "bench-irq: %s failed: %s\n", kind_label[k], strerror(-r));
                                return r;
                        }
                        s.wall[k][i] = x.wall;
                        s.cpu[k][i] = x.user + x.sys;
                        s.user[k][i] = x.user;
                        s.sys[k][i] = x.sys;
                }

        for (Kind k = 0; k < _KIND_MAX; k++)
                ret[k] = (Result) {
                        .wall = bench_stats(s.wall[k], o->iterations),
                        .cpu = bench_stats(s.cpu[k], o->iterations),
                        .user = bench_stats(s.user[k], o->iterations),
                        .sys = bench_stats(s.sys[k], o->iterations),
                };
        return 0;
}

typedef struct Alone {
        long base_kib, hwm_kib;         /* RSS before, peak during; -1 = unknown */
        BenchIo io;                     /* read()/write() calls and bytes of the run */
        bool has_io;
} Alone;

typedef struct Memory {
        long hwm_run, maxrss;           /* KiB, whole run */
        Alone alone[_KIND_MAX];
} Memory;

/* Each workload once more, alone: its own peak RSS and syscall counters. */
static int measure_alone(Bench *b, Memory *m) {
        BenchIo cal0, cal1, cal = {};
        struct rusage ru;
        int r;

        /* The whole-run peak first: resetting the high-water mark below loses it. */
        getrusage(RUSAGE_SELF, &ru);
        m->maxrss = ru.ru_maxrss;
        m->hwm_run = bench_status_kib("VmHWM");

        /* Reading /proc/self/io is itself a read() or two: take that off every figure. */
        if (bench_io(&cal0) && bench_io(&cal1))
                cal = (BenchIo) {
                        .syscr = cal1.syscr - cal0.syscr,
                        .syscw = cal1.syscw - cal0.syscw,
                        .rchar = cal1.rchar - cal0.rchar,
                        .wchar = cal1.wchar - cal0.wchar,
                };

        for (Kind k = 0; k < _KIND_MAX; k++) {
                _cleanup_(manager_freep) Manager *fresh = NULL;
                Alone *a = &m->alone[k];
                CycleResult res = {};
                BenchIo io0, io1;
                bool hwm;

                r = prepare(b, k, &fresh);
                if (r < 0)
                        return r;
                malloc_trim(0);
                a->base_kib = bench_status_kib("VmRSS");
                hwm = bench_hwm_reset();
                a->has_io = bench_io(&io0);
                b->state = TREE_UNKNOWN;
                r = execute(b, k, fresh, &res);
                a->has_io = a->has_io && bench_io(&io1);
                a->hwm_kib = hwm ? bench_status_kib("VmHWM") : -1;
                if (r < 0)
                        return r;
                b->state = kind_leaves[k];
                if (a->has_io)
                        a->io = (BenchIo) {
                                .syscr = io1.syscr - io0.syscr - cal.syscr,
                                .syscw = io1.syscw - io0.syscw - cal.syscw,
                                .rchar = io1.rchar - io0.rchar - cal.rchar,
                                .wchar = io1.wchar - io0.wchar - cal.wchar,
                        };
                r = check_cycle(b, k, &res);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- report ---- */

static void print_tree(const Bench *b, const TreeInfo *info, double gen_ms, const char *tmp, const char *copied) {
        char cpus[CPUSET_LIST_MAX];

        printf("sriovd IRQ benchmark: 'large' host, %u PFs x %u VFs, %u MSI-X IRQs per VF\n",
               BENCH_HOST_PFS, BENCH_HOST_VFS, BENCH_HOST_VF_IRQS);
        printf("tree: %zu PFs in scope, %zu VFs, %zu IRQs; plan: %zu irq-affinity action(s) onto CPUs %s\n",
               info->n_pfs, info->n_vfs, info->n_irqs, b->n_targets,
               cpuset_format_list(&info->cpus, cpus, sizeof(cpus)));
        if (gen_ms >= 0)
                printf("      %s in %.1f s under %s\n", copied ? "copied" : "generated by mkhost.py", gen_ms / 1e3,
                       tmp);
        printf("check: first apply pins all %zu, a second finds nothing to do; the floor's writes leave "
               "the same files\n", b->n_targets);
}

static void print_mib_row(const char *label, long kib, long base_kib) {
        if (kib < 0) {
                printf("  %-36s %10s\n", label, "n/a");
                return;
        }
        printf("  %-36s %7.1f MiB", label, (double) kib / 1024);
        if (base_kib >= 0)
                printf("   (%+.1f MiB over %.1f MiB before)", (double) (kib - base_kib) / 1024,
                       (double) base_kib / 1024);
        printf("\n");
}

static void print_report(const Bench *b, const Options *o, const Result st[_KIND_MAX], const Memory *m) {
        const Result *cold = &st[KIND_COLD_APPLY], *dry = &st[KIND_DRY_RUN], *second = &st[KIND_SECOND_APPLY];
        const Result *wf = &st[KIND_WRITE_FLOOR], *rf = &st[KIND_READ_FLOOR];
        /* The verify after affinity writes refreshes what the writes touch (cycle.c's refresh_shows()). */
        double verify = st[KIND_DRIFT_CHECK].wall.median;
        double apply_verify = cold->wall.median - dry->wall.median;
        double writes = apply_verify - verify;

        printf("\n%u iterations after %u warm-up, interleaved (order rotated every iteration); the tree\n"
               "is reset or pinned before each run, untimed; CPU = getrusage user+sys of the run\n\n",
               o->iterations, o->warmup);
        printf("  %-26s %10s %10s %10s %10s %8s %8s\n", "workload", "median", "min", "max", "CPU med",
               "x floor", "CPU x");
        for (Kind k = 0; k < _KIND_MAX; k++) {
                Kind f = kind_floor[k];

                printf("  %-26s %7.2f ms %7.2f ms %7.2f ms %7.2f ms", kind_label[k], st[k].wall.median,
                       st[k].wall.min, st[k].wall.max, st[k].cpu.median);
                if (f < _KIND_MAX)
                        printf(" %7.2fx %7.2fx  (%s)\n", st[k].wall.median / st[f].wall.median,
                               st[k].cpu.median / st[f].cpu.median, f == KIND_WRITE_FLOOR ? "writes" : "reads");
                else
                        printf("\n");
        }

        printf("\n  cold apply / write floor  = %.2fx (median), %.2fx (min); %zu writes\n",
               cold->wall.median / wf->wall.median, cold->wall.min / wf->wall.min, b->n_targets);
        printf("    dry run (observe+plan)  %7.2f ms\n", dry->wall.median);
        printf("    apply + verify          %7.2f ms  (cold apply - dry run) = %.2fx write floor\n",
               apply_verify, apply_verify / wf->wall.median);
        printf("      of which verify      ~%7.2f ms  (= a drift check: the refresh of what was written, plan)\n",
               verify);
        printf("      the %zu writes       ~%7.2f ms  (the rest) = %.2fx write floor\n", b->n_targets, writes,
               writes / wf->wall.median);
        printf("  second apply / read floor = %.2fx (median), %.2fx (min)\n",
               second->wall.median / rf->wall.median, second->wall.min / rf->wall.min);
        printf("  drift check CPU: %.2f ms per check (medians: user %.2f, sys %.2f) vs %.2f ms for the bare reads "
               "= %.2fx;\n    every %u s (the default drift_check_sec) that is %.3f%% of one CPU\n",
               second->cpu.median, second->user.median, second->sys.median, rf->cpu.median,
               second->cpu.median / rf->cpu.median, DRIFT_CHECK_SEC,
               second->cpu.median / (DRIFT_CHECK_SEC * 1e3) * 100);

        const Result *refresh = &st[KIND_DRIFT_CHECK];
        printf("  drift check with the refresh (the daemon's, between full reads every 60 s): %.2f ms CPU "
               "= %.2fx the bare reads; %.3f%% of one CPU every %u s,\n    %.3f%% with a full read every 12th\n",
               refresh->cpu.median, refresh->cpu.median / rf->cpu.median,
               refresh->cpu.median / (DRIFT_CHECK_SEC * 1e3) * 100, DRIFT_CHECK_SEC,
               (11 * refresh->cpu.median + second->cpu.median) / 12 / (DRIFT_CHECK_SEC * 1e3) * 100);

        printf("\n  syscalls of one run (/proc/self/io)   read()    write()   KiB read\n");
        for (Kind k = 0; k < _KIND_MAX; k++) {
                const Alone *a = &m->alone[k];

                if (a->has_io)
                        printf("  %-36s %7" PRIu64 " %10" PRIu64 " %10.1f\n", kind_label[k], a->io.syscr,
                               a->io.syscw, (double) a->io.rchar / 1024);
        }

        printf("\n  memory\n");
        print_mib_row("peak RSS, whole run (VmHWM)", m->hwm_run, -1);
        print_mib_row("peak RSS during one cold apply", m->alone[KIND_COLD_APPLY].hwm_kib,
                      m->alone[KIND_COLD_APPLY].base_kib);
        print_mib_row("peak RSS during one second apply", m->alone[KIND_SECOND_APPLY].hwm_kib,
                      m->alone[KIND_SECOND_APPLY].base_kib);
        print_mib_row("peak RSS during the write floor", m->alone[KIND_WRITE_FLOOR].hwm_kib,
                      m->alone[KIND_WRITE_FLOOR].base_kib);
        /* exec() keeps the forking parent's peak in ru_maxrss: under meson that is meson's own. */
        if (m->maxrss > m->hwm_run + 1024)
                printf("  (ru_maxrss says %.1f MiB: the peak of the process that exec'd us, not ours)\n",
                       (double) m->maxrss / 1024);
}

/* ---- main ---- */

static void help(void) {
        printf("Usage: bench-irq [OPTIONS] MKHOST\n\n"
               "Time one daemon cycle that pins every IRQ of the 'large' fixture host (%u PFs x %u VFs,\n"
               "%u IRQs per VF) against bare writes of the same values, and the cycle that finds\n"
               "everything in place (the periodic drift check) against bare reads of the same files.\n\n"
               "  -n, --iterations N  measured iterations (default 20, or $SRIOVD_BENCH_ITERATIONS)\n"
               "  -w, --warmup N      unmeasured warm-up iterations (default 1)\n"
               "  --python PATH       interpreter for MKHOST (default python3)\n"
               "  --root DIR          copy this existing tree instead of generating one\n",
               BENCH_HOST_PFS, BENCH_HOST_VFS, BENCH_HOST_VF_IRQS);
}

static int parse_argv(int argc, char **argv, Options *o) {
        return bench_parse_argv(argc, argv, "bench-irq", 1, help, o);
}

/* The tree under tmp/root: generated, or a copy of --root (the benchmark rewrites it). */
static int make_tree(const Options *o, const char *tmp, char *root, size_t size, double *ret_ms) {
        double t0;
        int r;

        if (snprintf(root, size, "%s/root", tmp) >= (int) size)
                return -ENAMETOOLONG;
        if (!o->root)
                return bench_mkhost_large(o->python, o->mkhost, root, ret_ms);

        char *const argv[] = { (char *) "cp", (char *) "-a", (char *) "--", (char *) o->root, root, NULL };
        t0 = bench_now_ms();
        r = bench_spawn(argv);
        *ret_ms = bench_now_ms() - t0;
        return r;
}

static void bench_done(Bench *b) {
        manager_free(b->steady);
        for (size_t i = 0; i < b->n_targets; i++) {
                free(b->targets[i].before);
                free(b->targets[i].after);
        }
        free(b->targets);
        if (b->root_fd >= 0)
                close(b->root_fd);
}

int main(int argc, char **argv) {
        _cleanup_(bench_done) Bench b = { .root_fd = -EBADF };
        char tmp[PATH_MAX] = "", root[PATH_MAX], config_path[PATH_MAX];
        Options o = {};
        Result st[_KIND_MAX];
        Memory mem = {};
        TreeInfo info;
        double gen_ms = -1;
        int r, ret = EXIT_FAILURE;

        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;

        /* One info line per action would be 4168 lines a cycle. */
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);

        r = bench_mkdtemp(tmp, sizeof(tmp));
        if (r < 0) {
                fprintf(stderr, "bench-irq: cannot make a temporary directory: %s\n", strerror(-r));
                return EXIT_FAILURE;
        }
        r = make_tree(&o, tmp, root, sizeof(root), &gen_ms);
        if (r < 0) {
                if (o.root)
                        fprintf(stderr, "bench-irq: cp -a %s %s failed: %s\n", o.root, root, strerror(-r));
                else
                        fprintf(stderr, "bench-irq: %s %s large failed: %s\n", o.python, o.mkhost, strerror(-r));
                goto finish;
        }
        r = bench_write_config(tmp, config_path, sizeof(config_path));
        if (r < 0) {
                fprintf(stderr, "bench-irq: cannot write the configuration under %s: %s\n", tmp, strerror(-r));
                goto finish;
        }

        b.root = root;
        b.config_path = config_path;
        b.root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (b.root_fd < 0) {
                fprintf(stderr, "bench-irq: cannot open %s: %m\n", root);
                goto finish;
        }
        r = manager_open(&b, &b.steady);
        if (r >= 0)
                r = collect_targets(&b, b.steady, &info);
        if (r < 0) {
                fprintf(stderr, "bench-irq: dry run on %s failed: %s\n", root, strerror(-r));
                goto finish;
        }
        if (b.n_targets == 0 || info.n_other_actions > 0) {
                fprintf(stderr, "bench-irq: the plan for %s has %zu irq-affinity and %zu other action(s); "
                        "expected only irq-affinity ones%s\n", root, b.n_targets, info.n_other_actions,
                        b.n_targets == 0 ? " (a tree that was already pinned?)" : "");
                goto finish;
        }
        b.state = TREE_RESET;
        r = check_setup(&b);
        if (r < 0) {
                fprintf(stderr, "bench-irq: the daemon and the floor disagree on %s: %s\n", root, strerror(-r));
                goto finish;
        }
        print_tree(&b, &info, gen_ms, tmp, o.root);
        fflush(stdout);

        r = measure_times(&b, &o, st);
        if (r >= 0)
                r = measure_alone(&b, &mem);
        if (r < 0) {
                fprintf(stderr, "bench-irq: measuring on %s failed: %s\n", root, strerror(-r));
                goto finish;
        }
        print_report(&b, &o, st, &mem);
        ret = EXIT_SUCCESS;

finish:
        if (tmp[0]) {
                r = bench_tree_remove(tmp);
                if (r < 0)
                        fprintf(stderr, "bench-irq: failed to remove %s: %s\n", tmp, strerror(-r));
        }
        return ret;
}
