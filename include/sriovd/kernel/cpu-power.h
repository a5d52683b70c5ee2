/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpu-power.h — a CPU's cpuidle states and cpufreq governor: read them, and set them */
#pragma once

#include "sriovd/core/inventory.h"
#include "sriovd/kernel/rootfs.h"

/*
 * Reads the cpuidle states of cpu into states, at most max of them, and their count into
 * *ret_n. The states are numbered from 0 and read until the first one that is missing, so a
 * CPU without cpuidle has none. It does not fail.
 */
void cpu_idle_read(RootFs *root, unsigned cpu, HostIdleState *states, size_t max, size_t *ret_n);
/*
 * Reads the idle states, the governor and the available governors of each CPU in cpus into a
 * new array sorted by CPU. A CPU without cpuidle or cpufreq has none of them. The caller frees
 * *ret. Returns 0 or -ENOMEM.
 */
int cpu_power_read(RootFs *root, const CpuSet *cpus, CpuPower **ret, size_t *ret_n);
/*
 * Writes cpuN/cpuidle/stateK/disable. Returns 1 when it changed it, 0 when it was already so,
 * or a negative errno, -ENOENT when the state does not exist.
 */
int cpu_idle_set_disable(RootFs *root, unsigned cpu, unsigned state, bool disable);
/*
 * Writes cpuN/cpufreq/scaling_governor. Returns 1 when it changed it, 0 when it was already so,
 * or a negative errno. The kernel answers -EINVAL for a governor it does not have.
 */
int cpu_governor_set(RootFs *root, unsigned cpu, const char *governor);
