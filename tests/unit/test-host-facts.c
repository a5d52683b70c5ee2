/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-host-facts.c — the RT host check on fixture trees: a tuned host passes, an untuned one fails where it differs */

#include <string.h>

#include "sriovd/kernel/host-facts.h"
#include "base/jsonc.h"
#include "monitor/host-check.h"
#include "test-fixture.h"

static const char *fixtures_dir;

static HostCheck *check(const char *host, const char *config) {
        _cleanup_(config_freep) Config *cfg = config ? test_config(config, NULL) : NULL;
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        HostCheck *hc = NULL;
        char path[1024];

        snprintf(path, sizeof(path), "%s/fixture-%s", fixtures_dir, host);
        ASSERT_EQ(rootfs_new(path, NULL, &r), 0);
        ASSERT_EQ(host_check_run(r, cfg, &hc), 0);
        return hc;
}

static const HostFinding *finding(const HostCheck *hc, const char *id) {
        for (size_t i = 0; i < hc->n; i++)
                if (streq(hc->findings[i].check, id))
                        return &hc->findings[i];
        ASSERT(false);
        return NULL;
}

TEST(facts) {
        _cleanup_(host_facts_done) HostFacts f = {};
        _cleanup_(rootfs_freep) RootFs *r = NULL;
        char path[1024], buf[64];
        CpuSet rt;

        snprintf(path, sizeof(path), "%s/fixture-two-socket-untuned", fixtures_dir);
        ASSERT_EQ(rootfs_new(path, NULL, &r), 0);
        ASSERT_EQ(host_facts_read(r, &f), 0);
        ASSERT_CONTAINS(f.cmdline, "isolcpus=2-7,18-21 intel_iommu=on");
        ASSERT_STREQ(cpuset_format_list(&f.online, buf, sizeof(buf)), "0-31");
        ASSERT_STREQ(cpuset_format_list(&f.isolated, buf, sizeof(buf)), "2-7,18-21");
        ASSERT(cpuset_is_empty(&f.nohz_full));   /* "(null)" */
        ASSERT(f.have_default_affinity);
        ASSERT_EQ(cpuset_count(&f.default_affinity), 32);
        ASSERT(f.have_rt_runtime);
        ASSERT_EQ(f.rt_runtime_us, -1);
        ASSERT(!f.stalld);
        ASSERT(f.iommu);

        ASSERT_EQ(cpuset_parse_list("3,18", &rt), 0);
        ASSERT_EQ(host_facts_read_cpus(r, &rt, &f), 0);
        ASSERT_EQ(f.n_cpus, 2);
        ASSERT_EQ(f.cpus[0].cpu, 3);
        ASSERT_STREQ(cpuset_format_list(&f.cpus[0].siblings, buf, sizeof(buf)), "3,11");
        ASSERT_STREQ(cpuset_format_list(&f.cpus[1].siblings, buf, sizeof(buf)), "18,26");
        ASSERT_EQ(f.cpus[1].n_idle, 4);
        ASSERT_STREQ(f.cpus[1].idle[3].name, "C6");
        ASSERT_EQ(f.cpus[1].idle[3].latency_us, 290);
        ASSERT(!f.cpus[1].idle[3].disabled);
        ASSERT_STREQ(f.cpus[1].governor, "powersave");
}

TEST(tuned) {
        _cleanup_(host_check_freep) HostCheck *hc = check("two-socket", "[cpus]\nrt = 2-7,18-23\n");

        for (size_t i = 0; i < hc->n; i++) {
                fprintf(stderr, "%s: %s\n", hc->findings[i].check, hc->findings[i].seen);
                ASSERT_EQ(hc->findings[i].status, HOST_CHECK_PASS);
        }
        ASSERT_EQ(hc->n, host_check_count());
}

/* The untuned host differs from the tuned one in exactly these checks, each with its fix. */
static const struct {
        const char *check, *severity, *seen, *fix;
} untuned[] = {
        { "isolcpus", "error", "isolated CPUs 2-7,18-21; RT CPUs 22-23 are not isolated",
          "isolcpus=managed_irq,domain,2-7,18-23 on the kernel command line" },
        { "managed_irq", "warning", "isolcpus=2-7,18-21",
          "isolcpus=managed_irq,domain,2-7,18-23 on the kernel command line" },
        { "nohz_full", "warning", "nohz_full CPUs none", "nohz_full=2-7,18-23 on the kernel command line" },
        { "rcu_nocbs", "warning", "no rcu_nocbs=, nohz_full CPUs none", "rcu_nocbs=2-7,18-23 on the kernel command line" },
        { "irqaffinity", "warning", "no irqaffinity=; /proc/irq/default_smp_affinity 0-31",
          "irqaffinity=0-1,8-17,24-31 on the kernel command line" },
        { "smt", "warning", "online SMT siblings of the RT CPUs: 10-15,26-31",
          "nosmt on the kernel command line, or write 0 to /sys/devices/system/cpu/cpuN/online of CPUs 10-15,26-31" },
        { "cpuidle", "warning",
          "C6 (290 us) enabled on CPUs 2-7,18-23; processor.max_cstate=unset, intel_idle.max_cstate=unset",
          "processor.max_cstate=1 intel_idle.max_cstate=0 on the kernel command line, or write 1 to "
          "/sys/devices/system/cpu/cpuN/cpuidle/stateK/disable of those states on the RT CPUs, "
          "or let sriovd do it with [rt] idle_states = limit" },
        { "governor", "warning", "governor powersave on CPUs 2-7,18-23",
          "write performance to /sys/devices/system/cpu/cpuN/cpufreq/scaling_governor of the RT CPUs, "
          "or let sriovd do it with [rt] cpufreq_governor = performance, "
          "or cpufreq.default_governor=performance on the kernel command line" },
        { "stalld", "warning", "RT throttling is off and no stalld process runs",
          "install stalld and run systemctl enable --now stalld" },
        { "iommu_pt", "info", "no iommu= on the kernel command line", "iommu=pt on the kernel command line" },
};

