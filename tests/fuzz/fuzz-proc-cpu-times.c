/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-proc-cpu-times.c — libFuzzer target: /proc/stat's cpuN lines as a table of CPU time fields */

#include <stdint.h>

#include "fuzz-counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        return fuzz_counters(proc_cpu_times_parse, data, size);
}
