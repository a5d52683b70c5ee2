/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* time-util.c — the monotonic clock in microseconds, the unit that sd-event uses */

#include <time.h>

#include "sriovd/shared/util.h"

uint64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;
}
