/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fuzz-counters.h — what the /proc counter fuzzers share: the table's invariants, and rates between two inputs */
#pragma once

#include <stdint.h>
#include <string.h>

#include "sriovd/kernel/proc-counters.h"
#include "sriovd/shared/cpuset.h"

typedef int (*CounterParseFn)(const char *buf, CounterTable *ret);

static inline void fuzz_check_table(const CounterTable *t) {
        if (t->n_cpus == 0 || t->n_cpus > CPUSET_MAX || t->n_rows > COUNTER_ROWS_MAX)
                __builtin_trap();
        for (size_t i = 0; i < t->n_cpus; i++)
                if (t->cpus[i] >= CPUSET_MAX || (i > 0 && t->cpus[i] <= t->cpus[i - 1]))
                        __builtin_trap();
        for (size_t i = 0; i < t->n_rows; i++) {
                const CounterRow *r = &t->rows[i];
                if (i > 0 && counter_row_cmp(&t->rows[i - 1], r) >= 0)
                        __builtin_trap();
                if (strnlen(r->name, sizeof(r->name)) >= sizeof(r->name))
                        __builtin_trap();
                if ((r->irq == COUNTER_NAMED) != (r->name[0] != 0))
                        __builtin_trap();
                if (counter_table_find(t, r) != (ssize_t) i)
                        __builtin_trap();
        }
        /* The counts: runs in row order, each by column, none zero (ASan sees an overrun). */
        if (t->n_rows > 0 && (t->first[0] != 0 || t->first[t->n_rows] != t->n_entries))
                __builtin_trap();
        for (size_t i = 0; i < t->n_rows; i++)
                for (size_t e = t->first[i]; e < t->first[i + 1]; e++)
                        if (t->col[e] >= t->n_cpus || (e > t->first[i] && t->col[e] <= t->col[e - 1]) ||
                            t->values[e] == 0 || counter_table_value(t, i, t->col[e]) != t->values[e])
                                __builtin_trap();
}

/*
 * The input is one file, or two samples of it split at the first '\v': each is parsed,
 * and when both parse, the rates between them must be finite and never negative.
 */
static inline int fuzz_counters(CounterParseFn parse, const uint8_t *data, size_t size) {
        _cleanup_free_ char *s = malloc(size + 1);
        CounterTable a = {}, b = {};
        char *split;
        int ra, rb = -1;

        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = 0;
        split = memchr(s, '\v', size);
        if (split)
                *split = 0;

        ra = parse(s, &a);
        if (ra >= 0)
                fuzz_check_table(&a);
        else if (ra != -EBADMSG && ra != -ERANGE && ra != -ENOMEM)
                __builtin_trap();
        if (split) {
                rb = parse(split + 1, &b);
                if (rb >= 0)
                        fuzz_check_table(&b);
                else if (rb != -EBADMSG && rb != -ERANGE && rb != -ENOMEM)
                        __builtin_trap();
        }
        if (ra >= 0 && rb >= 0) {
                CounterRates r = {};

                if (counter_table_rates(&a, &b, 1 + (size & 0xfffff), &r) >= 0) {
                        if (r.n_rows != b.n_rows || r.n_cpus > b.n_cpus || r.n_cpus > a.n_cpus)
                                __builtin_trap();
                        for (size_t i = 0; i < r.n_rows; i++)
                                for (size_t e = r.first[i]; e < r.first[i + 1]; e++)
                                        if (!(r.rates[e] > 0) || r.rates[e] > 1.9e25 ||   /* 2^64 counts in 1 us */
                                            r.col[e] >= r.n_cpus || (e > r.first[i] && r.col[e] <= r.col[e - 1]))
                                                __builtin_trap();
                        counter_rates_done(&r);
                }
        }
        counter_table_done(&a);
        counter_table_done(&b);
        return 0;
}
