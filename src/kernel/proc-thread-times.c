/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-thread-times.c — reads the CPU time of one thread, such as an IRQ thread or a ksoftirqd, from /proc/PID/task/TID/stat */

#include <errno.h>

#include "sriovd/kernel.h"
#include "sriovd/proc-counters.h"

static int thread_times_parse(const char *buf, pid_t pid, pid_t tid, ThreadTimes *ret) {
        ProcStat st;
        int r;

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

int proc_thread_times_read(RootFs *root, pid_t pid, pid_t tid, ThreadTimes *ret) {
        char buf[PROC_STAT_MAX];
        int r;

        if (pid <= 0 || tid <= 0)
                return -EINVAL;
        /* This is the task's own file, because /proc/PID/stat sums all threads of a process. */
        r = rootfs_read_attr(root, buf, sizeof(buf), "/proc/%d/task/%d/stat", (int) pid, (int) tid);
        if (r < 0)
                return r;
        return thread_times_parse(buf, pid, tid, ret);
}

int proc_thread_times_open(RootFs *root, pid_t pid, pid_t tid) {
        if (pid <= 0 || tid <= 0)
                return -EINVAL;
        return rootfs_open_file(root, "/proc/%d/task/%d/stat", (int) pid, (int) tid);
}

int proc_thread_times_reread(int fd, pid_t pid, pid_t tid, ThreadTimes *ret) {
        char buf[PROC_STAT_MAX];
        int r;

        if (pid <= 0 || tid <= 0)
                return -EINVAL;
        r = rootfs_reread(fd, buf, sizeof(buf));
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        return thread_times_parse(buf, pid, tid, ret);
}
