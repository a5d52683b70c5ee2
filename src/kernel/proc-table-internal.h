/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-table-internal.h — what the /proc counter table parsers share: lines, numbers, the CPU header, the table */
#pragma once

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
const char *proc_skip_blanks(const char *p, const char *end);
/*
 * A decimal number at *p, which must end at a blank or the line's end; *p moved past it.
 * -EBADMSG for none or one followed by other characters, -ERANGE beyond 64 bits.
 */
int proc_parse_u64(const char **p, const char *end, uint64_t *ret);
/* "   CPU0   CPU1 ...": the CPU numbers, strictly ascending, each below CPUSET_MAX. */
int proc_parse_cpu_header(const ProcLine *line, unsigned **ret, size_t *ret_n);

/* A table being built: rows in the order read, then sorted and checked by proc_table_finish(). */
typedef struct ProcTableBuilder {
        CounterTable t;
        size_t allocated_rows, allocated_values;
} ProcTableBuilder;

/* Append a row of t.n_cpus values; -ERANGE beyond COUNTER_ROWS_MAX rows; -ENOMEM. */
int proc_table_add(ProcTableBuilder *b, const CounterRow *row, const uint64_t *values);
/* Sort the rows (values with them) into *ret; -EBADMSG for a row twice. The builder is emptied either way. */
int proc_table_finish(ProcTableBuilder *b, CounterTable *ret);
void proc_table_builder_done(ProcTableBuilder *b);
/* A per-CPU table's first line (the CPU header) into b, *p past it, and a row buffer of one value
 * per CPU in *ret_values (the caller frees it). -EBADMSG for no header. */
int proc_table_begin(const char **p, ProcTableBuilder *b, uint64_t **ret_values);
