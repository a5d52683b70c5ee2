/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* qemu-vcpu.h — a running guest's vCPU threads in its QEMU process, and their scheduling */
#pragma once

#include <stddef.h>
#include <sys/types.h>

#include "sriovd/rootfs.h"

/*
 * One vCPU thread of a QEMU process: "CPU N/KVM" (or /TCG, /HVF: the accelerator), the name QEMU
 * gives it with -name debug-threads=on, which libvirt always passes.
 */
typedef struct VcpuThread {
        pid_t tid;
        unsigned vcpu;
        int policy, priority;        /* from /proc/QEMU/task/TID/stat */
} VcpuThread;

/* Pure: N of a thread named "CPU N/ACCEL"; -EINVAL for any other name. */
int qemu_vcpu_name_parse(const char *comm);
/* Every vCPU thread of QEMU process qemu, sorted by vCPU. -ENOENT: no such process. */
int vcpu_threads_scan(RootFs *root, pid_t qemu, VcpuThread **ret, size_t *ret_n);
/*
 * Thread t of qemu to policy/priority, checking first that it still is that vCPU's thread (a
 * TID can be reused). 1 when it changed, 0 when it already was so, -ESRCH when it is gone.
 */
int vcpu_thread_set(RootFs *root, pid_t qemu, const VcpuThread *t, int policy, int priority);
