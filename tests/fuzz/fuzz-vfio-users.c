/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-vfio-users.c — libFuzzer target: the /proc/PID/fd link parser and the comm cleaner */

#include <stdint.h>
#include <string.h>

#include "sriovd/kernel/vfio-users.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = malloc(size + 1);
        char comm[16];
        VfioFd f;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;

        if (vfio_fd_target_parse(s, &f) >= 0) {
                if (f.number > INT32_MAX || strncmp(s, "/dev/vfio/", 10) != 0 ||
                    (f.kind != VFIO_FD_GROUP && f.kind != VFIO_FD_DEVICE))
                        __builtin_trap();
        }
        proc_comm_clean(s, comm, sizeof(comm));
        if (strlen(comm) >= sizeof(comm))
                __builtin_trap();
        for (const char *p = comm; *p; p++)
                if ((unsigned char) *p < 0x20 || (unsigned char) *p >= 0x7f)
                        __builtin_trap();
        return 0;
}
