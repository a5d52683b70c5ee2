/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-facts.c — the RT host check's raw facts, read through the rooted helper */

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/cpu-power.h"
#include "sriovd/kernel/host-facts.h"

static void read_cpus(RootFs *root, const char *path, CpuSet *ret) {
        char buf[CPUSET_LIST_MAX];

        cpuset_clear(ret);
        /* nohz_full reads "(null)" when the command line has none. */
        if (rootfs_read_attr(root, buf, sizeof(buf), "%s", path) >= 0 && !streq(buf, "(null)"))
                (void) cpuset_parse_list(buf, ret);
}

/* Whether a process named stalld runs. Its /proc/PID/comm is "stalld". */
static bool stalld_running(RootFs *root) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (rootfs_opendir(root, &d, "/proc") < 0)
                return false;
        while ((de = readdir(d))) {
                char comm[32];

                if (!isdigit((unsigned char) de->d_name[0]))
                        continue;
                /* Processes come and go during the walk, so a vanished one is not an error. */
                if (rootfs_read_attr(root, comm, sizeof(comm), "/proc/%s/comm", de->d_name) >= 0 &&
                    streq(comm, "stalld"))
                        return true;
        }
        return false;
}

static bool iommu_has_groups(RootFs *root) {
        _cleanup_closedir_ DIR *d = NULL;
        struct dirent *de;

        if (rootfs_opendir(root, &d, "/sys/kernel/iommu_groups") < 0)
                return false;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        return true;
        return false;
}

int host_facts_read(RootFs *root, HostFacts *ret) {
        _cleanup_(host_facts_done) HostFacts f = {};
        char buf[CPUSET_LIST_MAX];
        long v;

        if (rootfs_read_attr(root, buf, sizeof(buf), "/sys/devices/system/cpu/online") < 0 ||
            cpuset_parse_list(buf, &f.online) < 0)
                return -ENOENT;
        (void) rootfs_read(root, &f.cmdline, "/proc/cmdline");
        read_cpus(root, "/sys/devices/system/cpu/isolated", &f.isolated);
        read_cpus(root, "/sys/devices/system/cpu/nohz_full", &f.nohz_full);
        if (rootfs_read_attr(root, buf, sizeof(buf), "/proc/irq/default_smp_affinity") >= 0 &&
            cpuset_parse_mask(buf, &f.default_affinity) >= 0)
                f.have_default_affinity = true;
        if (rootfs_read_long(root, &v, "/proc/sys/kernel/sched_rt_runtime_us") >= 0) {
                f.have_rt_runtime = true;
                f.rt_runtime_us = v;
        }
        f.stalld = stalld_running(root);
        f.iommu = iommu_has_groups(root);
        *ret = f;
        f = (HostFacts) {};
        return 0;
}

int host_facts_read_cpus(RootFs *root, const CpuSet *cpus, HostFacts *f) {
        unsigned n = cpuset_count(cpus);
        HostCpuFacts *a;

        a = calloc(n ?: 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                HostCpuFacts *c = &a[i];
                char buf[CPUSET_LIST_MAX];

                c->cpu = (unsigned) cpuset_nth(cpus, i);
                if (rootfs_read_attr(root, buf, sizeof(buf), "/sys/devices/system/cpu/cpu%u/topology/thread_siblings_list",
                                     c->cpu) >= 0 && cpuset_parse_list(buf, &c->siblings) >= 0)
                        c->have_siblings = true;
                cpu_idle_read(root, c->cpu, c->idle, ELEMENTSOF(c->idle), &c->n_idle);
                if (rootfs_read_attr(root, c->governor, sizeof(c->governor),
                                     "/sys/devices/system/cpu/cpu%u/cpufreq/scaling_governor", c->cpu) < 0)
                        c->governor[0] = 0;
        }
        free(f->cpus);
        f->cpus = a;
        f->n_cpus = n;
        return 0;
}
