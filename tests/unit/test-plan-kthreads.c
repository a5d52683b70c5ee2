/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-plan-kthreads.c — ksoftirqd/ktimers/rcuc of the RT CPUs planned on a hand-built host */

#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "sriovd/core/plan.h"
#include "test-fixture.h"

static const char *fixtures_dir;
static char classes[] = "/tmp/sriovd-kthread-classes-XXXXXX";

static void write_class(const char *name, const char *text) {
        char path[256];

        snprintf(path, sizeof(path), "%s/%s.ini", classes, name);
        test_write_file(path, text);
}

static Config *config(const char *text) {
        return test_config(text, classes);
}

/*
 * A host of 8 CPUs, 4-7 RT (given in each config): ksoftirqd/N everywhere, rcuc/N on 0-5 only
 * (as if 6-7 had none), no ktimers (not PREEMPT_RT). PIDs: ksoftirqd/N = 100 + N, rcuc/N = 200 + N.
 */
#define N_CPUS 8
static Kthread threads[2 * N_CPUS];
static Inventory host;

static void host_reset(void) {
        size_t n = 0;

        for (unsigned c = 0; c < N_CPUS; c++) {
                threads[n] = (Kthread) { .kind = KTHREAD_KSOFTIRQD, .num = c, .pid = 100 + (pid_t) c,
                                         .policy = SCHED_OTHER, .priority = 0 };
                snprintf(threads[n++].name, KTHREAD_NAME_MAX, "ksoftirqd/%u", c);
        }
        for (unsigned c = 0; c < 6; c++) {
                threads[n] = (Kthread) { .kind = KTHREAD_RCUC, .num = c, .pid = 200 + (pid_t) c,
                                         .policy = SCHED_FIFO, .priority = 1 };
                snprintf(threads[n++].name, KTHREAD_NAME_MAX, "rcuc/%u", c);
        }
        host = (Inventory) { .kthreads = threads, .n_kthreads = n };
        ASSERT_EQ(cpuset_parse_list("0-7", &host.topo.online), 0);
}

static Kthread *thread(KthreadKind kind, unsigned cpu) {
        return (Kthread *) inventory_find_kthread(&host, kind, cpu);
}

static const Action *find_pid(const Plan *p, pid_t pid) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == ACTION_SET_KTHREAD_SCHED && p->actions[i].pid == pid)
                        return &p->actions[i];
        return NULL;
}

static size_t count_kind(const Plan *p, ActionKind kind) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_actions; i++)
                n += p->actions[i].kind == kind;
        return n;
}

static size_t count_notes(const Plan *p, NoteLevel level, const char *needle) {
        size_t n = 0;
        for (size_t i = 0; i < p->n_notes; i++)
                n += p->notes[i].level == level && strstr(p->notes[i].text, needle);
        return n;
}

TEST(rt_cpus_only) {
        _cleanup_(config_freep) Config *c = config("[cpus]\nrt = 4-7\n[rt]\nksoftirqd_priority = 2\nrcuc_priority = 4\n");
        _cleanup_(plan_freep) Plan *p = NULL;
        const Action *a;

        host_reset();
        ASSERT_EQ(plan_build(&host, c, NULL, &p), 0);
        /* ksoftirqd/4..7 and rcuc/4..5: the housekeeping CPUs' threads are not touched. */
        ASSERT_EQ(count_kind(p, ACTION_SET_KTHREAD_SCHED), 4 + 2);
        for (unsigned cpu = 0; cpu < 4; cpu++) {
                ASSERT(!find_pid(p, 100 + (pid_t) cpu));
                ASSERT(!find_pid(p, 200 + (pid_t) cpu));
        }
        a = find_pid(p, 105);
        ASSERT(a);
        ASSERT_STREQ(a->target, "");
        ASSERT_STREQ(a->thread_name, "ksoftirqd/5");
        ASSERT_EQ(a->policy_before, SCHED_OTHER);
        ASSERT_EQ(a->before, 0);
        ASSERT_EQ(a->policy_after, SCHED_FIFO);
        ASSERT_EQ(a->after, 2);
        ASSERT(!a->restore);
        ASSERT_STREQ(a->effect, "ksoftirqd/5 on RT CPU 5");
        a = find_pid(p, 204);
        ASSERT(a);
        ASSERT_STREQ(a->thread_name, "rcuc/4");
        ASSERT_EQ(a->policy_before, SCHED_FIFO);
        ASSERT_EQ(a->before, 1);
        ASSERT_EQ(a->after, 4);

        /* rcuc/6 and rcuc/7 are missing: one note for the kind, naming the CPUs; ktimers not asked for. */
        ASSERT_EQ(count_notes(p, NOTE_INFO, "no rcuc/N thread on RT CPUs 6-7; rcuc_priority = 4 not applied there"), 1);
        ASSERT_EQ(count_notes(p, NOTE_INFO, "ktimers"), 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "priority order is broken"), 0);
}

