/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* test-counter-rates.c — rates from known counter deltas: resets, 32-bit wraps, IRQs and CPUs that come and go */

#include <errno.h>
#include <math.h>

#include "sriovd/core/counters.h"
#include "test.h"

#define SEC 1000000ULL

/* A table by hand: rows "36", "37", ... or names, n_cpus columns, values row after row (dense). */
static CounterTable table(const unsigned *cpus, size_t n_cpus, const CounterRow *rows, size_t n_rows,
                          const uint64_t *values) {
        CounterTable t = { .n_cpus = n_cpus };
        CounterTableRoom room = {};

        t.cpus = malloc(MAX(n_cpus, 1) * sizeof(*t.cpus));
        ASSERT(t.cpus);
        memcpy_safe(t.cpus, cpus, n_cpus * sizeof(*cpus));
        for (size_t i = 0; i < n_rows; i++)
                ASSERT_EQ(counter_table_append(&t, &room, &rows[i], values + i * n_cpus), 0);
        ASSERT_EQ(counter_table_sort(&t), 0);
        /* Only the counts that are not zero are kept, each where it was. */
        for (size_t i = 0; i < n_rows; i++)
                for (size_t j = 0; j < n_cpus; j++)
                        ASSERT_EQ(counter_table_value(&t, counter_table_find(&t, &rows[i]), j), values[i * n_cpus + j]);
        size_t nonzero = 0;
        for (size_t k = 0; k < n_rows * n_cpus; k++)
                nonzero += values[k] != 0;
        ASSERT_EQ(t.n_entries, nonzero);
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
        for (size_t i = 0; i < r.n_entries; i++)
                ASSERT(r.rates[i] > 0 && r.rates[i] < 1e6);
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

/* A count that moved off a CPU (zero now, not before) is a reset there; kept only where a rate is not zero. */
TEST(rates_sparse_moved) {
        const unsigned cpus[] = { 0, 1, 2 };
        const CounterRow rows[] = { IRQ(36), IRQ(37) };
        const uint64_t before[] = { 5, 0, 0,   7, 0, 9 };
        const uint64_t after[] = { 0, 3, 0,   7, 0, 19 };
        _cleanup_(counter_table_done) CounterTable a = table(cpus, 3, rows, 2, before);
        _cleanup_(counter_table_done) CounterTable b = table(cpus, 3, rows, 2, after);
        _cleanup_(counter_rates_done) CounterRates r = {};

        ASSERT_EQ(counter_table_rates(&a, &b, SEC, &r), 0);
        ASSERT(r.reset[0]);
        ASSERT_NEAR(counter_rates_value(&r, 0, 0), 0);
        ASSERT_NEAR(counter_rates_value(&r, 0, 1), 3);
        ASSERT(!r.reset[1]);
        ASSERT_NEAR(counter_rates_value(&r, 1, 0), 0);
        ASSERT_NEAR(counter_rates_value(&r, 1, 2), 10);
        ASSERT_EQ(r.n_entries, 2);
        ASSERT_NEAR(counter_rates_row_total(&r, 1), 10);
}

/* Random pairs of samples (rows and CPUs coming and going, mostly zeros, counts going down)
 * against the rates worked out here from the dense tables. */
TEST(rates_random_against_dense) {
        unsigned seed = 20261202;

        for (unsigned round = 0; round < 300; round++) {
                unsigned cpus[2][72], n_cpus[2] = {};
                CounterRow rows[2][40];
                size_t n_rows[2] = {};
                uint64_t values[2][40 * 72];
                CounterTable t[2] = {};
                _cleanup_(counter_rates_done) CounterRates r = {};
                unsigned span = 1 + (unsigned) (rand_r(&seed) % 70);
                uint64_t elapsed = 1 + (uint64_t) (rand_r(&seed) % (10 * SEC));

                for (unsigned k = 0; k < 2; k++) {
                        for (unsigned c = 0; c < span; c++)
                                if (rand_r(&seed) % 8 != 0)
                                        cpus[k][n_cpus[k]++] = c;
                        if (n_cpus[k] == 0)
                                cpus[k][n_cpus[k]++] = span;
                        for (unsigned q = 0; q < 36; q++)
                                if (rand_r(&seed) % 5 != 0)
                                        rows[k][n_rows[k]++] = IRQ(30 + q);
                        if (rand_r(&seed) % 2)
                                rows[k][n_rows[k]++] = NAMED("LOC");
                        for (size_t i = 0; i < n_rows[k] * n_cpus[k]; i++) {
                                unsigned d = (unsigned) rand_r(&seed) % 10;
                                values[k][i] = d < 7 ? 0 : d < 9 ? (uint64_t) rand_r(&seed) % 1000 : UINT32_MAX - 3;
                        }
                        t[k] = table(cpus[k], n_cpus[k], rows[k], n_rows[k], values[k]);
                }
                ASSERT_EQ(counter_table_rates(&t[0], &t[1], elapsed, &r), 0);
                ASSERT_EQ(r.n_rows, n_rows[1]);
                for (size_t i = 0; i < n_rows[1]; i++) {
                        ssize_t p = counter_table_find(&t[0], &rows[1][i]), ri = counter_table_find(&t[1], &rows[1][i]);
                        bool reset = p < 0;

                        ASSERT(ri >= 0);
                        for (size_t k = 0; k < r.n_cpus; k++) {
                                ssize_t j1 = counter_table_find_cpu(&t[1], r.cpus[k]);
                                ssize_t j0 = counter_table_find_cpu(&t[0], r.cpus[k]);
                                uint64_t now, before;
                                bool down;

                                ASSERT(j1 >= 0 && j0 >= 0);
                                now = values[1][(size_t) i * n_cpus[1] + (size_t) j1];
                                before = 0;
                                for (size_t x = 0; p >= 0 && x < n_rows[0]; x++)
                                        if (counter_row_cmp(&rows[0][x], &rows[1][i]) == 0)
                                                before = values[0][x * n_cpus[0] + (size_t) j0];
                                ASSERT_NEAR(counter_rates_value(&r, (size_t) ri, k),
                                            (double) counter_delta(before, now, &down) * 1e6 / (double) elapsed);
                                reset = reset || down;
                        }
                        ASSERT_EQ(r.reset[ri], reset);
                }
                /* CPUs in both, and only those. */
                for (size_t k = 0; k < span + 1; k++) {
                        bool both = counter_table_find_cpu(&t[0], (unsigned) k) >= 0 &&
                                    counter_table_find_cpu(&t[1], (unsigned) k) >= 0;
                        ASSERT_EQ(bsearch_safe(&(unsigned) { (unsigned) k }, r.cpus, r.n_cpus, sizeof(unsigned), unsigned_cmp) != NULL, both);
                }
                counter_table_done(&t[0]);
                counter_table_done(&t[1]);
        }
}

/* Rows appended out of order are sorted with their counts; a row twice is refused. */
TEST(table_sort) {
        const unsigned cpus[] = { 0, 1 };
        CounterTable t = { .n_cpus = 2 };
        CounterTableRoom room = {};
        const uint64_t v[][2] = { { 1, 0 }, { 0, 2 }, { 3, 4 }, { 0, 0 }, { 5, 0 } };
        const CounterRow rows[] = { IRQ(40), NAMED("RES"), IRQ(10), NAMED("LOC"), IRQ(20) };

        t.cpus = malloc(sizeof(cpus));
        ASSERT(t.cpus);
        memcpy(t.cpus, cpus, sizeof(cpus));
        for (size_t i = 0; i < ELEMENTSOF(rows); i++)
                ASSERT_EQ(counter_table_append(&t, &room, &rows[i], v[i]), 0);
        ASSERT_EQ(counter_table_sort(&t), 0);
        ASSERT_EQ(t.rows[0].irq, 10);
        ASSERT_EQ(t.rows[1].irq, 20);
        ASSERT_EQ(t.rows[2].irq, 40);
        ASSERT_STREQ(t.rows[3].name, "LOC");
        ASSERT_STREQ(t.rows[4].name, "RES");
        ASSERT_EQ(counter_table_value(&t, 0, 0), 3);
        ASSERT_EQ(counter_table_value(&t, 0, 1), 4);
        ASSERT_EQ(counter_table_value(&t, 1, 0), 5);
        ASSERT_EQ(counter_table_value(&t, 2, 0), 1);
        ASSERT_EQ(counter_table_value(&t, 3, 1), 0);
        ASSERT_EQ(counter_table_value(&t, 4, 1), 2);
        ASSERT_EQ(t.n_entries, 5);
        ASSERT_EQ(counter_table_append(&t, &room, &rows[2], v[0]), 0);
        ASSERT_EQ(counter_table_sort(&t), -EBADMSG);
        counter_table_done(&t);
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
        RUN(rates_sparse_moved);
        RUN(rates_random_against_dense);
        RUN(table_sort);
        RUN(vf_rates);
        RUN(thread_share);
        return 0;
}
