/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-threads.c — walks the threads under a /proc directory, a process's task list or /proc itself, with their stat */

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdlib.h>

#include "sriovd/kernel/irq-files.h"
#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"

int proc_pid_parse(const char *s, pid_t *ret) {
        long v;
        char *end;

        if (!isdigit((unsigned char) s[0]))
                return -EINVAL;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || *end || v <= 0 || v > INT32_MAX)
                return -EINVAL;
        *ret = (pid_t) v;
        return 0;
}

int proc_thread_stat(RootFs *root, const char *dir, pid_t tid, ProcStat *ret) {
        char buf[PROC_STAT_MAX];
        int r;

        /* A thread that is gone is not a thread to place. In a hostile tree, a path without a
         * readable stat file is not one either, so both give -ESRCH. Running out of file descriptors
         * or memory says nothing about the thread, so those errors are passed up as they are. */
        r = rootfs_read_attr(root, buf, sizeof(buf), "%s/%d/stat", dir, (int) tid);
        if (r == -EMFILE || r == -ENFILE || r == -ENOMEM)
                return r;
        if (r < 0 || proc_stat_parse(buf, ret) < 0)
                return -ESRCH;
        return 0;
}

int proc_threads_each(RootFs *root, const char *dir, pid_t skip, ProcThreadFn fn, void *userdata) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, "%s", dir);
        if (r < 0)
                return r;
        while ((de = readdir(d))) {
                ProcStat st;
                pid_t tid;

                if (proc_pid_parse(de->d_name, &tid) < 0 || tid == skip)
                        continue;
                r = proc_thread_stat(root, dir, tid, &st);
                if (r == -ESRCH)
                        continue;
                if (r < 0)
                        return r;
                r = fn(root, dir, tid, &st, userdata);
                if (r < 0)
                        return r;
        }
        return 0;
}
