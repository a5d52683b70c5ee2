/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-table.c — the lines, counts and CPU header of /proc/interrupts and /proc/softirqs, and the table they fill */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sriovd/shared/cpuset.h"
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
                /* The kernel prints the CPUs in order. Any other order would misplace every count. */
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
        if (GREEDY_REALLOC(t->rows, b->room.rows, n) < 0 ||
            GREEDY_REALLOC(t->first, b->room.first, n + 1) < 0)
                return -ENOMEM;
        t->first[t->n_rows] = t->n_entries;
        return 0;
}

int proc_table_add(ProcTableBuilder *b, const CounterRow *row, const uint64_t *values) {
        return counter_table_append(&b->t, &b->room, row, values);
}

void proc_table_builder_done(ProcTableBuilder *b) {
        counter_table_done(&b->t);
        b->room = (CounterTableRoom) {};
}

int proc_table_finish(ProcTableBuilder *b, CounterTable *ret) {
        int r;

        r = counter_table_sort(&b->t);
        if (r < 0) {
                proc_table_builder_done(b);
                return r;
        }
        *ret = b->t;
        *b = (ProcTableBuilder) {};
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
