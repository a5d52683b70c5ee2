/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-ksoftirqd.c — which PID is each CPU's ksoftirqd, from one walk over /proc */

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel.h"
#include "sriovd/proc-counters.h"

int proc_ksoftirqd_scan(RootFs *root, const unsigned *cpus, size_t n_cpus, pid_t *ret_by_cpu) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;
        int r;

        r = rootfs_opendir(root, &d, "/proc");
        if (r < 0)
                return r;
        for (size_t k = 0; k < n_cpus; k++)
                ret_by_cpu[k] = 0;

        while ((de = readdir(d))) {
                _cleanup_free_ char *buf = NULL;
                unsigned long cpu;
                ProcStat st;
                char *end;

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                /* Processes come and go while we walk: a vanished one is not an error. */
                if (rootfs_read(root, &buf, "/proc/%s/stat", de->d_name) < 0 || proc_stat_parse(buf, &st) < 0)
                        continue;
                if (!(st.flags & PF_KTHREAD) || strncmp(st.comm, "ksoftirqd/", 10) != 0 ||
                    !isdigit((unsigned char) st.comm[10]))
                        continue;
                errno = 0;
                cpu = strtoul(st.comm + 10, &end, 10);
                if (errno || *end)
                        continue;
                for (size_t k = 0; k < n_cpus; k++)
                        if (cpus[k] == cpu)
                                ret_by_cpu[k] = st.pid;
        }
        return 0;
}
