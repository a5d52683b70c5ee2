/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-apply.c — full cycles on a copy of a fixture host: apply, verify, idempotence, partial failure */

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply/apply.h"
#include "base/log.h"
#include "manager/manager.h"
#include "test.h"

static const char *fixtures_dir;

typedef struct Scratch {
        char dir[64];
        char root[128];
        char config[128];
} Scratch;

static void scratch_new(Scratch *s, const char *host, const char *conf) {
        char cmd[1024];
        FILE *f;

        strcpy(s->dir, "/tmp/sriovd-apply-XXXXXX");
        ASSERT(mkdtemp(s->dir));
        snprintf(s->root, sizeof(s->root), "%s/root", s->dir);
        snprintf(s->config, sizeof(s->config), "%s/sriovd.conf", s->dir);
        snprintf(cmd, sizeof(cmd), "cp -a %s/fixture-%s %s", fixtures_dir, host, s->root);
        ASSERT_EQ(system(cmd), 0);
        f = fopen(s->config, "we");
        ASSERT(f);
        fputs(conf, f);
        /* These tests count NIC actions; test_other_irqs_off_rt covers the host's other IRQs. */
        if (!strstr(conf, "[cpus]"))
                fputs("\n[cpus]\nkeep_irqs_off_rt = no\n", f);
        ASSERT_EQ(fclose(f), 0);
}

static void scratch_done(Scratch *s) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", s->dir);
        ASSERT_EQ(system(cmd), 0);
}

/* What a third party (irqbalance, an operator) writes behind sriovd's back. */
static void spill(const Scratch *s, const char *path, const char *value) {
        char full[512];
        FILE *f;

        snprintf(full, sizeof(full), "%s%s", s->root, path);
        f = fopen(full, "we");
        ASSERT(f);
        fputs(value, f);
        ASSERT_EQ(fclose(f), 0);
}

static char *slurp(const Scratch *s, const char *path) {
        static char buf[256];
        char full[512];
        FILE *f;
        size_t n;

        snprintf(full, sizeof(full), "%s%s", s->root, path);
        f = fopen(full, "re");
        ASSERT(f);
        n = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[n] = 0;
        return buf;
}

#define PF0 "/sys/bus/pci/devices/0000:41:00.0"
#define PF1 "/sys/bus/pci/devices/0000:c1:00.0"

TEST(apply_verify_idempotent) {
        _cleanup_(manager_freep) Manager *m = NULL;
        CycleResult res;
        Scratch s;

        scratch_new(&s, "two-socket",
                    "[match 15b3:101d]\nnum_vfs = 12\ndrivers_autoprobe = no\n\n[rt]\nrtnet_prio = 50\n");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);

        /* A dry run changes nothing. */
        /* 2 autoprobe + 2 VF counts + rtnet_prio + 82 IRQ affinities (no class sets a priority). */
        ASSERT_EQ(manager_cycle(m, CYCLE_DRY_RUN, &res), 0);
        ASSERT_EQ(res.n_actions, 87);
        ASSERT_EQ(res.n_done, 0);
        ASSERT_STREQ(slurp(&s, PF0 "/sriov_numvfs"), "8\n");
        ASSERT_STREQ(slurp(&s, "/proc/irq/44/smp_affinity_list"), "0-31\n");

        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 87);
        ASSERT_EQ(res.n_done, 87);
        ASSERT_EQ(res.n_failed, 0);
        ASSERT_EQ(res.n_drift, 0);
        ASSERT_STREQ(slurp(&s, PF0 "/sriov_numvfs"), "12");
        ASSERT_STREQ(slurp(&s, PF1 "/sriov_numvfs"), "12");
        ASSERT_STREQ(slurp(&s, PF0 "/sriov_drivers_autoprobe"), "0");
        ASSERT_STREQ(slurp(&s, "/proc/sys/net/core/rtnet_prio"), "50");

        /* The plan kept from the cycle carries the results. */
        const Plan *p = manager_plan(m);
        ASSERT_EQ(p->n_actions, 87);
        for (size_t i = 0; i < p->n_actions; i++) {
                const Action *a = &p->actions[i];
                char path[64], want[CPUSET_LIST_MAX];

                ASSERT(a->applied);
                ASSERT_EQ(a->result, 1);
                if (a->kind != ACTION_SET_IRQ_AFFINITY)
                        continue;
                /* The kernel file holds exactly what the plan said. */
                snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", a->irq);
                ASSERT_STREQ(slurp(&s, path), cpuset_format_list(&a->cpus_after, want, sizeof(want)));
        }
        /* Housekeeping CPUs of node 0 (0-1,8-15), spread: the PF's first vector on CPU 0. */
        ASSERT_STREQ(slurp(&s, "/proc/irq/44/smp_affinity_list"), "0");
        ASSERT_STREQ(slurp(&s, "/proc/irq/46/smp_affinity_list"), "8");
        ASSERT_STREQ(slurp(&s, "/proc/irq/85/smp_affinity_list"), "16");

        /* A second cycle finds nothing to do. */
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 0);
        ASSERT_EQ(res.n_done, 0);
        scratch_done(&s);
}

