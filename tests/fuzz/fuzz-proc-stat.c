/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-proc-stat.c — libFuzzer target: /proc/PID/stat and irq thread name parsers */

#include <stdint.h>
#include <string.h>

#include "sriovd/kernel/proc-stat.h"
#include "sriovd/kernel/proc-threads.h"
#include "sriovd/kernel/sriov.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = malloc(size + 1);
        ProcStat st;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;

        if (proc_stat_parse(s, &st) >= 0) {
                if (st.pid <= 0 || st.rt_priority > 99 || strlen(st.comm) >= sizeof(st.comm))
                        __builtin_trap();
                (void) irq_thread_name_parse(st.comm);
        }
        (void) irq_thread_name_parse(s);
        (void) pci_addr_valid(s);
        return 0;
}