TEST(already_right_and_no_rt_cpus) {
        _cleanup_(config_freep) Config *c = config("[cpus]\nrt = 4-7\n[rt]\nksoftirqd_priority = 2\n");
        _cleanup_(config_freep) Config *none = config("[cpus]\nrt =\n[rt]\nksoftirqd_priority = 2\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;

        host_reset();
        for (unsigned cpu = 4; cpu < 8; cpu++) {
                thread(KTHREAD_KSOFTIRQD, cpu)->policy = SCHED_FIFO;
                thread(KTHREAD_KSOFTIRQD, cpu)->priority = 2;
        }
        /* The same priority under SCHED_RR is not what was asked for. */
        thread(KTHREAD_KSOFTIRQD, 7)->policy = SCHED_RR;
        ASSERT_EQ(plan_build(&host, c, NULL, &p), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_KTHREAD_SCHED), 1);
        ASSERT(find_pid(p, 107));
        ASSERT_EQ(find_pid(p, 107)->policy_before, SCHED_RR);

        /* No RT CPUs: nothing to do, and nothing missing. */
        host_reset();
        ASSERT_EQ(plan_build(&host, none, NULL, &q), 0);
        ASSERT_EQ(count_kind(q, ACTION_SET_KTHREAD_SCHED), 0);
        ASSERT_EQ(count_notes(q, NOTE_INFO, "ksoftirqd"), 0);
}

TEST(restore_and_pid_reuse) {
        _cleanup_(config_freep) Config *leave = config("[cpus]\nrt = 4-7\n");
        _cleanup_(config_freep) Config *fewer = config("[cpus]\nrt = 5-7\n[rt]\nksoftirqd_priority = 2\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        /* sriovd raised ksoftirqd/4 and /5 earlier; 5's PID now belongs to another thread (rcuc/5 moved
         * there in this test); an IRQ thread's entry with the same PID is not a kthread's. */
        SavedSched saved[] = {
                { .pid = 104, .irq = 0, .policy = SCHED_OTHER, .priority = 0, .name = "ksoftirqd/4" },
                { .pid = 106, .irq = 0, .policy = SCHED_OTHER, .priority = 0, .name = "ksoftirqd/9" },
                { .pid = 107, .irq = 44, .policy = SCHED_OTHER, .priority = 0, .name = "" },
        };
        PlanContext ctx = { .saved = saved, .n_saved = ELEMENTSOF(saved) };
        const Action *a;

        host_reset();
        for (unsigned cpu = 4; cpu < 8; cpu++) {
                thread(KTHREAD_KSOFTIRQD, cpu)->policy = SCHED_FIFO;
                thread(KTHREAD_KSOFTIRQD, cpu)->priority = 2;
        }

        /* The priority went back to 0: ksoftirqd/4 is put back; /6 (another name) and /7 (an IRQ's) are not. */
        ASSERT_EQ(plan_build(&host, leave, &ctx, &p), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_KTHREAD_SCHED), 1);
        a = find_pid(p, 104);
        ASSERT(a);
        ASSERT(a->restore);
        ASSERT_EQ(a->policy_before, SCHED_FIFO);
        ASSERT_EQ(a->before, 2);
        ASSERT_EQ(a->policy_after, SCHED_OTHER);
        ASSERT_EQ(a->after, 0);
        ASSERT_STREQ(a->thread_name, "ksoftirqd/4");
        ASSERT_STREQ(a->effect, "ksoftirqd/4 back as sriovd found it");

        /* CPU 4 left the RT set: put back too, while the RT CPUs' threads stay where they are. */
        ASSERT_EQ(plan_build(&host, fewer, &ctx, &q), 0);
        ASSERT_EQ(count_kind(q, ACTION_SET_KTHREAD_SCHED), 1);
        ASSERT(find_pid(q, 104));
        ASSERT(find_pid(q, 104)->restore);

        /* Already as found: nothing to restore. */
        thread(KTHREAD_KSOFTIRQD, 4)->policy = SCHED_OTHER;
        thread(KTHREAD_KSOFTIRQD, 4)->priority = 0;
        q = plan_free(q);
        ASSERT_EQ(plan_build(&host, leave, &ctx, &q), 0);
        ASSERT_EQ(count_kind(q, ACTION_SET_KTHREAD_SCHED), 0);
}