/* A drift event names one IRQ: its repair reads that IRQ alone, and puts it back as drift. */
TEST(repair_reads_what_events_named) {
        _cleanup_(manager_freep) Manager *m = NULL;
        unsigned irq60 = 60, nowhere = 9999;
        CycleResult res;
        Scratch s;

        scratch_new(&s, "two-socket", "[match 15b3:101d]\nnum_vfs = 8\n");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        char want60[64], want61[64];
        snprintf(want60, sizeof(want60), "%s", slurp(&s, "/proc/irq/60/smp_affinity_list"));
        snprintf(want61, sizeof(want61), "%s", slurp(&s, "/proc/irq/61/smp_affinity_list"));
        unsigned refreshes = manager_refreshes(m);

        spill(&s, "/proc/irq/60/smp_affinity_list", "2-7");
        spill(&s, "/proc/irq/61/smp_affinity_list", "2-7");
        /* An event for an IRQ that the host does not have changes nothing. */
        ASSERT_EQ(manager_repair(m, &nowhere, 1, NULL, 0, &res), 0);
        ASSERT_EQ(res.n_actions, 0);
        ASSERT_EQ(manager_repair(m, &irq60, 1, NULL, 0, &res), 0);
        ASSERT_EQ(res.n_actions, 1);
        ASSERT_EQ(res.n_done, 1);
        ASSERT_EQ(res.n_drift, 0);   /* it stuck */
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list"), want60);
        /* IRQ 61 was not named, so the repair did not read it: the drift check will. */
        ASSERT_STREQ(slurp(&s, "/proc/irq/61/smp_affinity_list"), "2-7");
        ASSERT(manager_refreshes(m) > refreshes);
        ASSERT_EQ(manager_drift_check(m, &res), 0);
        ASSERT_EQ(res.n_done, 1);
        ASSERT_STREQ(slurp(&s, "/proc/irq/61/smp_affinity_list"), want61);
        scratch_done(&s);
}

TEST(failure_is_isolated) {
        _cleanup_(manager_freep) Manager *m = NULL;
        CycleResult res;
        Scratch s;

        /*
         * A knob that refuses the write (root ignores 0444; one that cannot be read is
         * not acted on at all, so the kernel's refusal is injected: EISDIR).
         */
        ASSERT_EQ(setenv("SRIOVD_TEST_FAIL_WRITE", "0000:41:00.0/sriov_numvfs=21", 1), 0);
        scratch_new(&s, "two-socket", "[match 15b3:101d]\nnum_vfs = 4\n\n[rt]\nrtnet_prio = 50\n");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(unsetenv("SRIOVD_TEST_FAIL_WRITE"), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_DRY_RUN, &res), 0);
        ASSERT_EQ(res.n_actions, 3 + 82);

        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        /* PF0's write fails; PF1 and the sysctl still go through. */
        ASSERT_EQ(res.n_failed, 1);
        ASSERT_EQ(res.n_done, 2 + 82);
        ASSERT_EQ(res.n_drift, 0);   /* a failure is a failure, counted once; not also drift */
        ASSERT_STREQ(slurp(&s, PF1 "/sriov_numvfs"), "4");
        ASSERT_STREQ(slurp(&s, "/proc/sys/net/core/rtnet_prio"), "50");

        const Plan *p = manager_plan(m);
        bool found = false;
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_NUM_VFS && streq(p->actions[i].target, "0000:41:00.0")) {
                        ASSERT_EQ(p->actions[i].result, -EISDIR);
                        found = true;
                }
        ASSERT(found);
        scratch_done(&s);
}

