/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-rates.c — rates between two samples of kernel counters: resets, rows and CPUs that come and go */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/counters.h"

void counter_table_done(CounterTable *t) {
        free(t->cpus);
        free(t->rows);
        free(t->values);
        *t = (CounterTable) {};
}

void counter_rates_done(CounterRates *r) {
        free(r->cpus);
        free(r->rows);
        free(r->rates);
        free(r->reset);
        *r = (CounterRates) {};
}

int counter_row_cmp(const void *a, const void *b) {
        const CounterRow *x = a, *y = b;

        if (x->irq != y->irq)
                return (x->irq > y->irq) - (x->irq < y->irq);
        return strcmp(x->name, y->name);
}

ssize_t counter_table_find(const CounterTable *t, const CounterRow *key) {
        const CounterRow *row = bsearch_safe(key, t->rows, t->n_rows, sizeof(*t->rows), counter_row_cmp);
        return row ? row - t->rows : -1;
}

ssize_t counter_table_find_cpu(const CounterTable *t, unsigned cpu) {
        const unsigned *c = bsearch_safe(&cpu, t->cpus, t->n_cpus, sizeof(*t->cpus), unsigned_cmp);
        return c ? c - t->cpus : -1;
}

uint64_t counter_delta(uint64_t prev, uint64_t cur, bool *ret_reset) {
        bool reset = cur < prev;

        if (ret_reset)
                *ret_reset = reset;
        return reset ? cur : cur - prev;
}

static double per_sec(uint64_t delta, uint64_t elapsed_usec) {
        return (double) delta * 1e6 / (double) elapsed_usec;
}

int counter_table_rates(const CounterTable *prev, const CounterTable *cur, uint64_t elapsed_usec,
                        CounterRates *ret) {
        _cleanup_free_ size_t *cur_col = NULL, *prev_col = NULL;
        _cleanup_(counter_rates_done) CounterRates r = {};
        size_t n = 0;

        if (elapsed_usec == 0)
                return -EINVAL;

        /* Columns: the CPUs in both, matched by number (both lists ascending). */
        cur_col = malloc(MAX(cur->n_cpus, 1) * sizeof(*cur_col));
        prev_col = malloc(MAX(cur->n_cpus, 1) * sizeof(*prev_col));
        r.cpus = malloc(MAX(cur->n_cpus, 1) * sizeof(*r.cpus));
        if (!cur_col || !prev_col || !r.cpus)
                return -ENOMEM;
        for (size_t i = 0, j = 0; i < cur->n_cpus && j < prev->n_cpus;) {
                if (cur->cpus[i] < prev->cpus[j])
                        i++;
                else if (cur->cpus[i] > prev->cpus[j])
                        j++;
                else {
                        cur_col[n] = i;
                        prev_col[n] = j;
                        r.cpus[n++] = cur->cpus[i];
                        i++, j++;
                }
        }
        r.n_cpus = n;

        r.rows = malloc(MAX(cur->n_rows, 1) * sizeof(*r.rows));
        r.reset = calloc(MAX(cur->n_rows, 1), sizeof(*r.reset));
        r.rates = malloc(MAX(cur->n_rows * n, 1) * sizeof(*r.rates));
        if (!r.rows || !r.reset || !r.rates)
                return -ENOMEM;
        memcpy_safe(r.rows, cur->rows, cur->n_rows * sizeof(*r.rows));
        r.n_rows = cur->n_rows;

        for (size_t i = 0; i < cur->n_rows; i++) {
                /* The same rows as last period, nearly always: the same place first. */
                ssize_t p = i < prev->n_rows && counter_row_cmp(&prev->rows[i], &cur->rows[i]) == 0
                        ? (ssize_t) i : counter_table_find(prev, &cur->rows[i]);

                /* A new row counts from zero, as a reset (see counters.h). */
                if (p < 0)
                        r.reset[i] = true;
                for (size_t k = 0; k < n; k++) {
                        uint64_t c = counter_table_value(cur, i, cur_col[k]);
                        uint64_t before = p >= 0 ? counter_table_value(prev, (size_t) p, prev_col[k]) : 0;
                        bool reset;

                        r.rates[i * n + k] = per_sec(counter_delta(before, c, &reset), elapsed_usec);
                        r.reset[i] = r.reset[i] || reset;
                }
        }

        *ret = r;
        r = (CounterRates) {};
        return 0;
}

double counter_rates_row_total(const CounterRates *r, size_t row) {
        double sum = 0;

        for (size_t k = 0; k < r->n_cpus; k++)
                sum += counter_rates_value(r, row, k);
        return sum;
}

int vf_counters_rates(const VfCounters *prev, const VfCounters *cur, uint64_t elapsed_usec, VfRates *ret) {
        VfRates v = {};
        bool reset = false;

        if (elapsed_usec == 0)
                return -EINVAL;

        /* A VF reset zeroes all its counters at once: any one going down is the whole VF's reset. */
#define RATE(field)                                                                              \
        do {                                                                                     \
                bool _r;                                                                         \
                v.field = per_sec(counter_delta(prev->field, cur->field, &_r), elapsed_usec);    \
                reset = reset || _r;                                                             \
        } while (0)
        RATE(rx_packets);
        RATE(tx_packets);
        RATE(rx_bytes);
        RATE(tx_bytes);
        RATE(rx_dropped);
        RATE(tx_dropped);
        RATE(broadcast);
        RATE(multicast);
#undef RATE
        v.reset = reset;
        v.have = prev->have & cur->have;
        *ret = v;
        return 0;
}

/* utime + stime, where a hostile file could give two that overflow. */
static uint64_t add_saturated(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int thread_times_cpu_share(const ThreadTimes *prev, const ThreadTimes *cur, uint64_t elapsed_usec,
                           unsigned long ticks_per_sec, double *ret) {
        uint64_t before, ticks;

        if (elapsed_usec == 0 || ticks_per_sec == 0 || prev->tid != cur->tid)
                return -EINVAL;

        /* The same TID with another start time is a new thread: what it used counts from zero. */
        before = prev->start_time == cur->start_time ? add_saturated(prev->utime, prev->stime) : 0;
        ticks = counter_delta(before, add_saturated(cur->utime, cur->stime), NULL);
        *ret = (double) ticks / (double) ticks_per_sec * 1e6 / (double) elapsed_usec;
        return 0;
}
