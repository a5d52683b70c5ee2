/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-host-check.c — the RT host check's rules: one broken fact fails exactly its check, with the fix */

#include <stdlib.h>
#include <string.h>

#include "sriovd/core/host-check.h"
#include "test.h"

#define TUNED_CMDLINE "ro quiet isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 " \
                      "irqaffinity=0-1,4-7 intel_iommu=on iommu=pt"

/* A host with CPUs 0-7 that isolates 2-3 well. Every check passes on it. */
static void tuned(HostFacts *f, char *cmdline) {
        *f = (HostFacts) { .cmdline = cmdline, .have_rt_runtime = true, .rt_runtime_us = -1, .stalld = true,
                           .iommu = true, .have_default_affinity = true };
        ASSERT_EQ(cpuset_parse_list("0-7", &f->online), 0);
        ASSERT_EQ(cpuset_parse_list("2-3", &f->isolated), 0);
        f->nohz_full = f->isolated;
        ASSERT_EQ(cpuset_parse_list("0-1,4-7", &f->default_affinity), 0);
        f->n_cpus = 2;
        f->cpus = calloc(2, sizeof(HostCpuFacts));
        ASSERT(f->cpus);
        for (unsigned i = 0; i < 2; i++) {
                HostCpuFacts *c = &f->cpus[i];

                c->cpu = 2 + i;
                c->have_siblings = true;
                cpuset_add(&c->siblings, c->cpu);
                c->n_idle = 2;
                c->idle[0] = (HostIdleState) { .name = "POLL", .index = 0, .latency_us = 0 };
                c->idle[1] = (HostIdleState) { .name = "C1", .index = 1, .latency_us = 2 };
                strcpy(c->governor, "performance");
        }
}

static void set_cmdline(HostFacts *f, const char *s) {
        strcpy(f->cmdline, s);
}

static void m_none(HostFacts *f) {
        (void) f;
}
static void m_not_isolated(HostFacts *f) {
        ASSERT_EQ(cpuset_parse_list("2", &f->isolated), 0);
}
static void m_no_managed_irq(HostFacts *f) {
        set_cmdline(f, "isolcpus=domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1,4-7 iommu=pt");
}
static void m_no_nohz_full(HostFacts *f) {
        /* rcu_nocbs= still covers the RT CPUs. */
        cpuset_clear(&f->nohz_full);
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 rcu_nocbs=2-3 irqaffinity=0-1,4-7 iommu=pt");
}
static void m_nohz_implies_nocbs(HostFacts *f) {
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 irqaffinity=0-1,4-7 iommu=pt");
}
static void m_no_nocbs(HostFacts *f) {
        cpuset_clear(&f->nohz_full);
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 irqaffinity=0-1,4-7 iommu=pt");
}
static void m_nocbs_all(HostFacts *f) {
        cpuset_clear(&f->nohz_full);
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 rcu_nocbs irqaffinity=0-1,4-7 iommu=pt nohz_full=2-3");
}
static void m_irqaffinity_on_rt(HostFacts *f) {
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-3 iommu=pt");
}
static void m_no_irqaffinity(HostFacts *f) {
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 iommu=pt");
}
static void m_smt(HostFacts *f) {
        cpuset_add(&f->cpus[0].siblings, 6);
}
static void m_smt_offline(HostFacts *f) {
        cpuset_add(&f->cpus[0].siblings, 6);
        ASSERT_EQ(cpuset_parse_list("0-5,7", &f->online), 0);
}
static void m_deep_idle(HostFacts *f) {
        f->cpus[1].idle[2] = (HostIdleState) { .name = "C6", .index = 2, .latency_us = 133 };
        f->cpus[1].n_idle = 3;
}
static void m_deep_idle_disabled(HostFacts *f) {
        f->cpus[1].idle[2] = (HostIdleState) { .name = "C6", .index = 2, .latency_us = 133, .disabled = true };
        f->cpus[1].n_idle = 3;
}
static void m_powersave(HostFacts *f) {
        strcpy(f->cpus[0].governor, "powersave");
}
static void m_no_cpufreq(HostFacts *f) {
        f->cpus[0].governor[0] = f->cpus[1].governor[0] = 0;
}
static void m_throttled(HostFacts *f) {
        f->rt_runtime_us = 950000;
        f->stalld = false;
}
static void m_no_stalld(HostFacts *f) {
        f->stalld = false;
}
static void m_no_iommu(HostFacts *f) {
        f->iommu = false;
}
static void m_no_pt(HostFacts *f) {
        set_cmdline(f, "isolcpus=managed_irq,domain,2-3 nohz_full=2-3 rcu_nocbs=2-3 irqaffinity=0-1,4-7");
}

