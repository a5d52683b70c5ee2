/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-vhost.c — a guest's QEMU and its vhost workers: the -uuid match, the /proc walk on a fixture
 * (vhost_task threads of QEMU's process, and the kernel threads of older kernels), a hostile tree,
 * and placing a live thread of this process that has a vhost worker's name and shape (Linux 6.4+).
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/kernel/vhost.h"
#include "test-fixture.h"
#include "test-thread.h"
#include "test.h"

#define UUID_A "6b1e5f0c-2d43-4c1a-9a51-7f1f0e0d2a01"
#define UUID_B "0c9e8a77-5d1b-4e4f-8a3c-2b6d7e9f0b12"

TEST(cmdline_uuid) {
        static const char ok[] = "qemu-system-x86_64\0-name\0guest=a,debug-threads=on\0-uuid\0" UUID_A "\0-S";
        static const char last[] = "qemu\0-name\0x\0-uuid";
        static const char other[] = "qemu\0-uuid\0" UUID_B "\0";
        static const char inside[] = "qemu\0-uuidx\0" UUID_A "\0-name\0-uuid " UUID_A "\0";
        static const char prefix[] = "qemu\0-uuid\0" UUID_A "0\0";
        static const char upper[] = "qemu\0-uuid\0" "6B1E5F0C-2D43-4C1A-9A51-7F1F0E0D2A01";

        ASSERT(qemu_cmdline_has_uuid(ok, sizeof(ok) - 1, UUID_A));
        ASSERT(!qemu_cmdline_has_uuid(ok, sizeof(ok) - 1, UUID_B));
        ASSERT(!qemu_cmdline_has_uuid(last, sizeof(last) - 1, UUID_A));       /* -uuid with nothing after it */
        ASSERT(!qemu_cmdline_has_uuid(other, sizeof(other) - 1, UUID_A));
        ASSERT(!qemu_cmdline_has_uuid(inside, sizeof(inside) - 1, UUID_A));   /* only "-uuid" then the UUID */
        ASSERT(!qemu_cmdline_has_uuid(prefix, sizeof(prefix) - 1, UUID_A));
        ASSERT(qemu_cmdline_has_uuid(upper, sizeof(upper) - 1, UUID_A));      /* libvirt prints lower case */
        /* No NUL at the end (a cut read): bounded by size. */
        ASSERT(qemu_cmdline_has_uuid(ok, strlen(ok) + 1 + strlen("-name") + 1 + strlen("guest=a,debug-threads=on") + 1 +
                                                 strlen("-uuid") + 1 + strlen(UUID_A),
                                     UUID_A));
        ASSERT(!qemu_cmdline_has_uuid(ok, sizeof(ok) - 10, UUID_A));
        ASSERT(!qemu_cmdline_has_uuid("", 0, UUID_A));
        ASSERT(!qemu_cmdline_has_uuid(ok, sizeof(ok) - 1, ""));
}

TEST(scan_fixture) {
        char dir[] = "/tmp/sriovd-vhost-XXXXXX";
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ VhostThread *t = NULL;
        size_t n = 99;
        pid_t pid = 0;

        ASSERT(mkdtemp(dir));
        /* 300: a QEMU on Linux 6.4+: its workers are threads of its own, vhost-300. 302 is a vCPU. */
        test_proc_qemu(dir, 300, UUID_A);
        test_proc_thread(dir, "300/task/305", 305, "vhost-300", 0x404040, 1, 7, "2");
        test_proc_thread(dir, "300/task/301", 301, "vhost-300", 0x404040, 0, 0, "0-3");
        test_proc_thread(dir, "300/task/302", 302, "CPU 0/KVM", 0x400040, 0, 0, "1");
        /* A status without the list: not placed (nothing known of it). */
        test_proc_thread(dir, "300/task/306", 306, "vhost-300", 0x404040, 0, 0, NULL);
        sh("printf 'Name:\\tvhost-300\\n' > %s/proc/300/task/306/status", dir);
        /* 400: a QEMU on an older kernel: its worker is the kernel thread 450, vhost-400. */
        test_proc_qemu(dir, 400, UUID_B);
        test_proc_thread(dir, "450", 450, "vhost-400", 0x208040, 0, 0, "0-3");
        test_proc_thread(dir, "451", 451, "kworker/0:1", 0x4208060, 0, 0, "0");
        /* A user process that calls itself vhost-400 is no worker of it. */
        test_proc_thread(dir, "460", 460, "vhost-400", 0x400000, 0, 0, "0-3");
        /* Hostile: a FIFO for a command line (must not block), a directory, garbage. */
        sh("mkdir -p %s/proc/100 %s/proc/101/cmdline %s/proc/102 && mkfifo %s/proc/100/cmdline && "
           "printf '\\377\\376-uuid' > %s/proc/102/cmdline", dir, dir, dir, dir, dir);
        ASSERT_EQ(rootfs_new(dir, NULL, &r), 0);

        ASSERT_EQ(qemu_pid_find(r, UUID_A, 0, &pid), 0);
        ASSERT_EQ(pid, 300);
        ASSERT_EQ(qemu_pid_find(r, UUID_A, 300, &pid), 0);   /* the hint, read alone */
        ASSERT_EQ(pid, 300);
        ASSERT_EQ(qemu_pid_find(r, UUID_B, 300, &pid), 0);   /* a stale hint: looked for */
        ASSERT_EQ(pid, 400);
        ASSERT_EQ(qemu_pid_find(r, "11111111-2222-3333-4444-555555555555", 0, &pid), -ENOENT);
        ASSERT_EQ(qemu_pid_find(r, "", 0, &pid), -EINVAL);

        ASSERT_EQ(vhost_threads_scan(r, 300, &t, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(t[0].tid, 301);
        ASSERT(!t[0].kthread);
        ASSERT_EQ(cpuset_count(&t[0].cpus), 4);
        ASSERT_EQ(t[1].tid, 305);
        ASSERT_EQ(t[1].policy, 1);
        ASSERT_EQ(t[1].priority, 7);
        ASSERT(cpuset_has(&t[1].cpus, 2) && cpuset_count(&t[1].cpus) == 1);
        t = mfree(t);

        ASSERT_EQ(vhost_threads_scan(r, 400, &t, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(t[0].tid, 450);
        ASSERT(t[0].kthread);
        t = mfree(t);

        /* A QEMU gone: -ENOENT; a PID without vhost workers: none. */
        ASSERT_EQ(vhost_threads_scan(r, 999, &t, &n), -ENOENT);
        ASSERT_EQ(vhost_threads_scan(r, 102, &t, &n), -ENOENT);
        sh("mkdir -p %s/proc/102/task/102", dir);
        ASSERT_EQ(vhost_threads_scan(r, 102, &t, &n), 0);
        ASSERT_EQ(n, 0);
        t = mfree(t);

        sh("rm -rf %s", dir);
}

/* A thread of this process in the shape of a Linux 6.4+ vhost worker: vhost-PID, in the PID's task list. */
TEST(place_live_thread) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ VhostThread *t = NULL;
        cpu_set_t mine, now;
        CpuSet one = {};
        TestThread worker;
        char name[16];
        size_t n = 0;
        int first = -1, policy;
        struct sched_param sp;

        ASSERT_EQ(sched_getaffinity(0, sizeof(mine), &mine), 0);
        for (int c = 0; c < CPU_SETSIZE && first < 0; c++)
                if (CPU_ISSET(c, &mine))
                        first = c;
        ASSERT(first >= 0);
        cpuset_add(&one, (unsigned) first);

        snprintf(name, sizeof(name), "vhost-%d", (int) getpid());
        test_thread_start(&worker, name);

        ASSERT_EQ(rootfs_new("/", NULL, &r), 0);
        ASSERT_EQ(vhost_threads_scan(r, getpid(), &t, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(t[0].tid, worker.tid);
        ASSERT(!t[0].kthread);

        /* To one CPU: changed, read back from the kernel; the second time: already so. */
        ASSERT_EQ(vhost_thread_set(r, getpid(), &t[0], &one, SCHED_FIFO, -1), CPU_COUNT(&mine) > 1 ? 1 : 0);
        ASSERT_EQ(sched_getaffinity(worker.tid, sizeof(now), &now), 0);
        ASSERT_EQ(CPU_COUNT(&now), 1);
        ASSERT(CPU_ISSET(first, &now));
        ASSERT_EQ(vhost_thread_set(r, getpid(), &t[0], &one, SCHED_FIFO, -1), 0);

        /* SCHED_FIFO needs CAP_SYS_NICE (or an RLIMIT_RTPRIO): tried where this test has it. */
        int k = vhost_thread_set(r, getpid(), &t[0], NULL, SCHED_FIFO, 1);
        if (k == -EPERM)
                fprintf(stderr, "SCHED_FIFO not permitted here: the priority part is not checked\n");
        else {
                ASSERT_EQ(k, 1);
                ASSERT_EQ(pthread_getschedparam(worker.th, &policy, &sp), 0);
                ASSERT_EQ(policy, SCHED_FIFO);
                ASSERT_EQ(sp.sched_priority, 1);
                ASSERT_EQ(vhost_thread_set(r, getpid(), &t[0], NULL, SCHED_FIFO, 1), 0);
        }

        /* Renamed (a TID reused by another thread): not touched. Gone: -ESRCH. */
        ASSERT_EQ(pthread_setname_np(worker.th, "not-vhost"), 0);
        ASSERT_EQ(vhost_thread_set(r, getpid(), &t[0], &one, SCHED_FIFO, -1), -ESRCH);
        test_thread_stop(&worker);
        ASSERT_EQ(vhost_thread_set(r, getpid(), &t[0], &one, SCHED_FIFO, -1), -ESRCH);
}

int main(int argc, char **argv) {
        RUN(cmdline_uuid);
        RUN(scan_fixture);
        RUN(place_live_thread);
        return 0;
}
