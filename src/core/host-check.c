/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-check.c — the RT host check's rules: each compares a fact with the RT CPUs and names the fix */

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/host-check.h"

void host_facts_done(HostFacts *f) {
        free(f->cmdline);
        free(f->cpus);
        *f = (HostFacts) {};
}

const char *host_check_severity_to_string(HostCheckSeverity s) {
        static const char *const table[_HOST_CHECK_SEVERITY_MAX] = {
                [HOST_CHECK_INFO] = "info", [HOST_CHECK_WARNING] = "warning", [HOST_CHECK_ERROR] = "error",
        };
        return (unsigned) s < _HOST_CHECK_SEVERITY_MAX ? table[s] : NULL;
}

const char *host_check_status_to_string(HostCheckStatus s) {
        static const char *const table[_HOST_CHECK_STATUS_MAX] = {
                [HOST_CHECK_PASS] = "pass", [HOST_CHECK_FAIL] = "fail", [HOST_CHECK_SKIP] = "skip",
        };
        return (unsigned) s < _HOST_CHECK_STATUS_MAX ? table[s] : NULL;
}

int kernel_cmdline_param(const char *cmdline, const char *key, const char **ret_value, size_t *ret_len) {
        size_t klen = strlen(key);
        const char *value = NULL;
        size_t len = 0;
        int found = 0;

        for (const char *p = cmdline ?: ""; *p;) {
                const char *end;

                while (*p && isspace((unsigned char) *p))
                        p++;
                end = p;
                while (*end && !isspace((unsigned char) *end))
                        end++;
                if ((size_t) (end - p) >= klen && strncmp(p, key, klen) == 0 &&
                    (p + klen == end || p[klen] == '=')) {
                        found = 1;
                        value = p + klen == end ? end : p + klen + 1;
                        len = (size_t) (end - value);
                }
                p = end;
        }
        if (found) {
                *ret_value = value;
                *ret_len = len;
        }
        return found;
}

/* Copies a parameter's value into buf. Returns whether the command line has the parameter. */
static bool param(const HostFacts *f, const char *key, char *buf, size_t size) {
        const char *v;
        size_t len;

        if (kernel_cmdline_param(f->cmdline, key, &v, &len) <= 0) {
                buf[0] = 0;
                return false;
        }
        snprintf(buf, size, "%.*s", (int) len, v);
        return true;
}

/*
 * Parses a CPU list parameter. isolcpus= starts with flags such as "managed_irq,domain,", which
 * go to *ret_managed_irq. An empty value and "all" mean every online CPU, as rcu_nocbs takes them.
 */
static bool param_cpus(const HostFacts *f, const char *value, CpuSet *ret, bool *ret_managed_irq) {
        const char *p = value;

        while (isalpha((unsigned char) *p) && strncmp(p, "all", 3) != 0) {
                const char *comma = strchr(p, ',');
                size_t len = comma ? (size_t) (comma - p) : strlen(p);

                if (ret_managed_irq && len == strlen("managed_irq") && strncmp(p, "managed_irq", len) == 0)
                        *ret_managed_irq = true;
                p = comma ? comma + 1 : p + len;
        }
        if (!*p || streq(p, "all")) {
                *ret = f->online;
                return true;
        }
        return cpuset_parse_list(p, ret) >= 0;
}

typedef struct Ctx {
        const HostFacts *f;
        CpuSet rt, hk;
        char rt_list[CPUSET_LIST_MAX], hk_list[CPUSET_LIST_MAX];
} Ctx;

/* Writes the CPU list of s into buf, or "none" for an empty set, and returns buf. */
static const char *list_or_none(const CpuSet *s, char *buf, size_t size) {
        if (cpuset_is_empty(s)) {
                strscpy(buf, size, "none");
                return buf;
        }
        return cpuset_format_list(s, buf, size);
}

static void say(char *buf, const char *fmt, ...) _printf_(2, 3);
static void say(char *buf, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, HOST_CHECK_TEXT_MAX, fmt, ap);
        va_end(ap);
}

