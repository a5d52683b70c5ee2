/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-cpuset.c — libFuzzer target: CPU list and mask parsers, and list round trips */

#include <stdint.h>
#include <string.h>

#include "sriovd/shared/cpuset.h"
#include "sriovd/shared/macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = malloc(size + 1);
        char buf[CPUSET_LIST_MAX * 2];
        CpuSet a, b;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;

        if (cpuset_parse_list(s, &a) >= 0) {
                /* format(parse(x)) parses back to the same set */
                cpuset_format_list(&a, buf, sizeof(buf));
                if (cpuset_parse_list(buf, &b) < 0 || !cpuset_equal(&a, &b))
                        __builtin_trap();
        }
        (void) cpuset_parse_mask(s, &a);
        return 0;
}
