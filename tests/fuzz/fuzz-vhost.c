/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-vhost.c — libFuzzer target: QEMU's command line (-uuid), a thread's status (Cpus_allowed_list), a vCPU thread's name */

#include <stdint.h>
#include <string.h>

#include "sriovd/kernel/qemu-vcpu.h"
#include "sriovd/kernel/vhost.h"

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
        /* A vCPU's name: "CPU N/ACCEL", N in range, nothing after ACCEL. */
        int vcpu = qemu_vcpu_name_parse(s);
        if (vcpu >= 0 && (strncmp(s, "CPU ", 4) != 0 || vcpu > INT16_MAX || !strchr(s, '/')))
                __builtin_trap();
        return 0;
}
