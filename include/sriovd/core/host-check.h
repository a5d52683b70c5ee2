/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-check.h — does the host keep the RT CPUs quiet: the facts, the rules and their findings */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "sriovd/core/policy.h"
#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"

/*
 * The kernel layer reads the facts (src/kernel/host-facts.c). The rules in src/core/host-check.c
 * compare them with the RT and housekeeping CPUs and do no I/O. The same facts always give the
 * same findings.
 */

/* An idle state whose exit latency is above this bound, in microseconds, is too deep for an RT CPU. */
#define HOST_CHECK_IDLE_LATENCY_MAX_US 10
#define HOST_CHECK_TEXT_MAX 512

/* What one RT CPU shows. */
typedef struct HostCpuFacts {
        unsigned cpu;
        bool have_siblings;
        CpuSet siblings;               /* topology/thread_siblings_list, the CPU itself included */
        size_t n_idle;
        HostIdleState idle[HOST_IDLE_STATES_MAX];
        char governor[HOST_NAME_MAX_LEN];  /* cpufreq/scaling_governor, or "" without cpufreq */
} HostCpuFacts;

typedef struct HostFacts {
        char *cmdline;                 /* /proc/cmdline, or NULL when it cannot be read */
        CpuSet online;
        CpuSet isolated;               /* /sys/devices/system/cpu/isolated */
        CpuSet nohz_full;              /* /sys/devices/system/cpu/nohz_full; "(null)" is empty */
        bool have_default_affinity;
        CpuSet default_affinity;       /* /proc/irq/default_smp_affinity */
        bool have_rt_runtime;
        long rt_runtime_us;            /* /proc/sys/kernel/sched_rt_runtime_us; -1 is no throttling */
        bool stalld;                   /* a process named stalld runs */
        bool iommu;                    /* /sys/kernel/iommu_groups has a group */
        HostCpuFacts *cpus;            /* one per CPU that host_facts_read_cpus() was given */
        size_t n_cpus;
} HostFacts;

void host_facts_done(HostFacts *f);

typedef enum HostCheckSeverity {
        HOST_CHECK_INFO,
        HOST_CHECK_WARNING,
        HOST_CHECK_ERROR,
        _HOST_CHECK_SEVERITY_MAX,
} HostCheckSeverity;

typedef enum HostCheckStatus {
        HOST_CHECK_PASS,
        HOST_CHECK_FAIL,
        HOST_CHECK_SKIP,               /* there is nothing to check, such as without RT CPUs */
        _HOST_CHECK_STATUS_MAX,
} HostCheckStatus;

const char *host_check_severity_to_string(HostCheckSeverity s);
const char *host_check_status_to_string(HostCheckStatus s);

/* One check's outcome. Each check has one fixed severity, which a failure carries. */
typedef struct HostFinding {
        const char *check;             /* static: "isolcpus", "nohz_full", ... */
        HostCheckSeverity severity;
        HostCheckStatus status;
        char seen[HOST_CHECK_TEXT_MAX];
        char expected[HOST_CHECK_TEXT_MAX];
        char fix[HOST_CHECK_TEXT_MAX];  /* "" unless the check failed */
} HostFinding;

#define HOST_CHECKS_MAX 16

typedef struct HostCheck {
        CpuSet rt, housekeeping;       /* what the checks compared against */
        size_t n;
        HostFinding findings[HOST_CHECKS_MAX];
} HostCheck;

/* The number of checks, and the id and severity of check i, in the order of the findings. */
size_t host_check_count(void);
const char *host_check_id(size_t i);
HostCheckSeverity host_check_severity(size_t i);

/*
 * Works out the RT and housekeeping CPUs as the planner does: [cpus] rt, or the kernel's isolated
 * CPUs, and [cpus] housekeeping, or the other online CPUs. Both are cut to the online CPUs.
 */
void host_check_cpus(const HostFacts *f, const Config *cfg, CpuSet *ret_rt, CpuSet *ret_housekeeping);

/* Runs every check on the facts against cfg's CPUs. The per-CPU facts are those of the RT CPUs. */
void host_check_evaluate(const HostFacts *f, const Config *cfg, HostCheck *ret);

/* How many checks failed with the severity sev. */
size_t host_check_failed(const HostCheck *hc, HostCheckSeverity sev);

/*
 * Finds the parameter key in a kernel command line. Returns 1 and its value, which is not
 * NUL-terminated, in *ret_value and *ret_len; a parameter without "=" has an empty value.
 * Returns 0 when the command line does not have it. The last one counts, as the kernel's do.
 */
int kernel_cmdline_param(const char *cmdline, const char *key, const char **ret_value, size_t *ret_len);
