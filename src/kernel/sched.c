/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sched.c — scheduling policy, priority and CPUs of the kernel threads sriovd places */

#include <sched.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sched.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/kernel/vhost.h"

int sched_thread_get(pid_t pid, int *ret_policy, int *ret_priority) {
        struct sched_param p;
        int policy;

        policy = sched_getscheduler(pid);
        if (policy < 0)
                return negative_errno();
        if (sched_getparam(pid, &p) < 0)
                return negative_errno();
        *ret_policy = policy & ~SCHED_RESET_ON_FORK;
        *ret_priority = p.sched_priority;
        return 0;
}

/* Reads pid's stat if pid is still a kernel thread. Since the observe step, the thread may have
 * exited and its PID may have been reused. */
static int kthread_stat(RootFs *root, pid_t pid, ProcStat *ret) {
        char buf[PROC_STAT_MAX];
        int r;

        r = rootfs_read_attr(root, buf, sizeof(buf), "/proc/%d/stat", (int) pid);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        if (proc_stat_parse(buf, ret) < 0 || !(ret->flags & PF_KTHREAD))
                return -ESRCH;
        return 0;
}

int sched_thread_set(RootFs *root, pid_t pid, unsigned irq, int policy, int priority) {
        int cur_policy, cur_priority, r;
        ProcStat st;

        r = kthread_stat(root, pid, &st);
        if (r < 0)
                return r;
        if (irq_thread_name_parse(st.comm) != (int) irq)
                return -ESRCH;
        r = sched_thread_get(pid, &cur_policy, &cur_priority);
        if (r < 0)
                return r;
        return sched_thread_change(pid, NULL, cur_policy, cur_priority, NULL, policy, priority);
}

int sched_thread_change(pid_t tid, const CpuSet *now_cpus, int now_policy, int now_priority, const CpuSet *cpus,
                        int policy, int priority) {
        bool changed = false;

        if (cpus && !cpuset_equal(cpus, now_cpus)) {
                cpu_set_t set;

                CPU_ZERO(&set);
                for (unsigned c = 0; c < CPU_SETSIZE && c < CPUSET_MAX; c++)
                        if (cpuset_has(cpus, c))
                                CPU_SET(c, &set);
                if (sched_setaffinity(tid, sizeof(set), &set) < 0)
                        return negative_errno();
                changed = true;
        }
        if (priority >= 0 && (now_policy != policy || now_priority != priority)) {
                struct sched_param p = { .sched_priority = priority };
                if (sched_setscheduler(tid, policy, &p) < 0)
                        return negative_errno();
                changed = true;
        }
        return changed;
}

int sched_thread_cpus_get(RootFs *root, pid_t pid, CpuSet *ret) {
        _cleanup_free_ char *status = NULL;
        int r;

        if (rootfs_sched_live(root)) {
                cpu_set_t set;

                if (sched_getaffinity(pid, sizeof(set), &set) < 0)
                        return negative_errno();
                cpuset_clear(ret);
                for (unsigned c = 0; c < CPU_SETSIZE && c < CPUSET_MAX; c++)
                        if (CPU_ISSET(c, &set))
                                cpuset_add(ret, c);
                return 0;
        }
        r = rootfs_read(root, &status, "/proc/%d/status", (int) pid);
        if (r < 0)
                return r;
        return proc_status_cpus_parse(status, ret);
}

int sched_kthread_set(RootFs *root, pid_t pid, const char *name, const CpuSet *cpus, int policy, int priority) {
        int cur_policy, cur_priority, r;
        CpuSet cur_cpus = {};
        ProcStat st;

        r = kthread_stat(root, pid, &st);
        if (r < 0)
                return r;
        if (!streq(st.comm, name))
                return -ESRCH;
        r = sched_thread_get(pid, &cur_policy, &cur_priority);
        if (r < 0)
                return r;
        if (cpus) {
                r = sched_thread_cpus_get(root, pid, &cur_cpus);
                if (r < 0)
                        return r;
        }
        return sched_thread_change(pid, &cur_cpus, cur_policy, cur_priority, cpus, policy, priority);
}
