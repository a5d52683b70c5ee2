/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-vhost.c — libFuzzer target: QEMU's command line (-uuid) and a thread's status (Cpus_allowed_list) */

#include <stdint.h>
#include <string.h>

#include "sriovd/vhost.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define UUID "6b1e5f0c-2d43-4c1a-9a51-7f1f0e0d2a01"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = malloc(size + 1);
        CpuSet cpus;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;

        /* The command line as read: size bytes, NULs inside; a match means the bytes are there. */
        if (qemu_cmdline_has_uuid((const char *) data, size, UUID) &&
            !memmem(data, size, "-uuid", 5))
                __builtin_trap();
        if (proc_status_cpus_parse(s, &cpus) >= 0 && !strstr(s, "Cpus_allowed_list:"))
                __builtin_trap();
        return 0;
}
