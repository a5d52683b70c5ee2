/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* qemu-vcpu.h — a running guest's vCPU threads in its QEMU process, and their scheduling */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "rootfs.h"

/*
 * One vCPU thread of a QEMU process. QEMU names it "CPU N/KVM" when given -name debug-threads=on,
 * which libvirt always passes. The part after the slash is the accelerator, so it may also be TCG or HVF.
 */
typedef struct VcpuThread {
        pid_t tid;
        unsigned vcpu;
        int policy, priority;        /* from /proc/QEMU/task/TID/stat */
} VcpuThread;

/* Returns N for a thread named "CPU N/ACCEL", and -EINVAL for any other name. It does no I/O. */
int qemu_vcpu_name_parse(const char *comm);
/*
 * Reads every vCPU thread of the QEMU process qemu into *ret, sorted by vCPU. The caller frees
 * *ret. Returns -ENOENT when there is no such process.
 */
int vcpu_threads_scan(RootFs *root, pid_t qemu, VcpuThread **ret, size_t *ret_n);
/*
 * Sets thread t of qemu to policy and priority. It first checks that the thread still is that
 * vCPU's thread, because a TID can be reused. Returns 1 when it changed the thread, 0 when the
 * thread already was so, and -ESRCH when the thread is gone.
 */
int vcpu_thread_set(RootFs *root, pid_t qemu, const VcpuThread *t, int policy, int priority);
