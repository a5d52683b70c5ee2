/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vhost.h — a guest's QEMU process and the vhost-net worker threads that carry its virtio-net packets */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sriovd/shared/cpuset.h"
#include "rootfs.h"

/*
 * One vhost worker of a QEMU process, named "vhost-QEMUPID". Before Linux 6.4 it is a kernel
 * thread, which may be anywhere in /proc. From 6.4 on it is a vhost_task, a thread of QEMU's own
 * process. The host's share of a virtio-net tenant's packet work runs here, so it is the host
 * vNIC thread.
 */
typedef struct VhostThread {
        pid_t tid;
        bool kthread;
        CpuSet cpus;                 /* Cpus_allowed_list of /proc/TID/status */
        int policy, priority;        /* from /proc/TID/stat */
} VhostThread;

/*
 * Parses the Cpus_allowed_list line of a /proc/PID/status text. It does no I/O. Returns -EBADMSG
 * when there is no such line or it is not a CPU list.
 */
int proc_status_cpus_parse(const char *status, CpuSet *ret);
/*
 * Whether QEMU's command line has "-uuid UUID". buf holds size bytes of NUL-separated arguments. It
 * does no I/O.
 */
bool qemu_cmdline_has_uuid(const char *buf, size_t size, const char *uuid);
/*
 * Finds the PID of the QEMU process whose command line has "-uuid UUID". libvirt always passes
 * the domain's UUID. hint is the PID found last time. If it is above 0, it is tried first, so
 * that a steady state reads one file. Returns -ENOENT when there is no such process.
 */
int qemu_pid_find(RootFs *root, const char *uuid, pid_t hint, pid_t *ret);
/*
 * Reads every vhost worker of the QEMU process qemu into *ret, sorted by TID. The caller frees
 * *ret. The workers are the threads of the process itself named vhost-QEMU. On older kernels
 * they are the kernel threads of that name. Finding none is not an error.
 */
int vhost_threads_scan(RootFs *root, pid_t qemu, VhostThread **ret, size_t *ret_n);
/*
 * Sets thread t of qemu to cpus and to policy and priority. A cpus of NULL leaves the CPUs, and
 * a priority below 0 leaves the scheduling. It first checks that t is still that worker, because
 * a TID can be reused. Returns 1 when something changed, 0 when it already was so, and -ESRCH
 * when the thread is gone.
 */
int vhost_thread_set(RootFs *root, pid_t qemu, const VhostThread *t, const CpuSet *cpus, int policy, int priority);
