/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sched.h — the scheduling of IRQ handler threads and other threads */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"
#include "sriovd/shared/util.h"

/* Reads the current policy and priority of a thread from the scheduler itself. */
int sched_thread_get(pid_t pid, int *ret_policy, int *ret_priority);
/*
 * Sets the policy and priority of the irq/N- thread pid. It first checks again, under the root's
 * /proc, that pid still is that kernel thread, because PIDs get reused. Returns 1 when it changed
 * the thread, 0 when it was already so, and -ESRCH when pid is no longer that thread.
 */
int sched_thread_set(RootFs *root, pid_t pid, unsigned irq, int policy, int priority);

/*
 * Sets the kernel thread pid, named name as a Kthread is, to cpus and to policy and priority. A
 * cpus of NULL leaves the CPUs, and a priority below 0 leaves the scheduling. It first checks
 * again under the root's /proc that pid still is that kernel thread. Returns 1 when it changed
 * the thread, 0 when it was already so, and -ESRCH when pid is no longer that thread.
 */
int sched_kthread_set(RootFs *root, pid_t pid, const char *name, const CpuSet *cpus, int policy, int priority);
/*
 * Sets tid to cpus and to policy and priority where they differ from what it has now, given in
 * the now_* arguments. A cpus of NULL leaves the CPUs, and a priority below 0 leaves the
 * scheduling. Returns 1 when it changed the thread, and 0 when it was already so. The caller has
 * checked that tid is the thread it means.
 */
int sched_thread_change(pid_t tid, const CpuSet *now_cpus, int now_policy, int now_priority, const CpuSet *cpus,
                        int policy, int priority);
/* Reads the CPUs a thread may run on, from the scheduler on live roots or else from /proc/PID/status. */
int sched_thread_cpus_get(RootFs *root, pid_t pid, CpuSet *ret);
