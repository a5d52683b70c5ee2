/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-table.c — lines, counts and the CPU header of /proc/interrupts and /proc/softirqs, and the table they fill */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/cpuset.h"
#include "proc-table-internal.h"

bool proc_next_line(const char **p, ProcLine *ret) {
        const char *s = *p, *nl;

        if (!*s)
                return false;
        nl = strchrnul(s, '\n');
        *ret = (ProcLine) { s, nl };
        *p = *nl ? nl + 1 : nl;
        return true;
}

int proc_parse_cpu_header(const ProcLine *line, unsigned **ret, size_t *ret_n) {
        _cleanup_free_ unsigned *cpus = NULL;
        size_t n = 0, allocated = 0;
        const char *p = line->start;

        for (;;) {
                uint64_t cpu;
                int r;

                p = proc_skip_blanks(p, line->end);
                if (p >= line->end)
                        break;
                if (line->end - p < 4 || strncmp(p, "CPU", 3) != 0)
                        return -EBADMSG;
                p += 3;
                r = proc_parse_u64(&p, line->end, &cpu);
                if (r < 0)
                        return r;
                if (cpu >= CPUSET_MAX)
                        return -ERANGE;
                /* The kernel prints CPUs in order; anything else would misplace every count. */
                if (n > 0 && cpu <= cpus[n - 1])
                        return -EBADMSG;
                if (GREEDY_REALLOC(cpus, allocated, n + 1) < 0)
                        return -ENOMEM;
                cpus[n++] = (unsigned) cpu;
        }
        if (n == 0)
                return -EBADMSG;
        *ret = TAKE_PTR(cpus);
        *ret_n = n;
        return 0;
}

int proc_table_reserve(ProcTableBuilder *b, size_t n) {
        CounterTable *t = &b->t;

        n = MIN(n, (size_t) COUNTER_ROWS_MAX);
        if (GREEDY_REALLOC(t->rows, b->allocated_rows, n) < 0 ||
            GREEDY_REALLOC(t->values, b->allocated_values, n * MAX(t->n_cpus, (size_t) 1)) < 0)
                return -ENOMEM;
        return 0;
}

int proc_table_add(ProcTableBuilder *b, const CounterRow *row, const uint64_t *values) {
        CounterTable *t = &b->t;

        if (t->n_rows >= COUNTER_ROWS_MAX)
                return -ERANGE;
        if (GREEDY_REALLOC(t->rows, b->allocated_rows, t->n_rows + 1) < 0 ||
            GREEDY_REALLOC(t->values, b->allocated_values, (t->n_rows + 1) * t->n_cpus) < 0)
                return -ENOMEM;
        t->rows[t->n_rows] = *row;
        memcpy(t->values + t->n_rows * t->n_cpus, values, t->n_cpus * sizeof(*values));
        t->n_rows++;
        return 0;
}

void proc_table_builder_done(ProcTableBuilder *b) {
        counter_table_done(&b->t);
        b->allocated_rows = b->allocated_values = 0;
}

/* qsort_r() comparator: row indexes by the rows they point at. */
static int index_cmp(const void *a, const void *b, void *userdata) {
        const CounterRow *rows = userdata;
        return counter_row_cmp(&rows[*(const size_t *) a], &rows[*(const size_t *) b]);
}

int proc_table_finish(ProcTableBuilder *b, CounterTable *ret) {
        _cleanup_(proc_table_builder_done) ProcTableBuilder in = *b;
        _cleanup_(counter_table_done) CounterTable t = {};
        _cleanup_free_ size_t *order = NULL;
        size_t n = in.t.n_rows, w = in.t.n_cpus, sorted = n > 0;

        *b = (ProcTableBuilder) {};

        /* Rows already in order (/proc/stat's, and /proc/interrupts' but for its few named rows
         * at the end) stay where they are: the copy below was 2 MB on the large host. */
        while (sorted < n && counter_row_cmp(&in.t.rows[sorted - 1], &in.t.rows[sorted]) < 0)
                sorted++;
        if (sorted < n && n - sorted <= 64) {
                /* Only the tail out of order: sort it alone, if it all comes after the rest. */
                _cleanup_free_ CounterRow *rows = NULL;
                _cleanup_free_ uint64_t *values = NULL;
                size_t k = n - sorted;

                order = malloc(k * sizeof(*order));
                rows = malloc(k * sizeof(*rows));
                values = malloc(MAX(k * w, (size_t) 1) * sizeof(*values));
                if (!order || !rows || !values)
                        return -ENOMEM;
                for (size_t i = 0; i < k; i++)
                        order[i] = sorted + i;
                qsort_r(order, k, sizeof(*order), index_cmp, in.t.rows);
                if (counter_row_cmp(&in.t.rows[sorted - 1], &in.t.rows[order[0]]) < 0) {
                        for (size_t i = 0; i < k; i++) {
                                if (i > 0 && counter_row_cmp(&in.t.rows[order[i - 1]], &in.t.rows[order[i]]) == 0)
                                        return -EBADMSG;
                                rows[i] = in.t.rows[order[i]];
                                memcpy_safe(values + i * w, in.t.values + order[i] * w, w * sizeof(*values));
                        }
                        memcpy(in.t.rows + sorted, rows, k * sizeof(*rows));
                        memcpy_safe(in.t.values + sorted * w, values, k * w * sizeof(*values));
                        sorted = n;
                }
                order = mfree(order);
        }
        if (sorted == n) {
                *ret = in.t;
                in.t = (CounterTable) {};
                return 0;
        }

        order = malloc(MAX(n, 1) * sizeof(*order));
        t.rows = malloc(MAX(n, 1) * sizeof(*t.rows));
        t.values = malloc(MAX(n * w, 1) * sizeof(*t.values));
        if (!order || !t.rows || !t.values)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                order[i] = i;
        /* Already in order for numbered rows; named rows come in the kernel's order, not by name. */
        if (n > 1)
                qsort_r(order, n, sizeof(*order), index_cmp, in.t.rows);
        for (size_t i = 0; i < n; i++) {
                if (i > 0 && counter_row_cmp(&in.t.rows[order[i - 1]], &in.t.rows[order[i]]) == 0)
                        return -EBADMSG;
                t.rows[i] = in.t.rows[order[i]];
                memcpy_safe(t.values + i * w, in.t.values + order[i] * w, w * sizeof(*t.values));
        }
        t.n_rows = n;
        t.cpus = TAKE_PTR(in.t.cpus);
        t.n_cpus = w;

        *ret = t;
        t = (CounterTable) {};
        return 0;
}

int proc_table_begin(const char **p, ProcTableBuilder *b, uint64_t **ret_values) {
        ProcLine line;
        int r;

        if (!proc_next_line(p, &line))
                return -EBADMSG;
        r = proc_parse_cpu_header(&line, &b->t.cpus, &b->t.n_cpus);
        if (r < 0)
                return r;
        *ret_values = malloc(MAX(b->t.n_cpus, (size_t) 1) * sizeof(uint64_t));
        return *ret_values ? 0 : -ENOMEM;
}
