/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-proc-softirqs.c — libFuzzer target: /proc/softirqs: a row per softirq, one count per possible CPU */

#include <stdint.h>

#include "fuzz-counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        return fuzz_counters(proc_softirqs_parse, data, size);
}
