/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-counter-rates.c — rates from known counter deltas: resets, 32-bit wraps, IRQs and CPUs that come and go */

#include <errno.h>
#include <math.h>

#include "sriovd/counters.h"
#include "test.h"

#define SEC 1000000ULL

/* A table by hand: rows "36", "37", ... or names, n_cpus columns, values row after row. */
static CounterTable table(const unsigned *cpus, size_t n_cpus, const CounterRow *rows, size_t n_rows,
                          const uint64_t *values) {
        CounterTable t = { .n_cpus = n_cpus, .n_rows = n_rows };

        t.cpus = malloc(MAX(n_cpus, 1) * sizeof(*t.cpus));
        t.rows = malloc(MAX(n_rows, 1) * sizeof(*t.rows));
        t.values = malloc(MAX(n_rows * n_cpus, 1) * sizeof(*t.values));
        ASSERT(t.cpus && t.rows && t.values);
        memcpy_safe(t.cpus, cpus, n_cpus * sizeof(*cpus));
        memcpy_safe(t.rows, rows, n_rows * sizeof(*rows));
        memcpy_safe(t.values, values, n_rows * n_cpus * sizeof(*values));
        return t;
}

#define IRQ(n) ((CounterRow) { .irq = (n) })
#define NAMED(s) ((CounterRow) { .irq = COUNTER_NAMED, .name = s })

