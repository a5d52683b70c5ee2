/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* cpuset.h — fixed-size CPU bitmaps and the kernel's list and mask text forms */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The parsers refuse hosts with more CPUs than this with -ERANGE. */
#define CPUSET_MAX 1024

typedef struct CpuSet {
        uint64_t bits[CPUSET_MAX / 64];
} CpuSet;

static inline void cpuset_clear(CpuSet *s) {
        *s = (CpuSet) {};
}
static inline void cpuset_add(CpuSet *s, unsigned cpu) {
        if (cpu < CPUSET_MAX)
                s->bits[cpu / 64] |= UINT64_C(1) << (cpu % 64);
}
static inline bool cpuset_has(const CpuSet *s, unsigned cpu) {
        return cpu < CPUSET_MAX && (s->bits[cpu / 64] >> (cpu % 64)) & 1;
}

unsigned cpuset_count(const CpuSet *s);
bool cpuset_is_empty(const CpuSet *s);
bool cpuset_equal(const CpuSet *a, const CpuSet *b);
void cpuset_and(CpuSet *ret, const CpuSet *a, const CpuSet *b);
void cpuset_or(CpuSet *ret, const CpuSet *a, const CpuSet *b);
void cpuset_andnot(CpuSet *ret, const CpuSet *a, const CpuSet *b);
/* Returns the number of the n-th CPU in the set, counting from 0, or -1 when there is none. */
int cpuset_nth(const CpuSet *s, unsigned n);

/*
 * Parses the kernel's list form, such as "0-3,8,10-11". An empty string is the empty set.
 * Whitespace around the list and a trailing newline are allowed. Returns 0, -EINVAL for a
 * malformed list, or -ERANGE for a CPU at or above CPUSET_MAX. *ret is untouched on failure.
 */
int cpuset_parse_list(const char *s, CpuSet *ret);
/* Parses the kernel's hex mask form, such as "ff,00000001". It returns the same errors as above. */
int cpuset_parse_mask(const char *s, CpuSet *ret);
/*
 * Formats s in the kernel's mask form, such as "ffff00c3", in 32-bit groups and as wide as needed.
 * Returns buf.
 */
char *cpuset_format_mask(const CpuSet *s, char *buf, size_t size);
/* Formats s in the list form into buf, which is always NUL-terminated. Returns buf. */
char *cpuset_format_list(const CpuSet *s, char *buf, size_t size);
/* This is enough for any set that the list form describes in practice. */
#define CPUSET_LIST_MAX 4096
