/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-proc-interrupts.c — libFuzzer target: /proc/interrupts: numbered and named rows, one count per online CPU */

#include <stdint.h>

#include "fuzz-counters.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        return fuzz_counters(proc_interrupts_parse, data, size);
}
