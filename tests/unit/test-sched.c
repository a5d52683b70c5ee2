/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-sched.c — real scheduler: IRQ "threads" the test spawns are raised to SCHED_FIFO and restored */

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <sys/syscall.h>

#include "base/log.h"
#include "manager/manager.h"
#include "test.h"

static int pipefd[2];
static pid_t tids[4];
static pthread_barrier_t barrier;

static void *sleeper(void *arg) {
        char c;
        tids[(size_t) arg] = (pid_t) syscall(SYS_gettid);
        pthread_barrier_wait(&barrier);
        /* Blocks until the test closes the pipe. */
        (void) !read(pipefd[0], &c, 1);
        return NULL;
}

static void write_file(const char *dir, const char *name, const char *text) {
        char path[512];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        f = fopen(path, "we");
        ASSERT(f);
        fputs(text, f);
        ASSERT_EQ(fclose(f), 0);
}

/* A /proc/TID entry that says "kernel thread irq/N-..." (or a user thread, kthread = false). */
static void fake_irq_thread(const char *root, pid_t tid, unsigned irq, bool kthread) {
        char dir[256], stat[1024], comm[64], cmd[600];

        snprintf(dir, sizeof(dir), "%s/proc/%d", root, (int) tid);
        snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
        ASSERT_EQ(system(cmd), 0);
        snprintf(comm, sizeof(comm), "irq/%u-mlx5_comp", irq);
        snprintf(stat, sizeof(stat),
                 "%d (%s) S 2 0 0 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 0 0 0 "
                 "2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                 (int) tid, comm, kthread ? 0x208040u : 0x400040u);
        write_file(dir, "stat", stat);
        strcat(comm, "\n");
        write_file(dir, "comm", comm);
}

/* A /proc/TID entry of a kernel thread named name (ksoftirqd/3, ...). */
static void fake_kthread(const char *root, pid_t tid, const char *name) {
        char dir[256], stat[1024], comm[80], cmd[600];

        snprintf(dir, sizeof(dir), "%s/proc/%d", root, (int) tid);
        snprintf(cmd, sizeof(cmd), "rm -rf %s && mkdir -p %s", dir, dir);
        ASSERT_EQ(system(cmd), 0);
        snprintf(stat, sizeof(stat),
                 "%d (%s) S 2 0 0 0 -1 %u 0 0 0 0 0 0 0 0 20 0 1 0 100 0 0 18446744073709551615 0 0 0 0 0 0 0 "
                 "2147483647 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
                 (int) tid, name, 0x208040u);
        write_file(dir, "stat", stat);
        snprintf(comm, sizeof(comm), "%s\n", name);
        write_file(dir, "comm", comm);
}

static const Action *find_kind(const Plan *p, ActionKind kind) {
        for (size_t i = 0; i < p->n_actions; i++)
                if (p->actions[i].kind == kind)
                        return &p->actions[i];
        return NULL;
}

static void expect_sched(pid_t tid, int policy, int priority) {
        struct sched_param p;
        ASSERT_EQ(sched_getscheduler(tid), policy);
        ASSERT_EQ(sched_getparam(tid, &p), 0);
        ASSERT_EQ(p.sched_priority, priority);
}

int main(int argc, char **argv) {
        char dir[] = "/tmp/sriovd-sched-XXXXXX", root[64], conf[96], classes[96], cmd[1024];
        _cleanup_(manager_freep) Manager *m = NULL;
        pthread_t threads[4];
        CycleResult res;

        ASSERT(argc == 2);
        if (geteuid() != 0) {
                fprintf(stderr, "needs root (CAP_SYS_NICE) for SCHED_FIFO: skipped\n");
                return EXIT_TEST_SKIP;
        }
        log_setup(LOG_TARGET_STDERR, LOG_WARNING);

        ASSERT_EQ(pipe(pipefd), 0);
        ASSERT_EQ(pthread_barrier_init(&barrier, NULL, 5), 0);
        for (size_t i = 0; i < 4; i++)
                ASSERT_EQ(pthread_create(&threads[i], NULL, sleeper, (void *) i), 0);
        pthread_barrier_wait(&barrier);

        /* The two-socket host, with its fixture IRQ threads replaced by ours: IRQs 44 and 45 of
         * PF 0000:41:00.0, plus a user thread that merely calls itself irq/46-... Its per-CPU
         * kernel threads go too: their PIDs are not this host's, and the scheduler here is real. */
        ASSERT(mkdtemp(dir));
        /* Where sriovd keeps what it changed on threads, as systemd's RuntimeDirectory= would. */
        ASSERT_EQ(setenv("RUNTIME_DIRECTORY", dir, 1), 0);
        snprintf(root, sizeof(root), "%s/root", dir);
        snprintf(conf, sizeof(conf), "%s/sriovd.conf", dir);
        snprintf(classes, sizeof(classes), "%s/tenant-classes.d", dir);
        snprintf(cmd, sizeof(cmd),
                 "cp -a %s/fixture-two-socket %s && mkdir -p %s && "
                 "for p in %s/proc/[0-9]*; do grep -Eq '^(irq|ksoftirqd|ktimers|rcuc)/' $p/comm && rm -rf $p; done; true",
                 argv[1], root, classes, root);
        ASSERT_EQ(system(cmd), 0);
        fake_irq_thread(root, tids[0], 44, true);
        fake_irq_thread(root, tids[1], 45, true);
        fake_irq_thread(root, tids[2], 46, false);
        write_file(classes, "rt.ini", "[class]\nvnic = sriov-required\nirq_cpus = rt\nirq_thread_priority = 70\n");
        write_file(classes, "tp.ini", "[class]\nvnic = sriov-preferred\nirq_cpus = numa-local\n");
        write_file(dir, "sriovd.conf", "[pf 0000:41:00.0]\nclass = rt\n");

        for (size_t i = 0; i < 3; i++)
                expect_sched(tids[i], SCHED_OTHER, 0);

        /* This test's threads are this host's: let the effector touch them. */
        ASSERT_EQ(setenv("SRIOVD_TEST_LIVE_SCHED", "1", 1), 0);
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        ASSERT_EQ(res.n_drift, 0);
        expect_sched(tids[0], SCHED_FIFO, 70);
        expect_sched(tids[1], SCHED_FIFO, 70);
        expect_sched(tids[2], SCHED_OTHER, 0);   /* not a kernel thread: never touched */

        /* Nothing left to do: the scheduler, not a file, says they are at 70. (Coalescing of the
         * fixture's netdevs is planned and skipped: they are not this host's.) */
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_actions, res.n_skipped);
        for (size_t i = 0; i < manager_plan(m)->n_actions; i++)
                ASSERT(manager_plan(m)->actions[i].kind == ACTION_SET_COALESCE);

        /* Another process sets irq/44-'s priority: the drift event's repair puts it back without a cycle. */
        ASSERT_EQ(sched_setscheduler(tids[0], SCHED_FIFO, &(struct sched_param) { .sched_priority = 50 }), 0);
        ASSERT_EQ(manager_repair_fast(m, NULL, 0, &tids[0], 1, &res), 1);
        ASSERT_EQ(res.n_done, 1);
        expect_sched(tids[0], SCHED_FIFO, 70);
        /* A thread that is no NIC vector's handler is the cycle's. */
        ASSERT_EQ(manager_repair_fast(m, NULL, 0, &tids[2], 1, &res), 0);

        /* The PF leaves the RT class: its threads go back to what sriovd found. */
        write_file(dir, "sriovd.conf", "[pf 0000:41:00.0]\nclass = tp\n");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        size_t restored = 0;
        for (size_t i = 0; i < manager_plan(m)->n_actions; i++) {
                const Action *a = &manager_plan(m)->actions[i];
                if (a->kind == ACTION_SET_IRQ_THREAD) {
                        ASSERT(a->restore);
                        ASSERT_EQ(a->result, 1);
                        restored++;
                }
        }
        ASSERT_EQ(restored, 2);
        expect_sched(tids[0], SCHED_OTHER, 0);
        expect_sched(tids[1], SCHED_OTHER, 0);

        /*
         * Back to RT, then sriovd crashes (no restore): a new sriovd finds in the runtime directory
         * what the threads were before, and puts them back when it stops.
         */
        write_file(dir, "sriovd.conf", "[pf 0000:41:00.0]\nclass = rt\n");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        expect_sched(tids[0], SCHED_FIFO, 70);
        manager_free(m);   /* no manager_restore_sched(): a crash */
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_load_runtime(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        expect_sched(tids[0], SCHED_FIFO, 70);   /* nothing to change while the class says RT */
        ASSERT_EQ(manager_restore_sched(m), 2);
        expect_sched(tids[0], SCHED_OTHER, 0);
        expect_sched(tids[1], SCHED_OTHER, 0);

        /*
         * And back; then sriovd stops, by default keeping the host tuned (a restart or an
         * upgrade must not drop RT threads from FIFO), what it found still on record...
         */
        write_file(dir, "sriovd.conf", "[pf 0000:41:00.0]\nclass = rt\n");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        expect_sched(tids[0], SCHED_FIFO, 70);
        ASSERT_EQ(manager_stop(m), 0);
        expect_sched(tids[0], SCHED_FIFO, 70);
        expect_sched(tids[1], SCHED_FIFO, 70);
        manager_free(m);
        /* ... so sriovd --restore, later, puts both back, and a second one has nothing to do. */
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_restore(m), 2);
        expect_sched(tids[0], SCHED_OTHER, 0);
        expect_sched(tids[1], SCHED_OTHER, 0);
        manager_free(m);
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_restore(m), 0);
        manager_free(m);

        /* restore_on_stop = yes: stopping restores them. */
        write_file(dir, "sriovd.conf", "[daemon]\nrestore_on_stop = yes\n[pf 0000:41:00.0]\nclass = rt\n");
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        expect_sched(tids[0], SCHED_FIFO, 70);
        ASSERT_EQ(manager_stop(m), 2);
        expect_sched(tids[0], SCHED_OTHER, 0);
        expect_sched(tids[1], SCHED_OTHER, 0);

        /*
         * ksoftirqd/3 on RT CPU 3 (the fixture's isolated CPUs): raised by [rt], on record by name,
         * put back when the key goes to 0, and after a crash by sriovd --restore; never once its PID
         * is another thread's.
         */
        manager_free(m);
        m = NULL;
        fake_kthread(root, tids[3], "ksoftirqd/3");
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 2\n");
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT_EQ(res.n_failed, 0);
        ASSERT(find_kind(manager_plan(m), ACTION_SET_KTHREAD_SCHED));
        ASSERT_EQ(find_kind(manager_plan(m), ACTION_SET_KTHREAD_SCHED)->result, 1);
        expect_sched(tids[3], SCHED_FIFO, 2);
        {
                char path[128], line[128];
                FILE *f;

                snprintf(path, sizeof(path), "%s/saved-sched", dir);
                f = fopen(path, "re");
                ASSERT(f);
                ASSERT(fgets(line, sizeof(line), f));
                fclose(f);
                snprintf(path, sizeof(path), "%d 0 0 0 ksoftirqd/3\n", (int) tids[3]);
                ASSERT_STREQ(line, path);
        }
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT(!find_kind(manager_plan(m), ACTION_SET_KTHREAD_SCHED));   /* a second cycle changes nothing */

        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 0\n");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        ASSERT(find_kind(manager_plan(m), ACTION_SET_KTHREAD_SCHED));
        ASSERT(find_kind(manager_plan(m), ACTION_SET_KTHREAD_SCHED)->restore);
        expect_sched(tids[3], SCHED_OTHER, 0);

        /* Raised again, then a crash: --restore puts it back by name. */
        write_file(dir, "sriovd.conf", "[rt]\nksoftirqd_priority = 3\n");
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        expect_sched(tids[3], SCHED_FIFO, 3);
        manager_free(m);
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_restore(m), 1);
        expect_sched(tids[3], SCHED_OTHER, 0);
        manager_free(m);

        /* Raised, a crash, and the PID is now another kernel thread: --restore leaves it alone. */
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_load_config(m), 0);
        ASSERT_EQ(manager_cycle(m, CYCLE_APPLY, &res), 0);
        expect_sched(tids[3], SCHED_FIFO, 3);
        manager_free(m);
        fake_kthread(root, tids[3], "kworker/3:1");
        ASSERT_EQ(manager_new(root, conf, &m), 0);
        ASSERT_EQ(manager_restore(m), 0);
        expect_sched(tids[3], SCHED_FIFO, 3);
        {
                struct sched_param sp = { .sched_priority = 0 };
                ASSERT_EQ(sched_setscheduler(tids[3], SCHED_OTHER, &sp), 0);
        }

        close(pipefd[1]);
        for (size_t i = 0; i < 4; i++)
                ASSERT_EQ(pthread_join(threads[i], NULL), 0);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
