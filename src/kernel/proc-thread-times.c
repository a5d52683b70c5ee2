/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-thread-times.c — the CPU time of one thread (an IRQ thread, a ksoftirqd) from /proc/PID/task/TID/stat */

#include <errno.h>

#include "sriovd/kernel.h"
#include "sriovd/proc-counters.h"

int proc_thread_times_read(RootFs *root, pid_t pid, pid_t tid, ThreadTimes *ret) {
        _cleanup_free_ char *buf = NULL;
        ProcStat st;
        int r;

        if (pid <= 0 || tid <= 0)
                return -EINVAL;
        /* The task's own file: /proc/PID/stat sums all threads of a process. */
        r = rootfs_read(root, &buf, "/proc/%d/task/%d/stat", (int) pid, (int) tid);
        if (r < 0)
                return r;
        r = proc_stat_parse(buf, &st);
        if (r < 0)
                return r == -ERANGE ? r : -EBADMSG;
        if (st.pid != tid)
                return -EBADMSG;

        *ret = (ThreadTimes) {
                .pid = pid,
                .tid = tid,
                .utime = st.utime,
                .stime = st.stime,
                .start_time = st.start_time,
        };
        return 0;
}
