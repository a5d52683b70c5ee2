/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu-power.c — a CPU's cpuidle states and cpufreq governor, read and written through the rooted helper */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/kernel/cpu-power.h"

#define CPU_DIR "/sys/devices/system/cpu/cpu%u"

void cpu_idle_read(RootFs *root, unsigned cpu, HostIdleState *states, size_t max, size_t *ret_n) {
        size_t n = 0;

        for (unsigned k = 0; k < max; k++) {
                HostIdleState *s = &states[n];
                long latency, disable;

                if (rootfs_read_long(root, &latency, CPU_DIR "/cpuidle/state%u/latency", cpu, k) < 0)
                        break;
                *s = (HostIdleState) { .index = k, .latency_us = latency > 0 ? (unsigned) latency : 0 };
                if (rootfs_read_attr(root, s->name, sizeof(s->name), CPU_DIR "/cpuidle/state%u/name", cpu, k) < 0)
                        snprintf(s->name, sizeof(s->name), "state%u", k);
                s->disabled = rootfs_read_long(root, &disable, CPU_DIR "/cpuidle/state%u/disable", cpu, k) >= 0 &&
                              disable != 0;
                n++;
        }
        *ret_n = n;
}

int cpu_power_read(RootFs *root, const CpuSet *cpus, CpuPower **ret, size_t *ret_n) {
        unsigned n = cpuset_count(cpus);
        CpuPower *a;

        a = calloc(n ?: 1, sizeof(*a));
        if (!a)
                return -ENOMEM;
        for (unsigned i = 0; i < n; i++) {
                CpuPower *c = &a[i];

                c->cpu = (unsigned) cpuset_nth(cpus, i);
                cpu_idle_read(root, c->cpu, c->idle, ELEMENTSOF(c->idle), &c->n_idle);
                if (rootfs_read_attr(root, c->governor, sizeof(c->governor), CPU_DIR "/cpufreq/scaling_governor",
                                     c->cpu) < 0)
                        c->governor[0] = 0;
                if (rootfs_read_attr(root, c->governors, sizeof(c->governors),
                                     CPU_DIR "/cpufreq/scaling_available_governors", c->cpu) < 0)
                        c->governors[0] = 0;
        }
        *ret = a;
        *ret_n = n;
        return 0;
}

int cpu_idle_set_disable(RootFs *root, unsigned cpu, unsigned state, bool disable) {
        long cur;
        int r;

        r = rootfs_read_long(root, &cur, CPU_DIR "/cpuidle/state%u/disable", cpu, state);
        if (r < 0)
                return r;
        if ((cur != 0) == disable)
                return 0;
        r = rootfs_write(root, disable ? "1" : "0", CPU_DIR "/cpuidle/state%u/disable", cpu, state);
        return r < 0 ? r : 1;
}

int cpu_governor_set(RootFs *root, unsigned cpu, const char *governor) {
        char cur[HOST_NAME_MAX_LEN];
        int r;

        r = rootfs_read_attr(root, cur, sizeof(cur), CPU_DIR "/cpufreq/scaling_governor", cpu);
        if (r < 0)
                return r;
        if (streq(cur, governor))
                return 0;
        r = rootfs_write(root, governor, CPU_DIR "/cpufreq/scaling_governor", cpu);
        return r < 0 ? r : 1;
}
