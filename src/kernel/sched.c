/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sched.c — scheduling policy and priority of IRQ handler threads */

#include <sched.h>

#include "sriovd/kernel.h"

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

int sched_thread_set(RootFs *root, pid_t pid, unsigned irq, int policy, int priority) {
        _cleanup_free_ char *buf = NULL;
        struct sched_param p = { .sched_priority = priority };
        int cur_policy, cur_priority, r;
        ProcStat st;

        /* Between observe and now the thread may have exited and its PID been reused. */
        r = rootfs_read(root, &buf, "/proc/%d/stat", (int) pid);
        if (r == -ENOENT)
                return -ESRCH;
        if (r < 0)
                return r;
        if (proc_stat_parse(buf, &st) < 0 || !(st.flags & PF_KTHREAD) ||
            irq_thread_name_parse(st.comm) != (int) irq)
                return -ESRCH;

        r = sched_thread_get(pid, &cur_policy, &cur_priority);
        if (r < 0)
                return r;
        if (cur_policy == policy && cur_priority == priority)
                return 0;
        if (sched_setscheduler(pid, policy, &p) < 0)
                return negative_errno();
        return 1;
}
