/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* proc-table-internal.h — the lines, numbers, CPU header and table that the /proc counter table parsers share */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sriovd/core/counters.h"

/* One line of a buffer, from start up to but not including end. end points at the '\n' or the NUL. */
typedef struct ProcLine {
        const char *start, *end;
} ProcLine;

/* Returns the line at *p and moves *p past it. Returns false at the end of the buffer. */
bool proc_next_line(const char **p, ProcLine *ret);
/*
 * proc_parse_u64() parses a decimal number at *p and moves *p past it. The number must end at a
 * blank or at the line's end. It returns -EBADMSG when there is no number or when other characters
 * follow it, and -ERANGE beyond 64 bits. Both functions are inline because the large host's
 * /proc/interrupts needs 270,000 calls of each, and the calls were a third of the parse.
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
        /* The number is parsed by hand because strtoull() would take a sign, "0x" and leading
         * blanks, and it would read past the line. The overflow test compares with constants,
         * because a division per digit was a third of the parse of a 270,000-count /proc/interrupts. */
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

/* Parses a header such as "   CPU0   CPU1 ...". The CPU numbers must ascend strictly and stay below CPUSET_MAX. */
int proc_parse_cpu_header(const ProcLine *line, unsigned **ret, size_t *ret_n);

/* A table being built. Its rows stay in the order read until proc_table_finish() sorts and checks them. */
typedef struct ProcTableBuilder {
        CounterTable t;
        CounterTableRoom room;
} ProcTableBuilder;

/* Makes room for n rows or returns -ENOMEM. n may be at most COUNTER_ROWS_MAX, which is a bound, not a promise. */
int proc_table_reserve(ProcTableBuilder *b, size_t n);
/* Appends a row of t.n_cpus values. Like counter_table_append(), the table keeps only values that are not zero. */
int proc_table_add(ProcTableBuilder *b, const CounterRow *row, const uint64_t *values);
/* Sorts the rows and their values into *ret. Returns -EBADMSG if a row appears twice.
 * The builder is emptied in either case. */
int proc_table_finish(ProcTableBuilder *b, CounterTable *ret);
void proc_table_builder_done(ProcTableBuilder *b);
/* Reads a per-CPU table's first line, the CPU header, into b and moves *p past it. Returns a row
 * buffer with one value per CPU in *ret_values, which the caller frees. Returns -EBADMSG if there is no header. */
int proc_table_begin(const char **p, ProcTableBuilder *b, uint64_t **ret_values);