TEST(irqs_pinned_managed_untouched_second_run_writes_nothing) {
        _cleanup_(manager_freep) Manager *m = NULL;
        char path[512];
        struct stat before, after;
        CycleResult res;
        Scratch s;

        scratch_new(&s, "two-socket", "[pf 0000:41:00.0]\nclass = latency-critical\n");
        /* Classes from the shipped conf/ */
        snprintf(path, sizeof(path), "cp -r %s/conf/tenant-classes.d %s/", getenv("SRIOVD_SOURCE_DIR"), s.dir);
        ASSERT_EQ(system(path), 0);
        /* IRQ 53 (VF 0 of the RT PF) is kernel-managed here: read-only. */
        snprintf(path, sizeof(path), "%s/proc/irq/53/smp_affinity_list", s.root);
        ASSERT_EQ(chmod(path, 0444), 0);

        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        ASSERT_EQ(res.n_drift, 0);

        /* latency-critical: RT cores of node 0 (2-7), one per device (single): PF on 2, VF k on 2+k+1. */
        for (unsigned irq = 44; irq <= 52; irq++) {
                snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irq);
                ASSERT_STREQ(slurp(&s, path), "2");
        }
        ASSERT_STREQ(slurp(&s, "/proc/irq/53/smp_affinity_list"), "0-31\n");   /* never fought */
        ASSERT_STREQ(slurp(&s, "/proc/irq/54/smp_affinity_list"), "3");
        ASSERT_STREQ(slurp(&s, "/proc/irq/57/smp_affinity_list"), "4");
        /* The unclassed node-1 PF stays off the RT cores 18-23. */
        for (unsigned irq = 85; irq <= 125; irq++) {
                CpuSet set, rt;
                snprintf(path, sizeof(path), "/proc/irq/%u/smp_affinity_list", irq);
                ASSERT_EQ(cpuset_parse_list(slurp(&s, path), &set), 0);
                ASSERT_EQ(cpuset_parse_list("18-23", &rt), 0);
                cpuset_and(&set, &set, &rt);
                ASSERT(cpuset_is_empty(&set));
        }
        /* Thread priorities on a fixture are planned but not carried out: its PIDs are not ours. */
        const Plan *p = manager_plan(m);
        size_t threads = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_IRQ_THREAD) {
                        ASSERT(p->actions[i].skipped);
                        threads++;
                }
        ASSERT_EQ(threads, 41);

        /* Second run: no IRQ write at all (the files keep their mtime). */
        snprintf(path, sizeof(path), "%s/proc/irq/44/smp_affinity_list", s.root);
        ASSERT_EQ(stat(path, &before), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(stat(path, &after), 0);
        ASSERT_EQ(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec);
        /* Left: what a fixture cannot take (thread priorities, coalescing, offloads), planned and skipped. */
        for (size_t i = 0; i < manager_plan(m)->n_actions; i++) {
                ActionKind k = manager_plan(m)->actions[i].kind;
                ASSERT(k == ACTION_SET_IRQ_THREAD || k == ACTION_SET_COALESCE || k == ACTION_SET_OFFLOADS);
                ASSERT(manager_plan(m)->actions[i].skipped);
        }
        ASSERT_EQ(res.n_done, 0);
        scratch_done(&s);
}

TEST(injected_kernel_errors) {
        _cleanup_(manager_freep) Manager *m = NULL;
        CycleResult res;
        Scratch s;

        /* EBUSY (transient), ENOSPC (vector space) and EPIPE (anything else: permanent). */
        ASSERT_EQ(setenv("SRIOVD_TEST_FAIL_WRITE", "/proc/irq/60/=16,/proc/irq/61/=28,/proc/irq/62/=32", 1), 0);
        scratch_new(&s, "two-socket", "");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(unsetenv("SRIOVD_TEST_FAIL_WRITE"), 0);
        ASSERT_EQ(manager_load_config(m), 0);

        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 3);
        ASSERT_EQ(res.n_done, 82 - 3);
        ASSERT_STREQ(slurp(&s, "/proc/irq/60/smp_affinity_list"), "0-31\n");   /* nothing half-applied */

        /* Next cycle: the transient and the ENOSPC ones are tried again, the permanent one not. */
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 2);
        ASSERT_EQ(res.n_failed, 2);
        const Plan *p = manager_plan(m);
        ASSERT_EQ(p->actions[0].irq, 60);
        ASSERT_EQ(p->actions[0].result, -EBUSY);
        ASSERT_EQ(p->actions[1].irq, 61);
        ASSERT_EQ(p->actions[1].result, -ENOSPC);
        scratch_done(&s);
}

