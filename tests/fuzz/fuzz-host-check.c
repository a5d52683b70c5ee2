/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-host-check.c — libFuzzer target: the RT host check's rules on any kernel command line */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/host-check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        HostCpuFacts cpus[2] = {};
        HostFacts f = { .have_rt_runtime = true, .rt_runtime_us = -1, .iommu = true, .cpus = cpus, .n_cpus = 2 };
        HostCheck *hc = malloc(sizeof(HostCheck));
        char *s = malloc(size + 1);

        if (!hc || !s)
                goto out;
        memcpy(s, data, size);
        s[size] = 0;
        f.cmdline = s;
        (void) cpuset_parse_list("0-7", &f.online);
        (void) cpuset_parse_list("2-3", &f.isolated);
        for (unsigned i = 0; i < 2; i++) {
                cpus[i].cpu = 2 + i;
                cpus[i].have_siblings = true;
                cpuset_add(&cpus[i].siblings, 2 + i);
        }
        host_check_evaluate(&f, NULL, hc);
        /* Every failed check names its fix, and every string ends within its buffer. */
        for (size_t i = 0; i < hc->n; i++)
                if ((hc->findings[i].status == HOST_CHECK_FAIL) != (hc->findings[i].fix[0] != 0) ||
                    strnlen(hc->findings[i].seen, HOST_CHECK_TEXT_MAX) == HOST_CHECK_TEXT_MAX)
                        __builtin_trap();
out:
        free(hc);
        free(s);
        return 0;
}