static const struct {
        const char *name;
        void (*mutate)(HostFacts *f);
        const char *failed;        /* the checks that fail, in table order, space-separated */
        const char *fix;           /* in the first failure's fix */
} rows[] = {
        { "tuned", m_none, "", NULL },
        { "not isolated", m_not_isolated, "isolcpus", "isolcpus=managed_irq,domain,2-3 " },
        { "no managed_irq", m_no_managed_irq, "managed_irq", "isolcpus=managed_irq,domain,2-3" },
        { "no nohz_full", m_no_nohz_full, "nohz_full", "nohz_full=2-3 on the kernel command line" },
        { "nohz_full offloads RCU", m_nohz_implies_nocbs, "", NULL },
        { "no rcu_nocbs", m_no_nocbs, "nohz_full rcu_nocbs", "nohz_full=2-3" },
        { "rcu_nocbs alone is all", m_nocbs_all, "nohz_full", "nohz_full=2-3" },
        { "irqaffinity on RT", m_irqaffinity_on_rt, "irqaffinity", "irqaffinity=0-1,4-7 on" },
        { "no irqaffinity", m_no_irqaffinity, "irqaffinity", "irqaffinity=0-1,4-7" },
        { "smt", m_smt, "smt", "nosmt on the kernel command line, or write 0 to /sys/devices/system/cpu/cpuN/online of CPUs 6" },
        { "smt sibling offline", m_smt_offline, "", NULL },
        { "deep idle", m_deep_idle, "cpuidle", "processor.max_cstate=1 intel_idle.max_cstate=0" },
        { "deep idle disabled", m_deep_idle_disabled, "", NULL },
        { "powersave", m_powersave, "governor", "write performance to" },
        { "no cpufreq", m_no_cpufreq, "", NULL },
        { "throttled", m_throttled, "rt_throttling", "kernel.sched_rt_runtime_us = -1" },
        { "no stalld", m_no_stalld, "stalld", "systemctl enable --now stalld" },
        { "no iommu", m_no_iommu, "iommu", "intel_iommu=on iommu=pt" },
        { "no iommu=pt", m_no_pt, "iommu_pt", "iommu=pt on the kernel command line" },
};

static void failed_list(const HostCheck *hc, char *buf, size_t size) {
        buf[0] = 0;
        for (size_t i = 0; i < hc->n; i++)
                if (hc->findings[i].status == HOST_CHECK_FAIL) {
                        if (buf[0])
                                strncat(buf, " ", size - strlen(buf) - 1);
                        strncat(buf, hc->findings[i].check, size - strlen(buf) - 1);
                }
}

TEST(rules) {
        _cleanup_(config_freep) Config *cfg = NULL;

        /* [cpus] rt = 2-3, so that a CPU the kernel stops isolating is still an RT CPU. */
        ASSERT_EQ(config_new("test.conf", NULL, &cfg), 0);
        cfg->have_rt_cpus = true;
        ASSERT_EQ(cpuset_parse_list("2-3", &cfg->rt_cpus), 0);
        for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
                char cmdline[512] = TUNED_CMDLINE, failed[256];
                HostCheck hc;
                HostFacts f;

                tuned(&f, cmdline);
                rows[i].mutate(&f);
                host_check_evaluate(&f, cfg, &hc);
                failed_list(&hc, failed, sizeof(failed));
                fprintf(stderr, "%s: [%s]\n", rows[i].name, failed);
                ASSERT_STREQ(failed, rows[i].failed);
                ASSERT_EQ(hc.n, host_check_count());
                for (size_t k = 0; k < hc.n; k++) {
                        const HostFinding *h = &hc.findings[k];

                        ASSERT_STREQ(h->check, host_check_id(k));
                        ASSERT_EQ(h->severity, host_check_severity(k));
                        ASSERT(h->seen[0]);
                        /* A fix exactly where a check failed. */
                        ASSERT_EQ(!!h->fix[0], h->status == HOST_CHECK_FAIL);
                }
                for (size_t k = 0; rows[i].fix && k < hc.n; k++)
                        if (hc.findings[k].status == HOST_CHECK_FAIL) {
                                ASSERT_CONTAINS(hc.findings[k].fix, rows[i].fix);
                                break;
                        }
                f.cmdline = NULL;
                host_facts_done(&f);
        }
}