TEST(other_irqs_off_rt) {
        _cleanup_(manager_freep) Manager *m = NULL;
        CycleResult res;
        Scratch s;

        scratch_new(&s, "two-socket", "[cpus]\nrt = 2-7,18-23\n");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        /* The NIC vectors, plus the timer, ACPI and the default for IRQs to come. */
        ASSERT_EQ(res.n_done, 82 + 3);
        ASSERT_EQ(res.n_drift, 0);
        ASSERT_STREQ(slurp(&s, "/proc/irq/9/smp_affinity_list"), "0-1,8-17,24-31");
        ASSERT_STREQ(slurp(&s, "/proc/irq/default_smp_affinity"), "ff03ff03");
        /* The NVMe's vectors are kernel-managed: read-only, left alone. */
        ASSERT_STREQ(slurp(&s, "/proc/irq/40/smp_affinity_list"), "0-31\n");

        /* A second cycle has nothing to do; someone moving ACPI back onto an RT CPU is drift. */
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 0);
        spill(&s, "/proc/irq/9/smp_affinity_list", "3-4,9");
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_done, 1);
        ASSERT_STREQ(slurp(&s, "/proc/irq/9/smp_affinity_list"), "9");
        scratch_done(&s);
}

TEST(immovable_irqs_remembered_for_this_boot) {
        _cleanup_(manager_freep) Manager *m = NULL;
        char conf[512], path[512];
        CycleResult res;
        Scratch s;

        /* The timer's IRQ answers EIO, as on every x86 host: not a failure, and not asked again. */
        ASSERT_EQ(setenv("SRIOVD_TEST_FAIL_WRITE", "/proc/irq/0/=5", 1), 0);
        scratch_new(&s, "two-socket", "");
        snprintf(conf, sizeof(conf), "[daemon]\nstate_dir = %s/state\n[cpus]\nrt = 2-7,18-23\n", s.dir);
        spill(&s, "/../sriovd.conf", conf);
        snprintf(path, sizeof(path), "mkdir -p %s/proc/sys/kernel/random && echo boot-one > %s/proc/sys/kernel/random/boot_id",
                 s.root, s.root);
        ASSERT_EQ(system(path), 0);
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        ASSERT_EQ(res.n_drift, 0);
        ASSERT_STREQ(slurp(&s, "/../state/unmanaged-irqs"), "boot boot-one\n0\n");
        m = manager_free(m);

        /* The next run (--once from a shell) of the same boot does not try again ... */
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, 0);
        m = manager_free(m);

        /* ... but after a reboot IRQ numbers mean other things: learned again. */
        spill(&s, "/proc/sys/kernel/random/boot_id", "boot-two\n");
        ASSERT_EQ(unsetenv("SRIOVD_TEST_FAIL_WRITE"), 0);
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_done, 1);
        ASSERT_STREQ(slurp(&s, "/proc/irq/0/smp_affinity_list"), "0-1,8-17,24-31");
        scratch_done(&s);
}

