/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* counter-rates.c — rates between two samples of kernel counters, across resets and changing rows and CPUs */

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/core/counters.h"

void counter_table_done(CounterTable *t) {
        free(t->cpus);
        free(t->rows);
        free(t->first);
        free(t->col);
        free(t->values);
        *t = (CounterTable) {};
}

void counter_rates_done(CounterRates *r) {
        free(r->cpus);
        free(r->rows);
        free(r->first);
        free(r->col);
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

/* The entry of column c in the row's run of a sparse table, or -1 for none. */
static ssize_t entry_find(const size_t *first, const uint32_t *col, size_t row, size_t c) {
        unsigned key = (unsigned) c;
        const uint32_t *e;

        if (!first || c > UINT32_MAX)
                return -1;
        e = bsearch_safe(&key, col + first[row], first[row + 1] - first[row], sizeof(*col), unsigned_cmp);
        return e ? e - col : -1;
}

uint64_t counter_table_value(const CounterTable *t, size_t row, size_t col) {
        ssize_t e = row < t->n_rows ? entry_find(t->first, t->col, row, col) : -1;
        return e < 0 ? 0 : t->values[e];
}

double counter_rates_value(const CounterRates *r, size_t row, size_t col) {
        ssize_t e = row < r->n_rows ? entry_find(r->first, r->col, row, col) : -1;
        return e < 0 ? 0 : r->rates[e];
}

int counter_table_append(CounterTable *t, CounterTableRoom *room, const CounterRow *row, const uint64_t *values) {
        size_t n = 0;

        if (t->n_rows >= COUNTER_ROWS_MAX)
                return -ERANGE;
        for (size_t j = 0; j < t->n_cpus; j++)
                n += values[j] != 0;
        if (GREEDY_REALLOC(t->rows, room->rows, t->n_rows + 1) < 0 ||
            GREEDY_REALLOC(t->first, room->first, t->n_rows + 2) < 0 ||
            GREEDY_REALLOC(t->col, room->col, t->n_entries + n) < 0 ||
            GREEDY_REALLOC(t->values, room->values, t->n_entries + n) < 0)
                return -ENOMEM;
        t->first[0] = 0;
        t->rows[t->n_rows] = *row;
        for (size_t j = 0; j < t->n_cpus; j++)
                if (values[j] != 0) {
                        t->col[t->n_entries] = (uint32_t) j;
                        t->values[t->n_entries++] = values[j];
                }
        t->first[++t->n_rows] = t->n_entries;
        return 0;
}

/* A qsort_r() comparator that orders row indexes by the rows they point at. */
static int index_cmp(const void *a, const void *b, void *userdata) {
        const CounterRow *rows = userdata;
        return counter_row_cmp(&rows[*(const size_t *) a], &rows[*(const size_t *) b]);
}

/* Sort rows from..n-1 of t into counter_row_cmp()'s order, and move their runs of counts with them. */
static int sort_rows(CounterTable *t, size_t from) {
        size_t n = t->n_rows - from, base = t->first[from], k = base;
        _cleanup_free_ size_t *order = NULL, *first = NULL;
        _cleanup_free_ CounterRow *rows = NULL;
        _cleanup_free_ uint32_t *col = NULL;
        _cleanup_free_ uint64_t *values = NULL;
        size_t m = t->n_entries - base;

        order = malloc(n * sizeof(*order));
        rows = malloc(n * sizeof(*rows));
        first = malloc(n * sizeof(*first));
        col = malloc(MAX(m, (size_t) 1) * sizeof(*col));
        values = malloc(MAX(m, (size_t) 1) * sizeof(*values));
        if (!order || !rows || !first || !col || !values)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = from + i;
        qsort_r(order, n, sizeof(*order), index_cmp, t->rows);
        for (size_t i = 0; i < n; i++) {
                size_t o = order[i], len = t->first[o + 1] - t->first[o];

                if (i > 0 && counter_row_cmp(&t->rows[order[i - 1]], &t->rows[o]) == 0)
                        return -EBADMSG;
                rows[i] = t->rows[o];
                first[i] = k;
                memcpy_safe(col + (k - base), t->col + t->first[o], len * sizeof(*col));
                memcpy_safe(values + (k - base), t->values + t->first[o], len * sizeof(*values));
                k += len;
        }
        memcpy(t->rows + from, rows, n * sizeof(*rows));
        memcpy(t->first + from, first, n * sizeof(*first));
        memcpy_safe(t->col + base, col, m * sizeof(*col));
        memcpy_safe(t->values + base, values, m * sizeof(*values));
        return 0;
}

int counter_table_sort(CounterTable *t) {
        size_t n = t->n_rows, sorted = n > 0;

        /*
         * Rows already in order stay where they are. /proc/stat's rows are in order, and so are
         * /proc/interrupts' rows, except its few named rows at the end. Only the tail that is out
         * of order is sorted, when all of it comes after the rest.
         */
        while (sorted < n && counter_row_cmp(&t->rows[sorted - 1], &t->rows[sorted]) < 0)
                sorted++;
        if (sorted == n)
                return 0;
        if (n - sorted <= 64) {
                int r = sort_rows(t, sorted);
                if (r < 0)
                        return r;
                if (counter_row_cmp(&t->rows[sorted - 1], &t->rows[sorted]) < 0)
                        return 0;
        }
        return sort_rows(t, 0);
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

/*
 * Map each of t's columns to the rates' column, or to -1 when the CPU is not in both samples.
 * Both lists of columns ascend.
 */
static int columns_map(const CounterTable *t, const unsigned *cpus, size_t n_cpus, ssize_t **ret) {
        ssize_t *map = malloc(MAX(t->n_cpus, (size_t) 1) * sizeof(*map));

        if (!map)
                return -ENOMEM;
        for (size_t j = 0, k = 0; j < t->n_cpus; j++) {
                while (k < n_cpus && cpus[k] < t->cpus[j])
                        k++;
                map[j] = k < n_cpus && cpus[k] == t->cpus[j] ? (ssize_t) k : -1;
        }
        *ret = map;
        return 0;
}

int counter_table_rates(const CounterTable *prev, const CounterTable *cur, uint64_t elapsed_usec,
                        CounterRates *ret) {
        _cleanup_free_ ssize_t *cur_map = NULL, *prev_map = NULL;
        _cleanup_(counter_rates_done) CounterRates r = {};
        size_t n = 0;
        int k;

        if (elapsed_usec == 0)
                return -EINVAL;

        /* The columns are the CPUs in both samples, matched by number. Both lists ascend. */
        r.cpus = malloc(MAX(cur->n_cpus, 1) * sizeof(*r.cpus));
        if (!r.cpus)
                return -ENOMEM;
        for (size_t i = 0, j = 0; i < cur->n_cpus && j < prev->n_cpus;) {
                if (cur->cpus[i] < prev->cpus[j])
                        i++;
                else if (cur->cpus[i] > prev->cpus[j])
                        j++;
                else {
                        r.cpus[n++] = cur->cpus[i];
                        i++, j++;
                }
        }
        r.n_cpus = n;
        k = columns_map(cur, r.cpus, n, &cur_map);
        if (k >= 0)
                k = columns_map(prev, r.cpus, n, &prev_map);
        if (k < 0)
                return k;

        /* A rate is not zero only where a count is not zero now or was not before. */
        r.rows = malloc(MAX(cur->n_rows, 1) * sizeof(*r.rows));
        r.reset = calloc(MAX(cur->n_rows, 1), sizeof(*r.reset));
        r.first = malloc((cur->n_rows + 1) * sizeof(*r.first));
        r.col = malloc(MAX(cur->n_entries + prev->n_entries, 1) * sizeof(*r.col));
        r.rates = malloc(MAX(cur->n_entries + prev->n_entries, 1) * sizeof(*r.rates));
        if (!r.rows || !r.reset || !r.first || !r.col || !r.rates)
                return -ENOMEM;
        memcpy_safe(r.rows, cur->rows, cur->n_rows * sizeof(*r.rows));
        r.n_rows = cur->n_rows;

        for (size_t i = 0; i < cur->n_rows; i++) {
                /* The rows are nearly always the same as last period's, so try the same place first. */
                ssize_t p = i < prev->n_rows && counter_row_cmp(&prev->rows[i], &cur->rows[i]) == 0
                        ? (ssize_t) i : counter_table_find(prev, &cur->rows[i]);
                size_t a = cur->first[i], a_end = cur->first[i + 1];
                size_t b = p >= 0 ? prev->first[p] : 0, b_end = p >= 0 ? prev->first[p + 1] : 0;

                r.first[i] = r.n_entries;
                /* A new row counts from zero, as a reset (see counters.h). */
                r.reset[i] = p < 0;
                /* Both runs go by column, and both maps ascend, so one merge by the rates' column pairs them. */
                while (a < a_end || b < b_end) {
                        ssize_t ka = a < a_end ? cur_map[cur->col[a]] : SSIZE_MAX;
                        ssize_t kb = b < b_end ? prev_map[prev->col[b]] : SSIZE_MAX;
                        uint64_t now = 0, before = 0;
                        bool reset;
                        double v;

                        if (ka < 0 || kb < 0) {
                                /* The CPU is not in both samples. */
                                a += ka < 0;
                                b += kb < 0;
                                continue;
                        }
                        if (ka <= kb)
                                now = cur->values[a++];
                        if (kb <= ka)
                                before = prev->values[b++];
                        v = per_sec(counter_delta(before, now, &reset), elapsed_usec);
                        r.reset[i] = r.reset[i] || reset;
                        if (v != 0) {
                                r.col[r.n_entries] = (uint32_t) MIN(ka, kb);
                                r.rates[r.n_entries++] = v;
                        }
                }
        }
        r.first[cur->n_rows] = r.n_entries;

        *ret = r;
        r = (CounterRates) {};
        return 0;
}

double counter_rates_row_total(const CounterRates *r, size_t row) {
        double sum = 0;

        for (size_t e = r->first[row]; e < r->first[row + 1]; e++)
                sum += r->rates[e];
        return sum;
}

int vf_counters_rates(const VfCounters *prev, const VfCounters *cur, uint64_t elapsed_usec, VfRates *ret) {
        VfRates v = {};
        bool reset = false;

        if (elapsed_usec == 0)
                return -EINVAL;

        /* A VF reset zeroes all its counters at once, so one counter going down means the whole VF was reset. */
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

/* Add utime and stime without overflow, because a hostile file could give two values that overflow. */
static uint64_t add_saturated(uint64_t a, uint64_t b) {
        return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int thread_times_cpu_share(const ThreadTimes *prev, const ThreadTimes *cur, uint64_t elapsed_usec,
                           unsigned long ticks_per_sec, double *ret) {
        uint64_t before, ticks;

        if (elapsed_usec == 0 || ticks_per_sec == 0 || prev->tid != cur->tid)
                return -EINVAL;

        /* The same TID with another start time is a new thread, so its CPU time counts from zero. */

        before = prev->start_time == cur->start_time ? add_saturated(prev->utime, prev->stime) : 0;
        ticks = counter_delta(before, add_saturated(cur->utime, cur->stime), NULL);
        *ret = (double) ticks / (double) ticks_per_sec * 1e6 / (double) elapsed_usec;
        return 0;
}

int thread_schedstat_delta(const ThreadSchedstat *prev, const ThreadSchedstat *cur, uint64_t *ret_wait_ns,
                           uint64_t *ret_timeslices) {
        if (cur->wait_ns < prev->wait_ns || cur->timeslices < prev->timeslices || cur->run_ns < prev->run_ns)
                return -ERANGE;
        *ret_wait_ns = cur->wait_ns - prev->wait_ns;
        *ret_timeslices = cur->timeslices - prev->timeslices;
        return 0;
}
