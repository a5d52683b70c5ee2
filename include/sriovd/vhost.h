/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* vhost.h — a guest's QEMU process and the vhost-net worker threads that carry its virtio-net packets */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "sriovd/cpuset.h"
#include "sriovd/rootfs.h"

/*
 * One vhost worker of a QEMU process: "vhost-QEMUPID". Before Linux 6.4 it is a kernel thread
 * (anywhere in /proc); from 6.4 on a vhost_task, a thread of QEMU's own process. The host's
 * share of a virtio-net tenant's packet work runs here: it is the host vNIC thread.
 */
typedef struct VhostThread {
        pid_t tid;
        bool kthread;
        CpuSet cpus;                 /* Cpus_allowed_list of /proc/TID/status */
        int policy, priority;        /* from /proc/TID/stat */
} VhostThread;

/* Pure: the Cpus_allowed_list line of a /proc/PID/status text. -EBADMSG: none, or not a CPU list. */
int proc_status_cpus_parse(const char *status, CpuSet *ret);
/* Pure: whether QEMU's command line (size bytes, NUL-separated arguments) has "-uuid UUID". */
bool qemu_cmdline_has_uuid(const char *buf, size_t size, const char *uuid);
/*
 * The PID of the QEMU process whose command line has "-uuid UUID" (libvirt always passes the
 * domain's); hint, if > 0, is tried first (the PID found last time) so that a steady state reads
 * one file. -ENOENT: no such process.
 */
int qemu_pid_find(RootFs *root, const char *uuid, pid_t hint, pid_t *ret);
/*
 * Every vhost worker of QEMU process qemu, sorted by TID: the threads of the process itself
 * named vhost-QEMU, else (older kernels) the kernel threads of that name. None is not an error.
 */
int vhost_threads_scan(RootFs *root, pid_t qemu, VhostThread **ret, size_t *ret_n);
/*
 * Thread t of qemu to cpus (NULL: leave) and policy/priority (priority < 0: leave), checking
 * first that t is still that worker (a TID can be reused). 1 when something changed, 0 when
 * it already was so, -ESRCH when the thread is gone.
 */
int vhost_thread_set(RootFs *root, pid_t qemu, const VhostThread *t, const CpuSet *cpus, int policy, int priority);