TEST(missing_kind) {
        _cleanup_(config_freep) Config *c = config("[cpus]\nrt = 4-7\n[rt]\nktimers_priority = 3\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;

        host_reset();
        ASSERT_EQ(plan_build(&host, c, NULL, &p), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_KTHREAD_SCHED), 0);
        ASSERT_EQ(count_notes(p, NOTE_INFO, "no ktimers/N threads: not a PREEMPT_RT kernel; ktimers_priority = 3 not applied"),
                  1);
        ASSERT_EQ(count_notes(p, NOTE_INFO, "ktimers"), 1);   /* one per kind, not one per CPU */
        ASSERT_EQ(count_notes(p, NOTE_ERROR, ""), 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "ktimers"), 0);

        /* No rcuc anywhere: its own reason. */
        host_reset();
        host.n_kthreads = N_CPUS;
        c = config_free(c);
        c = config("[cpus]\nrt = 4-7\n[rt]\nrcuc_priority = 4\n");
        ASSERT_EQ(plan_build(&host, c, NULL, &q), 0);
        ASSERT_EQ(count_notes(q, NOTE_INFO, "no rcuc/N threads: RCU callbacks run in softirq here"), 1);
}

TEST(host_order_warning) {
        _cleanup_(config_freep) Config *c = config("[cpus]\nrt = 4-7\n[rt]\nksoftirqd_priority = 2\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL, *r = NULL;
        PlanAllocation alloc = { .vf = "0000:41:00.2", .tenant = "t1", .class_name = "rt", .vcpu0_cpu = -1 };
        PlanAllocation bulk = { .vf = "0000:41:00.3", .tenant = "t2", .class_name = "bulk", .vcpu0_cpu = -1 };
        PlanContext ctx = { .allocations = &alloc, .n_allocations = 1 };
        PlanContext bulk_only = { .allocations = &bulk, .n_allocations = 1 };

        /* Someone else put rcuc/5 at FIFO 60, above the RT class's NAPI threads (FIFO 55); rcuc/1 is
         * on a housekeeping CPU and rcuc/4 is below. sriovd's own ksoftirqd change counts as done. */
        host_reset();
        thread(KTHREAD_RCUC, 5)->priority = 60;
        thread(KTHREAD_RCUC, 1)->priority = 99;
        thread(KTHREAD_KSOFTIRQD, 6)->policy = SCHED_FIFO;
        thread(KTHREAD_KSOFTIRQD, 6)->priority = 70;   /* sriovd lowers it to 2: no warning */
        ASSERT_EQ(plan_build(&host, c, &ctx, &p), 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "the RT priority order is broken"), 1);
        ASSERT_EQ(count_notes(p, NOTE_WARNING,
                              "rcuc/5 (pid 205) runs at fifo 60 on RT CPU 5, not below class rt's NAPI threads at "
                              "FIFO 55: the RT priority order is broken on this host; set rcuc_priority below 55"),
                  1);
        ASSERT_EQ(find_pid(p, 106)->after, 2);

        /* At the RT class's priority is broken too; a class not on the RT CPUs does not count. */
        thread(KTHREAD_RCUC, 5)->priority = 55;
        ASSERT_EQ(plan_build(&host, c, &ctx, &q), 0);
        ASSERT_EQ(count_notes(q, NOTE_WARNING, "rcuc/5 (pid 205) runs at fifo 55"), 1);
        ASSERT_EQ(plan_build(&host, c, &bulk_only, &r), 0);
        ASSERT_EQ(count_notes(r, NOTE_WARNING, "priority order is broken"), 0);
}