static bool near(double a, double b) {
        double d = a > b ? a - b : b - a, m = b < 0 ? -b : b;
        return d <= 1e-9 * MAX(1.0, m);
}
#define ASSERT_NEAR(a, b)                                                                        \
        do {                                                                                     \
                double _x = (a), _y = (b);                                                       \
                if (!near(_x, _y)) {                                                             \
                        fprintf(stderr, "%s:%d: %s == %s failed: %.17g != %.17g\n", __FILE__,   \
                                __LINE__, #a, #b, _x, _y);                                       \
                        abort();                                                                 \
                }                                                                                \
        } while (0)

TEST(delta) {
        bool reset;

        ASSERT_EQ(counter_delta(100, 600, &reset), 500);
        ASSERT(!reset);
        ASSERT_EQ(counter_delta(600, 600, &reset), 0);
        ASSERT(!reset);
        /* Down: a reset, counted from zero. */
        ASSERT_EQ(counter_delta(600, 100, &reset), 100);
        ASSERT(reset);
        /* A 32-bit count that wrapped is taken the same way: small, never ~2^32. */
        ASSERT_EQ(counter_delta(UINT32_MAX - 99, 400, &reset), 400);
        ASSERT(reset);
        ASSERT_EQ(counter_delta(UINT64_MAX, 0, &reset), 0);
        ASSERT(reset);
        ASSERT_EQ(counter_delta(0, UINT64_MAX, NULL), UINT64_MAX);
}

TEST(rates_known_deltas) {
        const unsigned cpus[] = { 0, 1 };
        const CounterRow rows[] = { IRQ(36), IRQ(37), NAMED("LOC") };
        const uint64_t before[] = { 100, 1000,   0, 7,   5000, 6000 };
        const uint64_t after[] = { 600, 1000,   50, 7,   10000, 6500 };
        _cleanup_(counter_table_done) CounterTable a = table(cpus, 2, rows, 3, before);
        _cleanup_(counter_table_done) CounterTable b = table(cpus, 2, rows, 3, after);
        _cleanup_(counter_rates_done) CounterRates r = {};

        ASSERT_EQ(counter_table_rates(&a, &b, 5 * SEC, &r), 0);
        ASSERT_EQ(r.n_cpus, 2);
        ASSERT_EQ(r.n_rows, 3);
        ASSERT_NEAR(counter_rates_value(&r, 0, 0), 100);    /* 500 in 5 s */
        ASSERT_NEAR(counter_rates_value(&r, 0, 1), 0);
        ASSERT_NEAR(counter_rates_value(&r, 1, 0), 10);
        ASSERT_NEAR(counter_rates_value(&r, 1, 1), 0);
        ASSERT_NEAR(counter_rates_value(&r, 2, 0), 1000);
        ASSERT_NEAR(counter_rates_value(&r, 2, 1), 100);
        ASSERT_NEAR(counter_rates_row_total(&r, 2), 1100);
        for (size_t i = 0; i < r.n_rows; i++)
                ASSERT(!r.reset[i]);

        /* Not whole seconds: 250 ms. */
        counter_rates_done(&r);
        ASSERT_EQ(counter_table_rates(&a, &b, 250000, &r), 0);
        ASSERT_NEAR(counter_rates_value(&r, 0, 0), 2000);

        ASSERT_EQ(counter_table_rates(&a, &b, 0, &r), -EINVAL);
}

TEST(rates_reset_and_wrap) {
        const unsigned cpus[] = { 0, 1 };
        const CounterRow rows[] = { IRQ(40), IRQ(41) };
        /* IRQ 40 wrapped on CPU 0 (32-bit); IRQ 41's number went to a new device (a reset). */
        const uint64_t before[] = { UINT32_MAX - 999, 10,   900000, 800000 };
        const uint64_t after[] = { 500, 60,   20, 0 };
        _cleanup_(counter_table_done) CounterTable a = table(cpus, 2, rows, 2, before);
        _cleanup_(counter_table_done) CounterTable b = table(cpus, 2, rows, 2, after);
        _cleanup_(counter_rates_done) CounterRates r = {};

        ASSERT_EQ(counter_table_rates(&a, &b, 5 * SEC, &r), 0);
        /* Counted from zero: 500 in 5 s, not (2^32 - prev + cur) and never negative or huge. */
        ASSERT_NEAR(counter_rates_value(&r, 0, 0), 100);
        ASSERT_NEAR(counter_rates_value(&r, 0, 1), 10);
        ASSERT(r.reset[0]);
        ASSERT_NEAR(counter_rates_value(&r, 1, 0), 4);
        ASSERT_NEAR(counter_rates_value(&r, 1, 1), 0);
        ASSERT(r.reset[1]);
        for (size_t i = 0; i < r.n_rows * r.n_cpus; i++)
                ASSERT(r.rates[i] >= 0 && r.rates[i] < 1e6);
}

TEST(rates_irq_disappears_and_appears) {
        const unsigned cpus[] = { 0, 1 };
        const CounterRow rows_a[] = { IRQ(36), IRQ(37), IRQ(38) };
        const CounterRow rows_b[] = { IRQ(36), IRQ(38), IRQ(39) };
        const uint64_t before[] = { 0, 0,   70, 70,   100, 200 };
        const uint64_t after[] = { 5, 0,   150, 300,   25, 50 };
        _cleanup_(counter_table_done) CounterTable a = table(cpus, 2, rows_a, 3, before);
        _cleanup_(counter_table_done) CounterTable b = table(cpus, 2, rows_b, 3, after);
        _cleanup_(counter_rates_done) CounterRates r = {};
        CounterRow key = IRQ(37);

        ASSERT_EQ(counter_table_rates(&a, &b, 5 * SEC, &r), 0);
        /* 37 went away: no row. 39 is new: its count since zero. */
        ASSERT_EQ(r.n_rows, 3);
        ASSERT_EQ(r.rows[0].irq, 36);
        ASSERT_EQ(r.rows[1].irq, 38);
        ASSERT_EQ(r.rows[2].irq, 39);
        ASSERT(!bsearch_safe(&key, r.rows, r.n_rows, sizeof(*r.rows), counter_row_cmp));
        ASSERT_NEAR(counter_rates_value(&r, 0, 0), 1);
        ASSERT_NEAR(counter_rates_value(&r, 1, 0), 10);
        ASSERT_NEAR(counter_rates_value(&r, 1, 1), 20);
        ASSERT(!r.reset[0] && !r.reset[1]);
        ASSERT_NEAR(counter_rates_value(&r, 2, 0), 5);
        ASSERT_NEAR(counter_rates_value(&r, 2, 1), 10);
        ASSERT(r.reset[2]);
}

TEST(rates_cpu_offline_and_online) {
        const unsigned cpus_a[] = { 0, 1, 2 };
        const unsigned cpus_b[] = { 0, 2 };
        const CounterRow rows[] = { IRQ(50) };
        const uint64_t before[] = { 10, 20, 30 };
        const uint64_t after[] = { 15, 80 };
        _cleanup_(counter_table_done) CounterTable a = table(cpus_a, 3, rows, 1, before);
        _cleanup_(counter_table_done) CounterTable b = table(cpus_b, 2, rows, 1, after);
        _cleanup_(counter_rates_done) CounterRates r = {}, back = {};

        /* CPU 1 went offline: matched by CPU number, so CPU 2's column is still CPU 2's. */
        ASSERT_EQ(counter_table_rates(&a, &b, SEC, &r), 0);
        ASSERT_EQ(r.n_cpus, 2);
        ASSERT_EQ(r.cpus[0], 0);
        ASSERT_EQ(r.cpus[1], 2);
        ASSERT_NEAR(counter_rates_value(&r, 0, 0), 5);
        ASSERT_NEAR(counter_rates_value(&r, 0, 1), 50);
        ASSERT(!r.reset[0]);

        /* And back online: its counts go back to before it left, so no rate for it this period. */
        const uint64_t later[] = { 16, 999999, 81 };
        _cleanup_(counter_table_done) CounterTable c = table(cpus_a, 3, rows, 1, later);
        ASSERT_EQ(counter_table_rates(&b, &c, SEC, &back), 0);
        ASSERT_EQ(back.n_cpus, 2);
        ASSERT_EQ(back.cpus[0], 0);
        ASSERT_EQ(back.cpus[1], 2);
        ASSERT_NEAR(counter_rates_value(&back, 0, 0), 1);
        ASSERT_NEAR(counter_rates_value(&back, 0, 1), 1);
}

TEST(rates_empty) {
        const unsigned cpus[] = { 0 };
        _cleanup_(counter_table_done) CounterTable a = table(cpus, 1, NULL, 0, NULL);
        _cleanup_(counter_table_done) CounterTable none = {};
        _cleanup_(counter_rates_done) CounterRates r = {};

        ASSERT_EQ(counter_table_rates(&a, &a, SEC, &r), 0);
        ASSERT_EQ(r.n_rows, 0);
        counter_rates_done(&r);
        ASSERT_EQ(counter_table_rates(&none, &a, SEC, &r), 0);
        ASSERT_EQ(r.n_cpus, 0);
}

TEST(vf_rates) {
        VfCounters a = { .rx_packets = 1000, .tx_packets = 2000, .rx_bytes = 1500000, .tx_bytes = 64000,
                         .rx_dropped = 3, .multicast = 9 };
        VfCounters b = a;
        VfRates v;

        b.rx_packets += 50000;
        b.rx_bytes += 75000000;
        b.rx_dropped += 10;
        ASSERT_EQ(vf_counters_rates(&a, &b, 5 * SEC, &v), 0);
        ASSERT_NEAR(v.rx_packets, 10000);
        ASSERT_NEAR(v.rx_bytes, 15000000);
        ASSERT_NEAR(v.rx_dropped, 2);
        ASSERT_NEAR(v.tx_packets, 0);
        ASSERT(!v.reset);

        /* The VF was reset (or re-created): everything from zero. */
        VfCounters z = { .rx_packets = 500, .rx_bytes = 30000 };
        ASSERT_EQ(vf_counters_rates(&b, &z, 5 * SEC, &v), 0);
        ASSERT(v.reset);
        ASSERT_NEAR(v.rx_packets, 100);
        ASSERT_NEAR(v.rx_bytes, 6000);
        ASSERT_NEAR(v.tx_packets, 0);
        ASSERT_EQ(vf_counters_rates(&a, &b, 0, &v), -EINVAL);
}

TEST(thread_share) {
        ThreadTimes a = { .pid = 900, .tid = 901, .utime = 100, .stime = 50, .start_time = 4242 };
        ThreadTimes b = a;
        double share;

        /* 300 ticks at 100 a second is 3 s of CPU in 5 s. */
        b.utime = 300;
        b.stime = 150;
        ASSERT_EQ(thread_times_cpu_share(&a, &b, 5 * SEC, 100, &share), 0);
        ASSERT_NEAR(share, 0.6);

        /* The TID was reused by a thread started later: its own time only. */
        ThreadTimes c = { .pid = 900, .tid = 901, .utime = 20, .stime = 30, .start_time = 9999 };
        ASSERT_EQ(thread_times_cpu_share(&b, &c, 5 * SEC, 100, &share), 0);
        ASSERT_NEAR(share, 0.1);

        /* Hostile values do not overflow into a small or negative share. */
        ThreadTimes h = { .tid = 901, .utime = UINT64_MAX, .stime = UINT64_MAX, .start_time = 4242 };
        ASSERT_EQ(thread_times_cpu_share(&a, &h, SEC, 100, &share), 0);
        ASSERT(share > 1e15);

        c.tid = 902;
        ASSERT_EQ(thread_times_cpu_share(&b, &c, 5 * SEC, 100, &share), -EINVAL);
        ASSERT_EQ(thread_times_cpu_share(&a, &b, 0, 100, &share), -EINVAL);
        ASSERT_EQ(thread_times_cpu_share(&a, &b, SEC, 0, &share), -EINVAL);
}

int main(void) {
        RUN(delta);
        RUN(rates_known_deltas);
        RUN(rates_reset_and_wrap);
        RUN(rates_irq_disappears_and_appears);
        RUN(rates_cpu_offline_and_online);
        RUN(rates_empty);
        RUN(vf_rates);
        RUN(thread_share);
        return 0;
}
