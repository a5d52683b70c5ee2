/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* host-check.c — the RT host check on this host: run, print, log, and export as metrics */

#include <errno.h>
#include <stdlib.h>

#include "sriovd/kernel/host-facts.h"
#include "base/jsonc.h"
#include "base/log.h"
#include "host-check.h"

int host_check_run(RootFs *root, const Config *cfg, HostCheck **ret) {
        _cleanup_(host_facts_done) HostFacts facts = {};
        _cleanup_(host_check_freep) HostCheck *hc = NULL;
        CpuSet rt, hk;
        int r;

        r = host_facts_read(root, &facts);
        if (r < 0)
                return r;
        /* Only the RT CPUs' own facts matter, so only those are read. */
        host_check_cpus(&facts, cfg, &rt, &hk);
        r = host_facts_read_cpus(root, &rt, &facts);
        if (r < 0)
                return r;
        hc = malloc(sizeof(*hc));
        if (!hc)
                return -ENOMEM;
        host_check_evaluate(&facts, cfg, hc);
        *ret = TAKE_PTR(hc);
        return 0;
}

HostCheck *host_check_free(HostCheck *hc) {
        free(hc);
        return NULL;
}

int host_check_replace(HostCheck **slot, RootFs *root, const Config *cfg, const HostCheck **ret) {
        HostCheck *hc;
        int r;

        r = host_check_run(root, cfg, &hc);
        if (r < 0)
                return r;
        host_check_free(*slot);
        *slot = hc;
        *ret = hc;
        return 0;
}

void host_check_print(FILE *f, const HostCheck *hc) {
        char rt[CPUSET_LIST_MAX], hk[CPUSET_LIST_MAX];

        fprintf(f, "RT CPUs %s, housekeeping CPUs %s\n\n",
                cpuset_is_empty(&hc->rt) ? "none" : cpuset_format_list(&hc->rt, rt, sizeof(rt)),
                cpuset_is_empty(&hc->housekeeping) ? "none" : cpuset_format_list(&hc->housekeeping, hk, sizeof(hk)));
        fprintf(f, "%-14s %-8s %-6s %s\n", "CHECK", "SEVERITY", "RESULT", "SEEN");
        for (size_t i = 0; i < hc->n; i++) {
                const HostFinding *h = &hc->findings[i];

                fprintf(f, "%-14s %-8s %-6s %s\n", h->check, host_check_severity_to_string(h->severity),
                        host_check_status_to_string(h->status), h->seen);
                if (h->status != HOST_CHECK_FAIL)
                        continue;
                fprintf(f, "%-31s expected: %s\n", "", h->expected);
                fprintf(f, "%-31s fix: %s\n", "", h->fix);
        }
        fprintf(f, "\n%zu errors, %zu warnings, %zu info\n", host_check_failed(hc, HOST_CHECK_ERROR),
                host_check_failed(hc, HOST_CHECK_WARNING), host_check_failed(hc, HOST_CHECK_INFO));
}

static json_object *finding_json(const HostFinding *h) {
        _cleanup_(json_object_putp) json_object *o = json_object_new_object();

        if (!o || jsonc_add_string(o, "check", h->check) < 0 ||
            jsonc_add_string(o, "severity", host_check_severity_to_string(h->severity)) < 0 ||
            jsonc_add_string(o, "result", host_check_status_to_string(h->status)) < 0 ||
            jsonc_add_string(o, "seen", h->seen) < 0 || jsonc_add_string(o, "expected", h->expected) < 0 ||
            (h->fix[0] && jsonc_add_string(o, "fix", h->fix) < 0))
                return NULL;
        return TAKE_PTR(o);
}

json_object *host_check_json(const HostCheck *hc) {
        _cleanup_(json_object_putp) json_object *doc = json_object_new_object();
        char rt[CPUSET_LIST_MAX], hk[CPUSET_LIST_MAX];
        json_object *arr;

        if (!doc || jsonc_add_string(doc, "rt_cpus", cpuset_format_list(&hc->rt, rt, sizeof(rt))) < 0 ||
            jsonc_add_string(doc, "housekeeping_cpus", cpuset_format_list(&hc->housekeeping, hk, sizeof(hk))) < 0)
                return NULL;
        arr = json_object_new_array();
        if (jsonc_add(doc, "findings", arr) < 0)
                return NULL;
        for (size_t i = 0; i < hc->n; i++)
                if (jsonc_append(arr, finding_json(&hc->findings[i])) < 0)
                        return NULL;
        if (jsonc_add_int(doc, "errors", (int64_t) host_check_failed(hc, HOST_CHECK_ERROR)) < 0 ||
            jsonc_add_int(doc, "warnings", (int64_t) host_check_failed(hc, HOST_CHECK_WARNING)) < 0 ||
            jsonc_add_int(doc, "info", (int64_t) host_check_failed(hc, HOST_CHECK_INFO)) < 0)
                return NULL;
        return TAKE_PTR(doc);
}

void host_check_log(const HostCheck *hc) {
        for (size_t i = 0; i < hc->n; i++) {
                const HostFinding *h = &hc->findings[i];
                char check[64], severity[64];

                if (h->status != HOST_CHECK_FAIL)
                        continue;
                snprintf(check, sizeof(check), "SRIOVD_CHECK=%s", h->check);
                snprintf(severity, sizeof(severity), "SRIOVD_SEVERITY=%s", host_check_severity_to_string(h->severity));
                log_full_errno(LOG_WARNING, 0, LOG_FIELDS(.extra = (const char *const[]) { check, severity, NULL }),
                               "Host check %s (%s) failed: %s; expected %s; fix: %s", h->check,
                               host_check_severity_to_string(h->severity), h->seen, h->expected, h->fix);
        }
}

int host_check_metrics(const HostCheck *hc, MetricSnapshot *s) {
        for (size_t i = 0; i < hc->n; i++) {
                const HostFinding *h = &hc->findings[i];
                MetricLabel labels[2] = {
                        { .name = METRIC_LABEL_CHECK },
                        { .name = METRIC_LABEL_SEVERITY },
                };
                int r;

                strscpy(labels[0].value, sizeof(labels[0].value), h->check);
                strscpy(labels[1].value, sizeof(labels[1].value), host_check_severity_to_string(h->severity));
                r = metric_snapshot_add(s, "sriovd_host_check_failed", METRIC_GAUGE,
                                        h->status == HOST_CHECK_FAIL ? 1 : 0, labels, 2);
                if (r < 0)
                        return r;
        }
        metric_snapshot_sort(s);
        return 0;
}
