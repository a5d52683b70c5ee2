/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-facts.h — what the RT host check reads: the command line, isolation, idle states, throttling */
#pragma once

#include "sriovd/core/host-check.h"
#include "sriovd/kernel/rootfs.h"

/*
 * Reads the facts that are not per CPU into *ret: /proc/cmdline, the online, isolated and
 * nohz_full CPUs, /proc/irq/default_smp_affinity, kernel.sched_rt_runtime_us, whether a stalld
 * process runs, and whether the IOMMU has groups. A fact that cannot be read is left empty.
 * Returns 0, or -ENOENT when the online CPUs cannot be read, and then nothing is usable. The
 * caller frees *ret with host_facts_done().
 */
int host_facts_read(RootFs *root, HostFacts *ret);
/*
 * Reads the per-CPU facts of the CPUs in cpus into f->cpus: the SMT siblings, the cpuidle states
 * and the cpufreq governor. A CPU without cpuidle or cpufreq has none. Returns 0 or -ENOMEM.
 */
int host_facts_read_cpus(RootFs *root, const CpuSet *cpus, HostFacts *f);
