/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* util.c — small allocation helpers */

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "sriovd/shared/macro.h"

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

int unsigned_cmp(const void *a, const void *b) {
        unsigned x = *(const unsigned *) a, y = *(const unsigned *) b;
        return (x > y) - (x < y);
}

void strjoin_appendf(char *buf, size_t size, size_t *k, const char *fmt, ...) {
        va_list ap;
        int w;

        if (size == 0 || *k + 1 >= size)
                return;   /* the buffer is full */
        if (*k > 0) {
                w = snprintf(buf + *k, size - *k, ", ");
                *k = MIN(*k + (size_t) MAX(w, 0), size - 1);
        }
        va_start(ap, fmt);
        w = vsnprintf(buf + *k, size - *k, fmt, ap);
        va_end(ap);
        *k = MIN(*k + (size_t) MAX(w, 0), size - 1);
}