TEST(no_rt_skips) {
        char cmdline[512] = TUNED_CMDLINE;
        HostCheck hc;
        HostFacts f;

        tuned(&f, cmdline);
        cpuset_clear(&f.isolated);
        f.iommu = false;
        host_check_evaluate(&f, NULL, &hc);
        for (size_t k = 0; k < hc.n; k++) {
                const HostFinding *h = &hc.findings[k];
                bool cpu_check = !streq(h->check, "iommu") && !streq(h->check, "iommu_pt");

                ASSERT_EQ(h->status, cpu_check ? HOST_CHECK_SKIP : streq(h->check, "iommu") ? HOST_CHECK_FAIL :
                          HOST_CHECK_SKIP);
        }
        ASSERT_EQ(host_check_failed(&hc, HOST_CHECK_ERROR), 1);
        ASSERT_EQ(host_check_failed(&hc, HOST_CHECK_WARNING), 0);
        f.cmdline = NULL;
        host_facts_done(&f);
}

TEST(config_cpus) {
        _cleanup_(config_freep) Config *cfg = NULL;
        char cmdline[512] = TUNED_CMDLINE, buf[64];
        CpuSet rt, hk;
        HostCheck hc;
        HostFacts f;

        tuned(&f, cmdline);
        ASSERT_EQ(config_new("test.conf", NULL, &cfg), 0);
        /* [cpus] rt names a CPU that the kernel does not isolate: an error, with the fix for both. */
        cfg->have_rt_cpus = true;
        ASSERT_EQ(cpuset_parse_list("2-4", &cfg->rt_cpus), 0);
        host_check_cpus(&f, cfg, &rt, &hk);
        ASSERT_STREQ(cpuset_format_list(&rt, buf, sizeof(buf)), "2-4");
        ASSERT_STREQ(cpuset_format_list(&hk, buf, sizeof(buf)), "0-1,5-7");
        host_check_evaluate(&f, cfg, &hc);
        ASSERT_EQ(hc.findings[0].status, HOST_CHECK_FAIL);
        ASSERT_STREQ(hc.findings[0].seen, "isolated CPUs 2-3; RT CPUs 4 are not isolated");
        ASSERT_STREQ(hc.findings[0].fix, "isolcpus=managed_irq,domain,2-4 on the kernel command line");
        ASSERT_EQ(host_check_failed(&hc, HOST_CHECK_ERROR), 1);
        f.cmdline = NULL;
        host_facts_done(&f);
}

TEST(cmdline) {
        const char *v;
        size_t len;

        ASSERT_EQ(kernel_cmdline_param("ro isolcpus=1-3 quiet", "isolcpus", &v, &len), 1);
        ASSERT_EQ(len, 3);
        ASSERT_EQ(strncmp(v, "1-3", len), 0);
        ASSERT_EQ(kernel_cmdline_param("ro isolcpus=1-3 quiet", "isol", &v, &len), 0);
        ASSERT_EQ(kernel_cmdline_param("ro xisolcpus=1-3", "isolcpus", &v, &len), 0);
        ASSERT_EQ(kernel_cmdline_param("rcu_nocbs\n", "rcu_nocbs", &v, &len), 1);
        ASSERT_EQ(len, 0);
        /* The last one counts. */
        ASSERT_EQ(kernel_cmdline_param("iommu=off iommu=pt", "iommu", &v, &len), 1);
        ASSERT_EQ(strncmp(v, "pt", len), 0);
        ASSERT_EQ(kernel_cmdline_param(NULL, "iommu", &v, &len), 0);
        ASSERT_EQ(kernel_cmdline_param("", "iommu", &v, &len), 0);
}

TEST(names) {
        ASSERT_STREQ(host_check_severity_to_string(HOST_CHECK_ERROR), "error");
        ASSERT_STREQ(host_check_status_to_string(HOST_CHECK_SKIP), "skip");
        ASSERT(!host_check_severity_to_string(_HOST_CHECK_SEVERITY_MAX));
        ASSERT(!host_check_id(host_check_count()));
}

int main(void) {
        RUN(rules);
        RUN(no_rt_skips);
        RUN(config_cpus);
        RUN(cmdline);
        RUN(names);
        return 0;
}
