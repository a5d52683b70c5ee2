/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-thread-times.c — reads the CPU time of one thread, such as an IRQ thread or a ksoftirqd, from /proc/PID/task/TID/stat */

#include <errno.h>
#include <stdlib.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/proc-counters.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"

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

int proc_schedstat_parse(const char *buf, ThreadSchedstat *ret) {
        unsigned long long v[3];
        const char *p = buf;

        for (unsigned i = 0; i < 3; i++) {
                char *end;

                while (*p == ' ')
                        p++;
                if (*p < '0' || *p > '9')
                        return -EBADMSG;
                errno = 0;
                v[i] = strtoull(p, &end, 10);
                if (errno != 0)
                        return -EBADMSG;
                p = end;
        }
        while (*p == ' ' || *p == '\n')
                p++;
        if (*p)
                return -EBADMSG;
        *ret = (ThreadSchedstat) { .run_ns = v[0], .wait_ns = v[1], .timeslices = v[2] };
        return 0;
}

int proc_schedstat_read(RootFs *root, pid_t tid, ThreadSchedstat *ret) {
        char buf[96];
        int r;

        if (tid <= 0)
                return -EINVAL;
        r = rootfs_read_attr(root, buf, sizeof(buf), "/proc/%d/schedstat", (int) tid);
        if (r < 0)
                return r == -EFBIG ? -EBADMSG : r;
        return proc_schedstat_parse(buf, ret);
}