TEST(untuned) {
        _cleanup_(host_check_freep) HostCheck *hc = check("two-socket-untuned", "[cpus]\nrt = 2-7,18-23\n");
        size_t n_failed = 0;

        for (size_t i = 0; i < ELEMENTSOF(untuned); i++) {
                const HostFinding *h = finding(hc, untuned[i].check);

                fprintf(stderr, "%s: %s\n", h->check, h->seen);
                ASSERT_EQ(h->status, HOST_CHECK_FAIL);
                ASSERT_STREQ(host_check_severity_to_string(h->severity), untuned[i].severity);
                ASSERT_STREQ(h->seen, untuned[i].seen);
                ASSERT_STREQ(h->fix, untuned[i].fix);
        }
        for (size_t i = 0; i < hc->n; i++)
                n_failed += hc->findings[i].status == HOST_CHECK_FAIL;
        ASSERT_EQ(n_failed, ELEMENTSOF(untuned));
        ASSERT_EQ(finding(hc, "rt_throttling")->status, HOST_CHECK_PASS);
        ASSERT_EQ(finding(hc, "iommu")->status, HOST_CHECK_PASS);
        ASSERT_EQ(host_check_failed(hc, HOST_CHECK_ERROR), 1);
        ASSERT_EQ(host_check_failed(hc, HOST_CHECK_WARNING), 8);
        ASSERT_EQ(host_check_failed(hc, HOST_CHECK_INFO), 1);
}

TEST(untuned_default_rt) {
        /* Without [cpus] rt, the RT CPUs are the isolated ones, and those are isolated. */
        _cleanup_(host_check_freep) HostCheck *hc = check("two-socket-untuned", NULL);
        char buf[64];

        ASSERT_STREQ(cpuset_format_list(&hc->rt, buf, sizeof(buf)), "2-7,18-21");
        ASSERT_EQ(finding(hc, "isolcpus")->status, HOST_CHECK_PASS);
        ASSERT_EQ(host_check_failed(hc, HOST_CHECK_ERROR), 0);
}

TEST(no_rt_cpus) {
        /* one-socket-cx7 isolates nothing and has no IOMMU: the CPU checks skip, the IOMMU fails. */
        _cleanup_(host_check_freep) HostCheck *hc = check("one-socket-cx7", NULL);

        ASSERT_EQ(finding(hc, "nohz_full")->status, HOST_CHECK_SKIP);
        ASSERT_EQ(finding(hc, "iommu")->status, HOST_CHECK_FAIL);
        ASSERT_EQ(finding(hc, "iommu_pt")->status, HOST_CHECK_SKIP);
}

TEST(metrics_and_json) {
        _cleanup_(host_check_freep) HostCheck *hc = check("two-socket-untuned", "[cpus]\nrt = 2-7,18-23\n");
        _cleanup_(metric_snapshot_done) MetricSnapshot s = {};
        _cleanup_(json_object_putp) json_object *doc = NULL;
        json_object *arr, *o;

        ASSERT_EQ(host_check_metrics(hc, &s), 0);
        ASSERT_EQ(s.n_samples, host_check_count());
        for (size_t i = 0; i < s.n_samples; i++) {
                const char *id = metric_sample_label(&s.samples[i], METRIC_LABEL_CHECK);

                ASSERT_STREQ(s.samples[i].name, "sriovd_host_check_failed");
                ASSERT_EQ(s.samples[i].value, finding(hc, id)->status == HOST_CHECK_FAIL ? 1 : 0);
                ASSERT_STREQ(metric_sample_label(&s.samples[i], METRIC_LABEL_SEVERITY),
                             host_check_severity_to_string(finding(hc, id)->severity));
        }

        doc = host_check_json(hc);
        ASSERT(doc);
        ASSERT(json_object_object_get_ex(doc, "findings", &arr));
        ASSERT_EQ(json_object_array_length(arr), host_check_count());
        o = json_object_array_get_idx(arr, 0);
        ASSERT(json_object_object_get_ex(o, "fix", NULL));
        ASSERT(json_object_object_get_ex(doc, "errors", &o));
        ASSERT_EQ(json_object_get_int(o), 1);
}

int main(int argc, char **argv) {
        ASSERT(argc == 2);
        fixtures_dir = argv[1];
        RUN(facts);
        RUN(tuned);
        RUN(untuned);
        RUN(untuned_default_rt);
        RUN(no_rt_cpus);
        RUN(metrics_and_json);
        return 0;
}
