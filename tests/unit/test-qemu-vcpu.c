/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * test-qemu-vcpu.c — a guest's vCPU threads in its QEMU: the "CPU N/ACCEL" name, the walk of
 * QEMU's task list on a fixture (and a hostile one), and a live thread of this process in a vCPU
 * thread's shape set to SCHED_FIFO and back.
 */

#include <errno.h>
#include <sched.h>
#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/qemu-vcpu.h"
#include "sriovd/kernel/sriov.h"
#include "test-fixture.h"
#include "test-thread.h"
#include "test.h"

TEST(name) {
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 0/KVM"), 0);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 17/TCG"), 17);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 255/HVF"), 255);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 0/"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU /KVM"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU -1/KVM"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 1 /KVM"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 1/KVM x"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("CPU 99999999999/KVM"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("cpu 0/KVM"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse("vhost-300"), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse(""), -EINVAL);
        ASSERT_EQ(qemu_vcpu_name_parse(NULL), -EINVAL);
}

TEST(scan_fixture) {
        char dir[] = "/tmp/sriovd-vcpu-XXXXXX";
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ VcpuThread *t = NULL;
        size_t n = 99;

        ASSERT(mkdtemp(dir));
        test_proc_qemu(dir, 300, "6b1e5f0c-2d43-4c1a-9a51-7f1f0e0d2a01");
        test_proc_thread(dir, "300/task/304", 304, "CPU 1/KVM", 0x400040, 0, 0, "0-3");
        test_proc_thread(dir, "300/task/303", 303, "CPU 0/KVM", 0x400040, 1, 10, "2");
        test_proc_thread(dir, "300/task/305", 305, "vhost-300", 0x404040, 0, 0, "0-3");
        test_proc_thread(dir, "300/task/306", 306, "IO mon_iothread", 0x400040, 0, 0, "0-3");
        /* A kernel thread of that name is no vCPU; a stat that is not one is passed over. */
        test_proc_thread(dir, "300/task/307", 307, "CPU 2/KVM", 0x208040, 0, 0, "0-3");
        sh("mkdir -p %s/proc/300/task/308 && printf 'garbage' > %s/proc/300/task/308/stat", dir, dir);
        sh("mkdir -p %s/proc/300/task/309/stat", dir);   /* a directory for a file */
        ASSERT_EQ(rootfs_new(dir, NULL, &r), 0);

        ASSERT_EQ(vcpu_threads_scan(r, 300, &t, &n), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(t[0].vcpu, 0);
        ASSERT_EQ(t[0].tid, 303);
        ASSERT_EQ(t[0].policy, SCHED_FIFO);
        ASSERT_EQ(t[0].priority, 10);
        ASSERT_EQ(t[1].vcpu, 1);
        ASSERT_EQ(t[1].tid, 304);
        ASSERT_EQ(t[1].policy, SCHED_OTHER);
        t = mfree(t);

        ASSERT_EQ(vcpu_threads_scan(r, 999, &t, &n), -ENOENT);
        ASSERT_EQ(vcpu_threads_scan(r, 0, &t, &n), -EINVAL);
        sh("rm -rf %s", dir);
}

/* A thread of this process named as QEMU names vCPU 0's (CPU 0/KVM), in the PID's task list. */
TEST(place_live_thread) {
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        _cleanup_free_ VcpuThread *t = NULL;
        struct sched_param sp;
        TestThread vcpu;
        size_t n = 0;
        int k;

        test_thread_start(&vcpu, "CPU 0/KVM");
        ASSERT_EQ(rootfs_new("/", NULL, &r), 0);
        ASSERT_EQ(vcpu_threads_scan(r, getpid(), &t, &n), 0);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(t[0].tid, vcpu.tid);
        ASSERT_EQ(t[0].vcpu, 0);

        /* Already SCHED_OTHER: nothing to do. SCHED_FIFO needs CAP_SYS_NICE: tried where it is had. */
        ASSERT_EQ(vcpu_thread_set(r, getpid(), &t[0], SCHED_OTHER, 0), 0);
        k = vcpu_thread_set(r, getpid(), &t[0], SCHED_FIFO, 1);
        if (k == -EPERM)
                fprintf(stderr, "SCHED_FIFO not permitted here: the priority part is not checked\n");
        else {
                ASSERT_EQ(k, 1);
                /* The kernel's word (glibc's pthread_getschedparam() may answer from a cache). */
                ASSERT_EQ(sched_getscheduler(vcpu.tid), SCHED_FIFO);
                ASSERT_EQ(sched_getparam(vcpu.tid, &sp), 0);
                ASSERT_EQ(sp.sched_priority, 1);
                ASSERT_EQ(vcpu_thread_set(r, getpid(), &t[0], SCHED_FIFO, 1), 0);
                ASSERT_EQ(vcpu_thread_set(r, getpid(), &t[0], SCHED_OTHER, 0), 1);
                ASSERT_EQ(sched_getscheduler(vcpu.tid), SCHED_OTHER);
        }

        /* Renamed to another vCPU's name (a TID reused): not touched. Gone: -ESRCH. */
        ASSERT_EQ(pthread_setname_np(vcpu.th, "CPU 1/KVM"), 0);
        ASSERT_EQ(vcpu_thread_set(r, getpid(), &t[0], SCHED_FIFO, 1), -ESRCH);
        test_thread_stop(&vcpu);
        ASSERT_EQ(vcpu_thread_set(r, getpid(), &t[0], SCHED_FIFO, 1), -ESRCH);
}

int main(int argc, char **argv) {
        RUN(name);
        RUN(scan_fixture);
        RUN(place_live_thread);
        return 0;
}
