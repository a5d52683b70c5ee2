/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* topology.c — online CPUs, NUMA nodes, isolated CPUs and the kernel features sriovd uses */

#include <string.h>

#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"
#include "sriovd/kernel/topology.h"

/* A missing file or one that reads "(null)" is an empty set, because that is how the kernel says "none". */
static int read_cpulist(RootFs *root, const char *path, CpuSet *ret) {
        _cleanup_free_ char *s = NULL;
        int r;

        cpuset_clear(ret);
        r = rootfs_read(root, &s, "%s", path);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        if (streq(s, "(null)"))
                return 0;
        return cpuset_parse_list(s, ret);
}

int topology_read(RootFs *root, Topology *ret) {
        Topology t = {};
        CpuSet nodes;
        int r, max;

        r = read_cpulist(root, "/sys/devices/system/cpu/online", &t.online);
        if (r < 0)
                return r;
        if (cpuset_is_empty(&t.online))
                return -ENODATA;   /* a host without CPUs means a broken tree */
        r = read_cpulist(root, "/sys/devices/system/cpu/isolated", &t.isolated);
        if (r < 0)
                return r;
        r = read_cpulist(root, "/sys/devices/system/cpu/nohz_full", &t.nohz_full);
        if (r < 0)
                return r;

        /* Without NUMA support there is no node directory, and every CPU is on node 0. */
        r = read_cpulist(root, "/sys/devices/system/node/online", &nodes);
        if (r < 0)
                return r;
        max = -1;
        for (unsigned n = 0; n < CPUSET_MAX; n++)
                if (cpuset_has(&nodes, n))
                        max = (int) n;
        if (max < 0) {
                t.n_nodes = 1;
                t.node_cpus = calloc(1, sizeof(CpuSet));
                if (!t.node_cpus)
                        return -ENOMEM;
                t.node_cpus[0] = t.online;
        } else {
                t.n_nodes = (unsigned) max + 1;
                t.node_cpus = calloc(t.n_nodes, sizeof(CpuSet));
                if (!t.node_cpus)
                        return -ENOMEM;
                for (unsigned n = 0; n < t.n_nodes; n++) {
                        char path[64];

                        if (!cpuset_has(&nodes, n))
                                continue;
                        snprintf(path, sizeof(path), "/sys/devices/system/node/node%u/cpulist", n);
                        r = read_cpulist(root, path, &t.node_cpus[n]);
                        if (r < 0) {
                                free(t.node_cpus);
                                return r;
                        }
                }
        }

        *ret = t;
        return 0;
}

void topology_done(Topology *t) {
        free(t->node_cpus);
        t->node_cpus = NULL;
        t->n_nodes = 0;
}

static bool cmdline_has(const char *cmdline, const char *word) {
        size_t len = strlen(word);

        for (const char *p = cmdline; (p = strstr(p, word)); p += len)
                if ((p == cmdline || p[-1] == ' ') && (p[len] == 0 || p[len] == ' ' || p[len] == '\n'))
                        return true;
        return false;
}

int kernel_caps_read(RootFs *root, bool have_irq_threads, bool irqbalance, KernelCaps *ret) {
        _cleanup_closedir_ DIR *d = NULL;
        _cleanup_free_ char *cmdline = NULL;
        KernelCaps c = { .irqbalance = irqbalance };
        long v;
        int r;

        c.preempt_rt = rootfs_read_long(root, &v, "/sys/kernel/realtime") >= 0 && v == 1;

        /* PREEMPT_RT threads every handler. Other kernels thread them only with threadirqs. */
        c.threaded_irqs = have_irq_threads || c.preempt_rt;
        if (!c.threaded_irqs && rootfs_read(root, &cmdline, "/proc/cmdline") >= 0)
                c.threaded_irqs = cmdline_has(cmdline, "threadirqs");

        r = rootfs_read_long(root, &v, "/proc/sys/net/core/rtnet_prio");
        if (r >= 0) {
                c.rtnet_prio_present = true;
                c.rtnet_prio = v;
        }

        if (rootfs_opendir(root, &d, "/sys/kernel/iommu_groups") >= 0) {
                struct dirent *de;
                while ((de = readdir(d)))
                        if (de->d_name[0] != '.') {
                                c.iommu = true;
                                break;
                        }
        }

        *ret = c;
        return 0;
}

int sysctl_set_rtnet_prio(RootFs *root, long value) {
        char buf[32];
        long cur;
        int r;

        r = rootfs_read_long(root, &cur, "/proc/sys/net/core/rtnet_prio");
        if (r < 0)
                return r;
        if (cur == value)
                return 0;
        snprintf(buf, sizeof(buf), "%ld", value);
        r = rootfs_write(root, buf, "/proc/sys/net/core/rtnet_prio");
        return r < 0 ? r : 1;
}