TEST(error_table) {
        static const struct {
                ActionKind kind;
                int error;
                ErrorClass class;
                const char *meaning;
        } cases[] = {
                { ACTION_SET_IRQ_AFFINITY, -EBUSY, ERROR_TRANSIENT, "retried" },
                { ACTION_SET_IRQ_AFFINITY, -EINVAL, ERROR_TRANSIENT, "retried" },
                { ACTION_SET_IRQ_AFFINITY, -ERANGE, ERROR_TRANSIENT, "retried" },
                { ACTION_SET_IRQ_AFFINITY, -ENOMEM, ERROR_TRANSIENT, "retried" },
                { ACTION_SET_IRQ_AFFINITY, -EAGAIN, ERROR_TRANSIENT, "retried" },
                { ACTION_SET_IRQ_AFFINITY, -ENOSPC, ERROR_FATAL, "vector space" },
                { ACTION_SET_IRQ_AFFINITY, -EIO, ERROR_UNMANAGED, "kernel-managed" },
                { ACTION_SET_IRQ_AFFINITY, -EPIPE, ERROR_UNMANAGED, "left alone" },
                { ACTION_SET_IRQ_THREAD, -ESRCH, ERROR_TRANSIENT, "thread is gone" },
                { ACTION_SET_IRQ_THREAD, -EPERM, ERROR_FATAL, "CAP_SYS_NICE" },
                { ACTION_SET_NUM_VFS, -EBUSY, ERROR_TRANSIENT, "in use" },
                { ACTION_SET_NUM_VFS, -ENOSPC, ERROR_FATAL, "MSI-X" },
                { ACTION_SET_RTNET_PRIO, -ENOENT, ERROR_UNMANAGED, "does not have" },
                { ACTION_SET_VF_LINK, -EOPNOTSUPP, ERROR_UNMANAGED, "cannot set this on its VFs" },
                { ACTION_SET_VF_LINK, -EINVAL, ERROR_FATAL, "refuses the value" },
                { ACTION_SET_VF_LINK, -ENODEV, ERROR_TRANSIENT, "PF netdev went away" },
                { ACTION_SET_VF_LINK, -EPERM, ERROR_FATAL, "CAP_NET_ADMIN" },
                { ACTION_SET_VF_DRIVER, -ENOENT, ERROR_FATAL, "not loaded" },
                { ACTION_SET_VF_DRIVER, -ENODEV, ERROR_TRANSIENT, "went away" },
                { ACTION_SET_VF_DRIVER, -EINVAL, ERROR_FATAL, "IOMMU group" },
                { ACTION_SET_CHANNELS, -EOPNOTSUPP, ERROR_UNMANAGED, "does not support" },
                { ACTION_SET_CHANNELS, -EINVAL, ERROR_FATAL, "channel count" },
                { ACTION_SET_CHANNELS, -EIO, ERROR_UNMANAGED, "reads back" },
                { ACTION_SET_CHANNELS, -EBUSY, ERROR_TRANSIENT, "retried" },
                { ACTION_SET_CHANNELS, -ENODEV, ERROR_TRANSIENT, "went away" },
                { ACTION_SET_CHANNELS, -EPERM, ERROR_FATAL, "CAP_NET_ADMIN" },
                { ACTION_SET_NAPI_PARAMS, -EOPNOTSUPP, ERROR_UNMANAGED, "unavailable" },
                { ACTION_SET_NAPI_PARAMS, -ENOENT, ERROR_TRANSIENT, "NAPI is gone" },
                { ACTION_SET_NAPI_PARAMS, -EIO, ERROR_UNMANAGED, "reads back" },
                { ACTION_SET_NAPI_PARAMS, -EPERM, ERROR_FATAL, "CAP_NET_ADMIN" },
                { ACTION_SET_NAPI_PIN, -ESRCH, ERROR_TRANSIENT, "thread is gone" },
                { ACTION_SET_NAPI_PIN, -EPERM, ERROR_FATAL, "CAP_SYS_NICE" },
                { ACTION_SET_NAPI_SCHED, -ESRCH, ERROR_TRANSIENT, "thread is gone" },
                { ACTION_SET_NAPI_SCHED, -EPERM, ERROR_FATAL, "CAP_SYS_NICE" },
                { ACTION_SET_KTHREAD_SCHED, -ESRCH, ERROR_TRANSIENT, "thread is gone" },
                { ACTION_SET_KTHREAD_SCHED, -EPERM, ERROR_FATAL, "CAP_SYS_NICE" },
                { ACTION_SET_KTHREAD_SCHED, -EINVAL, ERROR_FATAL, "refuses" },
                { ACTION_SET_NAPI_THREADED, -ENOENT, ERROR_UNMANAGED, "no threaded NAPI" },
                { ACTION_SET_NAPI_THREADED, -EOPNOTSUPP, ERROR_UNMANAGED, "no NAPI instances" },
                { ACTION_SET_NAPI_THREADED, -EPERM, ERROR_FATAL, "needs root" },
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                ErrorInfo e = kernel_error_classify(cases[i].kind, cases[i].error);
                ASSERT_EQ(e.class, cases[i].class);
                ASSERT_CONTAINS(e.meaning, cases[i].meaning);
        }
}

/* Without the sockets (a fixture root, or a kernel without netdev netlink) the netdev actions are
 * skipped, said so, and count as nothing done: never sent to whatever netdev has that ifindex here. */
