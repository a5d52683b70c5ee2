/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-proc-softnet.c — libFuzzer target: /proc/net/softnet_stat: a hex line per online CPU, with or without its number */

#include <stdint.h>

#include "fuzz-counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A file without CPU numbers is placed on these online CPUs, with a gap as an offline CPU leaves. */
static int parse(const char *buf, CounterTable *ret) {
        CpuSet online;
        int r;

        if (cpuset_parse_list("0-2,5", &online) < 0)
                __builtin_trap();
        r = proc_softnet_parse(buf, &online, ret);
        /* Too few or too many lines for the online CPUs is a file that does not fit them. */
        return r == -ESTALE ? -EBADMSG : r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        return fuzz_counters(parse, data, size);
}