/* The isolcpus= value that isolates the RT CPUs and keeps the CPUs isolated already. */
static void isolcpus_fix(const Ctx *c, HostFinding *h) {
        char buf[CPUSET_LIST_MAX];
        CpuSet all;

        cpuset_or(&all, &c->rt, &c->f->isolated);
        say(h->fix, "isolcpus=managed_irq,domain,%s on the kernel command line",
            cpuset_format_list(&all, buf, sizeof(buf)));
}

static HostCheckStatus check_isolcpus(const Ctx *c, HostFinding *h) {
        char buf[CPUSET_LIST_MAX], miss[CPUSET_LIST_MAX];
        CpuSet missing;

        cpuset_andnot(&missing, &c->rt, &c->f->isolated);
        say(h->expected, "the RT CPUs %s isolated from the scheduler's load balancing", c->rt_list);
        if (cpuset_is_empty(&missing)) {
                say(h->seen, "isolated CPUs %s", list_or_none(&c->f->isolated, buf, sizeof(buf)));
                return HOST_CHECK_PASS;
        }
        say(h->seen, "isolated CPUs %s; RT CPUs %s are not isolated", list_or_none(&c->f->isolated, buf, sizeof(buf)),
            cpuset_format_list(&missing, miss, sizeof(miss)));
        isolcpus_fix(c, h);
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_managed_irq(const Ctx *c, HostFinding *h) {
        char value[HOST_CHECK_TEXT_MAX - 64];
        bool managed_irq = false;
        CpuSet cpus;

        say(h->expected, "isolcpus= with the managed_irq flag, so that managed IRQs such as NVMe queues avoid "
            "the RT CPUs");
        if (!param(c->f, "isolcpus", value, sizeof(value)))
                say(h->seen, "no isolcpus= on the kernel command line");
        else {
                say(h->seen, "isolcpus=%s", value);
                (void) param_cpus(c->f, value, &cpus, &managed_irq);
        }
        if (managed_irq)
                return HOST_CHECK_PASS;
        isolcpus_fix(c, h);
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_nohz_full(const Ctx *c, HostFinding *h) {
        char buf[CPUSET_LIST_MAX];
        CpuSet missing;

        cpuset_andnot(&missing, &c->rt, &c->f->nohz_full);
        say(h->expected, "the RT CPUs %s in nohz_full, so that a CPU with one task gets no scheduler tick",
            c->rt_list);
        say(h->seen, "nohz_full CPUs %s", list_or_none(&c->f->nohz_full, buf, sizeof(buf)));
        if (cpuset_is_empty(&missing))
                return HOST_CHECK_PASS;
        say(h->fix, "nohz_full=%s on the kernel command line", c->rt_list);
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_rcu_nocbs(const Ctx *c, HostFinding *h) {
        char value[HOST_CHECK_TEXT_MAX / 2], buf[CPUSET_LIST_MAX];
        CpuSet nocbs = {}, all, missing;

        /* The kernel offloads the RCU callbacks of the nohz_full CPUs too. */
        if (param(c->f, "rcu_nocbs", value, sizeof(value))) {
                say(h->seen, "rcu_nocbs=%s, nohz_full CPUs %s", value, list_or_none(&c->f->nohz_full, buf, sizeof(buf)));
                (void) param_cpus(c->f, value, &nocbs, NULL);
        } else
                say(h->seen, "no rcu_nocbs=, nohz_full CPUs %s", list_or_none(&c->f->nohz_full, buf, sizeof(buf)));
        cpuset_or(&all, &nocbs, &c->f->nohz_full);
        cpuset_andnot(&missing, &c->rt, &all);
        say(h->expected, "the RCU callbacks of the RT CPUs %s offloaded to the housekeeping CPUs", c->rt_list);
        if (cpuset_is_empty(&missing))
                return HOST_CHECK_PASS;
        say(h->fix, "rcu_nocbs=%s on the kernel command line", c->rt_list);
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_irqaffinity(const Ctx *c, HostFinding *h) {
        char value[HOST_CHECK_TEXT_MAX / 2], def[CPUSET_LIST_MAX] = "unknown";
        CpuSet cpus, on_rt;
        bool ok = false;

        if (c->f->have_default_affinity)
                list_or_none(&c->f->default_affinity, def, sizeof(def));
        if (param(c->f, "irqaffinity", value, sizeof(value))) {
                say(h->seen, "irqaffinity=%s; /proc/irq/default_smp_affinity %s", value, def);
                if (param_cpus(c->f, value, &cpus, NULL)) {
                        cpuset_and(&on_rt, &cpus, &c->rt);
                        ok = !cpuset_is_empty(&cpus) && cpuset_is_empty(&on_rt);
                }
        } else
                say(h->seen, "no irqaffinity=; /proc/irq/default_smp_affinity %s", def);
        say(h->expected, "irqaffinity= within the housekeeping CPUs %s, so that IRQs set up at boot avoid the RT CPUs",
            c->hk_list);
        if (ok)
                return HOST_CHECK_PASS;
        if (cpuset_is_empty(&c->hk))
                say(h->fix, "leave some online CPUs out of [cpus] rt for housekeeping, then set irqaffinity= to them");
        else
                say(h->fix, "irqaffinity=%s on the kernel command line", c->hk_list);
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_smt(const Ctx *c, HostFinding *h) {
        char buf[CPUSET_LIST_MAX];
        CpuSet siblings = {};
        bool known = false;

        /* Two RT CPUs that share a core disturb each other too, so only the CPU itself is left out. */
        for (size_t i = 0; i < c->f->n_cpus; i++) {
                const HostCpuFacts *cpu = &c->f->cpus[i];
                CpuSet others, self = {};

                if (!cpu->have_siblings)
                        continue;
                known = true;
                cpuset_add(&self, cpu->cpu);
                cpuset_andnot(&others, &cpu->siblings, &self);
                cpuset_and(&others, &others, &c->f->online);
                cpuset_or(&siblings, &siblings, &others);
        }
        say(h->expected, "no online SMT sibling of an RT CPU, so that no other thread shares an RT CPU's core");
        if (!known) {
                say(h->seen, "no topology/thread_siblings_list of the RT CPUs");
                return HOST_CHECK_PASS;
        }
        if (cpuset_is_empty(&siblings)) {
                say(h->seen, "no RT CPU shares its core with an online CPU");
                return HOST_CHECK_PASS;
        }
        cpuset_format_list(&siblings, buf, sizeof(buf));
        say(h->seen, "online SMT siblings of the RT CPUs: %s", buf);
        say(h->fix, "nosmt on the kernel command line, or write 0 to /sys/devices/system/cpu/cpuN/online of CPUs %s",
            buf);
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_cpuidle(const Ctx *c, HostFinding *h) {
        char states[HOST_CHECK_TEXT_MAX / 2] = "", cpus_buf[CPUSET_LIST_MAX], v1[32], v2[32];
        CpuSet cpus = {};
        size_t k = 0;
        bool any = false;

        for (size_t i = 0; i < c->f->n_cpus; i++) {
                const HostCpuFacts *cpu = &c->f->cpus[i];

                for (size_t j = 0; j < cpu->n_idle; j++) {
                        const HostIdleState *s = &cpu->idle[j];
                        char one[64];

                        any = true;
                        if (s->disabled || s->latency_us <= HOST_CHECK_IDLE_LATENCY_MAX_US)
                                continue;
                        cpuset_add(&cpus, cpu->cpu);
                        snprintf(one, sizeof(one), "%s (%u us)", s->name, s->latency_us);
                        if (strstr(states, one))
                                continue;
                        k += (size_t) snprintf(states + k, sizeof(states) - MIN(k, sizeof(states)), "%s%s",
                                               k ? ", " : "", one);
                        k = MIN(k, sizeof(states) - 1);
                }
        }
        say(h->expected, "no idle state with an exit latency above %u us enabled on the RT CPUs",
            HOST_CHECK_IDLE_LATENCY_MAX_US);
        if (!any) {
                say(h->seen, "no cpuidle states on the RT CPUs");
                return HOST_CHECK_PASS;
        }
        if (cpuset_is_empty(&cpus)) {
                say(h->seen, "no deep idle state enabled on the RT CPUs");
                return HOST_CHECK_PASS;
        }
        param(c->f, "processor.max_cstate", v1, sizeof(v1));
        param(c->f, "intel_idle.max_cstate", v2, sizeof(v2));
        say(h->seen, "%s enabled on CPUs %s; processor.max_cstate=%s, intel_idle.max_cstate=%s", states,
            cpuset_format_list(&cpus, cpus_buf, sizeof(cpus_buf)), v1[0] ? v1 : "unset", v2[0] ? v2 : "unset");
        say(h->fix, "processor.max_cstate=1 intel_idle.max_cstate=0 on the kernel command line, or write 1 to "
            "/sys/devices/system/cpu/cpuN/cpuidle/stateK/disable of those states on the RT CPUs, "
            "or let sriovd do it with [rt] idle_states = limit");
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_governor(const Ctx *c, HostFinding *h) {
        char buf[CPUSET_LIST_MAX], names[HOST_CHECK_TEXT_MAX / 4] = "";
        CpuSet cpus = {};
        bool any = false;

        for (size_t i = 0; i < c->f->n_cpus; i++) {
                const HostCpuFacts *cpu = &c->f->cpus[i];

                if (!cpu->governor[0])
                        continue;
                any = true;
                if (streq(cpu->governor, "performance"))
                        continue;
                cpuset_add(&cpus, cpu->cpu);
                if (!strstr(names, cpu->governor) && strlen(names) + strlen(cpu->governor) + 2 < sizeof(names)) {
                        if (names[0])
                                strcat(names, ", ");
                        strcat(names, cpu->governor);
                }
        }
        say(h->expected, "the performance governor on the RT CPUs, so that their clock does not change under load");
        if (!any) {
                say(h->seen, "no cpufreq on the RT CPUs");
                return HOST_CHECK_PASS;
        }
        if (cpuset_is_empty(&cpus)) {
                say(h->seen, "performance on every RT CPU");
                return HOST_CHECK_PASS;
        }
        say(h->seen, "governor %s on CPUs %s", names, cpuset_format_list(&cpus, buf, sizeof(buf)));
        say(h->fix, "write performance to /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor of the RT CPUs, "
            "or let sriovd do it with [rt] cpufreq_governor = performance, "
            "or cpufreq.default_governor=performance on the kernel command line");
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_rt_throttling(const Ctx *c, HostFinding *h) {
        say(h->expected, "kernel.sched_rt_runtime_us = -1, so that the kernel never pauses an RT thread that uses "
            "its CPU whole");
        if (!c->f->have_rt_runtime) {
                say(h->seen, "/proc/sys/kernel/sched_rt_runtime_us cannot be read");
                return HOST_CHECK_SKIP;
        }
        say(h->seen, "kernel.sched_rt_runtime_us = %ld", c->f->rt_runtime_us);
        if (c->f->rt_runtime_us < 0)
                return HOST_CHECK_PASS;
        say(h->fix, "kernel.sched_rt_runtime_us = -1 in /etc/sysctl.d/, with stalld running");
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_stalld(const Ctx *c, HostFinding *h) {
        bool off = c->f->have_rt_runtime && c->f->rt_runtime_us < 0;

        say(h->expected, "stalld running while RT throttling is off, so that a starved kernel thread still runs");
        if (c->f->stalld) {
                say(h->seen, "stalld runs");
                return HOST_CHECK_PASS;
        }
        if (!off) {
                say(h->seen, "no stalld, and RT throttling is on");
                return HOST_CHECK_PASS;
        }
        say(h->seen, "RT throttling is off and no stalld process runs");
        say(h->fix, "install stalld and run systemctl enable --now stalld");
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_iommu(const Ctx *c, HostFinding *h) {
        char intel[32], amd[32];

        param(c->f, "intel_iommu", intel, sizeof(intel));
        param(c->f, "amd_iommu", amd, sizeof(amd));
        say(h->expected, "an IOMMU with groups, so that VFs can be passed through");
        say(h->seen, "%s; intel_iommu=%s, amd_iommu=%s",
            c->f->iommu ? "IOMMU groups present" : "no group in /sys/kernel/iommu_groups",
            intel[0] ? intel : "unset", amd[0] ? amd : "unset");
        if (c->f->iommu)
                return HOST_CHECK_PASS;
        say(h->fix, "intel_iommu=on iommu=pt, or amd_iommu=on iommu=pt, on the kernel command line, with VT-d or "
            "AMD-Vi on in the firmware");
        return HOST_CHECK_FAIL;
}

static HostCheckStatus check_iommu_pt(const Ctx *c, HostFinding *h) {
        char value[32];

        say(h->expected, "iommu=pt, so that the host's own devices skip IOMMU translation");
        if (!param(c->f, "iommu", value, sizeof(value)))
                say(h->seen, "no iommu= on the kernel command line");
        else
                say(h->seen, "iommu=%s", value);
        if (!c->f->iommu)
                return HOST_CHECK_SKIP;
        if (streq(value, "pt"))
                return HOST_CHECK_PASS;
        say(h->fix, "iommu=pt on the kernel command line");
        return HOST_CHECK_FAIL;
}

typedef struct CheckDef {
        const char *id;
        HostCheckSeverity severity;
        bool needs_rt;                 /* skipped when there are no RT CPUs */
        HostCheckStatus (*run)(const Ctx *c, HostFinding *h);
} CheckDef;

static const CheckDef checks[] = {
        { "isolcpus", HOST_CHECK_ERROR, true, check_isolcpus },
        { "managed_irq", HOST_CHECK_WARNING, true, check_managed_irq },
        { "nohz_full", HOST_CHECK_WARNING, true, check_nohz_full },
        { "rcu_nocbs", HOST_CHECK_WARNING, true, check_rcu_nocbs },
        { "irqaffinity", HOST_CHECK_WARNING, true, check_irqaffinity },
        { "smt", HOST_CHECK_WARNING, true, check_smt },
        { "cpuidle", HOST_CHECK_WARNING, true, check_cpuidle },
        { "governor", HOST_CHECK_WARNING, true, check_governor },
        { "rt_throttling", HOST_CHECK_WARNING, true, check_rt_throttling },
        { "stalld", HOST_CHECK_WARNING, true, check_stalld },
        { "iommu", HOST_CHECK_ERROR, false, check_iommu },
        { "iommu_pt", HOST_CHECK_INFO, false, check_iommu_pt },
};

_Static_assert(sizeof(checks) / sizeof(checks[0]) <= HOST_CHECKS_MAX, "too many checks");

size_t host_check_count(void) {
        return ELEMENTSOF(checks);
}

const char *host_check_id(size_t i) {
        return i < ELEMENTSOF(checks) ? checks[i].id : NULL;
}

HostCheckSeverity host_check_severity(size_t i) {
        return i < ELEMENTSOF(checks) ? checks[i].severity : HOST_CHECK_INFO;
}

void host_check_cpus(const HostFacts *f, const Config *cfg, CpuSet *ret_rt, CpuSet *ret_housekeeping) {
        cpuset_and(ret_rt, cfg && cfg->have_rt_cpus ? &cfg->rt_cpus : &f->isolated, &f->online);
        if (cfg && cfg->have_housekeeping_cpus)
                cpuset_and(ret_housekeeping, &cfg->housekeeping_cpus, &f->online);
        else
                cpuset_andnot(ret_housekeeping, &f->online, ret_rt);
}

void host_check_evaluate(const HostFacts *f, const Config *cfg, HostCheck *ret) {
        Ctx c = { .f = f };

        host_check_cpus(f, cfg, &c.rt, &c.hk);
        list_or_none(&c.rt, c.rt_list, sizeof(c.rt_list));
        list_or_none(&c.hk, c.hk_list, sizeof(c.hk_list));
        *ret = (HostCheck) { .rt = c.rt, .housekeeping = c.hk, .n = ELEMENTSOF(checks) };
        for (size_t i = 0; i < ELEMENTSOF(checks); i++) {
                HostFinding *h = &ret->findings[i];

                h->check = checks[i].id;
                h->severity = checks[i].severity;
                if (checks[i].needs_rt && cpuset_is_empty(&c.rt)) {
                        h->status = HOST_CHECK_SKIP;
                        say(h->seen, "no RT CPUs: [cpus] rt is not set and the kernel isolates none");
                        continue;
                }
                h->status = checks[i].run(&c, h);
                if (h->status != HOST_CHECK_FAIL)
                        h->fix[0] = 0;
        }
}

size_t host_check_failed(const HostCheck *hc, HostCheckSeverity sev) {
        size_t n = 0;

        for (size_t i = 0; i < hc->n; i++)
                n += hc->findings[i].status == HOST_CHECK_FAIL && hc->findings[i].severity == sev;
        return n;
}