TEST(netdev_actions_skipped) {
        _cleanup_(rootfs_freep) RootFs *root = NULL;
        char dir[] = "/tmp/test-apply-root-XXXXXX";
        const ActionKind kinds[] = { ACTION_SET_CHANNELS, ACTION_SET_NAPI_PARAMS, ACTION_SET_COALESCE };

        ASSERT(mkdtemp(dir));
        ASSERT_EQ(rootfs_new(dir, NULL, &root), 0);
        for (size_t i = 0; i < ELEMENTSOF(kinds); i++) {
                Kernel k = { .root = root };
                Action a = { .kind = kinds[i], .netdev_ifindex = 1, .napi_id = 8193 };

                a.channels_after = (ChannelsChange) { -1, -1, 2 };
                a.napi_after = (NapiParams) { 2, 20000, -1 };
                a.coalesce_after = COALESCE_CHANGE_NONE;
                ASSERT_EQ(action_apply(&k, &a), 0);
                ASSERT(a.skipped);
                ASSERT_CONTAINS(a.effect, "skipped");
        }
        ASSERT_EQ(rmdir(dir), 0);
}

TEST(bad_reload_keeps_config) {
        _cleanup_(manager_freep) Manager *m = NULL;
        Scratch s;
        FILE *f;

        scratch_new(&s, "two-socket", "[daemon]\ndrift_check_sec = 7\n");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_config(m)->drift_check_sec, 7);

        f = fopen(s.config, "we");
        ASSERT(f);
        fputs("[daemon]\ndrift_check_sec = soon\n", f);
        ASSERT_EQ(fclose(f), 0);
        ASSERT(manager_load_config(m) < 0);
        ASSERT_EQ(manager_config(m)->drift_check_sec, 7);
        scratch_done(&s);
}

/*
 * An event about a VF names it in SRIOVD_VF= and its PF in SRIOVD_PF= (here as stderr's
 * "[pf=... vf=...]", the same LogFields the journal gets); a VF address never sits in pf=.
 */
TEST(vf_events_name_the_vf) {
        _cleanup_(manager_freep) Manager *m = NULL;
        char path[] = "/tmp/test-apply-log-XXXXXX", *out, *line;
        CycleResult res;
        struct stat st;
        int fd, saved;
        Scratch s;

        scratch_new(&s, "two-socket", "");
        ASSERT_EQ(manager_new(s.root, s.config, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);

        fd = mkstemp(path);
        ASSERT(fd >= 0);
        ASSERT_EQ(unlink(path), 0);
        saved = dup(STDERR_FILENO);
        ASSERT(saved >= 0);
        ASSERT_EQ(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        log_setup(LOG_TARGET_STDERR, LOG_INFO);
        int r = manager_cycle(m, CYCLE_APPLY, &res);
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);
        ASSERT_EQ(dup2(saved, STDERR_FILENO), STDERR_FILENO);
        close(saved);
        ASSERT_EQ(r, 0);

        ASSERT_EQ(fstat(fd, &st), 0);
        out = calloc(1, (size_t) st.st_size + 1);
        ASSERT(out);
        ASSERT_EQ(pread(fd, out, (size_t) st.st_size, 0), st.st_size);
        close(fd);

        /* A VF's vector: both fields. */
        line = strstr(out, "irq-affinity 0000:41:00.2 IRQ ");
        ASSERT(line);
        *strchrnul(line, '\n') = 0;
        ASSERT_CONTAINS(line, "[pf=0000:41:00.0 vf=0000:41:00.2 irq=");
        line[strlen(line)] = '\n';
        /* The PF's own vector: no VF. */
        line = strstr(out, "irq-affinity 0000:41:00.0 IRQ ");
        ASSERT(line);
        *strchrnul(line, '\n') = 0;
        ASSERT_CONTAINS(line, "[pf=0000:41:00.0 irq=");
        ASSERT(!strstr(line, "vf="));
        line[strlen(line)] = '\n';
        /* No VF in pf=, anywhere: the fixture's VFs are 0000:41:00.2-01.1 and 0000:c1:00.2-01.1. */
        for (const char *p = out; (p = strstr(p, "pf=")); p += 3)
                ASSERT(strncmp(p, "pf=0000:41:00.0", 15) == 0 || strncmp(p, "pf=0000:c1:00.0", 15) == 0 ||
                       strncmp(p, "pf=0000:01:00.0", 15) == 0);
        free(out);
        scratch_done(&s);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);
        RUN(apply_verify_idempotent);
        RUN(repair_reads_what_events_named);
        RUN(failure_is_isolated);
        RUN(irqs_pinned_managed_untouched_second_run_writes_nothing);
        RUN(injected_kernel_errors);
        RUN(other_irqs_off_rt);
        RUN(immovable_irqs_remembered_for_this_boot);
        RUN(error_table);
        RUN(netdev_actions_skipped);
        RUN(bad_reload_keeps_config);
        RUN(vf_events_name_the_vf);
        return 0;
}