/* The generated hosts (tests/fixtures/mkhost.py): the kthreads as discovery finds them. */
TEST(fixture_hosts) {
        _cleanup_(inventory_freep) Inventory *rt = test_fixture_inventory(fixtures_dir, "two-socket", NULL);
        _cleanup_(inventory_freep) Inventory *std = test_fixture_inventory(fixtures_dir, "one-socket-cx7", NULL);
        _cleanup_(config_freep) Config *c = config("[rt]\nksoftirqd_priority = 2\nktimers_priority = 3\nrcuc_priority = 4\n"
                                                    "[pf 0000:41:00.0]\nclass = rt\n");
        _cleanup_(config_freep) Config *c7 = config("[cpus]\nrt = 6-7\n[rt]\nksoftirqd_priority = 2\nktimers_priority = 3\n");
        _cleanup_(plan_freep) Plan *p = NULL, *q = NULL;
        const Action *a;

        /* PREEMPT_RT, RT CPUs 2-7,18-23 (isolated): each of the three kinds on each of the 12. */
        ASSERT_EQ(plan_build(rt, c, NULL, &p), 0);
        ASSERT_EQ(count_kind(p, ACTION_SET_KTHREAD_SCHED), 3 * 12);
        a = find_pid(p, 200 + 3 * 18);
        ASSERT(a);
        ASSERT_STREQ(a->thread_name, "ksoftirqd/18");
        ASSERT_EQ(a->after, 2);
        a = find_pid(p, 201 + 3 * 2);
        ASSERT(a);
        ASSERT_STREQ(a->thread_name, "ktimers/2");
        ASSERT_EQ(a->policy_before, SCHED_FIFO);
        ASSERT_EQ(a->before, 1);
        ASSERT_EQ(a->after, 3);
        ASSERT(!find_pid(p, 200 + 3 * 8));   /* housekeeping */
        ASSERT_EQ(count_notes(p, NOTE_INFO, "no ksoftirqd"), 0);
        ASSERT_EQ(count_notes(p, NOTE_WARNING, "priority order is broken"), 0);

        /* A stock kernel: ksoftirqd/6 and /7 only, and one note that ktimers cannot be. */
        ASSERT_EQ(plan_build(std, c7, NULL, &q), 0);
        ASSERT_EQ(count_kind(q, ACTION_SET_KTHREAD_SCHED), 2);
        ASSERT(find_pid(q, 200 + 3 * 6));
        ASSERT(find_pid(q, 200 + 3 * 7));
        ASSERT_EQ(count_notes(q, NOTE_INFO, "no ktimers/N threads: not a PREEMPT_RT kernel"), 1);
}

int main(int argc, char **argv) {
        char cmd[256];

        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        ASSERT(mkdtemp(classes));
        write_class("rt", "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 90\n"
                          "napi_threads = on\nnapi_thread_priority = 55\n");
        write_class("bulk", "[class]\nvnic = virtio\nirq_thread_priority = 10\n");

        RUN(rt_cpus_only);
        RUN(already_right_and_no_rt_cpus);
        RUN(restore_and_pid_reuse);
        RUN(missing_kind);
        RUN(host_order_warning);
        RUN(fixture_hosts);

        snprintf(cmd, sizeof(cmd), "rm -rf %s", classes);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
