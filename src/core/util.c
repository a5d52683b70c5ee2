/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.c — small allocation helpers */

#include <stdint.h>

#include "sriovd/macro.h"

int greedy_realloc(void **array, size_t *allocated, size_t need, size_t size) {
        if (need <= *allocated)
                return 0;

        size_t n = *allocated ? *allocated : 4;
        while (n < need) {
                if (n > SIZE_MAX / 2 / size)
                        return -ENOMEM;
                n *= 2;
        }

        void *p = realloc(*array, n * size);
        if (!p)
                return -ENOMEM;
        *array = p;
        *allocated = n;
        return 0;
}
