/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-table-internal.h — what the /proc counter table parsers share: lines, numbers, the CPU header, the table */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/counters.h"

/* One line of a buffer: [start, end), end at the '\n' or the NUL. */
typedef struct ProcLine {
        const char *start, *end;
} ProcLine;

/* The line at *p, and *p moved past it; false at the end of the buffer. */
bool proc_next_line(const char **p, ProcLine *ret);
/*
 * proc_skip_blanks(); proc_parse_u64(): a decimal number at *p, which must end at a blank or the
 * line's end; *p moved past it. -EBADMSG for none or one followed by other characters, -ERANGE
 * beyond 64 bits. Inline: 270,000 of each in the large host's /proc/interrupts, where the calls
 * were a third of the parse.
 */
static inline const char *proc_skip_blanks(const char *p, const char *end) {
        while (p < end && (*p == ' ' || *p == '\t'))
                p++;
        return p;
}

static inline int proc_parse_u64(const char **p, const char *end, uint64_t *ret) {
        const char *s = *p;
        uint64_t v = 0;

        if (s >= end || *s < '0' || *s > '9')
                return -EBADMSG;
        /* By hand: strtoull() would take a sign, "0x" and leading blanks, and read past the line.
         * The overflow test compares with constants: a division per digit was a third of the
         * parse of a 270,000-count /proc/interrupts. */
        for (; s < end && *s >= '0' && *s <= '9'; s++) {
                unsigned d = (unsigned) (*s - '0');
                if (v >= UINT64_MAX / 10 && (v > UINT64_MAX / 10 || d > UINT64_MAX % 10))
                        return -ERANGE;
                v = v * 10 + d;
        }
        if (s < end && *s != ' ' && *s != '\t')
                return -EBADMSG;
        *p = s;
        *ret = v;
        return 0;
}

/* "   CPU0   CPU1 ...": the CPU numbers, strictly ascending, each below CPUSET_MAX. */
int proc_parse_cpu_header(const ProcLine *line, unsigned **ret, size_t *ret_n);

/* A table being built: rows in the order read, then sorted and checked by proc_table_finish(). */
typedef struct ProcTableBuilder {
        CounterTable t;
        CounterTableRoom room;
} ProcTableBuilder;

/* Room for n rows (at most COUNTER_ROWS_MAX: a bound, not a promise); -ENOMEM. */
int proc_table_reserve(ProcTableBuilder *b, size_t n);
/* Append a row of t.n_cpus values (counter_table_append: the table keeps those not zero). */
int proc_table_add(ProcTableBuilder *b, const CounterRow *row, const uint64_t *values);
/* Sort the rows (values with them) into *ret; -EBADMSG for a row twice. The builder is emptied either way. */
int proc_table_finish(ProcTableBuilder *b, CounterTable *ret);
void proc_table_builder_done(ProcTableBuilder *b);
/* A per-CPU table's first line (the CPU header) into b, *p past it, and a row buffer of one value
 * per CPU in *ret_values (the caller frees it). -EBADMSG for no header. */
int proc_table_begin(const char **p, ProcTableBuilder *b, uint64_t **ret_values);
