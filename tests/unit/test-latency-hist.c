/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-latency-hist.c — the slots the BPF programs count in, and the percentiles read from them */

#include <errno.h>
#include <math.h>

#include "sriovd/core/latency-hist.h"
#include "test.h"

static void test_slots(void) {
        /* Every slot's start maps to that slot, and the ns before it to the slot before. */
        ASSERT_EQ(latency_slot(0), 0);
        ASSERT_EQ(latency_slot(1023), 0);
        ASSERT_EQ(latency_slot(1024), 1);
        for (unsigned s = 1; s < LATENCY_SLOTS; s++) {
                uint64_t start = latency_slot_start(s);
                ASSERT_EQ(latency_slot(start), s);
                ASSERT_EQ(latency_slot(start - 1), s - 1);
                ASSERT(latency_slot_end(s - 1) == start);
        }
        /* A quarter of an octave each: 1.024 µs, 1.28, 1.536, 1.792, then 2.048. */
        ASSERT_EQ(latency_slot_start(2), 1280);
        ASSERT_EQ(latency_slot_start(5), 2048);
        /* The last slot holds everything above, even a latency of hours. */
        ASSERT_EQ(latency_slot(UINT64_C(1) << 50), LATENCY_SLOTS - 1);
        ASSERT(latency_slot_end(LATENCY_SLOTS - 1) == UINT64_MAX);
        /* log2 of every power of two and its neighbours. */
        for (unsigned b = 0; b < 64; b++) {
                ASSERT_EQ(latency_log2(UINT64_C(1) << b), b);
                if (b > 1)
                        ASSERT_EQ(latency_log2((UINT64_C(1) << b) - 1), b - 1);
        }
}

static void test_quantile(void) {
        LatencyHist h = {};
        double v;

        ASSERT_EQ(latency_hist_quantile(&h, 0.99, &v), -ENODATA);
        /* 990 samples at 10 µs and 10 at 5 ms: p99 is in the 10 µs slot, p99.9 in the 5 ms one. */
        for (int i = 0; i < 990; i++)
                h.slots[latency_slot(10000)]++;
        for (int i = 0; i < 10; i++)
                h.slots[latency_slot(5000000)]++;
        h.count = 1000;
        ASSERT_EQ(latency_hist_quantile(&h, 0.99, &v), 0);
        ASSERT(v >= latency_slot_start(latency_slot(10000)) && v <= latency_slot_end(latency_slot(10000)));
        ASSERT_EQ(latency_hist_quantile(&h, 0.999, &v), 0);
        ASSERT(v >= 4000000 && v <= 6000000);
        /* Within 25% of the true value anywhere. */
        for (uint64_t ns = 1500; ns < UINT64_C(10000000000); ns = ns * 3 / 2) {
                LatencyHist one = { .count = 1 };
                one.slots[latency_slot(ns)] = 1;
                ASSERT_EQ(latency_hist_quantile(&one, 1.0, &v), 0);
                ASSERT(fabs(v - (double) ns) <= 0.25 * (double) ns);
        }
}

static void test_delta(void) {
        LatencyHist a = { .count = 3, .sum_ns = 3000 }, b = a, d;

        a.slots[1] = 3;
        b.slots[1] = 3;
        b.count = 5;
        b.sum_ns = 9000;
        b.slots[4] = 2;
        ASSERT(latency_hist_delta(&b, &a, &d));
        ASSERT_EQ(d.count, 2);
        ASSERT_EQ(d.sum_ns, 6000);
        ASSERT_EQ(d.slots[1], 0);
        ASSERT_EQ(d.slots[4], 2);
        /* A histogram that started again is taken whole. */
        ASSERT(!latency_hist_delta(&a, &b, &d));
        ASSERT_EQ(d.count, 3);
        latency_hist_add(&d, &b);
        ASSERT_EQ(d.count, 8);
        ASSERT_EQ(d.slots[1], 6);
}

int main(void) {
        test_slots();
        test_quantile();
        test_delta();
        return 0;
}
